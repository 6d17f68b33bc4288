/* metrics.c: the registry of one process (arrays, no allocation while
 * recording), its flush into Redis as deltas (cumulative totals and one
 * short window per flush), and reading a provider's windowed figures. The
 * Redis form: hash fields named as Prometheus series, e.g.
 * sandq_tasks_total{status="passed"}, in sq:{Q}:metrics (totals) and
 * sq:{Q}:metrics:w<W>:<n> (the n-th window of W seconds, with a TTL). */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

#define FIELD_MAX 256
#define MAX_WINDOWS 256

static const char *const stage_names[] = {
#define X(n, s) s,
    SQ_METRICS_STAGE_MAP(X)
#undef X
};

static const char *const llm_error_names[] = {
#define X(n, s) s,
    SQ_METRICS_LLM_ERROR_MAP(X)
#undef X
};

/* Bucket upper bounds in ms and as Prometheus writes them in seconds. */
static const int64_t bucket_ms[SQ_METRICS_N_BUCKETS - 1] = {5,    10,   25,    50,    100,   250,   500,
                                                             1000, 2500, 5000, 10000, 30000, 60000, 120000};
static const char *const bucket_le[SQ_METRICS_N_BUCKETS] = {"0.005", "0.01", "0.025", "0.05", "0.1",
                                                             "0.25",  "0.5",  "1",     "2.5",  "5",
                                                             "10",    "30",   "60",    "120",  "+Inf"};

const char *sq_metrics_bucket_le(int i) { return i >= 0 && i < SQ_METRICS_N_BUCKETS ? bucket_le[i] : NULL; }

typedef struct {
  int64_t bucket[SQ_METRICS_N_BUCKETS]; /* per bucket, not cumulative */
  double sum_s;
  int64_t count;
} hist;

typedef struct {
  hist latency;
  int64_t requests[2]; /* [0] ok, [1] error */
  int64_t errors[SQ_METRICS_LLM__COUNT];
  int64_t tokens[2];   /* [0] prompt, [1] completion */
  double cost_usd;
} prov_tally;

typedef struct {
  int64_t tasks[SQ_STATUS__COUNT];
  int64_t lang_tasks[SQ_LANGUAGE__COUNT][SQ_STATUS__COUNT];
  int64_t compile_lookups[SQ_LANGUAGE__COUNT][2]; /* [0] miss, [1] hit */
  int64_t retried;
  int64_t refused[2]; /* [0] duplicate, [1] fenced */
  hist stage[SQ_METRICS_STAGE__COUNT];
  prov_tally prov[SQ_METRICS_MAX_PROVIDERS];
} tally;

struct sq_metrics {
  sq_metrics_options opt;
  int n_prov;
  char prov_name[SQ_METRICS_MAX_PROVIDERS][64];
  char prov_label[SQ_METRICS_MAX_PROVIDERS][160]; /* escaped */
  tally cur, sent;
  /* flush scratch, allocated once */
  sq_queue_incr *items;
  char (*fields)[FIELD_MAX];
  size_t cap;
};

/* Series per flush at most: every counter and bucket once. */
#define MAX_ITEMS                                                                                              \
  (SQ_STATUS__COUNT + 3 + SQ_LANGUAGE__COUNT * (SQ_STATUS__COUNT + 2) +                                      \
   SQ_METRICS_STAGE__COUNT * (SQ_METRICS_N_BUCKETS + 2) +                                                      \
   SQ_METRICS_MAX_PROVIDERS * (SQ_METRICS_N_BUCKETS + 2 + 2 + SQ_METRICS_LLM__COUNT + 2 + 1))

void sq_metrics_escape(const char *v, char *out, size_t outlen) {
  size_t o = 0;
  for (; *v && o + 3 < outlen; v++) {
    if (*v == '\\' || *v == '"') out[o++] = '\\', out[o++] = *v;
    else if (*v == '\n') out[o++] = '\\', out[o++] = 'n';
    else out[o++] = *v;
  }
  out[o] = '\0';
}

