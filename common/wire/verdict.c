/* verdict.c: the jail's end plus the task's expectations give the status. */
#include "verdict.h"

#include <string.h>

/* Compares program output to the expected text, ignoring trailing white
 * space on both sides (a final newline is the usual difference). */
static bool stdout_matches(const char *got, size_t got_len, const char *want) {
  size_t want_len = strlen(want);
  while (got_len && strchr(" \t\r\n", got[got_len - 1])) got_len--;
  while (want_len && strchr(" \t\r\n", want[want_len - 1])) want_len--;
  return got_len == want_len && (got_len == 0 || memcmp(got, want, got_len) == 0);
}

sq_status sq_verdict_decide(const sq_jail_outcome *o, bool has_tests, const char *expected_stdout) {
  switch (o->end) {
  case SQ_JAIL_EXITED_OK:
    if (expected_stdout) {
      if (!stdout_matches(o->stdout_buf ? o->stdout_buf : "", o->stdout_len, expected_stdout))
        return SQ_STATUS_FAILED;
      return SQ_STATUS_PASSED;
    }
    return has_tests ? SQ_STATUS_PASSED : SQ_STATUS_OK;
  case SQ_JAIL_ASSERTION: return SQ_STATUS_FAILED;
  case SQ_JAIL_EXITED_ERROR:
  case SQ_JAIL_SIGNALED: return SQ_STATUS_RUNTIME_ERROR;
  case SQ_JAIL_TIMEOUT: return SQ_STATUS_TIMEOUT;
  case SQ_JAIL_CPU_LIMIT: return SQ_STATUS_CPU_LIMIT;
  case SQ_JAIL_MEMORY_LIMIT: return SQ_STATUS_MEMORY_LIMIT;
  case SQ_JAIL_OUTPUT_LIMIT: return SQ_STATUS_OUTPUT_LIMIT;
  case SQ_JAIL_POLICY: return SQ_STATUS_POLICY_VIOLATION;
  case SQ_JAIL_SETUP_ERROR: break;
  }
  return SQ_STATUS_RUNTIME_ERROR;
}
