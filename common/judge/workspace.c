/* workspace.c: wraps a task's program in workspace.py (embedded at build
 * time) and reads its files back off stderr. See workspace.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "compiled.h"
#include "errors.h"
#include "util.h"

#define MARK_PREFIX "sandq-files:"
#define NONCE_HEX 32
#define BEGIN_SUFFIX ":begin\n"
#define COMPILE_SUFFIX ":compile\n"

bool sq_workspace_applies(const sq_task *t) {
  return t && (t->language != SQ_TASK_PYTHON || t->n_files > 0 || t->n_fetch > 0);
}

static int append_b64_str(sq_buf *b, const char *s) {
  int rc = sq_buf_append(b, "'", 1);
  if (!rc) rc = sq_base64_append(b, s, strlen(s));
  if (!rc) rc = sq_buf_append(b, "'", 1);
  return rc;
}

/* A NULL-terminated list of words as ['B64', ...]. */
static int append_b64_list(sq_buf *b, const char *const *words) {
  int rc = sq_buf_append(b, "[", 1);
  for (size_t i = 0; !rc && words[i]; i++) {
    rc = append_b64_str(b, words[i]);
    if (!rc) rc = sq_buf_append(b, ", ", 2);
  }
  return rc ? rc : sq_buf_append(b, "]", 1);
}

/* A cached build as [('NAME64', 'DATA64', executable), ...]. */
static int append_build(sq_buf *b, const sq_workspace_build *build) {
  int rc = sq_buf_append(b, ", 'build': [", 12);
  for (size_t i = 0; !rc && i < build->n; i++) {
    const sq_workspace_build_file *f = &build->files[i];
    rc = sq_buf_append(b, "(", 1);
    if (!rc) rc = append_b64_str(b, f->name);
    if (!rc) rc = sq_buf_append(b, ", '", 3);
    if (!rc) rc = sq_base64_append(b, f->data, f->len);
    if (!rc) rc = sq_buf_appendf(b, "', %s), ", f->executable ? "True" : "False");
  }
  return rc ? rc : sq_buf_append(b, "]", 1);
}

/* The program's own CPU seconds (the jail's rounding, sq_jail_cpu_limit_s;
 * 0 where run sets none: the jail's limit only) and memory (MiB) its run
 * is held to, as the spec and the standby request both give them. */
static void run_cpu_mem(const sq_jail_limits *run, long long *cpu_s, long long *mem) {
  *cpu_s = run && run->cpu_ms > 0 ? sq_jail_cpu_limit_s(run->cpu_ms) : 0;
  *mem = run && run->memory_mib > 0 ? run->memory_mib : 512;
}

int sq_workspace_standby(const sq_task *t, const sq_jail_limits *run, char *buf, size_t len) {
  const sq_language *l = t ? sq_language_get(t->language) : NULL;
  if (len) buf[0] = '\0';
  if (!l || !l->standby[0]) return 0;
  long long cpu_s, mem;
  run_cpu_mem(run, &cpu_s, &mem);
  long long as_mib = l->address_space_mib > 0 ? l->address_space_mib : mem;
  sq_buf b = {0};
  int rc = sq_buf_appendf(&b, "sandq-standby 1\n%lld %lld %lld\n", cpu_s, as_mib, mem);
  const char *const *lists[] = {l->standby, l->env};
  for (size_t k = 0; !rc && k < 2; k++) {
    for (size_t i = 0; !rc && lists[k][i]; i++) {
      if (i) rc = sq_buf_append(&b, " ", 1);
      if (!rc) rc = sq_base64_append(&b, lists[k][i], strlen(lists[k][i]));
    }
    if (!rc) rc = sq_buf_append(&b, "\n", 1);
  }
  size_t n = rc ? 0 : b.len;
  if (n && n < len && n <= SQ_WORKSPACE_STANDBY_MAX) memcpy(buf, b.data, n + 1);
  else n = 0;
  sq_buf_clear(&b);
  return rc ? SQ_ENOMEM : (int)n;
}

