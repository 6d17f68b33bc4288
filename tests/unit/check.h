/* check.h: the assertions unit tests use. A failed check prints both sides
 * and the location; the test's exit code says how it went.
 *
 * SKIP rule (for every unit test and script; ctest's SKIP_RETURN_CODE is 77):
 *  - A ctest test reports Passed only when every case in it ran and passed.
 *    A case that cannot run here calls sq_check_skip(case, why), which
 *    prints "SKIP: <case>: <why>"; sq_check_done then returns 1 if any check
 *    failed, else 77 if any case was skipped, else 0. A skipped case is never
 *    counted as passed.
 *  - So that a missing capability does not hide the cases that do run, cases
 *    needing a capability the rest do not (root, a memory cgroup) form a
 *    group of their own: the binary runs only that group when given its name
 *    (sq_check_group), and tests/CMakeLists.txt registers it as a ctest test
 *    of its own (sq_unit_group: test_jail_root, test_jail_warm_memory_cgroup).
 *    Its 77 then means "this machine lacks the capability", and the main
 *    test still reports Passed for the rest.
 *  - A binary or script whose every case needs what is missing (python3, a
 *    server, root, data) prints "SKIP: <why>" and exits 77 (scripts:
 *    sq_skip in tests/lib/env.sh); one that skips some cases for a reason
 *    that varies per case (abuse.sh's payloads, each needing a jail layer)
 *    lists them and exits 77 after the rest passed. */
#ifndef SQ_CHECK_H
#define SQ_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

extern int sq_check_failures;
extern int sq_check_skipped;

void sq_check_fail_i(const char *file, int line, const char *expr, long long got, long long want);
void sq_check_fail_s(const char *file, int line, const char *expr, const char *got, const char *want);
void sq_check_fail(const char *file, int line, const char *expr);
/* Reports case as not run here and why; counted by sq_check_done. */
void sq_check_skip(const char *case_name, const char *why);
/* Remembers which case group this run is for: argv[1] when it names one
 * (main passes argc, argv), else the main group (NULL). */
void sq_check_args(int argc, char **argv);
/* True when this run is for group (NULL: the main group, run without a
 * group argument). */
bool sq_check_group(const char *group);
/* Prints a summary; returns the process exit code: 1 when a check failed,
 * else 77 when a case was skipped, else 0. */
int sq_check_done(const char *name);

/* Writes value to dir/file in one write (a cgroup file, say); 0 or -1. */
int sq_check_put(const char *dir, const char *file, const char *value);

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) sq_check_fail(__FILE__, __LINE__, #cond);                     \
  } while (0)
#define CHECK_EQ(got, want)                                                    \
  do {                                                                         \
    long long g_ = (long long)(got), w_ = (long long)(want);                   \
    if (g_ != w_) sq_check_fail_i(__FILE__, __LINE__, #got " == " #want, g_, w_); \
  } while (0)
#define CHECK_STR(got, want)                                                   \
  do {                                                                         \
    const char *g_ = (got), *w_ = (want);                                      \
    if (!g_ || !w_ ? g_ != w_ : strcmp(g_, w_) != 0)                           \
      sq_check_fail_s(__FILE__, __LINE__, #got " == " #want, g_, w_);          \
  } while (0)
#define CHECK_CONTAINS(hay, needle)                                            \
  do {                                                                         \
    const char *h_ = (hay), *n_ = (needle);                                    \
    if (!h_ || !strstr(h_, n_))                                                \
      sq_check_fail_s(__FILE__, __LINE__, #hay " contains " #needle, h_, n_);  \
  } while (0)

#endif
