/* harness.c: wraps a task's code in judge.py (the tests go to the judge as
 * the run's input) or its listing in harness.py (both embedded at build
 * time), and reads their marks back off stderr. See harness.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "harness.h"

#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "compiled.h"
#include "errors.h"
#include "util.h"

extern const char sq__harness_py[];   /* harness.py, by common/embed.cmake */
extern const char sq__judge_py[];     /* judge.py */
extern const char sq__workspace_py[]; /* workspace.py */

#define STR_(x) #x
#define STR(x) STR_(x)
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

/* The program of every judged task: the zygote's copy of judge.py (its
 * prelude, harness.h) when there is one, else the copy that comes first in
 * the input. The same text for every task: nothing of the task is in it. */
static const char judge_program[] =
    "import sys\n"
    "p = sys.modules.get('sandq_prelude')\n"
    "if p is not None and hasattr(p, 'judge'):\n"
    "    p.judge(globals())\n"
    "else:\n"
    "    import posix, marshal\n"
    "    def read(n):\n"
    "        b = b''\n"
    "        while len(b) < n:\n"
    "            c = posix.read(0, n - len(b))\n"
    "            if not c:\n"
    "                posix.write(2, b'sandq-judge: the input ended early\\n')\n"
    "                posix._exit(125)\n"
    "            b += c\n"
    "        return b\n"
    "    head = read(" STR(SQ_HARNESS_JUDGE_HEAD_BYTES) ")\n"
    "    f = head.split()\n"
    "    if len(f) != 10 or f[:2] != [b'sandq-judge', b'" STR(SQ_HARNESS_JUDGE_VERSION) "'] or not f[3].isdigit():\n"
    "        posix.write(2, b'sandq-judge: not an input of version " STR(SQ_HARNESS_JUDGE_VERSION) "\\n')\n"
    "        posix._exit(125)\n"
    "    j = read(int(f[3]))\n"
    "    ns = {'__name__': 'sandq_judge', '__builtins__': __builtins__}\n"
    "    exec(marshal.loads(j) if f[2] == b'm' else compile(j, '<sandq-judge>', 'exec', dont_inherit=True), ns)\n"
    "    ns['judge'](globals(), head)\n";

const char *sq_harness_judge_program(void) { return judge_program; }

static char *prelude;
static pthread_once_t prelude_once = PTHREAD_ONCE_INIT;

static void prelude_make(void) {
  sq_buf b = {0};
  if (sq_buf_appendf(&b, "%s\n%s", sq__workspace_py, sq__judge_py) == 0) prelude = b.data;
}

const char *sq_harness_prelude(void) {
  pthread_once(&prelude_once, prelude_make);
  return prelude ? prelude : sq__workspace_py; /* out of memory: tasks load judge.py from their input */
}

int sq_harness_judge_input(const sq_task *t, const char *code, const void *plan, size_t plan_len, char **input,
                           size_t *input_len) {
  *input = NULL;
  *input_len = 0;
  char *listing = NULL;
  int rc = sq_task_program(t, code, &listing);
  if (rc) return rc;
  long tests_at, check_at;
  rc = layout(t, code, listing, &tests_at, &check_at);
  size_t judge_len, code_len = code ? strlen(code) : 0, harness_len = strlen(sq__harness_py);
  size_t listing_len = strlen(listing);
  bool marshalled;
  const void *judge = sq_compiled_code(SQ_COMPILED_JUDGE, &judge_len, &marshalled);
  char head[SQ_HARNESS_JUDGE_HEAD_BYTES + 1];
  if (!plan) plan_len = 0;
  int n = snprintf(head, sizeof head, "sandq-judge %d %c %zu %zu %zu %zu %zu %ld %ld", SQ_HARNESS_JUDGE_VERSION,
                   marshalled ? 'm' : 's', judge_len, code_len, harness_len, plan_len, listing_len, tests_at,
                   check_at);
  if (!rc && (n < 0 || n >= SQ_HARNESS_JUDGE_HEAD_BYTES)) rc = SQ_EINVAL;
  sq_buf in = {0};
  if (!rc) {
    memset(head + n, ' ', (size_t)(SQ_HARNESS_JUDGE_HEAD_BYTES - 1 - n));
    head[SQ_HARNESS_JUDGE_HEAD_BYTES - 1] = '\n';
    rc = sq_buf_append(&in, head, SQ_HARNESS_JUDGE_HEAD_BYTES);
  }
  if (!rc) rc = sq_buf_append(&in, judge, judge_len);
  if (!rc) rc = sq_buf_append(&in, code ? code : "", code_len);
  if (!rc) rc = sq_buf_append(&in, sq__harness_py, harness_len);
  if (!rc && plan_len) rc = sq_buf_append(&in, plan, plan_len);
  if (!rc) rc = sq_buf_append(&in, listing, listing_len);
  free(listing);
  if (rc) {
    sq_buf_clear(&in);
    return rc == SQ_EINVAL ? SQ_EINVAL : SQ_ENOMEM;
  }
  *input = in.data;
  *input_len = in.len;
  return 0;
}

