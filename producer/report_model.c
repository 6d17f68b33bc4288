/* report_model.c: a batch's results into the report's numbers: counts by
 * status, pass@k per problem and overall (the unbiased estimator, stats.c),
 * failures grouped by the kind of their reason, latency percentiles per
 * stage, tokens and cost per provider and model, the slowest and costliest
 * tasks. Reads the result BSON (libbson); no I/O. */
#include <bson/bson.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "errors.h"
#include "eval.h"
#include "reason.h"
#include "stats.h"
#include "util.h"
#include "utf8.h"
#include "strmap.h"

const char *sq__stage_name(sq__stage s) {
  static const char *const names[] = {"queue", "llm", "exec", "total", "all_attempts"};
  return s < SQ__STAGE_COUNT ? names[s] : "?";
}

bool sq__result_bson_ok(const uint8_t *bson, size_t len) {
  bson_t doc;
  return bson_init_static(&doc, bson, len) && bson_validate(&doc, BSON_VALIDATE_NONE, NULL);
}

/* A stored string as text every output can carry: through the one
 * sanitizer (utf8.h), so invalid UTF-8 or a NUL in a stored value reaches
 * no JSON, CSV or HTML as it is. */
static char *clean_copy(const char *s, size_t len) {
  sq_buf b = {0};
  if (sq_utf8_sanitize(s, len, &b) != 0) {
    sq_buf_clear(&b);
    return NULL;
  }
  return b.data ? b.data : strdup("");
}

static char *utf8_at(const bson_t *doc, const char *path) {
  bson_iter_t it;
  if (!bson_iter_init(&it, doc) || !bson_iter_find_descendant(&it, path, &it) || !BSON_ITER_HOLDS_UTF8(&it))
    return NULL;
  uint32_t len = 0;
  const char *s = bson_iter_utf8(&it, &len);
  return clean_copy(s, len);
}

/* A count or a time read back: a whole number in 0..2^53, or -1 (unknown)
 * for what is absent, negative, not finite or out of range; a double is
 * checked before its conversion (NaN or 1e300 would be undefined). */
#define COUNT_MAX 9007199254740992.0
static int64_t int_at(const bson_t *doc, const char *path) {
  bson_iter_t it;
  if (!bson_iter_init(&it, doc) || !bson_iter_find_descendant(&it, path, &it)) return -1;
  double d = BSON_ITER_HOLDS_INT64(&it) || BSON_ITER_HOLDS_INT32(&it) ? (double)bson_iter_as_int64(&it)
             : BSON_ITER_HOLDS_DOUBLE(&it)                             ? bson_iter_double(&it)
                                                                       : -1;
  return isfinite(d) && d >= 0 && d <= COUNT_MAX ? (int64_t)d : -1;
}

/* a + b for counts of at most 2^53 each, saturating at INT64_MAX / 2, so
 * that a sum of two sums (prompt and completion tokens) still fits */
#define SUM_MAX (INT64_MAX / 2)
static int64_t sat_add(int64_t a, int64_t b) { return a > SUM_MAX - b ? SUM_MAX : a + b; }

static bool has(const bson_t *doc, const char *path) {
  bson_iter_t it;
  return bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, path, &it);
}