int sq_metrics_new(const char *const *providers, int n, const sq_metrics_options *o, sq_metrics **out) {
  *out = NULL;
  if (n < 0 || n > SQ_METRICS_MAX_PROVIDERS || !o || o->window_s <= 0) return SQ_EINVAL;
  sq_metrics *m = calloc(1, sizeof *m);
  if (!m) return SQ_ENOMEM;
  m->opt = *o;
  m->n_prov = n;
  for (int i = 0; i < n; i++) {
    snprintf(m->prov_name[i], sizeof m->prov_name[i], "%s", providers[i]);
    sq_metrics_escape(providers[i], m->prov_label[i], sizeof m->prov_label[i]);
  }
  m->cap = MAX_ITEMS;
  m->items = calloc(m->cap, sizeof *m->items);
  m->fields = calloc(m->cap, sizeof *m->fields);
  if (!m->items || !m->fields) {
    sq_metrics_free(m);
    return SQ_ENOMEM;
  }
  *out = m;
  return 0;
}

void sq_metrics_free(sq_metrics *m) {
  if (!m) return;
  free(m->items);
  free(m->fields);
  free(m);
}

static void observe(hist *h, int64_t ms) {
  int i = 0;
  if (ms < 0) ms = 0;
  while (i < SQ_METRICS_N_BUCKETS - 1 && ms > bucket_ms[i]) i++;
  h->bucket[i]++;
  h->sum_s += (double)ms / 1000.0;
  h->count++;
}

static prov_tally *prov_of(sq_metrics *m, const char *provider) {
  if (!m || !provider) return NULL;
  for (int i = 0; i < m->n_prov; i++)
    if (strcmp(m->prov_name[i], provider) == 0) return &m->cur.prov[i];
  return NULL;
}

void sq_metrics_stage(sq_metrics *m, sq_metrics_stage_id s, int64_t ms) {
  if (m && s >= 0 && s < SQ_METRICS_STAGE__COUNT) observe(&m->cur.stage[s], ms);
}

void sq_metrics_task(sq_metrics *m, sq_status st) {
  if (m && st >= 0 && st < SQ_STATUS__COUNT) m->cur.tasks[st]++;
}

void sq_metrics_task_language(sq_metrics *m, sq_language_id lang, sq_status st) {
  if (m && (int)lang >= 0 && lang < SQ_LANGUAGE__COUNT && st >= 0 && st < SQ_STATUS__COUNT)
    m->cur.lang_tasks[lang][st]++;
}

void sq_metrics_compile_cache(sq_metrics *m, sq_language_id lang, bool hit) {
  if (m && (int)lang >= 0 && lang < SQ_LANGUAGE__COUNT) m->cur.compile_lookups[lang][hit ? 1 : 0]++;
}

void sq_metrics_task_retried(sq_metrics *m) {
  if (m) m->cur.retried++;
}

void sq_metrics_result_refused(sq_metrics *m, bool fenced) {
  if (m) m->cur.refused[fenced ? 1 : 0]++;
}

void sq_metrics_llm_exchange(sq_metrics *m, const char *provider, bool ok, sq_metrics_llm_kind kind, int64_t ms) {
  prov_tally *p = prov_of(m, provider);
  if (!p) return;
  observe(&p->latency, ms);
  p->requests[ok ? 0 : 1]++;
  if (!ok && kind >= 0 && kind < SQ_METRICS_LLM__COUNT) p->errors[kind]++;
}

void sq_metrics_llm_error(sq_metrics *m, const char *provider, sq_metrics_llm_kind kind) {
  prov_tally *p = prov_of(m, provider);
  if (p && kind >= 0 && kind < SQ_METRICS_LLM__COUNT) p->errors[kind]++;
}

void sq_metrics_llm_usage(sq_metrics *m, const char *provider, int64_t prompt_tokens, int64_t completion_tokens,
                          double cost_usd) {
  prov_tally *p = prov_of(m, provider);
  if (!p) return;
  p->tokens[0] += prompt_tokens;
  p->tokens[1] += completion_tokens;
  p->cost_usd += cost_usd;
}

