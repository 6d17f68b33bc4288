# zygote.py: the warm zygote's Python. Its init writes it into the jail's
# root (zygote_proto.h: SQ__ZYGOTE_PY) and common/jail/jail_zygote.c starts
# it as `python3 -I -S /.sandq-zygote.py slot=N KIND` (ps shows which
# slot's zygote it is) inside the jail's namespaces and root, as the
# slot's effective uid (its real and saved uid its own, which no task has),
# no capabilities, no_new_privs.
#
# argv: SLOT KIND
#   SLOT: "slot=N", the pool's slot, for ps only.
#   KIND: "full" imports the common modules below; "lean" does not (it runs
#   programs whose text never says "import": jail.c).
# The loop (zygote_loop.c: the extension module sandq_zygote, beside this
# file with .so for .py) does everything around each task's program: the
# rlimits, the filter, the fork, the reaping and the task's setup, in C,
# which writes a few pages where Python wrote hundreds, each a copy-on-
# write fault while the zygote and its child share them
# (docs/benchmarks.md). Its protocol with the supervisor, every message,
# who sends it and its fields, is common/jail/zygote_proto.h.
#
# The child for the next task is forked ahead, once every process the last
# task left is gone (the zygote is its subreaper: zygote_loop.c, gone()),
# every child reaped and the scratch mounted afresh: it compiles a line (so
# the compiler's copy-on-write faults happen now), says so and waits for the
# task, so a task's critical path holds no fork and few page faults.
# Then it writes main.py, sets its rlimits and runs the program as
# `python3 -I -S /scratch/main.py` would (a fresh __main__, the same
# traceback and exit status 1 for an uncaught exception). A task's exit
# status means nothing to the jail: setup failures travel as ERROR. Its last
# act closes its stdout and stderr (one call): the supervisor, woken by
# both at EOF, may learn the exit status from the kernel before the task's
# memory is torn down (jail_warm_end.c).
import os, sys, gc, _imp
SLOT, KIND = sys.argv[1:3]
LOOP_SO = sys.argv[0][:-len('.py')] + '.so'
# What most programs import (HumanEval's 164: typing, math, random, copy,
# string, collections, re), imported once here. hashlib (libcrypto),
# decimal, fractions, statistics, datetime and traceback are not: they made
# the interpreter 17.5 MB instead of 12.4, and every task's fork, copy-on-
# write faults and exit pay for its size (about 0.1 ms of CPU per task,
# docs/benchmarks.md); a task that imports one pays about 2 ms once. A lean
# zygote imports none of them: it runs programs that import nothing (80% of
# HumanEval's and MBPP's), and has half the memory to copy at each fork.
# A profile's modules (SANDQ_PRELOAD, comma-separated: jail_profile.c), on
# the full kind only; gone from the environment tasks see.
PRELOAD = [m for m in os.environ.pop('SANDQ_PRELOAD', '').split(',') if m]
# The runner's prelude (SANDQ_PRELUDE: jail.h, sq_jail_config.prelude), on
# the full kind only, where the runs that need it go (jail.c): a lean
# zygote stays as small as the tasks that import nothing want it; gone from
# the environment tasks see.
PRELUDE = os.environ.pop('SANDQ_PRELUDE', '')
if KIND == 'lean':
    PRELUDE = ''
if KIND != 'lean':
    import json, re, math, collections, itertools, functools, heapq, bisect, string, random
    import typing, copy, operator, time
    for m in PRELOAD:
        __import__(m)


class Spec:  # what the import machinery passes to an extension's loader
    name, origin = 'sandq_zygote', LOOP_SO


loop = _imp.create_dynamic(Spec)  # the GIL stays held: the loop forks the interpreter
MAIN = loop.MAIN  # the task's main.py in the scratch
# The supervisor starts us with LD_BIND_NOW=1: every symbol the interpreter
# and the loop use is bound here, once, not by the dynamic linker in each
# task's child (a dozen copy-on-write faults per task, docs/benchmarks.md).
# A task does not see it.
os.environ.pop('LD_BIND_NOW', None)
compile('pass', '<sandq>', 'exec')  # the AST types, once, not in every task


def fresh_main():
    """A __main__ as `python3 -I -S /scratch/main.py` has it, before its first line."""
    main = type(sys)('__main__')
    main.__file__ = MAIN
    main.__builtins__ = __builtins__
    return main


