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
#include "log.h"
#include "reason.h"
#include "stats.h"
#include "util.h"
#include "utf8.h"
#include "strmap.h"

const char *sq__stage_name(sq__stage s) {
  static const char *const names[] = {"queue", "llm", "exec", "total", "all_attempts"};
  return s < SQ__STAGE_COUNT ? names[s] : "?";
}

bool sq__status_has_verdict(const char *status) {
  sq_status st;
  if (!status || sq_status_parse(status, &st) != 0) return false;
  return st != SQ_STATUS_LLM_ERROR && st != SQ_STATUS_INVALID_TASK && st != SQ_STATUS_CANCELLED;
}

const char *sq__missing_hint(const char *status, const char *example) {
  if (strcmp(status, "llm_error") == 0) {
    if (example && strstr(example, "no LLM provider is configured"))
      return "no model answered; set SANDQ_LLM_BASE_URL and SANDQ_LLM_MODEL (docs/llm.md)";
    if (example && strstr(example, "budget exhausted")) return "not generated: the batch's --budget-usd was spent";
    return "no model answered";
  }
  if (strcmp(status, "invalid_task") == 0) return "the worker refused the task before running it";
  if (strcmp(status, "cancelled") == 0) return "cancelled before its tests ran";
  if (strcmp(status, "(bad bson)") == 0) return "the stored result is not a BSON document";
  if (strcmp(status, "(dead letter)") == 0) return "no result: in the dead letter (sandq-producer dead list)";
  return "no status a test gave";
}

int sq__missing_list(const sq__report *r, sq_buf *b) {
  int rc = 0;
  for (size_t i = 0; !rc && i < r->n_missing_groups; i++) {
    const sq__report_failure *f = &r->missing[i];
    bool seen = false; /* one entry per status, whatever its kinds */
    for (size_t j = 0; j < i && !seen; j++) seen = strcmp(r->missing[j].status, f->status) == 0;
    if (seen) continue;
    int64_t n = 0;
    for (size_t j = i; j < r->n_missing_groups; j++)
      if (strcmp(r->missing[j].status, f->status) == 0) n += r->missing[j].count;
    char esc[64];
    rc = sq_buf_appendf(b, "%s%s %lld", b->len ? ", " : "", sq_log_escape(f->status, esc, sizeof esc), (long long)n);
  }
  if (!rc && r->batch_dead > 0)
    rc = sq_buf_appendf(b, "%sdead letter %lld", b->len ? ", " : "", (long long)r->batch_dead);
  return rc ? SQ_ENOMEM : 0;
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
    r->bad_bson = true;
    return r->status && r->task_id ? 0 : SQ_ENOMEM;
  }
  r->status = utf8_at(&doc, "status");
  if (!r->status && !(r->status = strdup("?"))) return SQ_ENOMEM;
  r->passed = strcmp(r->status, "passed") == 0;
  r->verdict = sq__status_has_verdict(r->status);
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
  r->language = utf8_at(&doc, "language");
  char *base = utf8_at(&doc, "tiers.base");
  r->tiered = base != NULL;
  r->base_passed = base && strcmp(base, "passed") == 0;
  free(base);
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
  free(r->judge), free(r->llm_reply), free(r->language);
  memset(r, 0, sizeof *r);
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

static int cmp_llm(const void *a, const void *b) {
  const sq__report_llm *x = a, *y = b;
  if (x->cost_usd != y->cost_usd) return x->cost_usd > y->cost_usd ? -1 : 1;
  int64_t tx = sat_add(x->prompt_tokens, x->completion_tokens), ty = sat_add(y->prompt_tokens, y->completion_tokens);
  if (tx != ty) return tx > ty ? -1 : 1;
  return strcmp(x->provider, y->provider);
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
  if (!x->n != !y->n) return x->n ? -1 : 1; /* no sample with a verdict: last */
  double rx = x->n ? (double)x->c / (double)x->n : 0, ry = y->n ? (double)y->c / (double)y->n : 0;
  if (rx != ry) return rx < ry ? -1 : 1;
  return cmp_natural(a, b);
}

/* The problems' two orders. */
static int build_orders(sq__report *r) {
  size_t n = r->n_problems ? r->n_problems : 1;
  if (!(r->by_name = malloc(n * sizeof *r->by_name)) || !(r->by_rate = malloc(n * sizeof *r->by_rate))) return SQ_ENOMEM;
  for (size_t i = 0; i < r->n_problems; i++) r->by_name[i] = r->by_rate[i] = i;
  natural_of = r;
  qsort(r->by_name, r->n_problems, sizeof *r->by_name, cmp_natural);
  qsort(r->by_rate, r->n_problems, sizeof *r->by_rate, cmp_rate);
  return 0;
}

