/* compiled.h: the project's own Python (judge.py, workspace.py) compiled
 * once, in the jail, by the interpreter the tasks get, instead of at every
 * task: a task's program (workspace.py) or its input (judge.py, when no
 * zygote's prelude has it loaded) then carries the marshalled code object
 * rather than the source (docs/benchmarks.md, "The isolated judge").
 *
 * The worker runs sq_compiled_program() in the jail once per source, with
 * sq_compiled_input() as its input, and passes the run's stdout to
 * sq_compiled_set. Until then, or when that failed, the source itself
 * goes instead: slower, the same behaviour.
 *
 * Process-wide state: set before any task, from one thread; read from any. */
#ifndef SQ_COMPILED_H
#define SQ_COMPILED_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

typedef enum { SQ_COMPILED_JUDGE = 0, SQ_COMPILED_WORKSPACE, SQ_COMPILED_COUNT } sq_compiled_id;

/* The program that compiles its input ("NAME\n" then the source) and
 * writes the code object, marshalled, in base64, on its stdout. */
const char *sq_compiled_program(void);

/* The input for id: a malloc'd NUL-terminated string (caller frees), or
 * NULL on SQ_ENOMEM. */
char *sq_compiled_input(sq_compiled_id id);

/* Keeps b64 (len bytes of the program's stdout) for id. Returns 0, SQ_EINVAL
 * (empty, or not base64) or SQ_ENOMEM. */
int sq_compiled_set(sq_compiled_id id, const char *b64, size_t len);

/* Appends to b the text that defines id's functions at a program's top
 * level: the loader of the compiled code when set, else the source.
 * Returns 0 or SQ_ENOMEM. */
int sq_compiled_append(sq_buf *b, sq_compiled_id id);

/* id's code as it goes into a judged task's input (harness.c): the
 * marshalled code object when set (*marshalled true), else the source;
 * *len bytes, static until the next sq_compiled_set or _clear. */
const void *sq_compiled_code(sq_compiled_id id, size_t *len, bool *marshalled);

/* Forgets every compiled code object (tests; the worker's exit). */
void sq_compiled_clear(void);

#endif
