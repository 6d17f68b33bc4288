/* report.c: what the producer shows about a batch: its counters, the
 * per-task table read out of the result BSON (libbson), the expectations
 * check, and the concatenated-BSON output file. */
#include <bson/bson.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"
#include "eval.h"
#include "log.h"
#include "producer.h"
#include "util.h"

void sq__report_counts(FILE *f, const char *batch, const sq_batch_stats *st) {
  fprintf(f, "batch %s\n", batch);
  fprintf(f, "  %-20s %8lld\n", "total", (long long)st->total);
  fprintf(f, "  %-20s %8lld\n", "done", (long long)st->done);
  fprintf(f, "  %-20s %8lld\n", "dead", (long long)st->dead);
  if (st->duplicate) fprintf(f, "  %-20s %8lld\n", "duplicate", (long long)st->duplicate);
  fprintf(f, "  %-20s %8s\n", "finished", st->finished_at_ms ? "yes" : "no");
  const char *push = sq__push_state_text(st->push);
  if (push) fprintf(f, "  %-20s %s\n", "push", push);
  if (st->cost_usd > 0 || st->budget_usd >= 0) fprintf(f, "  %-20s %12.6f\n", "cost_usd", st->cost_usd);
  if (st->budget_usd >= 0) fprintf(f, "  %-20s %12.6f\n", "budget_usd", st->budget_usd);
  if (st->n_statuses) fprintf(f, "  %-20s %8s\n", "status", "count");
  /* Sorted by name so the output is stable. */
  int order[SQ_QUEUE_MAX_STATUSES];
  for (int i = 0; i < st->n_statuses; i++) {
    int j = i;
    while (j > 0 && strcmp(st->statuses[order[j - 1]].name, st->statuses[i].name) > 0) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
  for (int i = 0; i < st->n_statuses; i++)
    fprintf(f, "  %-20s %8lld\n", st->statuses[order[i]].name, (long long)st->statuses[order[i]].count);
  if (st->n_statuses_dropped)
    fprintf(f, "  (%d more status counter(s) not shown)\n", st->n_statuses_dropped);
}

/* One stored result, as far as the report needs it. */
typedef struct {
  char *id;
  char *status;     /* "?" when absent */
  char *expect;     /* metadata.expect as text, NULL when absent */
  int match;        /* 1/0 against expect; -1 when no expect */
  int64_t total_ms; /* -1 when absent */
  bool bad_bson;    /* the stored value is not one valid BSON document */
} row;

/* What sq__report_results carries from one stored result to the next:
 * only the rows of --table are kept (without their documents). */
typedef struct {
  const char *batch;
  sq__out *out;     /* NULL: no --out */
  bool table;
  row *rows;
  size_t n, cap;
  size_t seen, bad, expected, differed;
  int err;
} row_list;

static char *iter_string(const bson_iter_t *it) {
  return BSON_ITER_HOLDS_UTF8(it) ? strdup(bson_iter_utf8(it, NULL)) : NULL;
}

/* metadata.expect: a status name, or an array of acceptable ones. */
static void read_expect(const bson_t *doc, row *r) {
  bson_iter_t it;
  r->match = -1;
  if (!bson_iter_init(&it, doc) || !bson_iter_find_descendant(&it, "metadata.expect", &it)) return;
  if (BSON_ITER_HOLDS_UTF8(&it)) {
    r->expect = iter_string(&it);
    r->match = r->expect && strcmp(r->expect, r->status) == 0;
    return;
  }
  if (!BSON_ITER_HOLDS_ARRAY(&it)) {
    r->expect = strdup("(not a status)");
    r->match = 0;
    return;
  }
  bson_iter_t child;
  sq_buf text = {0};
  r->match = 0;
  if (bson_iter_recurse(&it, &child)) {
    while (bson_iter_next(&child)) {
      if (!BSON_ITER_HOLDS_UTF8(&child)) continue;
      const char *s = bson_iter_utf8(&child, NULL);
      sq_buf_appendf(&text, "%s%s", text.len ? "|" : "", s);
      if (strcmp(s, r->status) == 0) r->match = 1;
    }
  }
  r->expect = text.data ? text.data : strdup("");
}

static int row_fill(row *r, const char *id, const uint8_t *data, size_t len) {
  bson_t doc;
  bson_iter_t it;
  r->total_ms = -1;
  r->id = strdup(id);
  if (!r->id) return SQ_ENOMEM;
  if (!sq__result_bson_ok(data, len) || !bson_init_static(&doc, data, len)) {
    r->bad_bson = true;
    r->status = strdup("(bad bson)");
    r->match = -1;
    return r->status ? 0 : SQ_ENOMEM;
  }
  if (bson_iter_init_find(&it, &doc, "status")) r->status = iter_string(&it);
  if (!r->status && !(r->status = strdup("?"))) return SQ_ENOMEM;
  if (bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "timings.total_ms", &it) &&
      (BSON_ITER_HOLDS_INT64(&it) || BSON_ITER_HOLDS_INT32(&it)))
    r->total_ms = bson_iter_as_int64(&it);
  read_expect(&doc, r);
  return 0;
}