/* ---- the fold ---- */

/* The distinct values of one header field with the least id each came
 * with: a value shows in the order it first appears by id, and the list
 * (160 bytes) holds fewer than DISTINCT_KEEP of them. */
#define DISTINCT_KEEP 64
typedef struct {
  char *value[DISTINCT_KEEP], *first_id[DISTINCT_KEEP];
  int n;
} distinct;

static int distinct_add(distinct *d, const char *v, const char *id) {
  if (!v || !*v) return 0;
  int worst = -1;
  for (int i = 0; i < d->n; i++) {
    if (strcmp(d->value[i], v) == 0) {
      if (strcmp(id, d->first_id[i]) < 0) {
        char *c = strdup(id);
        if (!c) return SQ_ENOMEM;
        free(d->first_id[i]), d->first_id[i] = c;
      }
      return 0;
    }
    if (worst < 0 || strcmp(d->first_id[i], d->first_id[worst]) > 0) worst = i;
  }
  int at = d->n;
  if (d->n == DISTINCT_KEEP) { /* full: the new value replaces the latest-seen one, when earlier */
    if (strcmp(id, d->first_id[worst]) > 0) return 0;
    at = worst;
    free(d->value[at]), free(d->first_id[at]);
  } else {
    d->n++;
  }
  d->value[at] = strdup(v), d->first_id[at] = strdup(id);
  return d->value[at] && d->first_id[at] ? 0 : SQ_ENOMEM;
}

/* Into list (add_distinct; NULL: nowhere), in the order of their first
 * ids; cleared. */
static void distinct_end(distinct *d, char *list, size_t len) {
  for (int i = 1; i < d->n; i++)
    for (int j = i; j > 0 && strcmp(d->first_id[j - 1], d->first_id[j]) > 0; j--) {
      char *v = d->value[j], *f = d->first_id[j];
      d->value[j] = d->value[j - 1], d->first_id[j] = d->first_id[j - 1];
      d->value[j - 1] = v, d->first_id[j - 1] = f;
    }
  for (int i = 0; list && i < d->n; i++) add_distinct(list, len, d->value[i]);
  for (int i = 0; i < d->n; i++) free(d->value[i]), free(d->first_id[i]);
  d->n = 0;
}

/* Results grouped by status and reason kind: the failures, and the
 * samples without a verdict. */
typedef struct {
  sq__report_failure **arr; /* into the report */
  size_t *n;
  size_t cap;
  sq_strmap *of;
  char **example_id; /* per group: the id its example came from (the least) */
} groups;

struct sq__report_acc {
  size_t problems_cap, llm_cap;
  sq_strmap *problem_of, *llm_of;
  groups failures, missing;
  sq_stats_hist hist[SQ__STAGE_COUNT];
  double ms_sum[SQ__STAGE_COUNT];
  sq_stats_sum *cost; /* per LLM group */
  sq__report_row top[2][SQ__REPORT_TOP]; /* the slowest, the costliest so far (copies) */
  size_t n_top[2];
  sq__report_row failing[SQ__REPORT_FAILING]; /* the first failing rows by natural order of id (copies) */
  size_t n_failing;
  distinct datasets, models, temperatures;
};

/* Grows *arr (of size elem, *cap of them) to hold n + 1, zeroing the new part. */
static int grow(void *arr, size_t *cap, size_t n, size_t elem) {
  if (n < *cap) return 0;
  size_t c = *cap ? *cap * 2 : 16;
  void *p = realloc(*(void **)arr, c * elem);
  if (!p) return SQ_ENOMEM;
  memset((char *)p + *cap * elem, 0, (c - *cap) * elem);
  *(void **)arr = p;
  *cap = c;
  return 0;
}

static char *dup_or_null(const char *s, int *rc) {
  char *c = s ? strdup(s) : NULL;
  if (s && !c) *rc = SQ_ENOMEM;
  return c;
}

static int row_copy(sq__report_row *to, const sq__report_row *x) {
  int rc = 0;
  *to = *x;
  to->id = dup_or_null(x->id, &rc), to->task_id = dup_or_null(x->task_id, &rc), to->status = dup_or_null(x->status, &rc);
  to->reason = dup_or_null(x->reason, &rc), to->judge = dup_or_null(x->judge, &rc);
  to->provider = dup_or_null(x->provider, &rc), to->model = dup_or_null(x->model, &rc);
  to->dataset = dup_or_null(x->dataset, &rc), to->llm_reply = dup_or_null(x->llm_reply, &rc);
  to->language = dup_or_null(x->language, &rc);
  return rc;
}

