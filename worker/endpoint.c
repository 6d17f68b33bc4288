/* endpoint.c: the worker's scrape endpoint (config metrics_listen):
 * GET /metrics, this worker's own series in the Prometheus text format
 * with worker and queue labels, and GET /healthz, 200 while the worker
 * claims tasks, 503 with a one-line reason while it does not. The HTTP
 * side (common/http, libmicrohttpd) answers from its own thread; it only
 * reads a snapshot the event loop publishes under a mutex (the registry,
 * the queue link and the job list stay the loop's alone). A snapshot that
 * stops being refreshed is itself the reason: the loop is stuck. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "http.h"
#include "log.h"
#include "util.h"
#include "audit_log.h"
#include "endpoint.h"
#include "housekeeping.h"
#include "loop.h"
#include "metrics.h"
#include "redis_link.h"
#include "worker.h"

#define RENDER_EVERY_MS 1000 /* the metrics text at most this old (metrics_flush_ms when shorter) */
#define STUCK_SLACK_MS 15000 /* beyond the longest a loop turn may block (a claim, a redis command's timeout) */

struct sq__endpoint {
  sq_http *http;
  pthread_mutex_t mu;
  /* under mu */
  char *text;            /* the metrics text (owned) */
  size_t len;
  bool claiming;
  char reason[320];
  int64_t published_ms;  /* monotonic */
  /* the loop's own */
  int64_t next_render_ms, stuck_ms;
  char labels[320];      /* worker="W",queue="Q" */
};

static void on_request(const char *path, sq_http_reply *out, void *ud) {
  sq__endpoint *e = ud;
  bool metrics = strcmp(path, "/metrics") == 0;
  if (!metrics && strcmp(path, "/healthz") != 0) return; /* 404 */
  sq_buf b = {0};
  int64_t now = sq_now_mono_ms();
  pthread_mutex_lock(&e->mu);
  if (metrics) {
    out->status = 200;
    out->content_type = "text/plain; version=0.0.4; charset=utf-8";
    if (e->text) sq_buf_append(&b, e->text, e->len);
  } else if (now - e->published_ms > e->stuck_ms) {
    out->status = 503;
    sq_buf_appendf(&b, "not claiming: the event loop has not reported for %lld ms (stuck?)\n",
                   (long long)(now - e->published_ms));
  } else {
    out->status = e->claiming ? 200 : 503;
    sq_buf_appendf(&b, "%s%s\n", e->claiming ? "ok: " : "not claiming: ", e->reason);
  }
  pthread_mutex_unlock(&e->mu);
  out->body = b.data;
  out->len = b.len;
}

/* Whether w claims, and why (not), into why. */
static bool claiming(const worker *w, char *why, size_t n) {
  const sq__link *l = w->link;
  if (w->fatal) snprintf(why, n, "the jail cannot run on this host; handing every task back");
  else if (sq__worker_stop) snprintf(why, n, "stopping (signal): finishing %d task(s) in flight", w->in_flight);
  else if (!sq__redis_up(w)) snprintf(why, n, "not connected to redis: %s", l ? sq__link_errstr(l) : "cannot connect to redis");
  else if (sq__backoff_failures(sq__link_backoff(l)) > 0)
    snprintf(why, n, "redis: %s (%lld failure(s) in a row; retrying)", sq__link_errstr(l),
             (long long)sq__backoff_failures(sq__link_backoff(l)));
  else {
    snprintf(why, n, "claiming; %d of %lld task(s) in flight", w->in_flight, (long long)w->cfg.max_tasks_in_flight);
    return true;
  }
  return false;
}

/* This worker's series (with its labels) and its gauges into b. */
static int render(worker *w, bool is_claiming, sq_buf *b) {
  sq__endpoint *e = w->endpoint;
  int rc = sq_metrics_text_local(w->metrics, e->labels, b);
  const struct {
    const char *name, *type, *help;
    double v;
  } g[] = {
      {"sandq_worker_in_flight", "gauge", "Tasks this worker holds now (claimed, not yet stored).", w->in_flight},
      {"sandq_worker_claiming", "gauge", "1 while this worker claims tasks (its /healthz answers 200), else 0.",
       is_claiming},
      {"sandq_worker_start_time_seconds", "gauge", "When this worker started (Unix time).",
       (double)sq__housekeeping_started_ms(w->housekeeping) / 1000.0},
      {"sandq_audit_dropped_total", "counter", "Audit entries this worker dropped while Redis was away too long.",
       (double)sq__audit_log_dropped(w->audit)},
  };
  for (size_t i = 0; rc == 0 && i < sizeof g / sizeof g[0]; i++) {
    rc = sq_metrics_text_header(b, g[i].name, g[i].type, g[i].help);
    if (!rc) rc = sq_metrics_text_sample(b, g[i].name, e->labels, g[i].v);
  }
  return rc;
}

void sq__endpoint_publish(worker *w) {
  sq__endpoint *e = w->endpoint;
  if (!e) return;
  char why[320];
  bool ok = claiming(w, why, sizeof why);
  int64_t now = sq_now_mono_ms();
  sq_buf b = {0};
  bool fresh = now >= e->next_render_ms;
  if (fresh) {
    int64_t every = w->cfg.metrics_flush_ms < RENDER_EVERY_MS ? w->cfg.metrics_flush_ms : RENDER_EVERY_MS;
    e->next_render_ms = now + every;
    if (render(w, ok, &b) != 0) {
      sq_buf_clear(&b);
      fresh = false; /* out of memory: keep the last text */
    }
  }
  pthread_mutex_lock(&e->mu);
  e->claiming = ok;
  snprintf(e->reason, sizeof e->reason, "%s", why);
  e->published_ms = now;
  char *old = NULL;
  if (fresh) {
    old = e->text;
    e->text = b.data;
    e->len = b.len;
  }
  pthread_mutex_unlock(&e->mu);
  free(old);
}

int sq__endpoint_start(worker *w) {
  if (!w->cfg.metrics_listen[0]) return 0;
  sq__endpoint *e = calloc(1, sizeof *e);
  if (!e) return SQ_ENOMEM;
  pthread_mutex_init(&e->mu, NULL);
  char wv[160], qv[96];
  sq_metrics_escape(w->cfg.worker_id, wv, sizeof wv);
  sq_metrics_escape(w->cfg.queue, qv, sizeof qv);
  snprintf(e->labels, sizeof e->labels, "worker=\"%s\",queue=\"%s\"", wv, qv);
  e->stuck_ms = w->cfg.claim_timeout_ms + STUCK_SLACK_MS;
  w->endpoint = e;
  sq__endpoint_publish(w); /* something to answer from the first request */
  char err[512];
  int rc = sq_http_start(w->cfg.metrics_listen, on_request, e, &e->http, err, sizeof err);
  if (rc) {
    SQ_ERROR("metrics_listen: %s", err);
    sq__endpoint_stop(w);
    return rc;
  }
  SQ_INFO("serving GET /metrics and /healthz on %s (port %d)", w->cfg.metrics_listen, sq_http_port(e->http));
  return 0;
}

void sq__endpoint_stop(worker *w) {
  sq__endpoint *e = w->endpoint;
  if (!e) return;
  sq_http_stop(e->http); /* no request runs after this */
  pthread_mutex_destroy(&e->mu);
  free(e->text);
  free(e);
  w->endpoint = NULL;
}
