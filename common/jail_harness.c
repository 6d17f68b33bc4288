/* jail_harness.c: the Python harness the interpreter runs with -c. Embedded
 * so nothing is read from the project's files inside the jail.
 *
 * It reads main.py from the current directory, compiles it under that name
 * and runs it as __main__ in a fresh namespace. Exit codes:
 *   0                          the program finished (or sys.exit(0))
 *   SystemExit(n)              passes through unchanged
 *   97 SQ__JAIL_EXIT_ASSERTION uncaught AssertionError (traceback on stderr)
 *   98 SQ__JAIL_EXIT_MEMORY    uncaught MemoryError ("MemoryError" on stderr)
 *   1                          any other uncaught exception (traceback on stderr)
 * Frames of the harness itself are left out of tracebacks; traceback is
 * imported only when needed (it costs more than the interpreter's start). */
#include "jail_internal.h"

const char sq__jail_harness_py[] =
    "import os, sys\n"
    "def _sq_flush():\n"
    "    for s in (sys.stdout, sys.stderr):\n"
    "        try:\n"
    "            s.flush()\n"
    "        except BaseException:\n"
    "            pass\n"
    "def _sq_report(e):\n"
    "    try:\n"
    "        import traceback\n"
    "        tb = e.__traceback__\n"
    "        tb = tb.tb_next if tb is not None else None\n"
    "        traceback.print_exception(type(e), e, tb)\n"
    "    except BaseException:\n"
    "        pass\n"
    "    _sq_flush()\n"
    "sys.argv = ['main.py']\n"
    "try:\n"
    "    with open('main.py', 'rb') as _sq_f:\n"
    "        _sq_code = compile(_sq_f.read(), 'main.py', 'exec')\n"
    "    exec(_sq_code, {'__name__': '__main__', '__file__': 'main.py',\n"
    "                    '__builtins__': __builtins__})\n"
    "except SystemExit:\n"
    "    raise\n"
    "except MemoryError:\n"
    "    _sq_flush()\n"
    "    try:\n"
    "        os.write(2, b'MemoryError\\n')\n"
    "    finally:\n"
    "        os._exit(" SQ_JAIL_STR(SQ__JAIL_EXIT_MEMORY) ")\n"
    "except AssertionError as e:\n"
    "    _sq_report(e)\n"
    "    os._exit(" SQ_JAIL_STR(SQ__JAIL_EXIT_ASSERTION) ")\n"
    "except BaseException as e:\n"
    "    _sq_report(e)\n"
    "    os._exit(1)\n"
    "_sq_flush()\n";