/* x into the top list t (key descending, then id ascending) when it
 * belongs there. */
static int top_offer(struct sq__report_acc *a, int t, const sq__report_row *x, double (*key)(const sq__report_row *)) {
  double k = key(x);
  if (!(k > 0)) return 0;
  sq__report_row *top = a->top[t];
  size_t n = a->n_top[t], at = 0;
  while (at < n && (key(&top[at]) > k || (key(&top[at]) == k && strcmp(top[at].id, x->id) < 0))) at++;
  if (at == SQ__REPORT_TOP) return 0;
  if (n == SQ__REPORT_TOP) sq__report_row_clear(&top[--n]);
  memmove(&top[at + 1], &top[at], (n - at) * sizeof *top);
  a->n_top[t] = n + 1;
  return row_copy(&top[at], x);
}

static int cmp_natural_id(const sq__report_row *x, const sq__report_row *y) {
  int c = sq__natural_cmp(x->id, y->id);
  return c ? c : strcmp(x->id, y->id);
}

/* A failing x into the first SQ__REPORT_FAILING by natural order of id. In
 * any order of arrival, a row past the last kept one costs one comparison. */
static int failing_offer(struct sq__report_acc *a, const sq__report_row *x) {
  sq__report_row *f = a->failing;
  size_t n = a->n_failing, at = n;
  if (n == SQ__REPORT_FAILING && cmp_natural_id(&f[n - 1], x) <= 0) return 0;
  while (at > 0 && cmp_natural_id(&f[at - 1], x) > 0) at--;
  if (n == SQ__REPORT_FAILING) sq__report_row_clear(&f[--n]);
  memmove(&f[at + 1], &f[at], (n - at) * sizeof *f);
  a->n_failing = n + 1;
  return row_copy(&f[at], x);
}

/* The index of language (NULL: python) among r's, added when new; past
 * SQ__REPORT_MAX_LANGUAGES the last one. */
static int language_of(sq__report *r, const char *language) {
  const char *l = language ? language : "python";
  for (int i = 0; i < r->n_languages; i++)
    if (strcmp(r->languages[i], l) == 0) return i;
  if (r->n_languages == SQ__REPORT_MAX_LANGUAGES) return SQ__REPORT_MAX_LANGUAGES - 1;
  snprintf(r->languages[r->n_languages], sizeof r->languages[0], "%s", l);
  return r->n_languages++;
}

static int fold_problem(sq__report *r, const sq__report_row *x) {
  struct sq__report_acc *a = r->acc;
  size_t at;
  int added = sq_strmap_add(a->problem_of, x->task_id, r->n_problems, &at);
  if (added < 0) return SQ_ENOMEM;
  if (added == 0) { /* new */
    if (grow(&r->problems, &a->problems_cap, r->n_problems, sizeof *r->problems)) return SQ_ENOMEM;
    at = r->n_problems;
    if (!(r->problems[at].task_id = strdup(x->task_id))) return SQ_ENOMEM;
    r->problems[at].language = language_of(r, x->language);
    r->n_problems++;
  }
  sq__report_problem *p = &r->problems[at];
  if (!x->verdict) { /* set apart: pass@k counts samples with a verdict only */
    p->missing++;
  } else {
    p->n++;
    p->c += x->passed;
    p->c_base += x->tiered ? x->base_passed : x->passed;
  }
  r->tiered = r->tiered || x->tiered;
  sq_status st;
  if (sq_status_parse(x->status, &st) == 0) p->status_counts[st]++;
  return 0;
}

/* x into its group of g (status and reason kind); a group's example and
 * ids are those of its least ids. */
