/* test_metrics.c: the pure parts of metrics: the quantile of a bucketed
 * histogram, label escaping, and what recording leaves for the next flush
 * (sq_metrics_pending): out-of-range and unknown input ignored, negative
 * durations clamped. The Redis side is tested by tests/integration/metrics.sh. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "metrics.h"

static void test_quantile(void) {
  double cum[SQ_METRICS_N_BUCKETS] = {0};
  CHECK_EQ(sq_metrics_quantile_ms(cum, 0.95), 0);
  /* 100 observations, all in the (100, 250] ms bucket (index 5). */
  for (int i = 5; i < SQ_METRICS_N_BUCKETS; i++) cum[i] = 100;
  CHECK_EQ((long long)sq_metrics_quantile_ms(cum, 0.95), 242); /* 100 + 150 * 0.95 */
  CHECK_EQ((long long)sq_metrics_quantile_ms(cum, 0.5), 175);
  /* 90 fast (<= 5 ms) and 10 in +Inf: p95 is the largest finite bound. */
  for (int i = 0; i < SQ_METRICS_N_BUCKETS - 1; i++) cum[i] = 90;
  cum[SQ_METRICS_N_BUCKETS - 1] = 100;
  CHECK_EQ((long long)sq_metrics_quantile_ms(cum, 0.95), 120000);
  CHECK_EQ((long long)sq_metrics_quantile_ms(cum, 0.5), 2); /* 5 ms x 50/90 */
  CHECK_STR(sq_metrics_bucket_le(0), "0.005");
  CHECK_STR(sq_metrics_bucket_le(SQ_METRICS_N_BUCKETS - 1), "+Inf");
  CHECK(sq_metrics_bucket_le(SQ_METRICS_N_BUCKETS) == NULL);
}

static void test_escape_and_registry(void) {
  char out[64];
  sq_metrics_escape("a\"b\\c\nd", out, sizeof out);
  CHECK_STR(out, "a\\\"b\\\\c\\nd");
  sq_metrics *m = NULL;
  const char *names[] = {"a", "b"};
  sq_metrics_options o = {.window_s = 10, .retention_s = 100};
  CHECK_EQ(sq_metrics_new(names, 9, &o, &m), SQ_EINVAL);
  CHECK_EQ(sq_metrics_new(names, 2, &o, &m), 0);
  const sq_queue_incr *it;
  CHECK_EQ(sq_metrics_pending(m, &it), 0); /* nothing recorded yet */
  /* A provider not named at creation: ignored, no series for anyone. */
  sq_metrics_llm_exchange(m, "unknown", true, SQ_METRICS_LLM_TRANSPORT, 5);
  sq_metrics_llm_exchange(m, "unknown", false, SQ_METRICS_LLM_TRANSPORT, 5);
  sq_metrics_llm_usage(m, "unknown", 10, 20, 0.5);
  sq_metrics_llm_error(m, "unknown", SQ_METRICS_LLM_NO_CODE);
  CHECK_EQ(sq_metrics_pending(m, &it), 0);
  /* A status or stage out of range: ignored (no series, nothing written
   * next to the arrays: tasks[] is followed by the retried counter). */
  sq_metrics_task(m, SQ_STATUS__COUNT);
  sq_metrics_task(m, (sq_status)-1);
  sq_metrics_stage(m, SQ_METRICS_STAGE__COUNT, 1);
  sq_metrics_stage(m, (sq_metrics_stage_id)-1, 1);
  CHECK_EQ(sq_metrics_pending(m, &it), 0);
  /* A negative duration is clamped to 0: one observation in the first
   * bucket (cumulative: every bucket counts it) and a sum of 0, which is
   * no change and so no series; unclamped, the sum would be -0.003. */
  sq_metrics_stage(m, SQ_METRICS_STAGE_TOTAL, -3);
  size_t n = sq_metrics_pending(m, &it);
  CHECK_EQ(n, SQ_METRICS_N_BUCKETS + 1);
  for (size_t i = 0; i < n; i++) {
    char want[128];
    if (i < SQ_METRICS_N_BUCKETS)
      snprintf(want, sizeof want, "sandq_stage_duration_seconds_bucket{stage=\"total\",le=\"%s\"}",
               sq_metrics_bucket_le((int)i));
    else
      snprintf(want, sizeof want, "sandq_stage_duration_seconds_count{stage=\"total\"}");
    CHECK_STR(it[i].field, want);
    CHECK(it[i].delta == 1.0);
  }
  /* A known provider's exchange is counted (the control for "unknown"). */
  sq_metrics_llm_exchange(m, "b", false, SQ_METRICS_LLM_TRANSPORT, 5);
  n = sq_metrics_pending(m, &it);
  int found = 0;
  for (size_t i = 0; i < n; i++) {
    found += strcmp(it[i].field, "sandq_llm_requests_total{provider=\"b\",outcome=\"error\"}") == 0;
    found += strcmp(it[i].field, "sandq_llm_errors_total{provider=\"b\",kind=\"transport\"}") == 0;
    CHECK(strstr(it[i].field, "unknown") == NULL);
    CHECK(strstr(it[i].field, "provider=\"a\"") == NULL);
  }
  CHECK_EQ(found, 2);
  /* No queue: nothing sent, the changes stay pending. */
  CHECK_EQ(sq_metrics_flush(m, NULL, 0), 0);
  CHECK_EQ(sq_metrics_pending(m, &it), n);
  /* A NULL registry: recording is a no-op, nothing pending. */
  sq_metrics_stage(NULL, SQ_METRICS_STAGE_TOTAL, 1);
  sq_metrics_task(NULL, SQ_STATUS_PASSED);
  CHECK_EQ(sq_metrics_pending(NULL, &it), 0);
  CHECK(it == NULL);
  sq_metrics_free(m);
  sq_metrics_free(NULL);
}