def execute(program, main):
    """The program run as `python3 -I -S /scratch/main.py` runs it, in main; its exit status."""
    code = 0
    try:
        exec(compile(program, MAIN, 'exec'), main.__dict__)
    except SystemExit as e:
        c = e.code
        if c is None: code = 0
        elif isinstance(c, int): code = c & 0xff
        else:
            try: print(c, file=sys.stderr)
            except BaseException: pass
            code = 1
    except BaseException as e:
        code = 1
        try:  # the traceback as the interpreter prints it for main.py: without this frame
            e = e.with_traceback(e.__traceback__.tb_next)
            sys.excepthook(type(e), e, e.__traceback__)
        except BaseException:
            os.write(2, b'MemoryError\n' if isinstance(e, MemoryError) else b'uncaught exception\n')
    return code


def wait_for_threads():
    """As the interpreter's exit does first: every non-daemon thread joined."""
    t = sys.modules.get('threading')
    if t is not None:
        try:
            t._shutdown()
        except BaseException:
            pass


def child():
    compile(b'pass\n', MAIN, 'exec')  # before the task's clock: its copy-on-write faults
    # The runtime the slot's last task asked to have ready (a standby:
    # workspace.py starts it, and the task that asks for the same takes it),
    # before this child says it is there. When the supervisor says the task
    # coming is another kind (DROP), take() exits instead: the zygote kills
    # the standby and forks a child without one.
    prelude = sys.modules.get('sandq_prelude')
    request = loop.standby_request()
    if request and prelude is not None:
        prelude.standby_start(request, loop.fsize())
    # The task (set up by take, or it never returns) in the __main__ made
    # below; its non-daemon threads are waited for, as `python3 main.py`
    # does; finish flushes both streams, closes them in one call (the
    # supervisor sees both at EOF at once) and exits with the status.
    status = execute(loop.take(), TASK_MAIN)
    wait_for_threads()
    loop.finish(status)


def compiled(source, name):
    """source compiled by a child, so the compiler's memory (1.4 MB for
    workspace.py) never becomes ours, which every fork would copy and
    every task's exit tear down; raises when it does not compile."""
    import marshal
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(r)
            data = memoryview(marshal.dumps(compile(source, name, 'exec', dont_inherit=True)))
            while data:
                data = data[os.write(w, data):]
            status = 0
        finally:
            os._exit(status)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0:
        raise SyntaxError('%s does not compile' % name)
    return marshal.loads(b''.join(chunks))


# The prelude as the module sandq_prelude, on the full kind, and its
# rehearse(DIR) run here, in the scratch (mounted afresh before the first
# task: zygote_loop.c), before the fork: what it imports, fills in and
# first-runs, each task's child then finds done instead of doing it on
# copy-on-write pages of its own (the worker's workspace.py:
# docs/jail-performance.md). A failure raises: this zygote does not
# start, and the pool says so.
if PRELUDE:
    prelude = type(sys)('sandq_prelude')
    exec(compiled(PRELUDE, '<sandq-prelude>'), prelude.__dict__)
    sys.modules['sandq_prelude'] = prelude
    if hasattr(prelude, 'rehearse'):
        prelude.rehearse(os.path.dirname(MAIN))
    del prelude
del PRELUDE


# A rehearsal of a task, here, once: every child then finds the attribute
# lookups, interned names and allocations of that path already made, and
# writes fewer of the pages it shares with us (each a copy-on-write fault:
# 7 fewer per task, docs/benchmarks.md). Nothing of it stays: its __main__
# is dropped, sys.argv is what every task gets.
execute(b'x = 1 * 2\n', fresh_main())
loop.finish(None)  # flushes, as each task's end does (and nothing else without a status)
sys.argv = [MAIN]
# Every task's __main__, made once, here, and never touched by the zygote:
# each child has it as the fork leaves it, fresh (a module made in each
# child cost it 10 more page faults, docs/benchmarks.md).
TASK_MAIN = fresh_main()
sys.modules['__main__'] = TASK_MAIN
gc.freeze()
# Returns only in each task's child, forked ahead of its task; the zygote
# itself stays in the C loop until its supervisor goes.
loop.serve()
try:
    child()
finally:
    os._exit(1)