/* The language's steps for workspace.py's run_steps, as a dict literal. */
static int append_spec(sq_buf *b, const sq_task *t, const sq_jail_limits *run, const sq_workspace_build_use *use) {
  const sq_language *l = sq_language_get(t->language);
  long long cpu_s, mem;
  run_cpu_mem(run, &cpu_s, &mem);
  /* The run's address space: the program's memory limit, unless the
   * language is held by the cgroup alone (its jail-wide rule stays). */
  long long as_mib = l->address_space_mib > 0 ? 0 : mem;
  int rc = sq_buf_append(b, ", {'source': ", 13);
  if (!rc) rc = append_b64_str(b, l->source_name);
  if (!rc) rc = sq_buf_append(b, ", 'compile': ", 13);
  if (!rc) rc = append_b64_list(b, l->compile);
  if (!rc) rc = sq_buf_append(b, ", 'run': ", 9);
  if (!rc) rc = append_b64_list(b, l->run);
  if (!rc) rc = sq_buf_append(b, ", 'env': ", 9);
  if (!rc) rc = append_b64_list(b, l->env);
  if (!rc) rc = sq_buf_appendf(b, ", 'mem': %lld, 'cpu_s': %lld, 'run_as_mib': %lld", mem, cpu_s, as_mib);
  char standby[SQ_WORKSPACE_STANDBY_MAX + 1];
  int sn = rc ? 0 : sq_workspace_standby(t, run, standby, sizeof standby);
  if (sn < 0) rc = sn;
  if (!rc && sn > 0) {
    rc = sq_buf_append(b, ", 'standby': '", 14);
    if (!rc) rc = sq_base64_append(b, standby, (size_t)sn);
    if (!rc) rc = sq_buf_append(b, "'", 1);
  }
  if (!rc && use && use->cached) rc = append_build(b, use->cached);
  else if (!rc && use && use->emit_max_bytes) rc = sq_buf_appendf(b, ", 'emit': %zu", use->emit_max_bytes);
  return rc ? rc : sq_buf_append(b, "}", 1);
}

extern const char sq__workspace_py[]; /* workspace.py, by common/embed.cmake */

const char *sq_workspace_source(void) { return sq__workspace_py; }

/* main: the prelude's copy of workspace.py when the zygote loaded it (a
 * full one), else the program's own, carried in base64 (a lean zygote,
 * while the full ones start or when they are down: sq_jail_config). */
static const char from_prelude[] = "import sys\nif 'sandq_prelude' in sys.modules:\n"
                                   "    main = sys.modules['sandq_prelude'].main\n"
                                   "else:\n    import binascii\n    exec(binascii.a2b_base64(b'";

static int append_main(sq_buf *b, bool prelude) {
  if (!prelude) return sq_compiled_append(b, SQ_COMPILED_WORKSPACE);
  sq_buf own = {0};
  int rc = sq_compiled_append(&own, SQ_COMPILED_WORKSPACE);
  if (!rc) rc = sq_buf_append(b, from_prelude, sizeof from_prelude - 1);
  if (!rc) rc = sq_base64_append(b, own.data, own.len);
  if (!rc) rc = sq_buf_append(b, "'))\n", 4);
  sq_buf_clear(&own);
  return rc;
}

int sq_workspace_program(const sq_task *t, const char *inner, const sq_jail_limits *run,
                         const sq_workspace_build_use *build, bool prelude, char **out) {
  *out = NULL;
  sq_buf b = {0};
  int rc = append_main(&b, prelude);
  if (!rc) rc = sq_buf_appendf(&b, "main('%s', ", sq_language_get(t->language)->name);
  if (!rc) rc = append_b64_str(&b, inner ? inner : "");
  if (!rc) rc = sq_buf_append(&b, ", {", 3);
  for (size_t i = 0; !rc && i < t->n_files; i++) { /* contents are checked base64 already */
    if (!rc) rc = append_b64_str(&b, t->files[i].name);
    if (!rc) rc = sq_buf_appendf(&b, ": '%s', ", t->files[i].base64);
  }
  if (!rc) rc = sq_buf_append(&b, "}, [", 4);
  for (size_t i = 0; !rc && i < t->n_fetch; i++) {
    rc = append_b64_str(&b, t->fetch_files[i]);
    if (!rc) rc = sq_buf_append(&b, ", ", 2);
  }
  if (!rc) rc = sq_buf_appendf(&b, "], %u, %d", SQ_TASK_FETCH_BYTES_MAX, SQ_TASK_FETCH_FILES_MAX);
  if (!rc && t->language != SQ_TASK_PYTHON && t->language != SQ_TASK_BASH)
    rc = append_spec(&b, t, run, build);
  if (!rc) rc = sq_buf_append(&b, ")\n", 2);
  if (rc) {
    sq_buf_clear(&b);
    return SQ_ENOMEM;
  }
  *out = b.data;
  return 0;
}

void sq_workspace_build_clear(sq_workspace_build *b) {
  for (size_t i = 0; i < b->n; i++) {
    free(b->files[i].name);
    free(b->files[i].data);
  }
  free(b->files);
  *b = (sq_workspace_build){0};
}

void sq_workspace_files_clear(sq_workspace_files *f) {
  for (size_t i = 0; i < f->n; i++) {
    free(f->files[i].name);
    free(f->files[i].data);
  }
  free(f->files);
  sq_workspace_build_clear(&f->build);
  *f = (sq_workspace_files){0};
}