int sq__report_row_read(const sq__result_doc *d, sq__report_row *r) {
  memset(r, 0, sizeof *r);
  bson_t doc;
  r->id = clean_copy(d->id, strlen(d->id));
  if (!r->id) return SQ_ENOMEM;
  if (!sq__result_bson_ok(d->bson, d->len) || !bson_init_static(&doc, d->bson, d->len)) {
    r->status = strdup("(bad bson)");
    r->task_id = strdup(r->id);
    return r->status && r->task_id ? 0 : SQ_ENOMEM;
  }
  r->status = utf8_at(&doc, "status");
  if (!r->status && !(r->status = strdup("?"))) return SQ_ENOMEM;
  r->passed = strcmp(r->status, "passed") == 0;
  r->reason = utf8_at(&doc, "reason");
  /* metadata.task_id groups samples of one problem; a number is kept as its text */
  bson_iter_t it;
  if (bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "metadata.task_id", &it)) {
    if (BSON_ITER_HOLDS_UTF8(&it)) {
      uint32_t len = 0;
      const char *s = bson_iter_utf8(&it, &len);
      r->task_id = clean_copy(s, len);
    } else if (BSON_ITER_HOLDS_INT32(&it) || BSON_ITER_HOLDS_INT64(&it)) {
      char num[32];
      snprintf(num, sizeof num, "%lld", (long long)bson_iter_as_int64(&it));
      r->task_id = strdup(num);
    }
  }
  if (!r->task_id && !(r->task_id = strdup(r->id))) return SQ_ENOMEM;
  r->judge = utf8_at(&doc, "judge");
  r->has_llm = has(&doc, "llm");
  r->ran = has(&doc, "jail");
  if (r->has_llm) {
    r->provider = utf8_at(&doc, "llm.provider");
    r->model = utf8_at(&doc, "llm.model");
    /* unknown counts add nothing; a cost that is not a finite amount neither */
    r->prompt_tokens = int_at(&doc, "llm.prompt_tokens");
    r->completion_tokens = int_at(&doc, "llm.completion_tokens");
    if (r->prompt_tokens < 0) r->prompt_tokens = 0;
    if (r->completion_tokens < 0) r->completion_tokens = 0;
    if (bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "llm.cost_usd", &it) && BSON_ITER_HOLDS_DOUBLE(&it))
      r->cost_usd = bson_iter_double(&it);
    if (!(isfinite(r->cost_usd) && r->cost_usd >= 0 && r->cost_usd <= 1e12)) r->cost_usd = 0;
  }
  if (!r->passed && strcmp(r->status, "ok") != 0 && bson_iter_init(&it, &doc) &&
      bson_iter_find_descendant(&it, "llm.reply", &it) && BSON_ITER_HOLDS_UTF8(&it)) {
    uint32_t len = 0;
    const char *s = bson_iter_utf8(&it, &len);
    bool cut = len > SQ__REPORT_REPLY_MAX;
    if (cut) len = SQ__REPORT_REPLY_MAX; /* a character cut here becomes one U+FFFD */
    r->llm_reply = clean_copy(s, len);
    r->llm_reply_cut = cut || (bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "llm.reply_truncated", &it) &&
                               BSON_ITER_HOLDS_BOOL(&it) && bson_iter_bool(&it));
  }
  r->dataset = utf8_at(&doc, "metadata.dataset");
  r->temperature = -1;
  if (bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "llm.temperature", &it) && BSON_ITER_HOLDS_DOUBLE(&it) &&
      isfinite(bson_iter_double(&it)))
    r->temperature = bson_iter_double(&it);
  int64_t attempts = int_at(&doc, "attempts");
  r->attempts = attempts < 1 ? 1 : attempts > 1000000 ? 1000000 : (int)attempts;
  static const char *const paths[SQ__STAGE_COUNT] = {"timings.queue_ms", "timings.llm_ms", "timings.exec_ms",
                                                     "timings.total_ms", "timings.all_attempts_ms"};
  for (int s = 0; s < SQ__STAGE_COUNT; s++) r->ms[s] = int_at(&doc, paths[s]); /* -1: unknown */
  if (r->ms[SQ__STAGE_ALL_ATTEMPTS] < r->ms[SQ__STAGE_TOTAL]) r->ms[SQ__STAGE_ALL_ATTEMPTS] = r->ms[SQ__STAGE_TOTAL];
  return 0;
}

void sq__report_row_clear(sq__report_row *r) {
  free(r->id), free(r->task_id), free(r->status), free(r->reason), free(r->provider), free(r->model), free(r->dataset);
  free(r->judge), free(r->llm_reply);
  memset(r, 0, sizeof *r);
}

static int cmp_row_task(const void *a, const void *b) {
  const sq__report_row *x = *(const sq__report_row *const *)a, *y = *(const sq__report_row *const *)b;
  int c = strcmp(x->task_id, y->task_id);
  return c ? c : strcmp(x->id, y->id);
}

/* Problems: rows grouped by task_id (rows are sorted by id, not task_id). */
static int build_problems(sq__report *r) {
  if (!(r->problems = calloc(r->n_rows ? r->n_rows : 1, sizeof *r->problems))) return SQ_ENOMEM;
  const sq__report_row **order = malloc((r->n_rows ? r->n_rows : 1) * sizeof *order);
  if (!order) return SQ_ENOMEM;
  for (size_t i = 0; i < r->n_rows; i++) order[i] = &r->rows[i];
  qsort(order, r->n_rows, sizeof *order, cmp_row_task);
  for (size_t i = 0; i < r->n_rows; i++) {
    const sq__report_row *x = order[i];
    sq__report_problem *p = r->n_problems ? &r->problems[r->n_problems - 1] : NULL;
    if (!p || strcmp(p->task_id, x->task_id) != 0) {
      p = &r->problems[r->n_problems++];
      if (!(p->task_id = strdup(x->task_id))) {
        free(order);
        return SQ_ENOMEM;
      }
    }
    p->n++;
    p->c += x->passed;
    sq_status st;
    if (sq_status_parse(x->status, &st) == 0) p->status_counts[st]++;
  }
  free(order);
  for (int j = 0; j < r->n_k; j++) {
    double sum = 0;
    int64_t counted = 0;
    for (size_t i = 0; i < r->n_problems; i++) {
      sq__report_problem *p = &r->problems[i];
      p->pass_at_k[j] = sq_stats_pass_at_k(p->n, p->c, r->k[j]);
      if (p->pass_at_k[j] >= 0) sum += p->pass_at_k[j], counted++;
    }
    r->pass_at_k[j] = counted ? sum / (double)counted : -1;
    r->pass_at_k_problems[j] = counted;
  }
  return 0;
}

