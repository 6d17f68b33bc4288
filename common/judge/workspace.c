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

bool sq_workspace_applies(const sq_task *t) {
  return t && (t->language != SQ_TASK_PYTHON || t->n_files > 0 || t->n_fetch > 0);
}

static int append_b64_str(sq_buf *b, const char *s) {
  int rc = sq_buf_append(b, "'", 1);
  if (!rc) rc = sq_base64_append(b, s, strlen(s));
  if (!rc) rc = sq_buf_append(b, "'", 1);
  return rc;
}

int sq_workspace_program(const sq_task *t, const char *inner, char **out) {
  *out = NULL;
  sq_buf b = {0};
  int rc = sq_compiled_append(&b, SQ_COMPILED_WORKSPACE);
  if (!rc) rc = sq_buf_appendf(&b, "main('%s', ", t->language == SQ_TASK_PYTHON ? "python" : "bash");
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
  if (!rc) rc = sq_buf_appendf(&b, "], %u, %d)\n", SQ_TASK_FETCH_BYTES_MAX, SQ_TASK_FETCH_FILES_MAX);
  if (rc) {
    sq_buf_clear(&b);
    return SQ_ENOMEM;
  }
  *out = b.data;
  return 0;
}

void sq_workspace_files_clear(sq_workspace_files *f) {
  for (size_t i = 0; i < f->n; i++) {
    free(f->files[i].name);
    free(f->files[i].data);
  }
  free(f->files);
  *f = (sq_workspace_files){0};
}

/* Reads the lines of a block body [p, end): "F|T NAME64 DATA64\n" each. */
static int read_block(const char *p, const char *end, sq_workspace_files *f) {
  size_t cap = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *sp1 = nl ? memchr(p, ' ', (size_t)(nl - p)) : NULL;
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(nl - sp1 - 1)) : NULL;
    if (!sp2 || sp1 != p + 1 || (p[0] != 'F' && p[0] != 'T')) return SQ_EPARSE;
    size_t nlen = (size_t)(sp2 - sp1 - 1), dlen = (size_t)(nl - sp2 - 1);
    if (f->n == cap) {
      size_t ncap = cap ? cap * 2 : 8;
      sq_workspace_file *grown = realloc(f->files, ncap * sizeof *grown);
      if (!grown) return SQ_ENOMEM;
      f->files = grown;
      cap = ncap;
    }
    sq_workspace_file *w = &f->files[f->n];
    *w = (sq_workspace_file){.truncated = p[0] == 'T'};
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
  int rc = 0;
  if (err && o->stderr_len >= begin_len && memcmp(err, MARK_PREFIX, prefix) == 0 &&
      memcmp(err + prefix + NONCE_HEX, BEGIN_SUFFIX, strlen(BEGIN_SUFFIX)) == 0 &&
      strspn(err + prefix, "0123456789abcdef") >= NONCE_HEX) {
    char out_mark[64], end_mark[64];
    snprintf(out_mark, sizeof out_mark, "%.*s:out\n", (int)(prefix + NONCE_HEX), err);
    snprintf(end_mark, sizeof end_mark, "%.*s:end\n", (int)(prefix + NONCE_HEX), err);
    memmove(err, err + begin_len, o->stderr_len - begin_len);
    o->stderr_len -= begin_len;
    char *at = memmem(err, o->stderr_len, out_mark, strlen(out_mark));
    if (at) {
      const char *body = at + strlen(out_mark);
      char *end = memmem(body, o->stderr_len - (size_t)(body - err), end_mark, strlen(end_mark));
      if (end) {
        rc = read_block(body, end, f);
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
  return rc;
}