/* Reads the lines of a block body [p, end): "F|FLAG NAME64 DATA64\n" each
 * (flag: T for the out block, a file cut at the budget; X for the build
 * block, an executable), the flag kept in the file's truncated. */
static int read_block(const char *p, const char *end, char flag, sq_workspace_files *f) {
  size_t cap = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *sp1 = nl ? memchr(p, ' ', (size_t)(nl - p)) : NULL;
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(nl - sp1 - 1)) : NULL;
    if (!sp2 || sp1 != p + 1 || (p[0] != 'F' && p[0] != flag)) return SQ_EPARSE;
    size_t nlen = (size_t)(sp2 - sp1 - 1), dlen = (size_t)(nl - sp2 - 1);
    if (f->n == cap) {
      size_t ncap = cap ? cap * 2 : 8;
      sq_workspace_file *grown = realloc(f->files, ncap * sizeof *grown);
      if (!grown) return SQ_ENOMEM;
      f->files = grown;
      cap = ncap;
    }
    sq_workspace_file *w = &f->files[f->n];
    *w = (sq_workspace_file){.truncated = p[0] == flag};
    w->name = malloc(nlen / 4 * 3 + 1);
    w->data = malloc(dlen / 4 * 3 + 1);
    if (!w->name || !w->data) {
      free(w->name);
      free(w->data);
      return SQ_ENOMEM;
    }
    f->n++;
    long nn = sq_base64_decode(sp1 + 1, nlen, (unsigned char *)w->name);
    long dn = sq_base64_decode(sp2 + 1, dlen, w->data);
    if (nn <= 0 || dn < 0 || memchr(w->name, 0, (size_t)nn)) return SQ_EPARSE;
    w->name[nn] = '\0';
    w->len = (size_t)dn;
    p = nl + 1;
  }
  return 0;
}

/* Takes the build block off the start of err (where workspace.py writes
 * it, before the program starts) into b; nothing when err does not start
 * with its mark. A block cut short (the run ended while it was written)
 * is dropped with everything after it. Returns 0 or SQ_ENOMEM. */
static int take_build(char *err, size_t *len, const char *nonce_mark, sq_workspace_build *b) {
  char mark[64], end_mark[64];
  snprintf(mark, sizeof mark, "%.*s:build\n", (int)(strlen(MARK_PREFIX) + NONCE_HEX), nonce_mark);
  snprintf(end_mark, sizeof end_mark, "%.*s:built\n", (int)(strlen(MARK_PREFIX) + NONCE_HEX), nonce_mark);
  if (*len < strlen(mark) || memcmp(err, mark, strlen(mark)) != 0) return 0;
  const char *body = err + strlen(mark);
  char *end = memmem(body, *len - strlen(mark), end_mark, strlen(end_mark));
  if (!end) {
    *len = 0;
    return 0;
  }
  sq_workspace_files tmp = {0};
  int rc = read_block(body, end, 'X', &tmp);
  if (rc == 0 && tmp.n > 0 && (b->files = calloc(tmp.n, sizeof *b->files)) == NULL) rc = SQ_ENOMEM;
  for (size_t i = 0; rc == 0 && i < tmp.n; i++) {
    b->files[i] = (sq_workspace_build_file){
        .name = tmp.files[i].name, .data = tmp.files[i].data, .len = tmp.files[i].len, .executable = tmp.files[i].truncated};
    tmp.files[i].name = NULL;
    tmp.files[i].data = NULL;
    b->bytes += b->files[i].len;
    b->n++;
  }
  sq_workspace_files_clear(&tmp);
  if (rc == SQ_EPARSE) rc = 0; /* a block that does not read is no build */
  if (rc) sq_workspace_build_clear(b);
  char *tail = end + strlen(end_mark);
  size_t rest = *len - (size_t)(tail - err);
  memmove(err, tail, rest);
  *len = rest;
  return rc;
}

/* Takes the nonce's line with suffix off the start of err, where only
 * workspace.py writes (before the program runs); whether it was there. */
static bool take_first_mark(char *err, size_t *len, const char *nonce_mark, const char *suffix) {
  char mark[64];
  int n = snprintf(mark, sizeof mark, "%.*s%s", (int)(strlen(MARK_PREFIX) + NONCE_HEX), nonce_mark, suffix);
  if (n <= 0 || *len < (size_t)n || memcmp(err, mark, (size_t)n) != 0) return false;
  memmove(err, err + n, *len - (size_t)n);
  *len -= (size_t)n;
  return true;
}

/* Takes the compile mark (the nonce's ":compile" line, which workspace.py
 * writes only after a compiler's refusal, before anything of the program
 * ran) off stderr; out_mark gives the nonce. */