/* One decimal field of a head: the next one after *p, into *v. */
static bool head_field(const char **p, const char *end, long *v) {
  while (*p < end && **p == ' ') (*p)++;
  if (*p >= end || !((**p >= '0' && **p <= '9') || **p == '-')) return false;
  char *stop;
  errno = 0;
  long x = strtol(*p, &stop, 10);
  if (errno || stop == *p || stop > end || (stop < end && *stop != ' ' && *stop != '\n')) return false;
  *p = stop;
  *v = x;
  return true;
}

int sq_harness_judge_input_read(const char *in, size_t len, sq_harness_judge_frame *f) {
  memset(f, 0, sizeof *f);
  const size_t head = SQ_HARNESS_JUDGE_HEAD_BYTES;
  char want[32];
  int wn = snprintf(want, sizeof want, "sandq-judge %d ", SQ_HARNESS_JUDGE_VERSION);
  if (len < head || in[head - 1] != '\n' || memcmp(in, want, (size_t)wn) != 0) return SQ_EINVAL;
  const char *p = in + wn, *end = in + head - 1;
  if (*p != 'm' && *p != 's') return SQ_EINVAL;
  f->marshalled = *p++ == 'm';
  long v[7];
  for (int i = 0; i < 7; i++)
    if (!head_field(&p, end, &v[i]) || (i < 5 && v[i] < 0) || (i >= 5 && v[i] < -1)) return SQ_EINVAL;
  while (p < end && *p == ' ') p++;
  if (p != end) return SQ_EINVAL;
  size_t at = head, sizes[5];
  const char **parts[5] = {&f->judge, &f->code, &f->harness, &f->plan, &f->listing};
  for (int i = 0; i < 5; i++) {
    sizes[i] = (size_t)v[i];
    if (sizes[i] > len - at) return SQ_EINVAL;
    *parts[i] = in + at;
    at += sizes[i];
  }
  if (at != len) return SQ_EINVAL;
  f->judge_len = sizes[0];
  f->code_len = sizes[1];
  f->harness_len = sizes[2];
  f->plan_len = sizes[3];
  f->listing_len = sizes[4];
  f->tests_at = v[5];
  f->check_at = v[6];
  if (f->tests_at > (long)f->listing_len || f->check_at > (long)f->listing_len) return SQ_EINVAL;
  return 0;
}

int sq_harness_judge(const sq_task *t, const char *code, const void *plan, size_t plan_len, char **program,
                     char **input, size_t *input_len) {
  *program = *input = NULL;
  *input_len = 0;
  if (!sq_harness_applies(t)) return sq_task_program(t, code, program);
  int rc = sq_harness_judge_input(t, code, plan, plan_len, input, input_len);
  if (!rc && !(*program = strdup(judge_program))) rc = SQ_ENOMEM;
  if (rc) {
    free(*input);
    *input = NULL;
    *input_len = 0;
  }
  return rc;
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

/* The plan mark, "plan SHA256 BASE64": its bytes into m when they decode
 * and their digest is the one written; the line goes either way. */
static void take_plan(char *err, size_t *len, const char *mark, sq_harness_marks *m) {
  char line[SQ_HARNESS_PLAN_MAX_LINE + 2];
  if (!cut_line(err, len, mark, line, sizeof line)) return;
  size_t n = strlen(line);
  if (n < 66 || line[64] != ' ' || n > SQ_HARNESS_PLAN_MAX_LINE) return;
  unsigned char *bytes = malloc((n - 65) / 4 * 3 + 1), md[32];
  long got = bytes ? sq_base64_decode(line + 65, n - 65, bytes) : -1;
  unsigned int mdn = 0;
  char hex[65];
  if (got > 0 && EVP_Digest(bytes, (size_t)got, md, &mdn, EVP_sha256(), NULL) && mdn == 32) {
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    if (memcmp(hex, line, 64) == 0) {
      m->plan = bytes;
      m->plan_len = (size_t)got;
      return;
    }
  }
  free(bytes);
}

void sq_harness_marks_clear(sq_harness_marks *m) {
  free(m->plan);
  m->plan = NULL;
  m->plan_len = 0;
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
  snprintf(mark + head, sizeof mark - head, "plan ");
  take_plan(err, &o->stderr_len, mark, m);
  snprintf(mark + head, sizeof mark - head, "fail ");
  cut_line(err, &o->stderr_len, mark, m->fail, sizeof m->fail);
  snprintf(mark + head, sizeof mark - head, "limit ");
  if (!m->fail[0] && cut_line(err, &o->stderr_len, mark, m->fail, sizeof m->fail)) m->fail_cpu_limit = true;
  err[o->stderr_len] = '\0';
}
