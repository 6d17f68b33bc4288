/* test_stats.c: pass@k against exact binomials (Python's math.comb), its
 * edges, nearest-rank percentiles, and the histogram that gives them in
 * one pass: equal below 262,144 ms, within 1/4096 above. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "stats.h"

static void near(double got, double want, const char *what) {
  if (fabs(got - want) > 1e-12) {
    char g[64], w[64];
    snprintf(g, sizeof g, "%.17g", got);
    snprintf(w, sizeof w, "%.17g", want);
    sq_check_fail_s(__FILE__, __LINE__, what, g, w);
  }
}

/* The histogram's percentiles against sorting the same values: a few
 * shapes (clustered, spread to an hour, a long tail), each in a random
 * order; exact below SQ_STATS_HIST_EXACT_MS, within 1/4096 above. */
static void hist_against_sort(void) {
  enum { N = 20000 };
  static int64_t v[N];
  const double ps[] = {0, 1, 50, 90, 99, 99.9, 100};
  srand(7);
  for (int shape = 0; shape < 4; shape++) {
    sq_stats_hist h = {0};
    for (int i = 0; i < N; i++) {
      int64_t x = shape == 0 ? 5 + rand() % 20                      /* trivial tasks: a few ms */
                  : shape == 1 ? rand() % 3600000                    /* queue waits up to an hour */
                  : shape == 2 ? (i % 100 == 0 ? 250000 + rand() % 20000 : 900 + rand() % 300) /* around the edge */
                               : (int64_t)rand() * 4096 + rand();    /* far above */
      v[i] = x;
      CHECK_EQ(sq_stats_hist_add(&h, x), 0);
    }
    CHECK_EQ(sq_stats_hist_add(&h, -1), 0); /* ignored */
    CHECK_EQ(h.n, N);
    sq_stats_sort_i64(v, N);
    for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
      int64_t want = sq_stats_percentile(v, N, ps[j]), got = sq_stats_hist_percentile(&h, ps[j]);
      if (want < SQ_STATS_HIST_EXACT_MS) CHECK_EQ(got, want);
      else CHECK(got <= want && (double)(want - got) <= (double)want / 4096.0);
    }
    sq_stats_hist_clear(&h);
  }
  sq_stats_hist empty = {0};
  CHECK_EQ(sq_stats_hist_percentile(&empty, 50), 0);
}

/* The exact sum and its mean: the case (182 of 820, 164 problems of
 * 5 samples), where a running sum is 0.22195121951219493; the same total in
 * any order; pass@1 is c/n rounded once. */
static void exact_mean(void) {
  sq_stats_sum fwd = {0}, rev = {0};
  double v[164];
  for (int i = 0; i < 164; i++) v[i] = sq_stats_pass_at_k(5, i < 18 ? 2 : 1, 1);
  double running = 0;
  for (int i = 0; i < 164; i++) sq_stats_sum_add(&fwd, v[i]), sq_stats_sum_add(&rev, v[163 - i]), running += v[i];
  CHECK(sq_stats_sum_mean(&fwd, 164) == 182.0 / 820.0);
  CHECK(sq_stats_sum_mean(&rev, 164) == sq_stats_sum_mean(&fwd, 164));
  CHECK(running / 164 != 182.0 / 820.0); /* what the running sum gave */
  CHECK(sq_stats_sum_total(&fwd) == 36.4);
  sq_stats_sum tiny = {0}; /* partials that cancel: 1e100 + 1 - 1e100 */
  sq_stats_sum_add(&tiny, 1e100), sq_stats_sum_add(&tiny, 1.0), sq_stats_sum_add(&tiny, -1e100);
  CHECK(sq_stats_sum_total(&tiny) == 1.0);
  CHECK(sq_stats_sum_mean(&tiny, 0) < 0);
  for (int n = 1; n <= 300; n++)
    for (int c = 0; c <= n; c++)
      if (sq_stats_pass_at_k(n, c, 1) != (double)c / (double)n) CHECK(!"pass@1 is not c/n rounded once");
}

int main(void) {
  exact_mean();
  /* 1 - comb(n-c, k) / comb(n, k), computed exactly in Python */
  near(sq_stats_pass_at_k(5, 2, 1), 0.4, "pass@1 n5 c2");
  near(sq_stats_pass_at_k(5, 2, 2), 0.7, "pass@2 n5 c2");
  near(sq_stats_pass_at_k(5, 2, 3), 0.9, "pass@3 n5 c2");
  near(sq_stats_pass_at_k(5, 0, 1), 0.0, "pass@1 n5 c0");
  near(sq_stats_pass_at_k(5, 5, 1), 1.0, "pass@1 n5 c5");
  near(sq_stats_pass_at_k(5, 4, 2), 1.0, "pass@2 n5 c4 (fewer failures than k)");
  near(sq_stats_pass_at_k(10, 3, 5), 0.9166666666666666, "pass@5 n10 c3");
  near(sq_stats_pass_at_k(200, 13, 10), 0.4975511147306061, "pass@10 n200 c13");
  near(sq_stats_pass_at_k(200, 13, 100), 0.9999194971988055, "pass@100 n200 c13");
  near(sq_stats_pass_at_k(200, 1, 1), 0.005, "pass@1 n200 c1");
  near(sq_stats_pass_at_k(1, 1, 1), 1.0, "pass@1 n1 c1");
  /* pass@1 is the pass rate c/n */
  for (int c = 0; c <= 7; c++) near(sq_stats_pass_at_k(7, c, 1), c / 7.0, "pass@1 = c/n");
  /* large n: no overflow, no NaN */
  double big = sq_stats_pass_at_k(1000000, 3, 100);
  CHECK(big > 0 && big < 0.001);
  /* undefined: fewer samples than k, bad counts */
  CHECK(sq_stats_pass_at_k(5, 2, 10) < 0);
  CHECK(sq_stats_pass_at_k(5, 2, 0) < 0);
  CHECK(sq_stats_pass_at_k(5, 6, 1) < 0);
  CHECK(sq_stats_pass_at_k(5, -1, 1) < 0);

  int64_t v[] = {40, 10, 30, 20, 50, 60, 70, 80, 90, 100};
  sq_stats_sort_i64(v, 10);
  CHECK_EQ(v[0], 10);
  CHECK_EQ(v[9], 100);
  CHECK_EQ(sq_stats_percentile(v, 10, 50), 50);
  CHECK_EQ(sq_stats_percentile(v, 10, 90), 90);
  CHECK_EQ(sq_stats_percentile(v, 10, 99), 100);
  CHECK_EQ(sq_stats_percentile(v, 10, 100), 100);
  CHECK_EQ(sq_stats_percentile(v, 10, 0), 10);
  CHECK_EQ(sq_stats_percentile(v, 10, 1), 10);
  CHECK_EQ(sq_stats_percentile(v, 0, 50), 0);
  int64_t one = 7;
  CHECK_EQ(sq_stats_percentile(&one, 1, 50), 7);
  hist_against_sort();
  return sq_check_done("test_stats");
}
