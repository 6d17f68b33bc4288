/* test_checker.c: a case's stdout against its expected_stdout under each
 * checker, and the reason that names the first difference. */
#include <string.h>

#include "check.h"
#include "checker.h"

static bool match(sq_checker_kind kind, double tol, const char *got, const char *want, char *why) {
  sq_task_checker c = {.kind = kind, .tolerance = tol};
  return sq_checker_match(&c, got, strlen(got), want, why, 200);
}

int main(void) {
  char why[200];
  /* tokens: white space of any kind and amount between and around them */
  CHECK(match(SQ_CHECKER_TOKENS, 0, "1 2\n3\n", "1  2 3", why));
  CHECK(match(SQ_CHECKER_TOKENS, 0, "\t\r\n", "", why));
  CHECK(!match(SQ_CHECKER_TOKENS, 0, "-7\n", "7\n", why));
  CHECK_STR(why, "expected `7`, got `-7`");
  CHECK(!match(SQ_CHECKER_TOKENS, 0, "1 2", "1 2 3", why));
  CHECK_STR(why, "expected `3`, got the end of output");
  CHECK(!match(SQ_CHECKER_TOKENS, 0, "1 2 3", "1 2", why));
  CHECK_STR(why, "got `3` past the expected end");
  CHECK(!match(SQ_CHECKER_TOKENS, 0, "1.0", "1", why)); /* numbers are text here */
  /* a long token is cut, control bytes shown as '?' */
  CHECK(!match(SQ_CHECKER_TOKENS, 0, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\x01", "b", why));
  CHECK_STR(why, "expected `b`, got `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...`");
  /* output with a NUL byte is compared as bytes, not cut at it */
  sq_task_checker tok = {.kind = SQ_CHECKER_TOKENS};
  CHECK(!sq_checker_match(&tok, "1\0002", 3, "1", why, sizeof why));
  CHECK_STR(why, "expected `1`, got `1?2`");
  /* exact: every byte, the final newline too */
  CHECK(match(SQ_CHECKER_EXACT, 0, "a b\n", "a b\n", why));
  CHECK(!match(SQ_CHECKER_EXACT, 0, "a b", "a b\n", why));
  CHECK_STR(why, "at byte 3 expected `?`, got ``");
  CHECK(!match(SQ_CHECKER_EXACT, 0, "a  b\n", "a b\n", why));
  /* float: numbers within tol * max(1, |want|), other tokens as text */
  CHECK(match(SQ_CHECKER_FLOAT, 1e-6, "0.3333333 x\n", "0.33333333333 x", why));
  CHECK(match(SQ_CHECKER_FLOAT, 1e-6, "1000000.5", "1000000", why)); /* relative above 1 */
  CHECK(!match(SQ_CHECKER_FLOAT, 1e-6, "0.334", "0.333", why));
  CHECK_STR(why, "expected `0.333`, got `0.334`");
  CHECK(!match(SQ_CHECKER_FLOAT, 1e-6, "nan", "nan", why) == false); /* equal text is equal */
  CHECK(!match(SQ_CHECKER_FLOAT, 1e-6, "inf", "1e308", why));
  CHECK(!match(SQ_CHECKER_FLOAT, 1e-6, "y", "x", why));
  /* no output at all */
  sq_task_checker ex = {.kind = SQ_CHECKER_EXACT};
  CHECK(sq_checker_match(&ex, NULL, 0, "", NULL, 0));
  CHECK(!sq_checker_match(&tok, NULL, 0, "1", why, sizeof why));
  CHECK_STR(why, "expected `1`, got the end of output");
  return sq_check_done("test_checker");
}