static void row_clear(row *r) {
  free(r->id);
  free(r->status);
  free(r->expect);
}

/* Names a stored value that is not BSON on stderr. */
static void name_bad(const row *r, const char *batch, size_t len, bool out) {
  char id[80];
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)r->id; *p && o + 5 < sizeof id; p++)
    o += (size_t)(*p < 0x20 || *p == 0x7f ? snprintf(id + o, sizeof id - o, "\\x%02x", *p)
                                          : snprintf(id + o, sizeof id - o, "%c", *p));
  fprintf(stderr, "sandq-producer: result '%s' of batch %s is not a valid BSON document (%zu bytes); skipped%s\n", id,
          batch, len, out ? ", not written to --out" : "");
}

/* One stored result as it comes (sq_queue_batch_results' callback): to
 * --out, checked against metadata.expect, kept for --table. */
static int collect(const char *id, const uint8_t *bson, size_t len, void *ud) {
  row_list *l = ud;
  if (l->table && l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    row *rows = realloc(l->rows, cap * sizeof *rows);
    if (!rows) return l->err = SQ_ENOMEM;
    l->rows = rows;
    l->cap = cap;
  }
  row one = {0}, *r = l->table ? &l->rows[l->n++] : &one;
  memset(r, 0, sizeof *r);
  l->seen++;
  if ((l->err = row_fill(r, id, bson, len))) goto out;
  if (r->bad_bson) {
    name_bad(r, l->batch, len, l->out != NULL);
    l->bad++;
  } else if (l->out && (l->err = sq__out_put(l->out, bson, len))) {
    goto out;
  }
  if (r->match >= 0) {
    l->expected++;
    if (!r->match) {
      if (!l->differed++) fprintf(stderr, "sandq-producer: results that differ from metadata.expect:\n");
      char esc[4 * 128 + 1], status[64], expect[256];
      fprintf(stderr, "  %s: expected %s, got %s\n", sq_log_escape(r->id, esc, sizeof esc),
              sq_log_escape(r->expect, expect, sizeof expect), sq_log_escape(r->status, status, sizeof status));
    }
  }
out:
  if (!l->table) row_clear(&one);
  return l->err;
}

static int row_cmp(const void *a, const void *b) {
  return strcmp(((const row *)a)->id, ((const row *)b)->id);
}

/* --out may name a new path or a regular file, nothing else: renaming
 * over a symlink would replace the link, and a FIFO or device would not be
 * written at all. Returns 0 (with *mode the file's mode to keep, or 0 for
 * a new file) or SQ_EINVAL/SQ_EIO, explained on stderr. */
static int out_target(const char *path, mode_t *mode) {
  struct stat st;
  *mode = 0;
  if (lstat(path, &st) != 0) {
    if (errno == ENOENT) return 0;
    fprintf(stderr, "sandq-producer: --out %s: %s\n", path, strerror(errno));
    return SQ_EIO;
  }
  if (S_ISREG(st.st_mode)) {
    *mode = st.st_mode & 07777;
    return 0;
  }
  const char *what = S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISDIR(st.st_mode) ? "a directory" : S_ISSOCK(st.st_mode) ? "a socket" : "a device";
  fprintf(stderr, "sandq-producer: --out %s is %s; give a regular file or a new path\n", path, what);
  return SQ_EINVAL;
}

/* A new file of a unique name in path's directory (mkstemp): *tmp gets its
 * name (the caller clears it). Returns its descriptor, or -1 with errno set. */
