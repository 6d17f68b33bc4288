/* check.c: reporting for check.h. */
#include "check.h"

#include <stdio.h>

int sq_check_failures;

void sq_check_fail(const char *file, int line, const char *expr) {
  fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
  sq_check_failures++;
}

void sq_check_fail_i(const char *file, int line, const char *expr, long long got, long long want) {
  fprintf(stderr, "%s:%d: check failed: %s\n  got:  %lld\n  want: %lld\n", file, line, expr, got, want);
  sq_check_failures++;
}

void sq_check_fail_s(const char *file, int line, const char *expr, const char *got, const char *want) {
  fprintf(stderr, "%s:%d: check failed: %s\n  got:  \"%s\"\n  want: \"%s\"\n", file, line, expr,
          got ? got : "(null)", want ? want : "(null)");
  sq_check_failures++;
}

int sq_check_done(const char *name) {
  if (sq_check_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, sq_check_failures);
    return 1;
  }
  fprintf(stderr, "%s: all checks passed\n", name);
  return 0;
}