static void take_compile_mark(char *err, size_t *len, const char *out_mark, sq_workspace_files *f) {
  char mark[64];
  snprintf(mark, sizeof mark, "%.*s%s", (int)(strlen(MARK_PREFIX) + NONCE_HEX), out_mark, COMPILE_SUFFIX);
  char *at = memmem(err, *len, mark, strlen(mark));
  if (!at) return;
  f->compile_error = true;
  size_t tail = *len - (size_t)(at - err) - strlen(mark);
  memmove(at, at + strlen(mark), tail);
  *len -= strlen(mark);
}

void sq_workspace_compile_reason(const sq_jail_outcome *o, char *buf, size_t len) {
  if (!len) return;
  buf[0] = '\0';
  const char *s = o->stderr_buf ? o->stderr_buf : "", *end = s + o->stderr_len;
  const char *first = NULL, *first_end = NULL;
  for (const char *p = s; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    size_t n = (size_t)(e - p);
    bool blank = strspn(p, " \t\r") >= n || p[0] == '#'; /* go build's "# package" header */
    if (!blank && !first) first = p, first_end = e;
    if (!blank && (memmem(p, n, "error", 5) || memmem(p, n, "Error", 5))) {
      first = p, first_end = e;
      break;
    }
    p = e + 1;
  }
  if (first) snprintf(buf, len, "%.*s", (int)(first_end - first), first);
}

/* Cuts one stream to cap bytes; whether it was over. */
static bool hold_to(char *buf, size_t *len, bool *truncated, size_t cap) {
  if (!buf || *len <= cap) return false;
  *len = cap;
  buf[cap] = '\0';
  *truncated = true;
  return true;
}

int sq_workspace_take_files(sq_jail_outcome *o, int64_t output_kib, sq_workspace_files *f) {
  *f = (sq_workspace_files){0};
  const size_t prefix = strlen(MARK_PREFIX), begin_len = prefix + NONCE_HEX + strlen(BEGIN_SUFFIX);
  char *err = o->stderr_buf;
  int rc = 0, brc = 0;
  sq_workspace_build build = {0};
  if (err && o->stderr_len >= begin_len && memcmp(err, MARK_PREFIX, prefix) == 0 &&
      memcmp(err + prefix + NONCE_HEX, BEGIN_SUFFIX, strlen(BEGIN_SUFFIX)) == 0 &&
      strspn(err + prefix, "0123456789abcdef") >= NONCE_HEX) {
    char out_mark[64], end_mark[64];
    snprintf(out_mark, sizeof out_mark, "%.*s:out\n", (int)(prefix + NONCE_HEX), err);
    snprintf(end_mark, sizeof end_mark, "%.*s:end\n", (int)(prefix + NONCE_HEX), err);
    memmove(err, err + begin_len, o->stderr_len - begin_len);
    o->stderr_len -= begin_len;
    brc = take_build(err, &o->stderr_len, out_mark, &build);
    f->standby = take_first_mark(err, &o->stderr_len, out_mark, ":standby\n");
    take_compile_mark(err, &o->stderr_len, out_mark, f);
    char *at = memmem(err, o->stderr_len, out_mark, strlen(out_mark));
    if (at) {
      const char *body = at + strlen(out_mark);
      char *end = memmem(body, o->stderr_len - (size_t)(body - err), end_mark, strlen(end_mark));
      if (end) {
        rc = read_block(body, end, 'T', f);
        if (rc == SQ_EPARSE) rc = 0; /* a block that does not read is no files */
        f->sent = rc == 0;
        if (!f->sent) sq_workspace_files_clear(f);
        char *tail = end + strlen(end_mark);
        size_t rest = o->stderr_len - (size_t)(tail - err);
        memmove(at, tail, rest); /* the program's stderr after the block, if any */
        o->stderr_len = (size_t)(at - err) + rest;
      } else {
        o->stderr_len = (size_t)(at - err); /* cut before its end: no files */
      }
    }
    err[o->stderr_len] = '\0';
  }
  if (output_kib > 0) {
    size_t cap = (size_t)output_kib * 1024;
    bool over = hold_to(o->stdout_buf, &o->stdout_len, &o->stdout_truncated, cap);
    over = hold_to(o->stderr_buf, &o->stderr_len, &o->stderr_truncated, cap) || over;
    if (over && (o->end == SQ_JAIL_EXITED_OK || o->end == SQ_JAIL_EXITED_ERROR || o->end == SQ_JAIL_ASSERTION))
      o->end = SQ_JAIL_OUTPUT_LIMIT;
  }
  f->build = build;
  return rc ? rc : brc;
}
