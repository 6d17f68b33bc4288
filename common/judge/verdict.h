/* verdict.h: from how the jail run ended, and what the task expected, to a
 * task status. A pure function: no I/O. */
#ifndef SQ_VERDICT_H
#define SQ_VERDICT_H

#include <stdbool.h>

#include "harness.h"
#include "run.h"
#include "status.h"

/* Reasons a result carries with these verdicts (docs/formats.md). */
#define SQ_VERDICT_EARLY_EXIT "exited before the tests completed"
#define SQ_VERDICT_EQUAL_TO_ANYTHING "a value compared in the tests claims to equal anything"

/* What the task expected of the run, and what its harness reported. */
typedef struct {
  bool has_tests;              /* tests or an entry_point: the run went through the harness */
  sq_harness_marks marks;      /* sq_harness_take_marks of the run (when has_tests) */
  const char *expected_stdout; /* or NULL */
  bool calls;                  /* another language's tests, judged by their calls (calls.h) */
  bool calls_passed;           /* ... every call wrote the reference's value, once */
  const char *calls_why;       /* ... else why not (sq_calls_judge) */
  bool compile_error;          /* the compiler refused the program (workspace.h): it never ran */
} sq_verdict_input;

/* Returns the status a result reports. With tests, `passed` needs exit
 * status 0 and the harness's completion mark, and no value that claimed to
 * equal anything. expected_stdout is compared byte for byte after trailing
 * ASCII white space (space, \t, \n, \v, \f, \r) is trimmed on both sides.
 * A "fail" mark of the judge makes it `failed` with the mark's text as the
 * reason (it points into in->marks), unless the run ended at a limit.
 * With calls, `passed` needs exit status 0 and calls_passed; any other run
 * that did not end at a limit is `failed`, calls_why its reason when the
 * calls did not pass.
 * compile_error gives `compile_error` unless a limit ended the run first.
 * When reason is not NULL it is set to one of the SQ_VERDICT_* reasons (or
 * the judge's), or NULL when the status needs none. */
sq_status sq_verdict_decide(const sq_jail_outcome *o, const sq_verdict_input *in, const char **reason);

#endif