static int temp_beside(const char *path, sq_buf *tmp) {
  const char *slash = strrchr(path, '/');
  if (sq_buf_appendf(tmp, "%.*s.sandq-out-XXXXXX", slash ? (int)(slash - path + 1) : 0, path) != 0) {
    errno = ENOMEM;
    return -1;
  }
  return mkstemp(tmp->data);
}

int sq__out_check(const char *path) {
  if (!path || strcmp(path, "-") == 0) return 0;
  mode_t mode;
  if (out_target(path, &mode) != 0) return SQ_EINVAL;
  /* A file of our own, made as sq__out_write makes its temporary one: a
   * file already there (the user's PATH.tmp, a FIFO) is never opened, let
   * alone removed. */
  sq_buf tmp = {0};
  int fd = temp_beside(path, &tmp), rc = 0;
  if (fd < 0) {
    fprintf(stderr, "sandq-producer: cannot write %s: %s\n", path, strerror(errno));
    rc = SQ_EIO;
  } else {
    close(fd);
    unlink(tmp.data);
  }
  sq_buf_clear(&tmp);
  return rc;
}

int sq__out_open(const char *path, sq__out *o) {
  memset(o, 0, sizeof *o);
  if (!path || strcmp(path, "-") == 0) {
    o->f = stdout;
    return 0;
  }
  mode_t mode;
  int rc = out_target(path, &mode);
  if (rc) return rc;
  sq_buf tmp = {0};
  int fd = temp_beside(path, &tmp);
  if (fd < 0) {
    fprintf(stderr, "sandq-producer: cannot create a temporary file for %s: %s\n", path, strerror(errno));
    sq_buf_clear(&tmp);
    return SQ_EIO;
  }
  if (!mode) {
    mode_t um = umask(0);
    umask(um);
    mode = 0666 & ~um;
  }
  o->tmp = tmp.data;
  if (fchmod(fd, mode) != 0 || !(o->path = strdup(path)) || !(o->f = fdopen(fd, "wb"))) {
    fprintf(stderr, "sandq-producer: writing %s: %s\n", o->tmp, strerror(errno ? errno : ENOMEM));
    close(fd);
    sq__out_abort(o);
    return SQ_EIO;
  }
  return 0;
}

int sq__out_put(sq__out *o, const void *data, size_t len) {
  if (o->err) return o->err;
  if (len && fwrite(data, 1, len, o->f) != len) {
    fprintf(stderr, "sandq-producer: writing %s: %s\n", o->tmp ? o->tmp : "to stdout", strerror(errno));
    o->err = SQ_EIO;
  }
  return o->err;
}

int sq__out_commit(sq__out *o) {
  int rc = o->err;
  if (!o->tmp) { /* stdout: flushed, never closed */
    if (!rc && fflush(o->f) != 0) {
      fprintf(stderr, "sandq-producer: writing to stdout: %s\n", strerror(errno));
      rc = SQ_EIO;
    }
    memset(o, 0, sizeof *o);
    return rc;
  }
  if (!rc && (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0)) rc = SQ_EIO;
  if (fclose(o->f) != 0) rc = SQ_EIO;
  o->f = NULL;
  if (rc && !o->err) {
    fprintf(stderr, "sandq-producer: writing %s: %s\n", o->tmp, strerror(errno));
  } else if (!rc && rename(o->tmp, o->path) != 0) {
    fprintf(stderr, "sandq-producer: cannot rename %s to %s: %s\n", o->tmp, o->path, strerror(errno));
    rc = SQ_EIO;
  }
  if (!rc) { /* renamed: nothing left to remove */
    free(o->tmp);
    o->tmp = NULL;
  }
  sq__out_abort(o);
  return rc;
}

void sq__out_abort(sq__out *o) {
  if (o->f && o->f != stdout) fclose(o->f);
  if (o->tmp) unlink(o->tmp);
  free(o->tmp);
  free(o->path);
  memset(o, 0, sizeof *o);
}

int sq__out_write(const char *path, const void *data, size_t len) {
  sq__out o;
  int rc = sq__out_open(path, &o);
  if (!rc) rc = sq__out_put(&o, data, len);
  if (!rc) return sq__out_commit(&o);
  sq__out_abort(&o);
  return rc;
}