/* ---- field names (shared by the flush and the readers) ---- */

static void field_hist(char *f, const char *name, const char *suffix, const char *labels, int bucket) {
  if (bucket >= 0)
    snprintf(f, FIELD_MAX, "%s_bucket{%s%sle=\"%s\"}", name, labels, labels[0] ? "," : "", bucket_le[bucket]);
  else if (labels[0])
    snprintf(f, FIELD_MAX, "%s_%s{%s}", name, suffix, labels);
  else
    snprintf(f, FIELD_MAX, "%s_%s", name, suffix);
}

/* sandq_llm_<family>{provider="<pl>",<label>="<value>"}; pl already escaped. */
static void field_llm(char *f, const char *family, const char *pl, const char *label, const char *value) {
  snprintf(f, FIELD_MAX, "sandq_llm_%s{provider=\"%s\",%s=\"%s\"}", family, pl, label, value);
}

/* ---- flush ---- */

typedef struct {
  sq_metrics *m;
  size_t n;
  bool all; /* zeros too (a full view), not only what changed */
} batch;

static void add(batch *b, double delta, bool is_float, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(batch *b, double delta, bool is_float, const char *fmt, ...) {
  if ((delta == 0 && !b->all) || b->n >= b->m->cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->m->fields[b->n], FIELD_MAX, fmt, ap);
  va_end(ap);
  b->m->items[b->n] = (sq_queue_incr){.field = b->m->fields[b->n], .delta = delta, .is_float = is_float};
  b->n++;
}

static void add_llm(batch *b, double delta, const char *family, const char *pl, const char *label, const char *value) {
  char f[FIELD_MAX];
  field_llm(f, family, pl, label, value);
  add(b, delta, false, "%s", f);
}

static void add_hist(batch *b, const char *name, const char *labels, const hist *cur, const hist *sent) {
  int64_t cum = 0;
  for (int i = 0; i < SQ_METRICS_N_BUCKETS; i++) {
    cum += cur->bucket[i] - sent->bucket[i];
    if ((cum == 0 && !b->all) || b->n >= b->m->cap) continue;
    field_hist(b->m->fields[b->n], name, "", labels, i);
    b->m->items[b->n] = (sq_queue_incr){.field = b->m->fields[b->n], .delta = (double)cum};
    b->n++;
  }
  char f[FIELD_MAX];
  field_hist(f, name, "sum", labels, -1);
  add(b, cur->sum_s - sent->sum_s, true, "%s", f);
  field_hist(f, name, "count", labels, -1);
  add(b, (double)(cur->count - sent->count), false, "%s", f);
}

/* Fills m's scratch with the changes since the last successful flush
 * (since = &m->sent, all false), or with every series' total (since = a
 * zero tally, all true); returns how many series it holds. */
static size_t collect_since(sq_metrics *m, const tally *since, bool all) {
  const tally *c = &m->cur, *s = since;
  batch b = {.m = m, .all = all};
  for (int i = 0; i < SQ_STATUS__COUNT; i++)
    add(&b, (double)(c->tasks[i] - s->tasks[i]), false, "sandq_tasks_total{status=\"%s\"}",
        sq_status_name((sq_status)i));
  for (int l = 0; l < SQ_LANGUAGE__COUNT; l++) { /* a language's series once it has a count */
    const char *name = sq_language_get((sq_language_id)l)->name;
    int64_t any = 0;
    for (int i = 0; i < SQ_STATUS__COUNT; i++) any += c->lang_tasks[l][i];
    for (int i = 0; any && i < SQ_STATUS__COUNT; i++)
      add(&b, (double)(c->lang_tasks[l][i] - s->lang_tasks[l][i]), false,
          "sandq_language_tasks_total{language=\"%s\",status=\"%s\"}", name, sq_status_name((sq_status)i));
    if (!c->compile_lookups[l][0] && !c->compile_lookups[l][1]) continue;
    add(&b, (double)(c->compile_lookups[l][1] - s->compile_lookups[l][1]), false,
        "sandq_compile_cache_lookups_total{language=\"%s\",result=\"hit\"}", name);
    add(&b, (double)(c->compile_lookups[l][0] - s->compile_lookups[l][0]), false,
        "sandq_compile_cache_lookups_total{language=\"%s\",result=\"miss\"}", name);
  }
  add(&b, (double)(c->retried - s->retried), false, "sandq_tasks_retried_total");
  add(&b, (double)(c->refused[0] - s->refused[0]), false, "sandq_results_refused_total{reason=\"duplicate\"}");
  add(&b, (double)(c->refused[1] - s->refused[1]), false, "sandq_results_refused_total{reason=\"fenced\"}");
  char labels[200];
  for (int i = 0; i < SQ_METRICS_STAGE__COUNT; i++) {
    snprintf(labels, sizeof labels, "stage=\"%s\"", stage_names[i]);
    add_hist(&b, "sandq_stage_duration_seconds", labels, &c->stage[i], &s->stage[i]);
  }
  for (int i = 0; i < m->n_prov; i++) {
    const prov_tally *pc = &c->prov[i], *ps = &s->prov[i];
    const char *pl = m->prov_label[i];
    snprintf(labels, sizeof labels, "provider=\"%s\"", pl);
    add_hist(&b, "sandq_llm_request_duration_seconds", labels, &pc->latency, &ps->latency);
    add_llm(&b, (double)(pc->requests[0] - ps->requests[0]), "requests_total", pl, "outcome", "ok");
    add_llm(&b, (double)(pc->requests[1] - ps->requests[1]), "requests_total", pl, "outcome", "error");
    for (int k = 0; k < SQ_METRICS_LLM__COUNT; k++)
      add_llm(&b, (double)(pc->errors[k] - ps->errors[k]), "errors_total", pl, "kind", llm_error_names[k]);
    add_llm(&b, (double)(pc->tokens[0] - ps->tokens[0]), "tokens_total", pl, "kind", "prompt");
    add_llm(&b, (double)(pc->tokens[1] - ps->tokens[1]), "tokens_total", pl, "kind", "completion");
    add(&b, pc->cost_usd - ps->cost_usd, true, "sandq_llm_cost_usd_total{provider=\"%s\"}", pl);
  }
  return b.n;
}

static size_t collect(sq_metrics *m) { return collect_since(m, &m->sent, false); }

size_t sq_metrics_totals(sq_metrics *m, const sq_queue_incr **items) {
  static const tally zero;
  *items = NULL;
  if (!m) return 0;
  *items = m->items;
  return collect_since(m, &zero, true);
}

size_t sq_metrics_pending(sq_metrics *m, const sq_queue_incr **items) {
  *items = NULL;
  if (!m) return 0;
  *items = m->items;
  return collect(m);
}

int sq_metrics_flush(sq_metrics *m, sq_queue *q, int64_t now_wall_ms) {
  if (!m || !q) return 0;
  size_t n = collect(m);
  if (n == 0) return 0;
  char window[64];
  snprintf(window, sizeof window, "metrics:w%lld:%lld", (long long)m->opt.window_s,
           (long long)(now_wall_ms / 1000 / m->opt.window_s));
  const char *names[] = {SQ_METRICS_TOTALS, window};
  const int64_t ttl[] = {0, m->opt.retention_s};
  int rc = sq_queue_hash_incr(q, names, ttl, 2, m->items, n);
  if (rc == 0) m->sent = m->cur;
  /* On failure nothing is known to have landed... or part of it: a flush
   * that failed half-way may count some deltas twice. Rare (Redis died
   * mid-pipeline) and errs on the side of more, never of fewer. */
  return rc;
}

/* ---- reading ---- */

double sq_metrics_quantile_ms(const double *cum, double q) {
  double count = cum[SQ_METRICS_N_BUCKETS - 1];
  if (count <= 0) return 0;
  double rank = q * count;
  for (int i = 0; i < SQ_METRICS_N_BUCKETS; i++) {
    if (cum[i] < rank) continue;
    if (i == SQ_METRICS_N_BUCKETS - 1) return (double)bucket_ms[SQ_METRICS_N_BUCKETS - 2];
    double lo = i ? (double)bucket_ms[i - 1] : 0, prev = i ? cum[i - 1] : 0;
    double width = cum[i] - prev;
    return width > 0 ? lo + ((double)bucket_ms[i] - lo) * (rank - prev) / width : (double)bucket_ms[i];
  }
  return (double)bucket_ms[SQ_METRICS_N_BUCKETS - 2];
}

int sq_metrics_read_window(sq_queue *q, const sq_metrics_options *o, const char *provider, int64_t span_s,
                           int64_t from_wall_ms, int64_t now_wall_ms, sq_metrics_window *out) {
  memset(out, 0, sizeof *out);
  int64_t last = now_wall_ms / 1000 / o->window_s, n_win = span_s / o->window_s + 1;
  if (n_win > MAX_WINDOWS) n_win = MAX_WINDOWS;
  if (from_wall_ms > 0) { /* windows that began at or after it: index >= ceil(from / window) */
    int64_t window_ms = 1000 * o->window_s, first = (from_wall_ms + window_ms - 1) / window_ms;
    if (last - first + 1 < n_win) n_win = last - first + 1;
    if (n_win <= 0) return 0;
  }
  char names_buf[MAX_WINDOWS][48];
  const char *names[MAX_WINDOWS];
  for (int64_t k = 0; k < n_win; k++) {
    snprintf(names_buf[k], sizeof names_buf[k], "metrics:w%lld:%lld", (long long)o->window_s, (long long)(last - k));
    names[k] = names_buf[k];
  }
  enum { N_FIELDS = 2 + SQ_METRICS_LLM__COUNT + SQ_METRICS_N_BUCKETS };
  char fbuf[N_FIELDS][FIELD_MAX], pl[160], labels[200];
  const char *fields[N_FIELDS];
  sq_metrics_escape(provider, pl, sizeof pl);
  snprintf(labels, sizeof labels, "provider=\"%s\"", pl);
  field_llm(fbuf[0], "requests_total", pl, "outcome", "ok");
  field_llm(fbuf[1], "requests_total", pl, "outcome", "error");
  for (int k = 0; k < SQ_METRICS_LLM__COUNT; k++) field_llm(fbuf[2 + k], "errors_total", pl, "kind", llm_error_names[k]);
  for (int i = 0; i < SQ_METRICS_N_BUCKETS; i++)
    field_hist(fbuf[2 + SQ_METRICS_LLM__COUNT + i], "sandq_llm_request_duration_seconds", "", labels, i);
  for (int i = 0; i < N_FIELDS; i++) fields[i] = fbuf[i];
  double sums[N_FIELDS];
  int rc = sq_queue_hash_sum(q, names, (size_t)n_win, fields, N_FIELDS, sums);
  if (rc) return rc;
  out->requests = sums[0] + sums[1];
  for (int k = 0; k < SQ_METRICS_LLM__COUNT; k++) out->errors += sums[2 + k];
  out->p95_ms = sq_metrics_quantile_ms(sums + 2 + SQ_METRICS_LLM__COUNT, 0.95);
  return 0;
}

int sq_metrics_read_requests(sq_queue *q, const char *provider, double *out) {
  char pl[160], f0[FIELD_MAX], f1[FIELD_MAX];
  sq_metrics_escape(provider, pl, sizeof pl);
  field_llm(f0, "requests_total", pl, "outcome", "ok");
  field_llm(f1, "requests_total", pl, "outcome", "error");
  const char *names[] = {SQ_METRICS_TOTALS}, *fields[] = {f0, f1};
  double sums[2];
  int rc = sq_queue_hash_sum(q, names, 1, fields, 2, sums);
  *out = rc ? 0 : sums[0] + sums[1];
  return rc;
}
