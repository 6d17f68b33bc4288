/* metrics_cmd.c: `sandq-producer metrics [FILE]`: the fleet's metrics in
 * the Prometheus text format: the workers' totals (sq:{Q}:metrics) plus
 * gauges read now (queue sizes, queue events, workers, the rollout). With
 * FILE, written atomically (FILE.tmp, rename) for node_exporter's textfile
 * collector; run it from cron or a systemd timer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "metrics.h"
#include "producer.h"
#include "rollout.h"
#include "util.h"

static int queue_gauges(sq_queue *q, sq_buf *b) {
  sq_queue_counters c;
  int rc = sq_queue_counters_get(q, &c);
  if (rc) return rc;
  const struct {
    const char *state;
    int64_t n;
  } sizes[] = {{"waiting", c.waiting}, {"delayed", c.delayed}, {"in_flight", c.in_flight}, {"dead_letter", c.dead_letter}};
  const struct {
    const char *event;
    int64_t n;
  } events[] = {{"fenced", c.fenced},   {"duplicate", c.duplicate}, {"stalled", c.stalled},
                {"retried", c.retried}, {"dead", c.dead},           {"deduplicated", c.deduplicated}};
  char labels[64];
  rc = sq_metrics_text_header(b, "sandq_queue_tasks", "gauge", "Tasks in the queue now, by state.");
  for (size_t i = 0; rc == 0 && i < sizeof sizes / sizeof sizes[0]; i++) {
    snprintf(labels, sizeof labels, "state=\"%s\"", sizes[i].state);
    rc = sq_metrics_text_sample(b, "sandq_queue_tasks", labels, (double)sizes[i].n);
  }
  if (!rc) rc = sq_metrics_text_header(b, "sandq_queue_events_total", "counter",
                                       "Queue events: refused results, stalls, retries, dead letters, deduplicated pushes.");
  for (size_t i = 0; rc == 0 && i < sizeof events / sizeof events[0]; i++) {
    snprintf(labels, sizeof labels, "event=\"%s\"", events[i].event);
    rc = sq_metrics_text_sample(b, "sandq_queue_events_total", labels, (double)events[i].n);
  }
  return rc;
}

static int rollout_gauges(sq_queue *q, sq_buf *b) {
  sq_rollout r;
  int rc = sq_rollout_load(q, &r);
  if (rc || r.state == SQ_ROLLOUT_NONE) return rc;
  char c[160], base[160], labels[400];
  sq_metrics_escape(r.candidate, c, sizeof c);
  sq_metrics_escape(r.baseline, base, sizeof base);
  snprintf(labels, sizeof labels, "candidate=\"%s\",baseline=\"%s\"", c, base);
  rc = sq_metrics_text_header(b, "sandq_rollout_candidate_ratio", "gauge",
                              "Share of LLM traffic the rollout gives its candidate (0..1).");
  if (!rc) rc = sq_metrics_text_sample(b, "sandq_rollout_candidate_ratio", labels, r.pct / 100.0);
  if (!rc) rc = sq_metrics_text_header(b, "sandq_rollout_state", "gauge", "The rollout's state (1 for the current one).");
  for (int s = SQ_ROLLOUT_RUNNING; rc == 0 && s <= SQ_ROLLOUT_ABORTED; s++) {
    snprintf(labels, sizeof labels, "candidate=\"%s\",baseline=\"%s\",state=\"%s\"", c, base,
             sq_rollout_state_name((sq_rollout_state)s));
    rc = sq_metrics_text_sample(b, "sandq_rollout_state", labels, r.state == (sq_rollout_state)s ? 1 : 0);
  }
  return rc;
}

int sq__metrics_run(const sq_config *cfg, int argc, char **argv) {
  if (argc > 1 || (argc == 1 && argv[0][0] == '-')) {
    fprintf(stderr, "usage: sandq-producer metrics [FILE]\n");
    return SQ_EXIT_USAGE;
  }
  sq_queue *q = NULL;
  if (sq__open_queue(cfg, &q) != 0) return SQ_EXIT_ERROR;
  sq_buf b = {0};
  int live = 0, stale = 0;
  int rc = sq_metrics_text(q, &b);
  if (!rc) rc = queue_gauges(q, &b);
  if (!rc) rc = sq__health_count(q, cfg, &live, &stale);
  if (!rc) rc = sq_metrics_text_header(&b, "sandq_workers", "gauge", "Workers reporting health, by freshness.");
  if (!rc) rc = sq_metrics_text_sample(&b, "sandq_workers", "state=\"live\"", live);
  if (!rc) rc = sq_metrics_text_sample(&b, "sandq_workers", "state=\"stale\"", stale);
  if (!rc) rc = rollout_gauges(q, &b);
  int code = SQ_EXIT_OK;
  if (rc) {
    fprintf(stderr, "sandq-producer: reading metrics failed: %s\n", rc == SQ_ENOMEM ? "out of memory" : sq_queue_errstr(q));
    code = SQ_EXIT_ERROR;
  } else if (argc == 0) {
    fwrite(b.data ? b.data : "", 1, b.len, stdout);
  } else {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[0]);
    FILE *f = fopen(tmp, "w");
    bool ok = f && fwrite(b.data ? b.data : "", 1, b.len, f) == b.len;
    if (f && fclose(f) != 0) ok = false;
    if (!ok || rename(tmp, argv[0]) != 0) {
      perror(argv[0]);
      remove(tmp);
      code = SQ_EXIT_ERROR;
    }
  }
  sq_buf_clear(&b);
  sq_queue_free(q);
  return code;
}
