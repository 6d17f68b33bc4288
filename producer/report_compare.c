/* report_compare.c: `report A B`: two batches' reports side by side,
 * problem by problem (the question after every run: is B better than A?).
 * pass@k of each over the problems both have, the difference with a 95 %
 * interval from a paired bootstrap over those problems (fixed seed, so the
 * same batches give the same interval), every problem's (n, c) in each, the
 * problems only one of them solved, latency and cost. Pure: reads two
 * built reports, writes text, JSON ("sandq.compare/1", docs/evaluation.md)
 * or an HTML page. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "eval.h"
#include "stats.h"

#define BOOTSTRAP_ROUNDS 2000

static int by_problem(const void *x, const void *y) {
  const sq__compare_problem *a = x, *b = y;
  int c = sq__natural_cmp(a->task_id, b->task_id);
  return c ? c : strcmp(a->task_id, b->task_id);
}

static const sq__report_problem *find(const sq__report *r, const char *task_id) {
  size_t lo = 0, hi = r->n_problems; /* sq__report_build sorts problems by strcmp */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(r->problems[mid].task_id, task_id);
    if (!c) return &r->problems[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* splitmix64: a fixed, portable sequence for the bootstrap. */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int by_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* The mean of d[0..m) and a percentile interval of means of m draws with
 * replacement, BOOTSTRAP_ROUNDS times. */
static int bootstrap(const double *d, size_t m, double *mean, double ci[2]) {
  double sum = 0;
  for (size_t i = 0; i < m; i++) sum += d[i];
  *mean = sum / (double)m;
  double *means = malloc(BOOTSTRAP_ROUNDS * sizeof *means);
  if (!means) return SQ_ENOMEM;
  uint64_t seed = 0x5eed5a9dULL;
  for (int r = 0; r < BOOTSTRAP_ROUNDS; r++) {
    double s = 0;
    for (size_t i = 0; i < m; i++) s += d[next_u64(&seed) % m];
    means[r] = s / (double)m;
  }
  qsort(means, BOOTSTRAP_ROUNDS, sizeof *means, by_double);
  ci[0] = means[(size_t)(0.025 * (BOOTSTRAP_ROUNDS - 1))];
  ci[1] = means[(size_t)ceil(0.975 * (BOOTSTRAP_ROUNDS - 1))];
  free(means);
  return 0;
}

static double total_cost(const sq__report *r) {
  double c = 0;
  for (size_t i = 0; i < r->n_llm; i++) c += r->llm[i].cost_usd;
  return c;
}

int sq__compare_build(const sq__report *a, const sq__report *b, sq__compare *out) {
  memset(out, 0, sizeof *out);
  out->a = a, out->b = b;
  size_t cap = a->n_problems + b->n_problems;
  out->problems = calloc(cap ? cap : 1, sizeof *out->problems);
  double *d = calloc(a->n_problems ? a->n_problems : 1, sizeof *d);
  double *pa = calloc(a->n_problems ? a->n_problems : 1, sizeof *pa);
  double *pb = calloc(a->n_problems ? a->n_problems : 1, sizeof *pb);
  int rc = out->problems && d && pa && pb ? 0 : SQ_ENOMEM;
  /* the union of problems, each once: A's, then B's that A lacks */
  for (size_t i = 0; !rc && i < a->n_problems; i++) {
    /* a problem none of whose samples has a verdict is not a batch's (report --allow-missing) */
    const sq__report_problem *x = &a->problems[i], *y = find(b, x->task_id);
    if (!x->n) continue;
    if (y && !y->n) y = NULL;
    sq__compare_problem *p = &out->problems[out->n_problems++];
    p->task_id = x->task_id;
    p->a_n = x->n, p->a_c = x->c;
    p->b_n = y ? y->n : -1, p->b_c = y ? y->c : -1;
  }
  for (size_t i = 0; !rc && i < b->n_problems; i++) {
    const sq__report_problem *y = &b->problems[i], *x = find(a, y->task_id);
    if (!y->n || (x && x->n)) continue;
    sq__compare_problem *p = &out->problems[out->n_problems++];
    p->task_id = y->task_id;
    p->a_n = p->a_c = -1;
    p->b_n = y->n, p->b_c = y->c;
  }
  if (!rc) qsort(out->problems, out->n_problems, sizeof *out->problems, by_problem);
  for (size_t i = 0; !rc && i < out->n_problems; i++) {
    const sq__compare_problem *p = &out->problems[i];
    if (p->a_n >= 0 && p->b_n >= 0) {
      out->common++;
      out->only_a += p->a_c > 0 && p->b_c == 0;
      out->only_b += p->b_c > 0 && p->a_c == 0;
    }
  }
  /* pass@k over the problems both have with at least k samples in each */
  out->n_k = a->n_k;
  for (int j = 0; !rc && j < a->n_k; j++) {
    int k = a->k[j];
    size_t m = 0;
    for (size_t i = 0; i < out->n_problems; i++) {
      const sq__compare_problem *p = &out->problems[i];
      if (p->a_n < k || p->b_n < k) continue;
      pa[m] = sq_stats_pass_at_k(p->a_n, p->a_c, k);
      pb[m] = sq_stats_pass_at_k(p->b_n, p->b_c, k);
      d[m] = pb[m] - pa[m];
      m++;
    }
    sq__compare_k *ck = &out->k[j];
    ck->k = k, ck->problems = (int64_t)m;
    if (!m) {
      ck->a = ck->b = -1;
      continue;
    }
    sq_stats_sum sa = {0}, sb = {0}; /* exact means, as the reports' */
    for (size_t i = 0; i < m; i++) sq_stats_sum_add(&sa, pa[i]), sq_stats_sum_add(&sb, pb[i]);
    ck->a = sq_stats_sum_mean(&sa, (int64_t)m), ck->b = sq_stats_sum_mean(&sb, (int64_t)m);
    rc = bootstrap(d, m, &ck->delta, ck->ci95);
  }
  out->a_cost_usd = total_cost(a), out->b_cost_usd = total_cost(b);
  free(d), free(pa), free(pb);
  return rc;
}

void sq__compare_free(sq__compare *c) {
  if (!c) return;
  free(c->problems);
  memset(c, 0, sizeof *c);
}

/* ---- text ---- */

static void nc(char *buf, size_t len, int64_t n, int64_t c) {
  if (n < 0) snprintf(buf, len, "-");
  else snprintf(buf, len, "%lld/%lld", (long long)c, (long long)n);
}

int sq__compare_text(const sq__compare *c, size_t top, sq_buf *b) {
  const sq__report *A = c->a, *B = c->b;
  int rc = 0;
  for (int i = 0; !rc && i < 2; i++) {
    const sq__report *r = i ? B : A;
    rc = sq_buf_appendf(b, "%c: batch %s, %zu task(s), %zu problem(s)", i ? 'B' : 'A', r->batch, r->n_rows, r->n_problems);
    if (!rc && r->n_missing)
      rc = sq_buf_appendf(b, "; %lld sample(s) without a verdict left out of every figure", (long long)r->n_missing);
    rc = rc || sq_buf_appendf(b, "\n");
  }
  rc = rc || sq_buf_appendf(b, "%zu problem(s) in both; solved only by A: %zu, only by B: %zu\n\n", c->common, c->only_a,
                            c->only_b);
  rc = rc || sq_buf_appendf(b, "pass@k over the problems both have   %8s %8s %8s  %-19s %s\n", "A", "B", "B - A",
                            "95% interval", "problems");
  for (int j = 0; !rc && j < c->n_k; j++) {
    const sq__compare_k *k = &c->k[j];
    char key[16];
    snprintf(key, sizeof key, "pass@%d", k->k);
    if (k->problems == 0)
      rc = sq_buf_appendf(b, "  %-34s %8s %8s %8s  (no problem has %d samples in both)\n", key, "-", "-", "-", k->k);
    else
      rc = sq_buf_appendf(b, "  %-34s %8.4f %8.4f %+8.4f  [%+.4f, %+.4f] %lld\n", key, k->a, k->b, k->delta, k->ci95[0],
                          k->ci95[1], (long long)k->problems);
  }
  const sq__report_latency *la = &A->latency[SQ__STAGE_TOTAL], *lb = &B->latency[SQ__STAGE_TOTAL];
  rc = rc || sq_buf_appendf(b, "\ntotal_ms         %8s %8s %8s   cost_usd\n  A %12lld %8lld %8lld   %.6f\n  B %12lld %8lld %8lld   %.6f\n",
                            "p50", "p90", "p99", (long long)la->p50, (long long)la->p90, (long long)la->p99, c->a_cost_usd,
                            (long long)lb->p50, (long long)lb->p90, (long long)lb->p99, c->b_cost_usd);
  /* the problems whose result differs, first top of them */
  size_t shown = 0, differ = 0;
  for (size_t i = 0; i < c->n_problems; i++) {
    const sq__compare_problem *p = &c->problems[i];
    bool diff = p->a_n < 0 || p->b_n < 0 || (p->a_c > 0) != (p->b_c > 0) ||
                (p->a_n > 0 && p->b_n > 0 && p->a_c * p->b_n != p->b_c * p->a_n);
    if (!diff) continue;
    if (!differ++) rc = rc || sq_buf_appendf(b, "\nproblems whose pass rate differs   %10s %10s\n", "A (c/n)", "B (c/n)");
    if (shown >= top) continue;
    char sa[48], sb[48];
    nc(sa, sizeof sa, p->a_n, p->a_c), nc(sb, sizeof sb, p->b_n, p->b_c);
    rc = rc || sq_buf_appendf(b, "  %-32.32s %10s %10s%s\n", p->task_id, sa, sb,
                              p->a_c > 0 && p->b_c == 0 ? "  only A" : p->b_c > 0 && p->a_c == 0 ? "  only B" : "");
    shown++;
  }
  if (!rc && differ > shown) rc = sq_buf_appendf(b, "  ... and %zu more (--json lists every problem)\n", differ - shown);
  if (!rc && !differ) rc = sq_buf_appendf(b, "\nevery problem has the same pass rate in both\n");
  return rc ? SQ_ENOMEM : 0;
}

/* ---- JSON ---- */

static cJSON *side(int64_t n, int64_t c) {
  if (n < 0) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  if (o && (!cJSON_AddNumberToObject(o, "n", (double)n) || !cJSON_AddNumberToObject(o, "c", (double)c))) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static cJSON *latency(const sq__report_latency *l) {
  cJSON *o = cJSON_CreateObject();
  if (o && (!cJSON_AddNumberToObject(o, "p50", (double)l->p50) || !cJSON_AddNumberToObject(o, "p90", (double)l->p90) ||
            !cJSON_AddNumberToObject(o, "p99", (double)l->p99) || !cJSON_AddNumberToObject(o, "count", (double)l->count))) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

int sq__compare_json(const sq__compare *c, sq_buf *out) {
  cJSON *root = cJSON_CreateObject(), *o, *arr;
  bool ok = root && cJSON_AddStringToObject(root, "schema", "sandq.compare/1") &&
            (arr = cJSON_AddArrayToObject(root, "batches")) != NULL;
  if (ok) {
    cJSON *x = cJSON_CreateString(c->a->batch), *y = cJSON_CreateString(c->b->batch);
    ok = x && y;
    if (x) cJSON_AddItemToArray(arr, x);
    if (y) cJSON_AddItemToArray(arr, y);
  }
  ok = ok && cJSON_AddStringToObject(root, "queue", c->a->queue) &&
       cJSON_AddNumberToObject(root, "common_problems", (double)c->common) &&
       (o = cJSON_AddObjectToObject(root, "pass_at_k")) != NULL;
  for (int j = 0; ok && j < c->n_k; j++) {
    const sq__compare_k *k = &c->k[j];
    char key[16];
    snprintf(key, sizeof key, "%d", k->k);
    cJSON *e = cJSON_AddObjectToObject(o, key);
    if (!(ok = e != NULL)) break;
    if (k->problems == 0) {
      ok = cJSON_AddNullToObject(e, "a") && cJSON_AddNullToObject(e, "b") && cJSON_AddNullToObject(e, "delta") &&
           cJSON_AddNullToObject(e, "ci95") && cJSON_AddNumberToObject(e, "problems", 0);
      continue;
    }
    cJSON *ci = cJSON_CreateDoubleArray(k->ci95, 2);
    cJSON *fa = sq__json_float(k->a), *fb = sq__json_float(k->b);
    ok = fa && fb && ci;
    if (ok) {
      cJSON_AddItemToObject(e, "a", fa), cJSON_AddItemToObject(e, "b", fb), cJSON_AddItemToObject(e, "ci95", ci);
      ok = cJSON_AddNumberToObject(e, "delta", k->delta) && cJSON_AddNumberToObject(e, "problems", (double)k->problems);
    } else {
      cJSON_Delete(fa), cJSON_Delete(fb), cJSON_Delete(ci);
    }
  }
  cJSON *probs = NULL, *only_a = NULL, *only_b = NULL;
  ok = ok && (probs = cJSON_AddArrayToObject(root, "problems")) && (only_a = cJSON_AddArrayToObject(root, "only_a")) &&
       (only_b = cJSON_AddArrayToObject(root, "only_b"));
  for (size_t i = 0; ok && i < c->n_problems; i++) {
    const sq__compare_problem *p = &c->problems[i];
    cJSON *e = cJSON_CreateObject(), *sa = side(p->a_n, p->a_c), *sb = side(p->b_n, p->b_c);
    ok = e && sa && sb;
    if (ok) {
      cJSON_AddStringToObject(e, "problem", p->task_id);
      cJSON_AddItemToObject(e, "a", sa), cJSON_AddItemToObject(e, "b", sb);
      cJSON_AddItemToArray(probs, e);
    } else {
      cJSON_Delete(e), cJSON_Delete(sa), cJSON_Delete(sb);
    }
    if (ok && p->a_n >= 0 && p->b_n >= 0 && (p->a_c > 0) != (p->b_c > 0)) {
      cJSON *s = cJSON_CreateString(p->task_id);
      ok = s != NULL;
      if (ok) cJSON_AddItemToArray(p->a_c > 0 ? only_a : only_b, s);
    }
  }
  cJSON *lat = NULL, *cost = NULL;
  ok = ok && (lat = cJSON_AddObjectToObject(root, "total_ms")) && (cost = cJSON_AddObjectToObject(root, "cost_usd"));
  if (ok) {
    cJSON *x = latency(&c->a->latency[SQ__STAGE_TOTAL]), *y = latency(&c->b->latency[SQ__STAGE_TOTAL]);
    ok = x && y;
    if (x) cJSON_AddItemToObject(lat, "a", x);
    if (y) cJSON_AddItemToObject(lat, "b", y);
    ok = ok && cJSON_AddNumberToObject(cost, "a", c->a_cost_usd) && cJSON_AddNumberToObject(cost, "b", c->b_cost_usd);
  }
  char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
  cJSON_Delete(root);
  if (!text) return SQ_ENOMEM;
  int rc = sq_buf_appendf(out, "%s\n", text) ? SQ_ENOMEM : 0;
  free(text);
  return rc;
}

/* ---- HTML ---- */

static int esc(sq_buf *b, const char *s) {
  int rc = 0;
  for (; !rc && *s; s++) {
    switch (*s) {
    case '<': rc = sq_buf_appendf(b, "&lt;"); break;
    case '>': rc = sq_buf_appendf(b, "&gt;"); break;
    case '&': rc = sq_buf_appendf(b, "&amp;"); break;
    case '"': rc = sq_buf_appendf(b, "&quot;"); break;
    default: rc = sq_buf_appendf(b, "%c", *s);
    }
  }
  return rc;
}

/* One cell of the per-problem grid: c/n, shaded by the pass rate. */
static int cell(sq_buf *b, int64_t n, int64_t c) {
  if (n < 0) return sq_buf_appendf(b, "<td class=na>-</td>");
  double rate = n ? (double)c / (double)n : 0;
  return sq_buf_appendf(b, "<td style=\"background:rgba(46,160,67,%.2f)\">%lld/%lld</td>", 0.1 + 0.6 * rate,
                        (long long)c, (long long)n);
}

int sq__compare_html(const sq__compare *c, sq_buf *b) {
  int rc = sq_buf_appendf(b, "<!doctype html><html><head><meta charset=utf-8><title>sandq: ");
  rc = rc || esc(b, c->a->batch) || sq_buf_appendf(b, " vs ") || esc(b, c->b->batch);
  rc = rc || sq_buf_appendf(b, "</title><style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}"
                               "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child{text-align:left}"
                               ".na{color:#999}</style></head><body><h1>A: ");
  rc = rc || esc(b, c->a->batch) || sq_buf_appendf(b, " &nbsp; B: ") || esc(b, c->b->batch);
  rc = rc || sq_buf_appendf(b, "</h1><p>%zu problem(s) in both; solved only by A: %zu, only by B: %zu</p>", c->common,
                            c->only_a, c->only_b);
  rc = rc || sq_buf_appendf(b, "<h2>pass@k</h2><table><tr><th>k</th><th>A</th><th>B</th><th>B - A</th>"
                               "<th>95%% interval</th><th>problems</th></tr>");
  for (int j = 0; !rc && j < c->n_k; j++) {
    const sq__compare_k *k = &c->k[j];
    if (k->problems == 0)
      rc = sq_buf_appendf(b, "<tr><td>pass@%d</td><td>-</td><td>-</td><td>-</td><td>-</td><td>0</td></tr>", k->k);
    else
      rc = sq_buf_appendf(b, "<tr><td>pass@%d</td><td>%.4f</td><td>%.4f</td><td>%+.4f</td><td>[%+.4f, %+.4f]</td>"
                             "<td>%lld</td></tr>",
                          k->k, k->a, k->b, k->delta, k->ci95[0], k->ci95[1], (long long)k->problems);
  }
  const sq__report_latency *la = &c->a->latency[SQ__STAGE_TOTAL], *lb = &c->b->latency[SQ__STAGE_TOTAL];
  rc = rc || sq_buf_appendf(b, "</table><h2>latency and cost</h2><table><tr><th></th><th>p50 ms</th><th>p90 ms</th>"
                               "<th>p99 ms</th><th>cost_usd</th></tr><tr><td>A</td><td>%lld</td><td>%lld</td><td>%lld</td>"
                               "<td>%.6f</td></tr><tr><td>B</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.6f</td></tr>"
                               "</table>",
                            (long long)la->p50, (long long)la->p90, (long long)la->p99, c->a_cost_usd, (long long)lb->p50,
                            (long long)lb->p90, (long long)lb->p99, c->b_cost_usd);
  rc = rc || sq_buf_appendf(b, "<h2>every problem (passed/samples)</h2><table><tr><th>problem</th><th>A</th><th>B</th>"
                               "<th></th></tr>");
  for (size_t i = 0; !rc && i < c->n_problems; i++) {
    const sq__compare_problem *p = &c->problems[i];
    rc = sq_buf_appendf(b, "<tr><td>") || esc(b, p->task_id) || sq_buf_appendf(b, "</td>") || cell(b, p->a_n, p->a_c) ||
         cell(b, p->b_n, p->b_c) ||
         sq_buf_appendf(b, "<td>%s</td></tr>",
                        p->a_n >= 0 && p->b_n >= 0 && p->a_c > 0 && p->b_c == 0   ? "only A"
                        : p->a_n >= 0 && p->b_n >= 0 && p->b_c > 0 && p->a_c == 0 ? "only B"
                                                                                   : "");
  }
  rc = rc || sq_buf_appendf(b, "</table></body></html>\n");
  return rc ? SQ_ENOMEM : 0;
}
