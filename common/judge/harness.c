/* harness.c: wraps a task's listing in harness.py (embedded at build time)
 * and reads the harness's marks back off stderr. See harness.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "errors.h"
#include "util.h"

extern const char sq__harness_py[]; /* harness.py, by common/embed.cmake */

#define MARK_PREFIX "sandq-harness:"
#define NONCE_HEX 32
#define BEGIN_SUFFIX ":begin\n"

bool sq_harness_applies(const sq_task *t) { return t && (t->tests || t->entry_point); }

int sq_harness_program(const sq_task *t, const char *code, char **out) {
  *out = NULL;
  char *listing = NULL;
  int rc = sq_task_program(t, code, &listing);
  if (rc) return rc;
  if (!sq_harness_applies(t)) {
    *out = listing;
    return 0;
  }
  /* Where the tests and the check line start in the listing, as
   * sq_task_program lays it out: code "\n\n" tests "\n\n" check(E) "\n". */
  size_t len = strlen(listing), code_len = code ? strlen(code) : 0;
  long tests_at = -1, check_at = -1;
  if (t->tests) {
    tests_at = (long)code_len + 2;
    if ((size_t)tests_at > len || strncmp(listing + tests_at, t->tests, strlen(t->tests)) != 0) rc = SQ_EINVAL;
  }
  if (t->entry_point) {
    size_t tail = strlen("check()\n") + strlen(t->entry_point);
    check_at = (long)(len - tail);
    if (tail > len || strncmp(listing + check_at, "check(", 6) != 0) rc = SQ_EINVAL;
  }
  sq_buf b = {0};
  if (!rc) rc = sq_buf_append(&b, sq__harness_py, strlen(sq__harness_py));
  if (!rc) rc = sq_buf_append(&b, "main(b'", 7);
  if (!rc) rc = sq_base64_append(&b, listing, len);
  if (!rc) rc = sq_buf_appendf(&b, "', %ld, %ld)\n", tests_at, check_at);
  free(listing);
  if (rc) {
    sq_buf_clear(&b);
    return rc == SQ_EINVAL ? SQ_EINVAL : SQ_ENOMEM;
  }
  *out = b.data;
  return 0;
}

/* Removes every occurrence of mark (n bytes) from buf[0..*len); returns
 * whether there was one. */
static bool cut_all(char *buf, size_t *len, const char *mark, size_t n) {
  bool found = false;
  char *p;
  while ((p = memmem(buf, *len, mark, n)) != NULL) {
    memmove(p, p + n, *len - (size_t)(p - buf) - n);
    *len -= n;
    found = true;
  }
  return found;
}

void sq_harness_take_marks(sq_jail_outcome *o, sq_harness_marks *m) {
  *m = (sq_harness_marks){0};
  const size_t prefix = strlen(MARK_PREFIX), begin_len = prefix + NONCE_HEX + strlen(BEGIN_SUFFIX);
  char *err = o->stderr_buf;
  if (!err || o->stderr_len < begin_len || memcmp(err, MARK_PREFIX, prefix) != 0 ||
      memcmp(err + prefix + NONCE_HEX, BEGIN_SUFFIX, strlen(BEGIN_SUFFIX)) != 0)
    return;
  for (size_t i = prefix; i < prefix + NONCE_HEX; i++)
    if (!strchr("0123456789abcdef", err[i]) || !err[i]) return;
  char mark[96];
  snprintf(mark, sizeof mark, "%.*s", (int)(prefix + NONCE_HEX + 1), err); /* "sandq-harness:NONCE:" */
  size_t head = strlen(mark);
  m->begun = true;
  memmove(err, err + begin_len, o->stderr_len - begin_len);
  o->stderr_len -= begin_len;
  snprintf(mark + head, sizeof mark - head, "end\n");
  m->completed = cut_all(err, &o->stderr_len, mark, strlen(mark));
  snprintf(mark + head, sizeof mark - head, "equal-to-anything\n");
  m->equal_to_anything = cut_all(err, &o->stderr_len, mark, strlen(mark));
  err[o->stderr_len] = '\0';
}
