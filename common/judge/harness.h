/* harness.h: the program the jail runs for a task with tests, and the
 * marks its harness leaves on stderr.
 *
 * A task with tests (or an entry_point) does not run as its bare listing
 * (sq_task_program): judge.py runs the candidate's code in one process and
 * the tests in another (or, when the tests need the candidate's own
 * objects, harness.py runs the listing in one), and proves the tests ran
 * to the end. Before any code of the task runs it draws a nonce and writes
 * "sandq-harness:NONCE:begin\n" as the first bytes of stderr; once the code,
 * the tests and the check line have all returned it writes
 * "sandq-harness:NONCE:end\n". An early exit (SystemExit, os._exit, an exit
 * hook) cannot write the end mark: the nonce is in no file and no program
 * text, and in no memory of the candidate's process. The judge also writes
 * "judge isolated" or "judge in_process WHY", "fail REASON" when it
 * fails the task itself, and "limit REASON" when a call of the candidate's
 * went over the CPU time the tests allowed it (judge.py, cpu_limit). Why, and the limits, in docs/security.md
 * ("Verdict integrity").
 *
 * Knows nothing of the jail beyond its outcome; pure functions, no I/O. */
#ifndef SQ_HARNESS_H
#define SQ_HARNESS_H

#include <stdbool.h>

#include "run.h"
#include "task.h"

/* What the harness reported, read off a run's stderr. */
typedef struct {
  bool begun;             /* stderr began with the harness's begin mark */
  bool completed;         /* ... and holds its end mark: the tests ran to the end */
  bool equal_to_anything; /* a value compared in the tests claimed to equal anything */
  char judge[16];         /* "isolated" or "in_process": how the judge ran the tests; "" unknown */
  char judge_why[160];    /* in_process: why the tests needed the candidate's own objects */
  char fail[320];         /* the judge failed the task for this reason (a value it cannot
                             compare, the candidate's process gone mid-call), or "" */
  bool fail_cpu_limit;    /* ... because a call went over the CPU time the tests gave it
                             (a "limit REASON" mark): the task ends cpu_limit */
} sq_harness_marks;

/* Whether t runs through the harness: it has tests or an entry_point. */
bool sq_harness_applies(const sq_task *t);

/* The isolated judge (judge.py, docs/security.md "The isolated judge"):
 * the program the jail runs for t with code (NULL: empty), and the input it
 * reads on its stdin (sq_jail_run_task). When sq_harness_applies, *program
 * is judge.py around the code alone and *input ("TESTS_AT CHECK_AT\n" and
 * the listing of sq_task_program, *input_len bytes) carries the tests:
 * they are never written where the candidate's code can read them.
 * judge.py comes precompiled when the worker compiled it (compiled.h).
 * Otherwise *program is the listing and *input NULL. Returns 0 (the caller
 * frees both), SQ_ENOMEM or SQ_EINVAL (as sq_harness_program). */
int sq_harness_judge(const sq_task *t, const char *code, char **program, char **input, size_t *input_len);

/* The in-process harness alone (harness.py; what judge.py falls back to):
 * assembles the program the jail runs for t with code (NULL: empty): when
 * sq_harness_applies, harness.py calling main() with the listing of
 * sq_task_program; otherwise that listing itself. Returns 0 and a malloc'd
 * NUL-terminated string in *out (caller frees), SQ_ENOMEM, or SQ_EINVAL
 * when the listing is not laid out as this file expects (a bug:
 * tests/unit/judge/test_harness.c pins the layout). */
int sq_harness_program(const sq_task *t, const char *code, char **out);

/* Fills m from o's stderr and removes the harness's marks from it (its
 * length updated, still NUL-terminated), so stored results and repair
 * prompts see the program's own output. A stderr that does not begin with
 * a begin mark is left as it is (m all false). */
void sq_harness_take_marks(sq_jail_outcome *o, sq_harness_marks *m);

#endif
