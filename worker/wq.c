/* wq.c: every word the worker says to the queue, in one place, so a new
 * queue protocol (leases, fencing tokens, heartbeats) changes this file and
 * not the loop: claim, store + acknowledge, hand back, reconnect, and the
 * LLM side's batch spend and verdict cache. */
#include <bson/bson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "worker.h"

int sq__wq_reconnect(worker *w) {
  int64_t delay_ms = 100;
  sq_queue_free(w->queue);
  w->queue = NULL;
  while (sq__worker_stop < 2) {
    if (sq_queue_new(w->cfg.redis_url, w->cfg.queue, &w->queue) == 0) {
      SQ_INFO("reconnected to redis");
      return 0;
    }
    usleep((useconds_t)delay_ms * 1000);
    delay_ms = delay_ms * 2 > 5000 ? 5000 : delay_ms * 2;
  }
  return SQ_EINTERRUPTED;
}

int sq__wq_claim(worker *w, int timeout_ms, char **payload, size_t *len) {
  if (!w->queue && sq__wq_reconnect(w) != 0) return SQ_EINTERRUPTED;
  int rc = sq_queue_claim(w->queue, w->cfg.worker_id, timeout_ms, payload, len);
  if (rc && rc != SQ_EEMPTY) {
    SQ_WARN("claim failed: %s; reconnecting", sq_queue_errstr(w->queue));
    sq_queue_free(w->queue);
    w->queue = NULL;
  }
  return rc;
}

/* Encodes and stores j's result. Returns 0 (stored, or a result already
 * existed) or SQ_EREDIS/SQ_EBSON. */
static int put(worker *w, job *j) {
  bson_t doc = BSON_INITIALIZER;
  int rc = sq_result_to_bson(&j->r, &doc);
  if (rc == 0) {
    rc = sq_queue_put_result(w->queue, j->r.batch, j->r.id, sq_status_name(j->r.status), bson_get_data(&doc),
                             doc.len);
    if (rc == SQ_EEXISTS) {
      SQ_LOGT(SQ_LOG_WARN, j->r.id, "a result for this task already exists in batch %s; kept the first", j->r.batch);
      rc = 0;
    }
  }
  bson_destroy(&doc);
  return rc;
}

int sq__wq_store(worker *w, job *j) {
  int rc = SQ_EREDIS;
  /* Until stored, the task stays in our processing list: a restart of this
   * worker id hands it back (requeue at start-up). */
  while (sq__worker_stop < 2) {
    if (w->queue && (rc = put(w, j)) == 0) break;
    if (rc == SQ_EBSON) return rc;
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "storing the result failed (%s); retrying", sq_strerror(rc));
    if (sq__wq_reconnect(w) != 0) return rc;
  }
  if (rc) return rc;
  SQ_LOGT(SQ_LOG_INFO, j->r.id, "batch=%s status=%s total_ms=%lld", j->r.batch, sq_status_name(j->r.status),
          (long long)j->r.total_ms);
  if (sq_queue_ack(w->queue, w->cfg.worker_id, j->payload, j->len) != 0)
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "ack failed: %s", sq_queue_errstr(w->queue));
  return 0;
}

void sq__wq_hand_back(worker *w) {
  size_t n = 0;
  if (w->queue && sq_queue_requeue_processing(w->queue, w->cfg.worker_id, &n) == 0 && n)
    SQ_WARN("handed %zu task(s) back to the queue", n);
}

bool sq__wq_budget_spent(worker *w, const char *batch) {
  double cost = 0, budget = -1;
  if (!w->queue || sq_queue_batch_spend(w->queue, batch, &cost, &budget) != 0) return false;
  return budget >= 0 && cost >= budget;
}

void sq__wq_add_cost(worker *w, const char *batch, double usd) {
  if (usd > 0 && w->queue && sq_queue_batch_add_cost(w->queue, batch, usd) != 0)
    SQ_WARN("batch %s: adding $%.6f to its cost failed: %s", batch, usd, sq_queue_errstr(w->queue));
}

int sq__wq_cache_get(worker *w, const char *ns, const char *key, char **out, size_t *len) {
  if (!w->queue) return SQ_ENOTFOUND;
  return sq_queue_cache_get(w->queue, ns, key, out, len);
}

void sq__wq_cache_set(worker *w, const char *ns, const char *key, const char *val, int64_t ttl_s) {
  if (w->queue && sq_queue_cache_set(w->queue, ns, key, val, strlen(val), ttl_s) != 0)
    SQ_WARN("caching %s:%s failed: %s", ns, key, sq_queue_errstr(w->queue));
}
