/* test_verdict.c: every jail end maps to the status the contract names;
 * with tests, `passed` needs the harness's completion mark; expected_stdout
 * trims ASCII white space only. */
#include <string.h>

#include "check.h"
#include "verdict.h"

/* A run that ended end with stdout out (NUL-terminated text, or n bytes
 * when n > 0); has_tests runs with the completion mark seen. */
static sq_status decide_n(sq_jail_end end, int has_tests, const char *out, size_t n, const char *want_out) {
  sq_jail_outcome o = {.end = end, .stdout_buf = (char *)out, .stdout_len = n ? n : out ? strlen(out) : 0};
  sq_verdict_input in = {.has_tests = has_tests, .marks = {.begun = true, .completed = true},
                         .expected_stdout = want_out};
  return sq_verdict_decide(&o, &in, NULL);
}
static sq_status decide(sq_jail_end end, int has_tests, const char *out, const char *want_out) {
  return decide_n(end, has_tests, out, 0, want_out);
}

/* A run with tests that exited 0 with the marks m. */
static sq_status with_marks(sq_jail_end end, sq_harness_marks m, const char **why) {
  sq_jail_outcome o = {.end = end};
  sq_verdict_input in = {.has_tests = true, .marks = m};
  return sq_verdict_decide(&o, &in, why);
}

/* Another language's tests judged by their calls (calls.h): calls_passed
 * says whether every call wrote the reference's value; or a compiler's
 * refusal (compile_error). */
static sq_status plain(sq_jail_end end, bool calls, bool compile_error) {
  sq_jail_outcome o = {.end = end};
  sq_verdict_input in = {.calls = calls, .calls_passed = true, .compile_error = compile_error};
  return sq_verdict_decide(&o, &in, NULL);
}

static void test_languages(void) {
  CHECK_STR(sq_status_name(plain(SQ_JAIL_EXITED_OK, true, false)), "passed");
  /* every value right, then a non-zero exit or a signal: not passed */
  CHECK_STR(sq_status_name(plain(SQ_JAIL_EXITED_ERROR, true, false)), "failed");
  CHECK_STR(sq_status_name(plain(SQ_JAIL_SIGNALED, true, false)), "failed");
  CHECK_STR(sq_status_name(plain(SQ_JAIL_EXITED_ERROR, false, false)), "runtime_error");
  CHECK_STR(sq_status_name(plain(SQ_JAIL_TIMEOUT, true, false)), "timeout");
  CHECK_STR(sq_status_name(plain(SQ_JAIL_EXITED_ERROR, true, true)), "compile_error");
  CHECK_STR(sq_status_name(plain(SQ_JAIL_EXITED_ERROR, false, true)), "compile_error");
  /* a limit that ended the run (the compiler's or not) is that limit */
  CHECK_STR(sq_status_name(plain(SQ_JAIL_MEMORY_LIMIT, true, true)), "memory_limit");
  CHECK_STR(sq_status_name(plain(SQ_JAIL_TIMEOUT, false, true)), "timeout");
  /* exit 0 with a call missing or wrong (an early exit(0)): failed, the judge's reason */
  sq_jail_outcome o = {.end = SQ_JAIL_EXITED_OK};
  sq_verdict_input in = {.calls = true, .calls_passed = false, .calls_why = "call 2 of 3 gave no result"};
  const char *why = NULL;
  CHECK_STR(sq_status_name(sq_verdict_decide(&o, &in, &why)), "failed");
  CHECK_STR(why, "call 2 of 3 gave no result");
  o.end = SQ_JAIL_SIGNALED;
  CHECK_STR(sq_status_name(sq_verdict_decide(&o, &in, &why)), "failed");
  CHECK_STR(why, "call 2 of 3 gave no result");
  sq_status st;
  CHECK_EQ(sq_status_parse("compile_error", &st), 0);
  CHECK_EQ(st, SQ_STATUS_COMPILE_ERROR);
}

