/* stats.c: pass@k (Chen et al. 2021), nearest-rank percentiles, and the
 * latency histogram that gives them in one pass. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double sq_stats_pass_at_k(int64_t n, int64_t c, int64_t k) {
  if (k < 1 || n < k || c < 0 || c > n) return -1;
  /* Fewer than k failures: every draw of k samples holds a passing one. */
  if (n - c < k) return 1.0;
  if (c == 0) return 0.0;
  if (k == 1) return (double)c / (double)n; /* 1 - (n-c)/n, rounded once */
  /* C(n-c, k) / C(n, k) = prod_{i=n-c+1..n} (1 - k/i) = prod_{i=0..k-1} (n-c-i)/(n-i) */
  long double fail_all = 1.0L;
  if (c <= k) {
    for (int64_t i = n - c + 1; i <= n; i++) fail_all *= (long double)(i - k) / (long double)i;
  } else {
    for (int64_t i = 0; i < k; i++) fail_all *= (long double)(n - c - i) / (long double)(n - i);
  }
  double v = (double)(1.0L - fail_all);
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

void sq_stats_sum_add(sq_stats_sum *s, double x) {
  int j = 0;
  for (int i = 0; i < s->n; i++) {
    double y = s->p[i];
    if (fabs(x) < fabs(y)) {
      double t = x;
      x = y;
      y = t;
    }
    double hi = x + y, lo = y - (hi - x);
    if (lo != 0) s->p[j++] = lo;
    x = hi;
  }
  if (j < SQ_STATS_SUM_PARTIALS) s->p[j++] = x;
  s->n = j;
}

/* The partials' sum as hi + lo, hi the correctly rounded total (math.fsum's
 * last step, with its half-way correction). */
static void sum_split(const sq_stats_sum *s, double *hi_out, double *lo_out) {
  double hi = 0, lo = 0;
  int i = s->n;
  if (i > 0) {
    hi = s->p[--i];
    while (i > 0) {
      double x = hi, y = s->p[--i];
      hi = x + y;
      double yr = hi - x;
      lo = y - yr;
      if (lo != 0) break;
    }
    /* a tie rounded the wrong way: the partials below say which way */
    if (i > 0 && ((lo < 0 && s->p[i - 1] < 0) || (lo > 0 && s->p[i - 1] > 0))) {
      double y = lo * 2, x = hi + y, yr = x - hi;
      if (y == yr) hi = x, lo -= y;
    }
    /* lo: what hi leaves out (the rest of the partials, summed) */
    double rest = lo;
    while (i > 0) rest += s->p[--i];
    lo = rest;
  }
  *hi_out = hi;
  *lo_out = lo;
}

double sq_stats_sum_total(const sq_stats_sum *s) {
  double hi, lo;
  sum_split(s, &hi, &lo);
  return hi;
}

double sq_stats_sum_mean(const sq_stats_sum *s, int64_t count) {
  if (count <= 0) return -1;
  double hi, lo, d = (double)count;
  sum_split(s, &hi, &lo);
  /* (hi + lo) / d: the quotient, then its remainder's share (fma: exact) */
  double q = hi / d, r = fma(-q, d, hi) + lo;
  return q + r / d;
}

int64_t sq_stats_percentile(const int64_t *sorted, size_t n, double p) {
  if (n == 0) return 0;
  if (!(p > 0)) return sorted[0];
  if (p >= 100) return sorted[n - 1];
  double rank = ceil(p / 100.0 * (double)n); /* 1-based */
  size_t i = rank < 1 ? 0 : (size_t)rank - 1;
  return sorted[i < n ? i : n - 1];
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

void sq_stats_sort_i64(int64_t *v, size_t n) {
  if (n > 1) qsort(v, n, sizeof *v, cmp_i64);
}

/* A value's bucket: itself below SQ_STATS_HIST_EXACT_MS; above, its power
 * of two and its top 12 bits after the leading one. */
static size_t hist_index(int64_t v) {
  if (v < SQ_STATS_HIST_EXACT_MS) return (size_t)v;
  int e = 63 - __builtin_clzll((unsigned long long)v); /* 18..62 */
  size_t sub = (size_t)((uint64_t)v >> (e - 12)) & (SQ_STATS_HIST_CHUNK - 1);
  return SQ_STATS_HIST_EXACT_MS + (size_t)(e - 18) * SQ_STATS_HIST_CHUNK + sub;
}

/* The lowest value of bucket i. */
static int64_t hist_low(size_t i) {
  if (i < SQ_STATS_HIST_EXACT_MS) return (int64_t)i;
  size_t e = 18 + (i - SQ_STATS_HIST_EXACT_MS) / SQ_STATS_HIST_CHUNK, sub = (i - SQ_STATS_HIST_EXACT_MS) % SQ_STATS_HIST_CHUNK;
  return (int64_t)((uint64_t)(SQ_STATS_HIST_CHUNK + sub) << (e - 12));
}

int sq_stats_hist_add(sq_stats_hist *h, int64_t v) {
  if (v < 0) return 0;
  size_t i = hist_index(v), c = i / SQ_STATS_HIST_CHUNK;
  if (!h->chunk[c] && !(h->chunk[c] = calloc(SQ_STATS_HIST_CHUNK, sizeof *h->chunk[c]))) return -1;
  h->chunk[c][i % SQ_STATS_HIST_CHUNK]++;
  if (!h->n || v < h->min) h->min = v;
  if (!h->n || v > h->max) h->max = v;
  h->n++;
  return 0;
}

int64_t sq_stats_hist_percentile(const sq_stats_hist *h, double p) {
  if (h->n == 0) return 0;
  if (!(p > 0)) return h->min;
  if (p >= 100) return h->max;
  double rank = ceil(p / 100.0 * (double)h->n); /* 1-based, as sq_stats_percentile */
  int64_t want = rank < 1 ? 0 : (int64_t)rank - 1, seen = 0;
  if (want >= h->n) want = h->n - 1;
  for (size_t c = 0; c < SQ_STATS_HIST_CHUNKS; c++) {
    if (!h->chunk[c]) continue;
    for (size_t j = 0; j < SQ_STATS_HIST_CHUNK; j++) {
      seen += h->chunk[c][j];
      if (seen > want) {
        int64_t v = hist_low(c * SQ_STATS_HIST_CHUNK + j);
        return v < h->min ? h->min : v > h->max ? h->max : v;
      }
    }
  }
  return h->max;
}

void sq_stats_hist_clear(sq_stats_hist *h) {
  for (size_t c = 0; c < SQ_STATS_HIST_CHUNKS; c++) free(h->chunk[c]);
  memset(h, 0, sizeof *h);
}
