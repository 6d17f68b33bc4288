/* harness.c: wraps a task's code in judge.py (the tests go to the judge as
 * the run's input) or its listing in harness.py (both embedded at build
 * time), and reads their marks back off stderr. See harness.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "compiled.h"
#include "errors.h"
#include "util.h"

extern const char sq__harness_py[]; /* harness.py, by common/embed.cmake */

#define MARK_PREFIX "sandq-harness:"
#define NONCE_HEX 32
#define BEGIN_SUFFIX ":begin\n"

bool sq_harness_applies(const sq_task *t) { return t && (t->tests || t->entry_point); }

/* Where the tests and the check line start in listing (-1: none), as
 * sq_task_program lays it out: code "\n\n" tests "\n\n" check(E) "\n".
 * SQ_EINVAL when it is not so laid out. */
static int layout(const sq_task *t, const char *code, const char *listing, long *tests_at, long *check_at) {
  size_t len = strlen(listing), code_len = code ? strlen(code) : 0;
  int rc = 0;
  *tests_at = *check_at = -1;
  if (t->tests) {
    *tests_at = (long)code_len + 2;
    if ((size_t)*tests_at > len || strncmp(listing + *tests_at, t->tests, strlen(t->tests)) != 0) rc = SQ_EINVAL;
  }
  if (t->entry_point) {
    size_t tail = strlen("check()\n") + strlen(t->entry_point);
    *check_at = (long)(len - tail);
    if (tail > len || strncmp(listing + *check_at, "check(", 6) != 0) rc = SQ_EINVAL;
  }
  return rc;
}

int sq_harness_judge(const sq_task *t, const char *code, char **program, char **input, size_t *input_len) {
  *program = *input = NULL;
  *input_len = 0;
  char *listing = NULL;
  int rc = sq_task_program(t, code, &listing);
  if (rc) return rc;
  if (!sq_harness_applies(t)) {
    *program = listing;
    return 0;
  }
  long tests_at, check_at;
  rc = layout(t, code, listing, &tests_at, &check_at);
  sq_buf p = {0}, in = {0};
  if (!rc) rc = sq_compiled_append(&p, SQ_COMPILED_JUDGE);
  if (!rc) rc = sq_buf_append(&p, "main(b'", 7);
  if (!rc) rc = sq_base64_append(&p, code ? code : "", code ? strlen(code) : 0);
  if (!rc) rc = sq_buf_append(&p, "', b'", 5);
  if (!rc) rc = sq_base64_append(&p, sq__harness_py, strlen(sq__harness_py));
  if (!rc) rc = sq_buf_append(&p, "')\n", 3);
  if (!rc) rc = sq_buf_appendf(&in, "%ld %ld\n", tests_at, check_at);
  if (!rc) rc = sq_buf_append(&in, listing, strlen(listing));
  free(listing);
  if (rc) {
    sq_buf_clear(&p);
    sq_buf_clear(&in);
    return rc == SQ_EINVAL ? SQ_EINVAL : SQ_ENOMEM;
  }
  *program = p.data;
  *input_len = in.len;
  *input = in.data;
  return 0;
}

int sq_harness_program(const sq_task *t, const char *code, char **out) {
  *out = NULL;
  char *listing = NULL;
  int rc = sq_task_program(t, code, &listing);
  if (rc) return rc;
  if (!sq_harness_applies(t)) {
    *out = listing;
    return 0;
  }
  size_t len = strlen(listing);
  long tests_at, check_at;
  rc = layout(t, code, listing, &tests_at, &check_at);
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

/* Removes the first line of buf[0..*len) that begins with mark (its end
 * included) and copies the rest of that line into out (len > 0, always
 * terminated, cut to fit); returns whether there was one. */
static bool cut_line(char *buf, size_t *len, const char *mark, char *out, size_t out_len) {
  size_t n = strlen(mark);
  char *p = memmem(buf, *len, mark, n);
  if (!p) return false;
  char *text = p + n, *end = buf + *len;
  char *nl = memchr(text, '\n', (size_t)(end - text));
  size_t tn = (size_t)((nl ? nl : end) - text);
  snprintf(out, out_len, "%.*s", (int)(tn < out_len ? tn : out_len - 1), text);
  char *after = nl ? nl + 1 : end;
  memmove(p, after, (size_t)(end - after));
  *len -= (size_t)(after - p);
  return true;
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
  snprintf(mark + head, sizeof mark - head, "judge ");
  char judge[sizeof m->judge + sizeof m->judge_why + 2] = "";
  if (cut_line(err, &o->stderr_len, mark, judge, sizeof judge)) {
    char *sp = strchr(judge, ' ');
    if (sp) {
      *sp = '\0';
      snprintf(m->judge_why, sizeof m->judge_why, "%s", sp + 1);
    }
    if (strcmp(judge, "isolated") == 0 || strcmp(judge, "in_process") == 0)
      snprintf(m->judge, sizeof m->judge, "%s", judge);
    else
      m->judge_why[0] = '\0';
  }
  snprintf(mark + head, sizeof mark - head, "fail ");
  cut_line(err, &o->stderr_len, mark, m->fail, sizeof m->fail);
  snprintf(mark + head, sizeof mark - head, "limit ");
  if (!m->fail[0] && cut_line(err, &o->stderr_len, mark, m->fail, sizeof m->fail)) m->fail_cpu_limit = true;
  err[o->stderr_len] = '\0';
}
