/* metrics_text.c: the fleet-wide totals (sq:{Q}:metrics), or one
 * process's registry, in the Prometheus text exposition format 0.0.4: one
 * HELP and TYPE per family, families in a fixed order, series sorted, every
 * histogram bucket written, the caller's constant labels (queue, worker)
 * on every sample. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "metrics.h"

typedef struct {
  const char *name, *type, *help;
} family;

static const family families[] = {
    {"sandq_tasks_total", "counter", "Results stored, by status (one per task)."},
    {"sandq_language_tasks_total", "counter", "Results stored, by the task's language and status."},
    {"sandq_compile_cache_lookups_total", "counter",
     "A compiled language's build looked up in a worker's compile cache: found (hit) or compiled (miss)."},
    {"sandq_tasks_retried_total", "counter", "Transient failures sent back to the queue for another attempt."},
    {"sandq_results_refused_total", "counter",
     "Results not stored: a result existed (duplicate) or the lease was lost (fenced)."},
    {"sandq_stage_duration_seconds", "histogram", "Time spent per stage of a task."},
    {"sandq_llm_request_duration_seconds", "histogram", "Duration of one HTTP exchange with an LLM provider."},
    {"sandq_llm_requests_total", "counter", "HTTP exchanges with an LLM provider, by outcome."},
    {"sandq_llm_errors_total", "counter", "LLM errors by provider and kind (content errors included)."},
    {"sandq_llm_tokens_total", "counter", "Tokens billed by an LLM provider."},
    {"sandq_llm_cost_usd_total", "counter", "LLM spend in US dollars."},
};
#define N_FAMILIES (sizeof families / sizeof families[0])

/* One stored field, parsed. */
typedef struct {
  int fam;        /* index into families */
  int part;       /* 0 sample, 1 bucket, 2 sum, 3 count */
  int le;         /* bucket index */
  char labels[224]; /* without le */
  double value;
} series;

typedef struct {
  series *v;
  size_t n, cap;
} series_list;

/* "name{labels}" -> family, part, labels, le. Returns -1 for a field of no
 * known family (a newer version's: skipped). */
static int parse_field(const char *f, series *s) {
  const char *brace = strchr(f, '{');
  size_t nlen = brace ? (size_t)(brace - f) : strlen(f);
  for (size_t i = 0; i < N_FAMILIES; i++) {
    size_t flen = strlen(families[i].name);
    if (nlen < flen || strncmp(f, families[i].name, flen) != 0) continue;
    const char *suffix = f + flen;
    size_t slen = nlen - flen;
    bool hist = strcmp(families[i].type, "histogram") == 0;
    if (slen == 0 && !hist) s->part = 0;
    else if (hist && slen == 7 && strncmp(suffix, "_bucket", 7) == 0) s->part = 1;
    else if (hist && slen == 4 && strncmp(suffix, "_sum", 4) == 0) s->part = 2;
    else if (hist && slen == 6 && strncmp(suffix, "_count", 6) == 0) s->part = 3;
    else continue;
    s->fam = (int)i;
    s->le = -1;
    s->labels[0] = '\0';
    if (!brace) return 0;
    size_t llen = strlen(brace + 1);
    if (llen == 0 || brace[llen] != '}' || llen >= sizeof s->labels) return -1;
    memcpy(s->labels, brace + 1, llen - 1);
    s->labels[llen - 1] = '\0';
    if (s->part == 1) {
      char *le = strstr(s->labels, "le=\"");
      if (!le) return -1;
      for (int b = 0; b < SQ_METRICS_N_BUCKETS; b++) {
        char want[32];
        snprintf(want, sizeof want, "le=\"%s\"", sq_metrics_bucket_le(b));
        if (strcmp(le, want) == 0) s->le = b;
      }
      if (s->le < 0) return -1;
      if (le > s->labels && le[-1] == ',') le--;
      *le = '\0';
    }
    return 0;
  }
  return -1;
}

static int add_series(series_list *l, const char *field, double value) {
  series s;
  if (parse_field(field, &s) != 0) return 0;
  s.value = value;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 256;
    series *v = realloc(l->v, cap * sizeof *v);
    if (!v) return SQ_ENOMEM;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = s;
  return 0;
}

