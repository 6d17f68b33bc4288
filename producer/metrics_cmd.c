/* metrics_cmd.c: `sandq-producer metrics [--listen HOST:PORT] [FILE]`: the
 * fleet's metrics in the Prometheus text format: the workers' totals
 * (sq:{Q}:metrics) plus gauges read now (queue sizes, queue events,
 * workers, the rollout), every sample labelled with its queue. With FILE,
 * written atomically (a temporary file, then a rename) for node_exporter's textfile
 * collector; with --listen, served as GET /metrics (read from Redis per
 * scrape) and GET /healthz (200 while Redis answers) until SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "eval.h"
#include "http.h"
#include "metrics.h"
#include "producer.h"
#include "rollout.h"
#include "util.h"

/* name{queue="Q",extra} value */
static int sample(sq_buf *b, const char *ql, const char *name, const char *extra, double v) {
  char labels[512];
  sq_metrics_labels_join(labels, sizeof labels, ql, extra);
  return sq_metrics_text_sample(b, name, labels, v);
}

static int queue_gauges(sq_queue *q, const char *ql, sq_buf *b) {
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
    rc = sample(b, ql, "sandq_queue_tasks", labels, (double)sizes[i].n);
  }
  if (!rc) rc = sq_metrics_text_header(b, "sandq_queue_events_total", "counter",
                                       "Queue events: refused results, stalls, retries, dead letters, deduplicated pushes.");
  for (size_t i = 0; rc == 0 && i < sizeof events / sizeof events[0]; i++) {
    snprintf(labels, sizeof labels, "event=\"%s\"", events[i].event);
    rc = sample(b, ql, "sandq_queue_events_total", labels, (double)events[i].n);
  }
  return rc;
}

static int rollout_gauges(sq_queue *q, const char *ql, sq_buf *b) {
  sq_rollout r;
  int rc = sq_rollout_load(q, &r);
  if (rc || r.state == SQ_ROLLOUT_NONE) return rc;
  char c[160], base[160], labels[400];
  sq_metrics_escape(r.candidate, c, sizeof c);
  sq_metrics_escape(r.baseline, base, sizeof base);
  snprintf(labels, sizeof labels, "candidate=\"%s\",baseline=\"%s\"", c, base);
  rc = sq_metrics_text_header(b, "sandq_rollout_candidate_ratio", "gauge",
                              "Share of LLM traffic the rollout gives its candidate (0..1).");
  if (!rc) rc = sample(b, ql, "sandq_rollout_candidate_ratio", labels, r.pct / 100.0);
  if (!rc) rc = sq_metrics_text_header(b, "sandq_rollout_state", "gauge", "The rollout's state (1 for the current one).");
  for (int s = SQ_ROLLOUT_RUNNING; rc == 0 && s <= SQ_ROLLOUT_ABORTED; s++) {
    snprintf(labels, sizeof labels, "candidate=\"%s\",baseline=\"%s\",state=\"%s\"", c, base,
             sq_rollout_state_name((sq_rollout_state)s));
    rc = sample(b, ql, "sandq_rollout_state", labels, r.state == (sq_rollout_state)s ? 1 : 0);
  }
  return rc;
}

/* The whole fleet view into b. Returns 0, SQ_ENOMEM or SQ_EREDIS*. */
static int render(sq_queue *q, const sq_config *cfg, sq_buf *b) {
  char ql[160], qv[96];
  sq_metrics_escape(cfg->queue, qv, sizeof qv);
  snprintf(ql, sizeof ql, "queue=\"%s\"", qv);
  int live = 0, stale = 0;
  int rc = sq_metrics_text(q, ql, b);
  if (!rc) rc = queue_gauges(q, ql, b);
  if (!rc) rc = sq__health_count(q, cfg, &live, &stale);
  if (!rc) rc = sq_metrics_text_header(b, "sandq_workers", "gauge", "Workers reporting health, by freshness.");
  if (!rc) rc = sample(b, ql, "sandq_workers", "state=\"live\"", live);
  if (!rc) rc = sample(b, ql, "sandq_workers", "state=\"stale\"", stale);
  if (!rc) rc = rollout_gauges(q, ql, b);
  return rc;
}

