/* stats.h: the sums an evaluation report needs, as pure functions: the
 * unbiased pass@k estimator and latency percentiles. No I/O, no allocation. */
#ifndef SQ_STATS_H
#define SQ_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large
 * Language Models Trained on Code", eq. 1) for one problem with n samples of
 * which c passed: 1 - C(n-c, k) / C(n, k), computed as the product
 * 1 - prod_{i=n-c+1..n} (1 - k/i), which neither overflows nor loses
 * precision for large n. Returns a value in [0, 1], or -1 when k < 1,
 * n < k, c < 0 or c > n (pass@k is undefined with fewer than k samples). */
double sq_stats_pass_at_k(int64_t n, int64_t c, int64_t k);

/* The p-th percentile (0 <= p <= 100) of n ascending values, by the
 * nearest-rank method (the smallest value with at least p% of the values at
 * or below it; p 0 gives the minimum). Returns 0 when n is 0. */
int64_t sq_stats_percentile(const int64_t *sorted, size_t n, double p);

/* Sorts n values ascending in place. */
void sq_stats_sort_i64(int64_t *v, size_t n);

#endif
