/* job_cases.c: a task with cases runs its program once per case, each a
 * jail run of its own under the task's limits with the case's stdin as its
 * input, and each case's stdout is judged here, in the worker, by the
 * task's checker (docs/formats.md, "Cases"): nothing the program can reach
 * takes part in the verdict. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "errors.h"
#include "job.h"

/* The run's input becomes case i's stdin. */
static int set_input(job *j, size_t i) {
  const sq_task_case *c = &j->task->cases[i];
  free(j->input);
  j->input_len = strlen(c->stdin_text);
  j->input = j->input_len ? strdup(c->stdin_text) : NULL; /* none: /dev/null */
  return j->input_len && !j->input ? SQ_ENOMEM : 0;
}

int sq__job_cases_start(job *j) {
  if (!j->case_runs && !(j->case_runs = calloc(j->task->n_cases, sizeof *j->case_runs))) return SQ_ENOMEM;
  j->case_at = 0;
  j->cases_cpu_ms = j->cases_memory_kib = 0;
  j->case_reason[0] = '\0';
  j->r.cases = j->case_runs;
  j->r.n_cases = 0;
  j->r.n_cases_total = j->task->n_cases;
  return set_input(j, 0);
}

/* The task's status once its cases are run: passed when each passed, else
 * the first failing case's, its reason prefixed with the case's number. */
static void settle(job *j) {
  sq_result *r = &j->r;
  r->cpu_ms = j->cases_cpu_ms;
  r->memory_kib = j->cases_memory_kib;
  for (size_t i = 0; i < r->n_cases; i++) {
    if (j->case_runs[i].status == SQ_STATUS_PASSED) continue;
    r->status = j->case_runs[i].status; /* and its reason, case_reason */
    return;
  }
  r->status = SQ_STATUS_PASSED;
  r->reason = NULL;
}

bool sq__job_cases_next(job *j) {
  sq_result *r = &j->r;
  size_t i = j->case_at;
  const sq_task_case *c = &j->task->cases[i];
  sq_status s = r->status;
  char why[200] = "";
  if (s == SQ_STATUS_OK) /* exited 0: its output decides */
    s = sq_checker_match(&j->task->checker, j->out.stdout_buf, j->out.stdout_len, c->expected_stdout, why, sizeof why)
            ? SQ_STATUS_PASSED
            : SQ_STATUS_FAILED;
  bool first_failure = s != SQ_STATUS_PASSED;
  for (size_t k = 0; k < r->n_cases && first_failure; k++)
    if (j->case_runs[k].status != SQ_STATUS_PASSED) first_failure = false;
  if (first_failure) /* the task's reason is its first failing case's */
    snprintf(j->case_reason, sizeof j->case_reason, "case %zu: %s", i + 1,
             why[0] ? why : r->reason ? r->reason : sq_status_name(s));
  r->reason = j->case_reason[0] ? j->case_reason : NULL;
  j->case_runs[i] = (sq_result_case){.status = s, .wall_ms = j->out.wall_ms};
  r->n_cases = i + 1;
  j->cases_cpu_ms += j->out.cpu_ms;
  if (j->out.memory_kib > j->cases_memory_kib) j->cases_memory_kib = j->out.memory_kib;
  bool more = i + 1 < j->task->n_cases && !(s != SQ_STATUS_PASSED && j->task->stop_on_failure);
  if (more && set_input(j, i + 1) == 0) {
    j->case_at = i + 1;
    sq__job_submit(j);
    return true;
  }
  settle(j);
  return false;
}
