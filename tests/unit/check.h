/* check.h: the assertions unit tests use. A failed check prints both sides
 * and the location, and the test exits 1 at the end. */
#ifndef SQ_CHECK_H
#define SQ_CHECK_H

#include <stdint.h>
#include <string.h>

extern int sq_check_failures;

void sq_check_fail_i(const char *file, int line, const char *expr, long long got, long long want);
void sq_check_fail_s(const char *file, int line, const char *expr, const char *got, const char *want);
void sq_check_fail(const char *file, int line, const char *expr);
/* Prints a summary; returns the process exit code (0 or 1). */
int sq_check_done(const char *name);

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