/* The group of the pair (a, b) in *at, added as the next index (the map's
 * count) when new (*added). The key is a's length, a, b: no two pairs make
 * one key, whatever bytes they hold. 0, or SQ_ENOMEM. */
static int group_of(sq_strmap *groups, const char *a, const char *b, size_t *at, bool *added) {
  sq_buf key = {0};
  if (sq_buf_appendf(&key, "%zu:%s%s", strlen(a), a, b) != 0) return SQ_ENOMEM;
  size_t next = sq_strmap_count(groups);
  int rc = sq_strmap_add(groups, key.data, next, at);
  sq_buf_clear(&key);
  if (rc < 0) return rc;
  *added = rc == 0;
  if (*added) *at = next;
  return 0;
}

static int cmp_failure(const void *a, const void *b) {
  const sq__report_failure *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  int c = strcmp(x->status, y->status);
  return c ? c : strcmp(x->kind, y->kind);
}

/* Failures: every result that did not pass or end ok, by status and reason kind. */
static int build_failures(sq__report *r) {
  /* grouped in a hash: 100,000 results of distinct kinds took 83 s in a scan */
  sq_strmap *g = sq_strmap_new();
  if (!g || !(r->failures = calloc(r->n_rows ? r->n_rows : 1, sizeof *r->failures))) {
    sq_strmap_free(g);
    return SQ_ENOMEM;
  }
  int rc = 0;
  for (size_t i = 0; i < r->n_rows && !rc; i++) {
    const sq__report_row *x = &r->rows[i];
    if (x->passed || strcmp(x->status, "ok") == 0) continue;
    char kind[160];
    sq_reason_kind(x->reason, kind, sizeof kind);
    if (!kind[0]) snprintf(kind, sizeof kind, "(no reason given)");
    size_t at;
    bool added;
    if (group_of(g, x->status, kind, &at, &added) != 0) {
      rc = SQ_ENOMEM;
      break;
    }
    sq__report_failure *f = &r->failures[at];
    if (added) {
      r->n_failures++;
      f->status = strdup(x->status);
      f->kind = strdup(kind);
      f->example = x->reason ? strdup(x->reason) : NULL;
      if (!f->status || !f->kind || (x->reason && !f->example)) rc = SQ_ENOMEM;
    }
    f->count++;
    if (f->n_ids < (int)(sizeof f->ids / sizeof f->ids[0]) && !(f->ids[f->n_ids++] = strdup(x->id))) rc = SQ_ENOMEM;
  }
  sq_strmap_free(g);
  if (!rc) qsort(r->failures, r->n_failures, sizeof *r->failures, cmp_failure);
  return rc;
}

static int build_latency(sq__report *r) {
  int64_t *v = malloc((r->n_rows ? r->n_rows : 1) * sizeof *v);
  if (!v) return SQ_ENOMEM;
  for (int s = 0; s < SQ__STAGE_COUNT; s++) {
    size_t n = 0;
    double sum = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
      const sq__report_row *x = &r->rows[i];
      /* a stage counts for the tasks that went through it */
      if ((s == SQ__STAGE_LLM && !x->has_llm) || (s == SQ__STAGE_EXEC && !x->ran) || x->ms[s] < 0) continue;
      v[n++] = x->ms[s];
      sum += (double)x->ms[s];
    }
    sq_stats_sort_i64(v, n);
    sq__report_latency *l = &r->latency[s];
    *l = (sq__report_latency){.count = (int64_t)n, .p50 = sq_stats_percentile(v, n, 50),
                              .p90 = sq_stats_percentile(v, n, 90), .p99 = sq_stats_percentile(v, n, 99),
                              .max = n ? v[n - 1] : 0, .mean = n ? sum / (double)n : 0};
  }
  free(v);
  return 0;
}

