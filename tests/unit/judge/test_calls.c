/* test_calls.c: the calls judge's engine (calls.h): the tests split into
 * calls and expected values so that neither program holds what it must
 * not (the expected values are in no text of the candidate's program, the
 * code in none of the reference's); lines of no form the rule takes are
 * refused, named; records are taken off stdout wherever they start, and
 * a missing, different, repeated or stray record never passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "check.h"
#include "errors.h"

#define JS_TESTS                                                                                      \
  "const assert = require('node:assert');\n"                                                       \
  "\n"                                                                                              \
  "function test() {\n"                                                                             \
  "  let candidate = pick;\n"                                                                       \
  "  assert.deepEqual(candidate([1, 2], \"a, (b\"), \"EXPECTED_ONE\");\n"                              \
  "  assert.deepEqual(candidate({k: [3]}, 'x)'), [\"EXPECTED_TWO\", {z: 1}]);\n"                     \
  "}\n"                                                                                             \
  "\n"                                                                                              \
  "test();\n"

static void test_plan(void) {
  sq_calls_plan p;
  char err[512];
  const char *code = "function pick(a, b) { return 'CODE_CANARY'; }\n";
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_JAVASCRIPT, code, JS_TESTS, &p, err, sizeof err), 0);
  CHECK_EQ(p.n_calls, 2);
  /* the candidate's program: its code and the calls, no expected value */
  CHECK_CONTAINS(p.candidate, "CODE_CANARY");
  CHECK_CONTAINS(p.candidate, "candidate([1, 2], \"a, (b\")");
  CHECK_CONTAINS(p.candidate, "candidate({k: [3]}, 'x)')");
  CHECK(strstr(p.candidate, "EXPECTED_ONE") == NULL);
  CHECK(strstr(p.candidate, "EXPECTED_TWO") == NULL);
  /* the reference: the expected values, nothing of the code */
  CHECK_CONTAINS(p.reference, "\"EXPECTED_ONE\"");
  CHECK_CONTAINS(p.reference, "[\"EXPECTED_TWO\", {z: 1}]");
  CHECK(strstr(p.reference, "CODE_CANARY") == NULL);
  CHECK(strstr(p.reference, "candidate(") == NULL);
  sq_calls_plan_clear(&p);

  /* a line that carries logic is refused, naming it */
  const char *sneaky = "const assert = require('node:assert');\nfunction test() {\n  let candidate = pick;\n"
                       "  assert.deepEqual(candidate(1), 2);\n  process.exit(0);\n}\ntest();\n";
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_JAVASCRIPT, code, sneaky, &p, err, sizeof err), SQ_EINVAL);
  CHECK_CONTAINS(err, "line 5");
  CHECK_CONTAINS(err, "process.exit(0);");
  CHECK(p.candidate == NULL && p.reference == NULL);
  /* an assertion of another shape: not a call compared with a value */
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_JAVASCRIPT, code, "assert.ok(pick(1) > 2);\n", &p, err, sizeof err),
           SQ_EINVAL);
  CHECK_CONTAINS(err, "line 1");
  /* an unbalanced call does not match */
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_JAVASCRIPT, code, "assert.deepEqual(candidate(1, 2);\n", &p, err,
                               sizeof err),
           SQ_EINVAL);
  /* tests without an assertion */
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_JAVASCRIPT, code, "function test() {\n}\ntest();\n", &p, err, sizeof err),
           SQ_EINVAL);
  CHECK_CONTAINS(err, "no assertion");
  /* a string holding a raw newline joins the lines it spans; the line
   * numbers after it still count every line */
  const char *spans = "assert.deepEqual(candidate(`a\nb`), `c\nd`);\nassert.deepEqual(candidate(1), 2);\n"
                      "sneaky();\n";
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_JAVASCRIPT, code, spans, &p, err, sizeof err), SQ_EINVAL);
  CHECK_CONTAINS(err, "line 5"); /* the first assertion spans three lines */
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_JAVASCRIPT, code, "assert.deepEqual(candidate(`a\nb`), `c\nd`);\n", &p, err,
                               sizeof err),
           0);
  CHECK_EQ(p.n_calls, 1);
  CHECK_CONTAINS(p.reference, "`c\nd`");
  CHECK(strstr(p.candidate, "`c\nd`") == NULL);
  sq_calls_plan_clear(&p);
  /* Go: the tests run from init(), and main() is added when the code has none */
  const char *go_tests = "func TestAdd(t *testing.T) {\n  candidate := add\n"
                         "     { actual: candidate(1, 2), expected: 3 },\n}\n";
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_GO, "package add_test\nfunc add(a, b int) int { return a + b }\n", go_tests,
                               &p, err, sizeof err),
           0);
  CHECK_CONTAINS(p.candidate, "package main\n");
  CHECK_CONTAINS(p.candidate, "func init() {");
  CHECK_CONTAINS(p.candidate, "func main() {}");
  sq_calls_plan_clear(&p);
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_GO, "package main\nfunc main() {}\nfunc add(a, b int) int { return a + b }\n",
                               go_tests, &p, err, sizeof err),
           0);
  CHECK(strstr(strstr(p.candidate, "func main() {}") + 1, "func main() {}") == NULL);
  sq_calls_plan_clear(&p);
  /* Python has no rule here (judge.py judges it) */
  CHECK_EQ(sq_calls_plan_build(SQ_LANGUAGE_PYTHON, code, "assert f(1) == 2\n", &p, err, sizeof err), SQ_EINVAL);
  CHECK(sq_calls_rule_of(SQ_LANGUAGE_PYTHON) == NULL);
  for (int id = 1; id < SQ_LANGUAGE__COUNT; id++) {
    const sq_calls_rule *r = sq_calls_rule_of((sq_language_id)id);
    CHECK(r != NULL && r->language == (sq_language_id)id && r->asserts[0].pattern && r->driver && r->driver[0]);
  }
}