static int collect(const char *field, const char *value, void *ud) { return add_series(ud, field, strtod(value, NULL)); }

void sq_metrics_labels_join(char *out, size_t outlen, const char *a, const char *b) {
  a = a ? a : "", b = b ? b : "";
  snprintf(out, outlen, "%s%s%s", a, a[0] && b[0] ? "," : "", b);
}

static int by_series(const void *a, const void *b) {
  const series *x = a, *y = b;
  if (x->fam != y->fam) return x->fam - y->fam;
  int c = strcmp(x->labels, y->labels);
  if (c) return c;
  if (x->part != y->part) return x->part - y->part;
  return x->le - y->le;
}

int sq_metrics_text_header(sq_buf *out, const char *name, const char *type, const char *help) {
  return sq_buf_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int sq_metrics_text_sample(sq_buf *out, const char *name, const char *labels, double value) {
  if (labels && labels[0]) return sq_buf_appendf(out, "%s{%s} %.17g\n", name, labels, value);
  return sq_buf_appendf(out, "%s %.17g\n", name, value);
}

/* Writes one histogram series (all buckets, sum, count) from v[0..n). */
static int emit_hist(sq_buf *out, const char *name, const char *const_labels, const series *v, size_t n) {
  double bucket[SQ_METRICS_N_BUCKETS] = {0}, sum = 0, count = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i].part == 1) bucket[v[i].le] = v[i].value;
    else if (v[i].part == 2) sum = v[i].value;
    else if (v[i].part == 3) count = v[i].value;
  }
  char labels[512];
  sq_metrics_labels_join(labels, sizeof labels, const_labels, v[0].labels);
  int rc = 0;
  for (int b = 0; b < SQ_METRICS_N_BUCKETS && rc == 0; b++)
    rc = sq_buf_appendf(out, "%s_bucket{%s%sle=\"%s\"} %.17g\n", name, labels, labels[0] ? "," : "",
                        sq_metrics_bucket_le(b), bucket[b]);
  char sname[128];
  snprintf(sname, sizeof sname, "%s_sum", name);
  if (!rc) rc = sq_metrics_text_sample(out, sname, labels, sum);
  snprintf(sname, sizeof sname, "%s_count", name);
  if (!rc) rc = sq_metrics_text_sample(out, sname, labels, count);
  return rc;
}

/* Writes l (sorted here) family by family. */
static int emit(series_list *l, const char *const_labels, sq_buf *out) {
  int rc = 0;
  if (l->n) qsort(l->v, l->n, sizeof *l->v, by_series);
  char labels[512];
  for (size_t f = 0; rc == 0 && f < N_FAMILIES; f++) {
    const family *fam = &families[f];
    size_t i = 0;
    while (i < l->n && l->v[i].fam != (int)f) i++;
    if (i == l->n) continue; /* nothing recorded yet */
    rc = sq_metrics_text_header(out, fam->name, fam->type, fam->help);
    while (rc == 0 && i < l->n && l->v[i].fam == (int)f) {
      size_t j = i;
      while (j < l->n && l->v[j].fam == (int)f && strcmp(l->v[j].labels, l->v[i].labels) == 0) j++;
      if (strcmp(fam->type, "histogram") == 0) {
        rc = emit_hist(out, fam->name, const_labels, l->v + i, j - i);
      } else {
        sq_metrics_labels_join(labels, sizeof labels, const_labels, l->v[i].labels);
        rc = sq_metrics_text_sample(out, fam->name, labels, l->v[i].value);
      }
      i = j;
    }
  }
  return rc;
}

int sq_metrics_text(sq_queue *q, const char *const_labels, sq_buf *out) {
  series_list l = {0};
  int rc = sq_queue_hash_get_all(q, SQ_METRICS_TOTALS, collect, &l);
  if (rc == 0) rc = emit(&l, const_labels, out);
  free(l.v);
  return rc;
}

int sq_metrics_text_local(sq_metrics *m, const char *const_labels, sq_buf *out) {
  series_list l = {0};
  const sq_queue_incr *items;
  size_t n = sq_metrics_totals(m, &items);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) rc = add_series(&l, items[i].field, items[i].delta);
  if (rc == 0) rc = emit(&l, const_labels, out);
  free(l.v);
  return rc;
}
