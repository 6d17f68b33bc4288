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
#include <stddef.h>

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
  unsigned char *plan;    /* the judge's plan of these tests (a "plan SHA256 BASE64" mark whose
                             digest matched), malloc'd: sq_harness_marks_clear frees it; or NULL */
  size_t plan_len;
} sq_harness_marks;

/* Whether t runs through the harness: it has tests or an entry_point. */
bool sq_harness_applies(const sq_task *t);

/* The isolated judge (judge.py, docs/security.md "The isolated judge"):
 * the program the jail runs for t with code (NULL: empty), and the input it
 * reads on its stdin (sq_jail_run_task). When sq_harness_applies, *program
 * is sq_harness_judge_program() and *input (*input_len bytes) the judge's
 * input: everything of the task, the tests among it, never written where
 * the candidate's code can read them. Otherwise *program is the listing
 * and *input NULL. Returns 0 (the caller frees both), SQ_ENOMEM or
 * SQ_EINVAL (as sq_harness_program). */
int sq_harness_judge(const sq_task *t, const char *code, const void *plan, size_t plan_len, char **program,
                     char **input, size_t *input_len);

/* The program of every judged task, the same text for all (static): it
 * calls judge.py's judge() as the zygote's prelude loaded it
 * (sq_harness_prelude), or else loads the copy in the input. */
const char *sq_harness_judge_program(void);

/* The judge's input, version SQ_HARNESS_JUDGE_VERSION (docs/formats.md,
 * "The Python judge's input"): a head of SQ_HARNESS_JUDGE_HEAD_BYTES,
 *   "sandq-judge VERSION KIND JUDGE CODE HARNESS PLAN LISTING TESTS_AT CHECK_AT"
 * (decimal fields, one space apart, padded with spaces, the last byte
 * '\n'), then judge.py (KIND 'm': marshalled, compiled.h; 's': source),
 * the candidate's code, harness.py, the plan (a judge's earlier plan of
 * the same tests, or none), and the listing of sq_task_program (code,
 * tests, check line), JUDGE, CODE, HARNESS, PLAN and LISTING bytes long;
 * TESTS_AT and CHECK_AT are where the tests and the check line begin in
 * the listing (-1: none). The judge reads the head, judge.py and the code,
 * forks the candidate's process, and only then reads the rest: the order
 * is what keeps the tests out of the candidate's memory.
 *
 * The plan: the tests' parts compiled and what they take from the
 * candidate, marshalled by the judge that worked them out and written on
 * stderr as "sandq-harness:NONCE:plan SHA256 BASE64" before any of the
 * candidate's code ran (sq_harness_marks.plan); the worker keeps it
 * (worker/judge_plans.h) for the next task with the same tests. The judge
 * uses one only when it is of exactly its form and interpreter. */
#define SQ_HARNESS_JUDGE_VERSION 1
#define SQ_HARNESS_JUDGE_HEAD_BYTES 128

/* A decoded input; pointers point into it. */
typedef struct {
  bool marshalled;
  const char *judge, *code, *harness, *plan, *listing;
  size_t judge_len, code_len, harness_len, plan_len, listing_len;
  long tests_at, check_at;
} sq_harness_judge_frame;

/* A plan mark's line, at most (one write under PIPE_BUF). */
#define SQ_HARNESS_PLAN_MAX_LINE 4000

/* Encodes t's input with code (NULL: empty) and plan (plan_len bytes;
 * NULL: none) into *input (malloc'd, *input_len bytes). 0, SQ_ENOMEM or
 * SQ_EINVAL. */
int sq_harness_judge_input(const sq_task *t, const char *code, const void *plan, size_t plan_len, char **input,
                           size_t *input_len);

/* Decodes len bytes at in, exactly as sq_harness_judge_input writes them:
 * 0, or SQ_EINVAL for anything else (another version, a field out of
 * range, sizes that do not add up to len). */
int sq_harness_judge_input_read(const char *in, size_t len, sq_harness_judge_frame *f);

/* The jail's prelude for a warm worker (sq_jail_config.prelude):
 * workspace.py and judge.py in one module, so a full zygote's tasks find
 * both loaded. Static. */
const char *sq_harness_prelude(void);

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

/* Frees what sq_harness_take_marks allocated in m (its plan). */
void sq_harness_marks_clear(sq_harness_marks *m);

#endif