static int fold_group(groups *g, const sq__report_row *x) {
  char kind[160];
  sq_reason_kind(x->reason, kind, sizeof kind);
  if (!kind[0]) snprintf(kind, sizeof kind, "(no reason given)");
  size_t at;
  bool added;
  if (group_of(g->of, x->status, kind, &at, &added) != 0) return SQ_ENOMEM;
  int rc = 0;
  if (added) {
    size_t cap = g->cap;
    if (grow(g->arr, &g->cap, *g->n, sizeof **g->arr)) return SQ_ENOMEM;
    if (cap != g->cap) {
      char **e = realloc(g->example_id, g->cap * sizeof *e);
      if (!e) return SQ_ENOMEM;
      g->example_id = e;
    }
    sq__report_failure *f = &(*g->arr)[(*g->n)++];
    g->example_id[at] = NULL;
    f->status = dup_or_null(x->status, &rc), f->kind = dup_or_null(kind, &rc);
  }
  sq__report_failure *f = &(*g->arr)[at];
  if (!g->example_id[at] || strcmp(x->id, g->example_id[at]) < 0) {
    free(f->example), free(g->example_id[at]);
    f->example = dup_or_null(x->reason, &rc), g->example_id[at] = dup_or_null(x->id, &rc);
  }
  f->count++;
  int cap = (int)(sizeof f->ids / sizeof f->ids[0]), i = f->n_ids;
  if (i == cap && strcmp(x->id, f->ids[cap - 1]) >= 0) return rc;
  if (i == cap) free(f->ids[--i]);
  else f->n_ids++;
  for (; i > 0 && strcmp(f->ids[i - 1], x->id) > 0; i--) f->ids[i] = f->ids[i - 1];
  f->ids[i] = dup_or_null(x->id, &rc);
  return rc;
}

/* Every result with a verdict that did not pass or end ok into the
 * failures; every one without a verdict into the missing. */
static int fold_failure(sq__report *r, const sq__report_row *x) {
  if (!x->verdict) return fold_group(&r->acc->missing, x);
  if (x->passed || strcmp(x->status, "ok") == 0) return 0;
  return fold_group(&r->acc->failures, x);
}

static int fold_llm(sq__report *r, const sq__report_row *x) {
  struct sq__report_acc *a = r->acc;
  if (!x->has_llm) return 0;
  size_t at;
  bool added;
  /* "?" for a missing name, as shown: a missing and a "?" model are one group */
  if (group_of(a->llm_of, x->provider ? x->provider : "?", x->model ? x->model : "?", &at, &added) != 0) return SQ_ENOMEM;
  int rc = 0;
  if (added) {
    size_t cap = a->llm_cap;
    if (grow(&r->llm, &a->llm_cap, r->n_llm, sizeof *r->llm)) return SQ_ENOMEM;
    if (cap != a->llm_cap) {
      sq_stats_sum *c = realloc(a->cost, a->llm_cap * sizeof *c);
      if (!c) return SQ_ENOMEM;
      a->cost = c;
    }
    memset(&a->cost[at], 0, sizeof a->cost[at]);
    sq__report_llm *g = &r->llm[r->n_llm++];
    g->provider = dup_or_null(x->provider ? x->provider : "?", &rc);
    g->model = dup_or_null(x->model ? x->model : "?", &rc);
  }
  sq__report_llm *g = &r->llm[at];
  g->tasks++;
  g->prompt_tokens = sat_add(g->prompt_tokens, x->prompt_tokens);
  g->completion_tokens = sat_add(g->completion_tokens, x->completion_tokens);
  sq_stats_sum_add(&a->cost[at], x->cost_usd);
  return rc;
}

static int fold_row(sq__report *r, sq__report_row *x) {
  struct sq__report_acc *a = r->acc;
  r->n_rows++;
  if (x->verdict) r->n_verdict++;
  else r->n_missing++, r->n_bad += x->bad_bson;
  sq_status st;
  if (sq_status_parse(x->status, &st) == 0) r->status_counts[st]++;
  else r->other_statuses++;
  if (x->judge && strcmp(x->judge, "isolated") == 0) r->judge_isolated++;
  else if (x->judge && strcmp(x->judge, "in_process") == 0) r->judge_in_process++;
  for (int s = 0; s < SQ__STAGE_COUNT; s++) {
    /* a stage counts for the tasks that went through it */
    if ((s == SQ__STAGE_LLM && !x->has_llm) || (s == SQ__STAGE_EXEC && !x->ran) || x->ms[s] < 0) continue;
    if (sq_stats_hist_add(&a->hist[s], x->ms[s]) != 0) return SQ_ENOMEM;
    a->ms_sum[s] += (double)x->ms[s];
  }
  char t[32] = "";
  if (x->temperature >= 0) snprintf(t, sizeof t, "%g", x->temperature);
  int rc = fold_problem(r, x);
  if (!rc) rc = fold_failure(r, x);
  if (!rc) rc = fold_llm(r, x);
  if (!rc) rc = distinct_add(&a->datasets, x->dataset, x->id);
  if (!rc) rc = distinct_add(&a->models, x->model, x->id);
  if (!rc) rc = distinct_add(&a->temperatures, t, x->id);
  if (!rc) rc = top_offer(a, 0, x, key_total);
  if (!rc) rc = top_offer(a, 1, x, key_cost);
  if (!rc && x->verdict && !x->passed && strcmp(x->status, "ok") != 0) {
    r->n_failing++;
    rc = failing_offer(a, x);
  }
  return rc;
}