int main(void) {
  test_languages();
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "", NULL)), "ok");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 1, "", NULL)), "passed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "42\n", "42")), "passed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "42\n", "42\n\n")), "passed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "42 \t\r\n\v\f", "42")), "passed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "41\n", "42")), "failed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "", "42")), "failed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_OK, 0, "", "")), "passed");
  /* A NUL is output, not white space: "45\n\0" is not "45". */
  CHECK_STR(sq_status_name(decide_n(SQ_JAIL_EXITED_OK, 0, "45\n\0", 4, "45")), "failed");
  CHECK_STR(sq_status_name(decide_n(SQ_JAIL_EXITED_OK, 0, "45\0\n", 4, "45")), "failed");
  CHECK_STR(sq_status_name(decide_n(SQ_JAIL_EXITED_OK, 0, "\0", 1, "")), "failed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_ASSERTION, 1, "", NULL)), "failed");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_EXITED_ERROR, 1, "", NULL)), "runtime_error");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_SIGNALED, 0, "", NULL)), "runtime_error");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_TIMEOUT, 0, "", NULL)), "timeout");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_CPU_LIMIT, 0, "", NULL)), "cpu_limit");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_MEMORY_LIMIT, 0, "", NULL)), "memory_limit");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_OUTPUT_LIMIT, 0, "", NULL)), "output_limit");
  CHECK_STR(sq_status_name(decide(SQ_JAIL_POLICY, 0, "", NULL)), "policy_violation");

  /* Exit status 0 is not enough with tests: the completion mark is. */
  const char *why = "unset";
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_EXITED_OK, (sq_harness_marks){.begun = true, .completed = true}, &why)),
            "passed");
  CHECK(why == NULL);
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_EXITED_OK, (sq_harness_marks){.begun = true}, &why)), "failed");
  CHECK_STR(why, SQ_VERDICT_EARLY_EXIT);
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_EXITED_OK, (sq_harness_marks){0}, &why)), "failed");
  CHECK_STR(why, "exited before the tests completed");
  /* A value that claimed to equal anything fails the run, whatever came after. */
  sq_harness_marks eq = {.begun = true, .completed = true, .equal_to_anything = true};
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_EXITED_OK, eq, &why)), "failed");
  CHECK_STR(why, SQ_VERDICT_EQUAL_TO_ANYTHING);
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_ASSERTION, eq, &why)), "failed");
  CHECK_STR(why, SQ_VERDICT_EQUAL_TO_ANYTHING);
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_TIMEOUT, (sq_harness_marks){.begun = true}, &why)), "timeout");
  CHECK(why == NULL);
  /* The judge's own failure: its reason, whatever the exit status; a limit still wins. */
  sq_harness_marks judged = {.begun = true, .fail = "returned a value the judge cannot compare: Anything"};
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_EXITED_ERROR, judged, &why)), "failed");
  CHECK_STR(why, "returned a value the judge cannot compare: Anything");
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_EXITED_OK, judged, &why)), "failed");
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_SIGNALED, judged, &why)), "failed");
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_MEMORY_LIMIT, judged, &why)), "memory_limit");
  CHECK(why == NULL);
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_TIMEOUT, judged, &why)), "timeout");
  /* A call over the CPU time its tests gave it: cpu_limit, the input named. */
  sq_harness_marks limited = {.begun = true, .fail = "plus input 2 of 5: over its CPU time limit",
                              .fail_cpu_limit = true};
  CHECK_STR(sq_status_name(with_marks(SQ_JAIL_EXITED_ERROR, limited, &why)), "cpu_limit");
  CHECK_STR(why, "plus input 2 of 5: over its CPU time limit");

  sq_status s;
  CHECK_EQ(sq_status_parse("memory_limit", &s), 0);
  CHECK_EQ(s, SQ_STATUS_MEMORY_LIMIT);
  CHECK(sq_status_parse("bogus", &s) != 0);
  return sq_check_done("test_verdict");
}
