/* stats.c: pass@k (Chen et al. 2021) and nearest-rank percentiles. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

double sq_stats_pass_at_k(int64_t n, int64_t c, int64_t k) {
  if (k < 1 || n < k || c < 0 || c > n) return -1;
  /* Fewer than k failures: every draw of k samples holds a passing one. */
  if (n - c < k) return 1.0;
  /* C(n-c, k) / C(n, k) = prod_{i=n-c+1..n} (1 - k/i) */
  double fail_all = 1.0;
  for (int64_t i = n - c + 1; i <= n; i++) fail_all *= 1.0 - (double)k / (double)i;
  double v = 1.0 - fail_all;
  return v < 0 ? 0 : v > 1 ? 1 : v;
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
