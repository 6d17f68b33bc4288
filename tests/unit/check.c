/* check.c: reporting for check.h, and the skip rule it states. */
#include "check.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int sq_check_failures;
int sq_check_skipped;
static const char *group; /* NULL: the main group */
static bool group_known;   /* some sq_check_group call named it */

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

void sq_check_skip(const char *case_name, const char *why) {
  fprintf(stderr, "SKIP: %s: %s\n", case_name, why);
  sq_check_skipped++;
}

void sq_check_args(int argc, char **argv) { group = argc >= 2 && argv[1][0] != '-' ? argv[1] : NULL; }

bool sq_check_group(const char *g) {
  bool mine = !g || !group ? g == group : strcmp(g, group) == 0;
  if (mine && g) group_known = true;
  return mine;
}

int sq_check_done(const char *name) {
  if (group && !group_known) {
    fprintf(stderr, "%s: no case group named '%s'\n", name, group);
    sq_check_failures++;
  }
  if (sq_check_failures) {
    fprintf(stderr, "%s: %d check(s) failed%s\n", name, sq_check_failures,
            sq_check_skipped ? " (and some cases were skipped)" : "");
    return 1;
  }
  if (sq_check_skipped) {
    fprintf(stderr, "%s: %d case(s) skipped, the rest passed: reported as SKIP\n", name, sq_check_skipped);
    return 77;
  }
  fprintf(stderr, "%s: all checks passed\n", name);
  return 0;
}

int sq_check_put(const char *dir, const char *file, const char *value) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, value, strlen(value));
  close(fd);
  return n == (ssize_t)strlen(value) ? 0 : -1;
}