/* One registry's own text (a worker's GET /metrics): every series with the
 * constant labels first, zeros included, one HELP/TYPE per family, and the
 * totals do not move with a flush (they are since creation, not deltas). */
static void test_local_text(void) {
  sq_metrics *m = NULL;
  const char *names[] = {"p"};
  sq_metrics_options o = {.window_s = 10, .retention_s = 100};
  CHECK_EQ(sq_metrics_new(names, 1, &o, &m), 0);
  sq_metrics_task(m, SQ_STATUS_PASSED);
  sq_metrics_task(m, SQ_STATUS_PASSED);
  sq_metrics_stage(m, SQ_METRICS_STAGE_JAIL, 30);
  sq_buf b = {0};
  CHECK_EQ(sq_metrics_text_local(m, "worker=\"w\",queue=\"q\"", &b), 0);
  const char *t = b.data ? b.data : "";
  CHECK(strstr(t, "\nsandq_tasks_total{worker=\"w\",queue=\"q\",status=\"passed\"} 2\n") != NULL);
  CHECK(strstr(t, "\nsandq_tasks_total{worker=\"w\",queue=\"q\",status=\"failed\"} 0\n") != NULL);
  CHECK(strstr(t, "sandq_stage_duration_seconds_bucket{worker=\"w\",queue=\"q\",stage=\"jail\",le=\"0.025\"} 0\n") != NULL);
  CHECK(strstr(t, "sandq_stage_duration_seconds_bucket{worker=\"w\",queue=\"q\",stage=\"jail\",le=\"0.05\"} 1\n") != NULL);
  CHECK(strstr(t, "sandq_llm_cost_usd_total{worker=\"w\",queue=\"q\",provider=\"p\"} 0\n") != NULL);
  CHECK(strstr(t, "sandq_tasks_retried_total{worker=\"w\",queue=\"q\"} 0\n") != NULL);
  /* one TYPE line per family */
  const char *first = strstr(t, "# TYPE sandq_tasks_total counter");
  CHECK(first != NULL && strstr(first + 1, "# TYPE sandq_tasks_total") == NULL);
  /* the pending deltas are untouched by rendering */
  const sq_queue_incr *it;
  size_t n = sq_metrics_pending(m, &it);
  CHECK(n > 0);
  for (size_t i = 0; i < n; i++) CHECK(strstr(it[i].field, "status=\"failed\"") == NULL); /* a zero is no delta */
  sq_buf_clear(&b);
  /* no constant labels: the series' own only */
  CHECK_EQ(sq_metrics_text_local(m, "", &b), 0);
  CHECK(strstr(b.data, "\nsandq_tasks_total{status=\"passed\"} 2\n") != NULL);
  CHECK(strstr(b.data, "sandq_tasks_retried_total 0\n") != NULL);
  sq_buf_clear(&b);
  /* by language: a language's series once it has a count, every status then; out-of-table ids dropped */
  sq_metrics_task_language(m, SQ_LANGUAGE_C, SQ_STATUS_PASSED);
  sq_metrics_task_language(m, SQ_LANGUAGE_C, SQ_STATUS_COMPILE_ERROR);
  sq_metrics_task_language(m, SQ_LANGUAGE__COUNT, SQ_STATUS_PASSED);
  sq_metrics_task_language(m, (sq_language_id)-1, SQ_STATUS_PASSED);
  sq_metrics_task_language(m, SQ_LANGUAGE_C, SQ_STATUS__COUNT);
  sq_metrics_compile_cache(m, SQ_LANGUAGE_C, false);
  sq_metrics_compile_cache(m, SQ_LANGUAGE_C, true);
  sq_metrics_compile_cache(m, SQ_LANGUAGE_C, true);
  sq_metrics_compile_cache(m, SQ_LANGUAGE__COUNT, true);
  CHECK_EQ(sq_metrics_text_local(m, "queue=\"q\"", &b), 0);
  t = b.data ? b.data : "";
  CHECK_CONTAINS(t, "# TYPE sandq_language_tasks_total counter\n");
  CHECK_CONTAINS(t, "\nsandq_language_tasks_total{queue=\"q\",language=\"c\",status=\"passed\"} 1\n");
  CHECK_CONTAINS(t, "\nsandq_language_tasks_total{queue=\"q\",language=\"c\",status=\"compile_error\"} 1\n");
  CHECK_CONTAINS(t, "\nsandq_language_tasks_total{queue=\"q\",language=\"c\",status=\"failed\"} 0\n");
  CHECK(strstr(t, "language=\"python\"") == NULL); /* no count yet: no series */
  CHECK_CONTAINS(t, "\nsandq_compile_cache_lookups_total{queue=\"q\",language=\"c\",result=\"hit\"} 2\n");
  CHECK_CONTAINS(t, "\nsandq_compile_cache_lookups_total{queue=\"q\",language=\"c\",result=\"miss\"} 1\n");
  size_t lines = 0;
  for (const char *p = strstr(t, "sandq_language_tasks_total{"); p; p = strstr(p + 1, "sandq_language_tasks_total{"))
    lines++;
  CHECK_EQ(lines, (size_t)SQ_STATUS__COUNT); /* bounded: one language, each status once */
  n = sq_metrics_pending(m, &it);
  bool seen = false;
  for (size_t i = 0; i < n; i++)
    if (strcmp(it[i].field, "sandq_language_tasks_total{language=\"c\",status=\"passed\"}") == 0)
      seen = it[i].delta == 1;
  CHECK(seen); /* its Redis form: the fleet view reads it back */
  sq_buf_clear(&b);
  char j[64];
  sq_metrics_labels_join(j, sizeof j, "a=\"1\"", "b=\"2\"");
  CHECK_STR(j, "a=\"1\",b=\"2\"");
  sq_metrics_labels_join(j, sizeof j, "", "b=\"2\"");
  CHECK_STR(j, "b=\"2\"");
  sq_metrics_labels_join(j, sizeof j, NULL, NULL);
  CHECK_STR(j, "");
  sq_metrics_free(m);
}

int main(void) {
  test_quantile();
  test_escape_and_registry();
  test_local_text();
  return sq_check_done("test_metrics");
}