static int cmp_llm(const void *a, const void *b) {
  const sq__report_llm *x = a, *y = b;
  if (x->cost_usd != y->cost_usd) return x->cost_usd > y->cost_usd ? -1 : 1;
  int64_t tx = sat_add(x->prompt_tokens, x->completion_tokens), ty = sat_add(y->prompt_tokens, y->completion_tokens);
  if (tx != ty) return tx > ty ? -1 : 1;
  return strcmp(x->provider, y->provider);
}

static int build_llm(sq__report *r) {
  sq_strmap *idx = sq_strmap_new();
  if (!idx || !(r->llm = calloc(r->n_rows ? r->n_rows : 1, sizeof *r->llm))) {
    sq_strmap_free(idx);
    return SQ_ENOMEM;
  }
  int rc = 0;
  for (size_t i = 0; i < r->n_rows && !rc; i++) {
    const sq__report_row *x = &r->rows[i];
    if (!x->has_llm) continue;
    size_t at;
    bool added;
    /* "?" for a missing name, as shown: a missing and a "?" model are one group */
    if (group_of(idx, x->provider ? x->provider : "?", x->model ? x->model : "?", &at, &added) != 0) {
      rc = SQ_ENOMEM;
      break;
    }
    sq__report_llm *g = &r->llm[at];
    if (added) {
      r->n_llm++;
      g->provider = strdup(x->provider ? x->provider : "?");
      g->model = strdup(x->model ? x->model : "?");
      if (!g->provider || !g->model) rc = SQ_ENOMEM;
    }
    g->tasks++;
    g->prompt_tokens = sat_add(g->prompt_tokens, x->prompt_tokens);
    g->completion_tokens = sat_add(g->completion_tokens, x->completion_tokens);
    g->cost_usd += x->cost_usd;
  }
  sq_strmap_free(idx);
  if (!rc) qsort(r->llm, r->n_llm, sizeof *r->llm, cmp_llm);
  return rc;
}

/* The top SQ__REPORT_TOP row indexes by key (descending), keeping those with key > 0. */
static size_t top_rows(const sq__report *r, double (*key)(const sq__report_row *), size_t *out) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_rows; i++) {
    double k = key(&r->rows[i]);
    if (!(k > 0)) continue;
    if (n == SQ__REPORT_TOP && !(k > key(&r->rows[out[SQ__REPORT_TOP - 1]]))) continue;
    size_t at = n < SQ__REPORT_TOP ? n++ : SQ__REPORT_TOP - 1;
    while (at > 0 && key(&r->rows[out[at - 1]]) < k) out[at] = out[at - 1], at--;
    out[at] = i;
  }
  return n;
}

static double key_total(const sq__report_row *x) { return (double)x->ms[SQ__STAGE_TOTAL]; }
static double key_cost(const sq__report_row *x) { return x->cost_usd; }

int sq__natural_cmp(const char *a, const char *b) {
  while (*a && *b) {
    if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
      while (*a == '0') a++;
      while (*b == '0') b++;
      size_t la = 0, lb = 0;
      while (isdigit((unsigned char)a[la])) la++;
      while (isdigit((unsigned char)b[lb])) lb++;
      if (la != lb) return la < lb ? -1 : 1; /* more digits (no leading zeros): larger */
      int c = strncmp(a, b, la);
      if (c) return c;
      a += la, b += lb;
      continue;
    }
    if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    a++, b++;
  }
  return *a ? 1 : *b ? -1 : 0;
}

int sq__report_header(const sq__report *r, sq_buf *b) {
  char when[32];
  sq_utc_text(sq_now_wall_ms(), when, sizeof when);
  int rc = sq_buf_appendf(b, "report of %s (sandq %s)", when, SQ_VERSION);
  if (!rc && r->datasets[0]) rc = sq_buf_appendf(b, " · dataset %s", r->datasets);
  if (!rc && r->models[0]) rc = sq_buf_appendf(b, " · model %s", r->models);
  if (!rc && r->temperatures[0]) rc = sq_buf_appendf(b, " · temperature %s", r->temperatures);
  return rc;
}

/* Adds v to the comma-separated list of distinct values in list (len
 * bytes); a value that does not fit ends the list with "...". */
static void add_distinct(char *list, size_t len, const char *v) {
  if (!v || !*v) return;
  size_t n = strlen(list), vl = strlen(v);
  if (n >= 3 && strcmp(list + n - 3, "...") == 0) return;
  for (const char *p = list; (p = strstr(p, v)); p += vl)
    if ((p == list || p[-2] == ',') && (p[vl] == ',' || !p[vl])) return;
  if (n + vl + 2 + 4 >= len) {
    snprintf(list + n, len - n, "%s...", n ? ", " : "");
    return;
  }
  snprintf(list + n, len - n, "%s%s", n ? ", " : "", v);
}

