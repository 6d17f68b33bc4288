/* test_verdict.c: every jail end maps to the status the contract names. */
#include <string.h>

#include "check.h"
#include "verdict.h"

static sq_status decide(sq_jail_end end, int has_tests, const char *out, const char *want_out) {
  sq_jail_outcome o = {.end = end, .stdout_buf = (char *)out, .stdout_len = out ? strlen(out) : 0};
  return sq_verdict_decide(&o, has_tests, want_out);
}

int main(void) {
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "", NULL)), "ok");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 1, "", NULL)), "passed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "42\n", "42")), "passed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "42\n", "42\n\n")), "passed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "41\n", "42")), "failed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "", "42")), "failed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "", "")), "passed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_ASSERTION, 1, "", NULL)), "failed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_ERROR, 1, "", NULL)), "runtime_error");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_SIGNALED, 0, "", NULL)), "runtime_error");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_TIMEOUT, 0, "", NULL)), "timeout");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_CPU_LIMIT, 0, "", NULL)), "cpu_limit");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_MEMORY_LIMIT, 0, "", NULL)), "memory_limit");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_OUTPUT_LIMIT, 0, "", NULL)), "output_limit");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_POLICY, 0, "", NULL)), "policy_violation");
  sq_status s;
  CHECK_EQ(sq_status_parse("memory_limit", &s), 0);
  CHECK_EQ(s, SQ_STATUS_MEMORY_LIMIT);
  CHECK(sq_status_parse("bogus", &s) != 0);
  return sq_check_done("test_verdict");
}