int sq__report_begin(sq__report *out, const char *batch, const char *queue, const int *k, int n_k) {
  memset(out, 0, sizeof *out);
  if (!(out->acc = calloc(1, sizeof *out->acc)) || !(out->batch = strdup(batch)) || !(out->queue = strdup(queue)))
    return SQ_ENOMEM;
  struct sq__report_acc *a = out->acc;
  a->failures = (groups){.arr = &out->failures, .n = &out->n_failures};
  a->missing = (groups){.arr = &out->missing, .n = &out->n_missing_groups};
  if (!(a->problem_of = sq_strmap_new()) || !(a->failures.of = sq_strmap_new()) ||
      !(a->missing.of = sq_strmap_new()) || !(a->llm_of = sq_strmap_new()))
    return SQ_ENOMEM;
  out->n_k = n_k < SQ__REPORT_MAX_K ? n_k : SQ__REPORT_MAX_K;
  memcpy(out->k, k, (size_t)out->n_k * sizeof *k);
  return sq__report_cases_begin(out);
}

int sq__report_add(const char *id, const uint8_t *bson, size_t len, void *report) {
  sq__report *r = report;
  sq__result_doc d = {.id = (char *)id, .bson = (uint8_t *)bson, .len = len};
  sq__report_row x;
  int rc = sq__report_row_read(&d, &x);
  if (!rc) rc = fold_row(r, &x);
  if (!rc && sq__result_bson_ok(bson, len)) rc = sq__report_cases_add(r, x.task_id, bson, len);
  sq__report_row_clear(&x);
  return rc;
}

static int cmp_problem(const void *a, const void *b) {
  return strcmp(((const sq__report_problem *)a)->task_id, ((const sq__report_problem *)b)->task_id);
}

static void groups_free(groups *g) {
  sq_strmap_free(g->of);
  for (size_t i = 0; g->example_id && i < *g->n; i++) free(g->example_id[i]);
  free(g->example_id);
}

static void acc_free(struct sq__report_acc *a) {
  if (!a) return;
  sq_strmap_free(a->problem_of), sq_strmap_free(a->llm_of);
  if (a->failures.n) groups_free(&a->failures);
  if (a->missing.n) groups_free(&a->missing);
  free(a->cost);
  for (int s = 0; s < SQ__STAGE_COUNT; s++) sq_stats_hist_clear(&a->hist[s]);
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < a->n_top[t]; i++) sq__report_row_clear(&a->top[t][i]);
  for (size_t i = 0; i < a->n_failing; i++) sq__report_row_clear(&a->failing[i]);
  distinct_end(&a->datasets, NULL, 0), distinct_end(&a->models, NULL, 0), distinct_end(&a->temperatures, NULL, 0);
  free(a);
}