int sq__results_done(sq_queue *q, const char *batch, int64_t *done) {
  sq_batch_stats st;
  int rc = sq_queue_batch_stats(q, batch, &st);
  *done = rc == SQ_EPARSE ? -1 : st.done; /* damaged counters: the results can still go to a new file */
  if (rc == SQ_EPARSE)
    fprintf(stderr, "sandq-producer: batch %s: %s; its done count is unknown\n", batch, sq_queue_errstr(q));
  else if (rc)
    fprintf(stderr, "sandq-producer: reading the counters of batch %s: %s\n", batch,
            rc == SQ_ENOMEM ? sq_strerror(rc) : sq_queue_errstr(q));
  return rc == SQ_EPARSE ? 0 : rc;
}

int sq__results_short(const char *batch, const char *out_path, size_t stored, int64_t done) {
  struct stat st;
  if (done < 0 && lstat(out_path, &st) == 0) {
    fprintf(stderr, "sandq-producer: batch %s: cannot tell whether all its results are stored (its counters are "
            "damaged): %s kept as it was; give --out a new path\n", batch, out_path);
    return SQ_ENOTFOUND;
  }
  if (done <= 0 || (int64_t)stored >= done) return 0;
  fprintf(stderr, "sandq-producer: batch %s has %zu stored result(s) of %lld done (deleted by results --delete, or "
          "past retention_s): %s not written\n", batch, stored, (long long)done, out_path);
  return SQ_ENOTFOUND;
}

static void print_table(FILE *f, const row_list *l) {
  int w = 4;
  for (size_t i = 0; i < l->n; i++) {
    int n = (int)strlen(l->rows[i].id);
    if (n > w) w = n;
  }
  if (w > 48) w = 48;
  fprintf(f, "%-*s  %-16s  %-16s  %s  %10s\n", w, "id", "status", "expected", " ", "total_ms");
  for (size_t i = 0; i < l->n; i++) {
    const row *r = &l->rows[i];
    char ms[24] = "-";
    if (r->total_ms >= 0) snprintf(ms, sizeof ms, "%lld", (long long)r->total_ms);
    char id[4 * 128 + 1], status[64], expect[256]; /* results are data: no escape codes to the terminal */
    fprintf(f, "%-*s  %-16s  %-16s  %s  %10s\n", w, sq_log_escape(r->id, id, sizeof id),
            sq_log_escape(r->status, status, sizeof status), sq_log_escape(r->expect ? r->expect : "-", expect, sizeof expect),
            r->match < 0 ? " " : r->match ? "✓" : "✗", ms);
  }
}

int sq__report_results(sq_queue *q, const char *batch, const char *out_path, bool table, FILE *f) {
  sq__out out = {0};
  row_list l = {.batch = batch, .table = table, .out = out_path ? &out : NULL};
  int code = SQ_EXIT_ERROR;
  int64_t done = 0;
  if (out_path && sq__out_open(out_path, &out) != 0) goto out;
  if (out_path && strcmp(out_path, "-") && sq__results_done(q, batch, &done) != 0) goto out;
  int rc = sq_queue_batch_results(q, batch, collect, &l);
  if (rc) {
    if (l.err != SQ_EIO) /* a write error was explained where it happened */
      fprintf(stderr, "sandq-producer: reading results of batch %s: %s\n", batch,
              l.err ? sq_strerror(l.err) : sq_queue_errstr(q));
    goto out;
  }
  if (out_path) {
    if (sq__results_short(batch, out_path, l.seen, done) || sq__out_commit(&out) != 0) goto out;
    fprintf(stderr, "sandq-producer: wrote %zu result(s) to %s\n", l.seen - l.bad, out_path);
  }
  if (table) {
    if (l.n) qsort(l.rows, l.n, sizeof *l.rows, row_cmp);
    print_table(f, &l);
  }
  fflush(f);
  if (l.bad) {
    fprintf(stderr, "sandq-producer: %zu stored result(s) of batch %s are not BSON\n", l.bad, batch);
    code = SQ_EXIT_BAD_RESULT;
  } else if (l.differed) {
    fprintf(stderr, "sandq-producer: %zu of %zu expectation(s) differed\n", l.differed, l.expected);
    code = SQ_EXIT_MISMATCH;
  } else {
    if (l.expected) fprintf(f, "expectations: %zu/%zu matched\n", l.expected, l.expected);
    code = SQ_EXIT_OK;
  }
out:
  sq__out_abort(&out);
  for (size_t i = 0; i < l.n; i++) row_clear(&l.rows[i]);
  free(l.rows);
  return code;
}
