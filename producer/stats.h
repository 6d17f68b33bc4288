/* stats.h: the sums an evaluation report needs: the unbiased pass@k
 * estimator, latency percentiles, and a fixed-size latency histogram that
 * gives them in one pass. No I/O; only the histogram allocates. */
#ifndef SQ_STATS_H
#define SQ_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large
 * Language Models Trained on Code", eq. 1) for one problem with n samples of
 * which c passed: 1 - C(n-c, k) / C(n, k), computed as a product of ratios
 * (the shorter of prod_{i=n-c+1..n} (1 - k/i) and prod_{i=0..k-1}
 * (n-c-i)/(n-i)) in extended precision, which neither overflows nor loses
 * precision for large n (pass@1 is c/n, rounded once). Returns a value in [0, 1], or -1 when k < 1,
 * n < k, c < 0 or c > n (pass@k is undefined with fewer than k samples). */
double sq_stats_pass_at_k(int64_t n, int64_t c, int64_t k);

/* A sum of doubles kept exact until it is read (Shewchuk's non-overlapping
 * partials, as Python's math.fsum): the same total whatever the order the
 * values come in, and a mean rounded once. Zero-initialize; no allocation.
 * Values must be finite. */
#define SQ_STATS_SUM_PARTIALS 64
typedef struct {
  double p[SQ_STATS_SUM_PARTIALS];
  int n;
} sq_stats_sum;

void sq_stats_sum_add(sq_stats_sum *s, double x);
/* The exact sum, correctly rounded to a double. */
double sq_stats_sum_total(const sq_stats_sum *s);
/* The exact sum divided by count (> 0), rounded once (within an ulp, and
 * exactly rounded but for ties): an evaluation's mean pass@k. Returns -1
 * when count is 0. */
double sq_stats_sum_mean(const sq_stats_sum *s, int64_t count);

/* The p-th percentile (0 <= p <= 100) of n ascending values, by the
 * nearest-rank method (the smallest value with at least p% of the values at
 * or below it; p 0 gives the minimum). Returns 0 when n is 0. */
int64_t sq_stats_percentile(const int64_t *sorted, size_t n, double p);

/* Sorts n values ascending in place. */
void sq_stats_sort_i64(int64_t *v, size_t n);

/* Latencies in ms counted in buckets, for nearest-rank percentiles in one
 * pass with memory that does not grow with the count: one bucket per
 * millisecond below SQ_STATS_HIST_EXACT_MS (262,144 ms, about 4.4 min), so
 * a percentile there equals sq_stats_percentile's on the same values;
 * above, 4,096 buckets per power of two (a percentile is its bucket's
 * lowest value, at most 1/4096 below the exact one, never outside
 * [min, max]). Buckets come in chunks of 4,096 counters (16 KiB),
 * allocated when first used: at most 109 chunks (1.7 MiB). Zero-initialize;
 * free with sq_stats_hist_clear. */
#define SQ_STATS_HIST_EXACT_MS (1 << 18)
#define SQ_STATS_HIST_CHUNK 4096
#define SQ_STATS_HIST_CHUNKS (SQ_STATS_HIST_EXACT_MS / SQ_STATS_HIST_CHUNK + 45)
typedef struct {
  uint32_t *chunk[SQ_STATS_HIST_CHUNKS];
  int64_t n, min, max;
} sq_stats_hist;

/* Counts v (0 <= v < 2^63; a negative v is ignored). Returns 0, or -1 when
 * out of memory (v not counted). */
int sq_stats_hist_add(sq_stats_hist *h, int64_t v);
/* The p-th percentile as sq_stats_percentile defines it (0 when empty). */
int64_t sq_stats_hist_percentile(const sq_stats_hist *h, double p);
void sq_stats_hist_clear(sq_stats_hist *h);

#endif
