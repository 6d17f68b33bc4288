/* verdict.c: the jail's end plus the task's expectations give the status. */
#include "verdict.h"

#include <string.h>

/* ASCII white space only: a NUL or any other byte is output, not padding. */
static bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* Compares program output to the expected text, ignoring trailing ASCII
 * white space on both sides (a final newline is the usual difference). */
static bool stdout_matches(const char *got, size_t got_len, const char *want) {
  size_t want_len = strlen(want);
  while (got_len && ascii_space(got[got_len - 1])) got_len--;
  while (want_len && ascii_space(want[want_len - 1])) want_len--;
  return got_len == want_len && (got_len == 0 || memcmp(got, want, got_len) == 0);
}

sq_status sq_verdict_decide(const sq_jail_outcome *o, const sq_verdict_input *in, const char **reason) {
  const char *why = NULL;
  sq_status s = SQ_STATUS_RUNTIME_ERROR;
  bool cheat = in->has_tests && in->marks.equal_to_anything;
  /* The judge failed the task itself: its reason, unless a limit ended the run. */
  bool judged = in->has_tests && in->marks.fail[0] &&
                (o->end == SQ_JAIL_EXITED_OK || o->end == SQ_JAIL_EXITED_ERROR || o->end == SQ_JAIL_ASSERTION ||
                 o->end == SQ_JAIL_SIGNALED);
  if (judged) {
    if (reason) *reason = in->marks.fail;
    return in->marks.fail_cpu_limit ? SQ_STATUS_CPU_LIMIT : SQ_STATUS_FAILED;
  }
  if (in->compile_error && (o->end == SQ_JAIL_EXITED_ERROR || o->end == SQ_JAIL_EXITED_OK)) {
    if (reason) *reason = NULL;
    return SQ_STATUS_COMPILE_ERROR;
  }
  switch (o->end) {
  case SQ_JAIL_EXITED_OK:
    if (cheat) {
      s = SQ_STATUS_FAILED;
      why = SQ_VERDICT_EQUAL_TO_ANYTHING;
    } else if (in->has_tests && !in->marks.completed) {
      s = SQ_STATUS_FAILED;
      why = SQ_VERDICT_EARLY_EXIT;
    } else if (in->calls) {
      s = in->calls_passed ? SQ_STATUS_PASSED : SQ_STATUS_FAILED;
      if (!in->calls_passed) why = in->calls_why;
    } else if (in->expected_stdout) {
      s = stdout_matches(o->stdout_buf ? o->stdout_buf : "", o->stdout_len, in->expected_stdout) ? SQ_STATUS_PASSED
                                                                                              : SQ_STATUS_FAILED;
    } else {
      s = in->has_tests ? SQ_STATUS_PASSED : SQ_STATUS_OK;
    }
    break;
  case SQ_JAIL_ASSERTION:
    s = SQ_STATUS_FAILED;
    if (cheat) why = SQ_VERDICT_EQUAL_TO_ANYTHING;
    else if (in->calls && !in->calls_passed) why = in->calls_why;
    break;
  case SQ_JAIL_EXITED_ERROR:
  case SQ_JAIL_SIGNALED:
    s = in->calls ? SQ_STATUS_FAILED : SQ_STATUS_RUNTIME_ERROR;
    if (in->calls && !in->calls_passed) why = in->calls_why;
    break;
  case SQ_JAIL_TIMEOUT: s = SQ_STATUS_TIMEOUT; break;
  case SQ_JAIL_CPU_LIMIT: s = SQ_STATUS_CPU_LIMIT; break;
  case SQ_JAIL_MEMORY_LIMIT: s = SQ_STATUS_MEMORY_LIMIT; break;
  case SQ_JAIL_OUTPUT_LIMIT: s = SQ_STATUS_OUTPUT_LIMIT; break;
  case SQ_JAIL_POLICY: s = SQ_STATUS_POLICY_VIOLATION; break;
  case SQ_JAIL_SETUP_ERROR: break;
  }
  if (reason) *reason = why;
  return s;
}