int sq__report_end(sq__report *r) {
  struct sq__report_acc *a = r->acc;
  /* problems by task_id (strcmp), and pass@k over them */
  if (r->n_problems) qsort(r->problems, r->n_problems, sizeof *r->problems, cmp_problem);
  for (int j = 0; j < r->n_k; j++) {
    /* exact sums, each mean rounded once: the same figure in any order */
    sq_stats_sum sum = {0}, base = {0}, *by_lang = calloc(SQ__REPORT_MAX_LANGUAGES, sizeof *by_lang);
    int64_t counted = 0, n_lang[SQ__REPORT_MAX_LANGUAGES] = {0};
    if (!by_lang) return SQ_ENOMEM;
    for (size_t i = 0; i < r->n_problems; i++) {
      sq__report_problem *p = &r->problems[i];
      p->pass_at_k[j] = sq_stats_pass_at_k(p->n, p->c, r->k[j]);
      if (p->pass_at_k[j] < 0) continue;
      counted++;
      sq_stats_sum_add(&sum, p->pass_at_k[j]);
      /* the base tier's, and each language's, over the same problems */
      sq_stats_sum_add(&base, sq_stats_pass_at_k(p->n, p->c_base, r->k[j]));
      sq_stats_sum_add(&by_lang[p->language], p->pass_at_k[j]);
      n_lang[p->language]++;
    }
    r->pass_at_k[j] = sq_stats_sum_mean(&sum, counted);
    r->pass_at_k_problems[j] = counted;
    r->pass_at_k_base[j] = sq_stats_sum_mean(&base, counted);
    for (int l = 0; l < r->n_languages; l++) {
      r->pass_at_k_language[l][j] = sq_stats_sum_mean(&by_lang[l], n_lang[l]);
      r->problems_language[l] = n_lang[l];
    }
    free(by_lang);
  }
  if (r->n_failures) qsort(r->failures, r->n_failures, sizeof *r->failures, cmp_failure);
  if (r->n_missing_groups) qsort(r->missing, r->n_missing_groups, sizeof *r->missing, cmp_failure);
  sq__report_cases_end(r);
  for (int s = 0; s < SQ__STAGE_COUNT; s++) {
    const sq_stats_hist *h = &a->hist[s];
    r->latency[s] = (sq__report_latency){.count = h->n, .p50 = sq_stats_hist_percentile(h, 50),
                                         .p90 = sq_stats_hist_percentile(h, 90), .p99 = sq_stats_hist_percentile(h, 99),
                                         .max = h->n ? h->max : 0, .mean = h->n ? a->ms_sum[s] / (double)h->n : 0};
  }
  for (size_t i = 0; i < r->n_llm; i++) r->llm[i].cost_usd = sq_stats_sum_total(&a->cost[i]);
  if (r->n_llm) qsort(r->llm, r->n_llm, sizeof *r->llm, cmp_llm);
  distinct_end(&a->datasets, r->datasets, sizeof r->datasets);
  distinct_end(&a->models, r->models, sizeof r->models);
  distinct_end(&a->temperatures, r->temperatures, sizeof r->temperatures);
  int rc = build_orders(r);
  if (!rc) { /* the rows the tops and the failing tasks name, moved out of the fold */
    size_t n = a->n_top[0] + a->n_top[1] + a->n_failing;
    if (!(r->rows = calloc(n ? n : 1, sizeof *r->rows))) rc = SQ_ENOMEM;
    for (int t = 0; !rc && t < 2; t++)
      for (size_t i = 0; i < a->n_top[t]; i++) {
        (t ? r->costliest : r->slowest)[i] = r->n_held;
        r->rows[r->n_held++] = a->top[t][i];
      }
    for (size_t i = 0; !rc && i < a->n_failing; i++) {
      r->failing[i] = r->n_held;
      r->rows[r->n_held++] = a->failing[i];
    }
    if (!rc) {
      r->n_slowest = a->n_top[0], r->n_costliest = a->n_top[1], r->n_failing_shown = a->n_failing;
      a->n_top[0] = a->n_top[1] = a->n_failing = 0;
    }
  }
  acc_free(a);
  r->acc = NULL;
  return rc;
}

int sq__report_build(const sq__result_set *rs, const char *batch, const char *queue, const int *k, int n_k,
                     sq__report *out) {
  int rc = sq__report_begin(out, batch, queue, k, n_k);
  for (size_t i = 0; i < rs->n && !rc; i++) rc = sq__report_add(rs->docs[i].id, rs->docs[i].bson, rs->docs[i].len, out);
  return rc ? rc : sq__report_end(out);
}

void sq__report_free(sq__report *r) {
  acc_free(r->acc);
  sq__report_cases_free(r);
  for (size_t i = 0; i < r->n_case_failures; i++) free(r->case_failures[i].task_id);
  free(r->case_failures);
  for (size_t i = 0; i < r->n_held; i++) sq__report_row_clear(&r->rows[i]);
  free(r->rows);
  for (size_t i = 0; i < r->n_problems; i++) free(r->problems[i].task_id);
  free(r->problems);
  free(r->by_name);
  free(r->by_rate);
  for (int g = 0; g < 2; g++) {
    sq__report_failure *arr = g ? r->missing : r->failures;
    size_t n = g ? r->n_missing_groups : r->n_failures;
    for (size_t i = 0; i < n; i++) {
      sq__report_failure *f = &arr[i];
      free(f->status), free(f->kind), free(f->example);
      for (int j = 0; j < f->n_ids; j++) free(f->ids[j]);
    }
  }
  free(r->failures);
  free(r->missing);
  for (size_t i = 0; i < r->n_llm; i++) free(r->llm[i].provider), free(r->llm[i].model);
  free(r->llm);
  free(r->batch);
  free(r->queue);
  memset(r, 0, sizeof *r);
}