static const sq__report *natural_of; /* qsort has no context argument */
static int cmp_natural(const void *a, const void *b) {
  const char *x = natural_of->problems[*(const size_t *)a].task_id, *y = natural_of->problems[*(const size_t *)b].task_id;
  int c = sq__natural_cmp(x, y);
  return c ? c : strcmp(x, y);
}

static int cmp_rate(const void *a, const void *b) {
  const sq__report_problem *x = &natural_of->problems[*(const size_t *)a], *y = &natural_of->problems[*(const size_t *)b];
  double rx = x->n ? (double)x->c / (double)x->n : 0, ry = y->n ? (double)y->c / (double)y->n : 0;
  if (rx != ry) return rx < ry ? -1 : 1;
  return cmp_natural(a, b);
}

/* The header's facts and the problems' two orders. */
static int build_overview(sq__report *r) {
  for (size_t i = 0; i < r->n_rows; i++) {
    const sq__report_row *x = &r->rows[i];
    add_distinct(r->datasets, sizeof r->datasets, x->dataset);
    add_distinct(r->models, sizeof r->models, x->model);
    if (x->temperature >= 0) {
      char t[32];
      snprintf(t, sizeof t, "%g", x->temperature);
      add_distinct(r->temperatures, sizeof r->temperatures, t);
    }
  }
  size_t n = r->n_problems ? r->n_problems : 1;
  if (!(r->by_name = malloc(n * sizeof *r->by_name)) || !(r->by_rate = malloc(n * sizeof *r->by_rate))) return SQ_ENOMEM;
  for (size_t i = 0; i < r->n_problems; i++) r->by_name[i] = r->by_rate[i] = i;
  natural_of = r;
  qsort(r->by_name, r->n_problems, sizeof *r->by_name, cmp_natural);
  qsort(r->by_rate, r->n_problems, sizeof *r->by_rate, cmp_rate);
  return 0;
}

int sq__report_build(const sq__result_set *rs, const char *batch, const char *queue, const int *k, int n_k,
                     sq__report *out) {
  memset(out, 0, sizeof *out);
  int rc = SQ_ENOMEM;
  if (!(out->batch = strdup(batch)) || !(out->queue = strdup(queue))) return rc;
  if (!(out->rows = calloc(rs->n ? rs->n : 1, sizeof *out->rows))) return rc;
  for (size_t i = 0; i < rs->n; i++) {
    if ((rc = sq__report_row_read(&rs->docs[i], &out->rows[i]))) return rc;
    out->n_rows++;
    sq_status st;
    if (sq_status_parse(out->rows[i].status, &st) == 0) out->status_counts[st]++;
    else out->other_statuses++;
    const char *jd = out->rows[i].judge;
    if (jd && strcmp(jd, "isolated") == 0) out->judge_isolated++;
    else if (jd && strcmp(jd, "in_process") == 0) out->judge_in_process++;
  }
  out->n_k = n_k < SQ__REPORT_MAX_K ? n_k : SQ__REPORT_MAX_K;
  memcpy(out->k, k, (size_t)out->n_k * sizeof *k);
  if ((rc = build_problems(out)) || (rc = build_failures(out)) || (rc = build_latency(out)) || (rc = build_llm(out)) ||
      (rc = build_overview(out)))
    return rc;
  out->n_slowest = top_rows(out, key_total, out->slowest);
  out->n_costliest = top_rows(out, key_cost, out->costliest);
  return 0;
}

void sq__report_free(sq__report *r) {
  for (size_t i = 0; i < r->n_rows; i++) sq__report_row_clear(&r->rows[i]);
  free(r->rows);
  for (size_t i = 0; i < r->n_problems; i++) free(r->problems[i].task_id);
  free(r->problems);
  free(r->by_name);
  free(r->by_rate);
  for (size_t i = 0; i < r->n_failures; i++) {
    sq__report_failure *f = &r->failures[i];
    free(f->status), free(f->kind), free(f->example);
    for (int j = 0; j < f->n_ids; j++) free(f->ids[j]);
  }
  free(r->failures);
  for (size_t i = 0; i < r->n_llm; i++) free(r->llm[i].provider), free(r->llm[i].model);
  free(r->llm);
  free(r->batch);
  free(r->queue);
  memset(r, 0, sizeof *r);
}