/* ---- --listen ---- */

typedef struct {
  const sq_config *cfg;
  sq_queue *q; /* used by the server's one thread only */
} server;

static void on_request(const char *path, sq_http_reply *out, void *ud) {
  server *s = ud;
  bool metrics = strcmp(path, "/metrics") == 0;
  if (!metrics && strcmp(path, "/healthz") != 0) return; /* 404 */
  sq_buf b = {0};
  int64_t n = 0;
  int rc = metrics ? render(s->q, s->cfg, &b) : sq_queue_length(s->q, &n);
  if (rc) {
    sq_buf_clear(&b);
    out->status = 503;
    sq_buf_appendf(&b, "redis: %s\n", rc == SQ_ENOMEM ? "out of memory" : sq_queue_errstr(s->q));
  } else if (!metrics) {
    out->status = 200;
    sq_buf_appendf(&b, "ok: redis answers; queue %s has %lld waiting task(s)\n", s->cfg->queue, (long long)n);
  } else {
    out->status = 200;
    out->content_type = "text/plain; version=0.0.4; charset=utf-8";
  }
  out->body = b.data; /* taken over by the library */
  out->len = b.len;
}

static volatile sig_atomic_t stop_flag;
static void on_stop(int sig) {
  (void)sig;
  stop_flag = 1;
}

static int serve(const sq_config *cfg, const char *listen) {
  server s = {.cfg = cfg};
  if (sq__open_queue(cfg, &s.q) != 0) return SQ_EXIT_ERROR;
  struct sigaction sa = {0};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &old); /* the server's thread inherits the mask: signals come here */
  sq_http *h = NULL;
  char err[512];
  int rc = sq_http_start(listen, on_request, &s, &h, err, sizeof err);
  if (rc) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    fprintf(stderr, "sandq-producer: metrics --listen: %s\n", err);
    sq_queue_free(s.q);
    return SQ_EXIT_USAGE;
  }
  fprintf(stderr, "sandq-producer: serving queue %s's metrics on http://%s/metrics (port %d)\n", cfg->queue, listen,
          sq_http_port(h));
  while (!stop_flag) sigsuspend(&old);
  sigprocmask(SIG_SETMASK, &old, NULL);
  sq_http_stop(h);
  sq_queue_free(s.q);
  return SQ_EXIT_OK;
}

static void usage(void) { fprintf(stderr, "usage: sandq-producer metrics [--listen HOST:PORT | FILE]\n"); }

int sq__metrics_run(const sq_config *cfg, const sq_cli *cli) {
  const char *listen = sq_cli_get(cli, "listen");
  size_t argc = cli->n_operands;
  char **argv = cli->operands;
  if (argc > 1 || (argc == 1 && (!argv[0][0] || listen))) {
    usage();
    return SQ_EXIT_USAGE;
  }
  if (listen) {
    char host[256], err[512];
    int port;
    if (sq_http_listen_parse(listen, host, sizeof host, &port, err, sizeof err) != 0) {
      fprintf(stderr, "sandq-producer: metrics --listen: %s\n", err);
      return SQ_EXIT_USAGE;
    }
    return serve(cfg, listen);
  }
  sq_queue *q = NULL;
  if (sq__open_queue(cfg, &q) != 0) return SQ_EXIT_ERROR;
  sq_buf b = {0};
  int rc = render(q, cfg, &b);
  int code = SQ_EXIT_OK;
  if (rc) {
    fprintf(stderr, "sandq-producer: reading metrics failed: %s\n", rc == SQ_ENOMEM ? "out of memory" : sq_queue_errstr(q));
    code = SQ_EXIT_ERROR;
  } else if (argc == 0) {
    fwrite(b.data ? b.data : "", 1, b.len, stdout);
  } else if (sq__out_write(argv[0], b.data ? b.data : "", b.len) != 0) { /* whole, via a rename (report.c) */
    code = SQ_EXIT_ERROR;
  }
  sq_buf_clear(&b);
  sq_queue_free(q);
  return code;
}