static void test_records(void) {
  char buf[256];
  snprintf(buf, sizeof buf, "hello" SQ_CALLS_MARK "0 [1,2]\nmiddle\n" SQ_CALLS_MARK "1 \"x\"\ntail");
  size_t len = strlen(buf);
  sq_calls_results cand;
  CHECK_EQ(sq_calls_take(buf, &len, 2, &cand), 0);
  CHECK_STR(buf, "hellomiddle\ntail"); /* the program's own output, records taken off */
  CHECK_EQ(len, strlen("hellomiddle\ntail"));
  CHECK_EQ(cand.written, 2);
  CHECK_STR(cand.text[0], "[1,2]");
  CHECK_STR(cand.text[1], "\"x\"");

  sq_calls_results ref;
  CHECK_EQ(sq_calls_results_unpack("0 [1,2]\n1 \"x\"\n", 2, &ref), 0);
  char why[256];
  CHECK(sq_calls_judge(&cand, &ref, why, sizeof why));
  int rc;
  char *packed = sq_calls_results_pack(&ref, &rc);
  CHECK_EQ(rc, 0);
  CHECK_STR(packed, "0 [1,2]\n1 \"x\"\n");
  free(packed);
  sq_calls_results_clear(&cand);

  /* a different value: failed, both texts named */
  snprintf(buf, sizeof buf, SQ_CALLS_MARK "0 [1,2]\n" SQ_CALLS_MARK "1 \"y\"\n");
  len = strlen(buf);
  CHECK_EQ(sq_calls_take(buf, &len, 2, &cand), 0);
  CHECK(!sq_calls_judge(&cand, &ref, why, sizeof why));
  CHECK_STR(why, "call 2 of 2: got \"y\", expected \"x\"");
  sq_calls_results_clear(&cand);

  /* a missing call (an early exit): failed */
  snprintf(buf, sizeof buf, SQ_CALLS_MARK "0 [1,2]\n");
  len = strlen(buf);
  CHECK_EQ(sq_calls_take(buf, &len, 2, &cand), 0);
  CHECK(!sq_calls_judge(&cand, &ref, why, sizeof why));
  CHECK_CONTAINS(why, "call 2 of 2 gave no result");
  sq_calls_results_clear(&cand);

  /* a forged record first and the real one after: the first is kept, and
   * a repeated index never passes even when a value is right */
  snprintf(buf, sizeof buf, SQ_CALLS_MARK "0 [1,2]\n" SQ_CALLS_MARK "1 \"x\"\n" SQ_CALLS_MARK "1 \"x\"\n");
  len = strlen(buf);
  CHECK_EQ(sq_calls_take(buf, &len, 2, &cand), 0);
  CHECK(cand.twice);
  CHECK(!sq_calls_judge(&cand, &ref, why, sizeof why));
  CHECK_CONTAINS(why, "twice");
  sq_calls_results_clear(&cand);

  /* a record of no call, or a malformed one: stray */
  snprintf(buf, sizeof buf, SQ_CALLS_MARK "0 [1,2]\n" SQ_CALLS_MARK "1 \"x\"\n" SQ_CALLS_MARK "7 1\n" SQ_CALLS_MARK
                            "junk\n");
  len = strlen(buf);
  CHECK_EQ(sq_calls_take(buf, &len, 2, &cand), 0);
  CHECK(cand.stray);
  CHECK(!sq_calls_judge(&cand, &ref, why, sizeof why));
  CHECK_EQ(len, 0);
  sq_calls_results_clear(&cand);

  /* a reference that missed a record packs to nothing */
  snprintf(buf, sizeof buf, SQ_CALLS_MARK "0 1\n");
  len = strlen(buf);
  CHECK_EQ(sq_calls_take(buf, &len, 2, &cand), 0);
  CHECK(sq_calls_results_pack(&cand, &rc) == NULL);
  CHECK_EQ(rc, SQ_EINVAL);
  sq_calls_results_clear(&cand);
  CHECK_EQ(sq_calls_results_unpack("0 1\n", 2, &cand), SQ_EINVAL);
  sq_calls_results_clear(&ref);
}

int main(void) {
  test_plan();
  test_records();
  return sq_check_done("test_calls");
}
