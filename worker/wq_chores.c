/* wq_chores.c: the worker's best-effort words to Redis, on the event
 * loop's connection but behind a backoff of their own (w->wq.chores), so a
 * broken counter or hash never stalls claiming and storing, and a broken
 * link never turns them into a hot loop: batch spend (spend.c), the
 * verdict cache (job.c), metrics, health and rollout (tick.c), audit
 * entries that no result pipeline carried (audit.c). A call while
 * the backoff waits is not tried and returns SQ_EREDIS_CONN. */
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "worker.h"

/* The connection when a chore may try now, else NULL. */
static sq_queue *chore_queue(worker *w) {
  return w->wq.link.q && sq__backoff_due(&w->wq.chores, sq_now_mono_ms()) ? w->wq.link.q : NULL;
}

/* Counts rc (0: a success) against the chores' backoff, logging a failure
 * once per step. Returns rc. */
static int chore_done(worker *w, int rc, const char *what) {
  if (rc == 0) {
    int64_t n = sq__backoff_ok(&w->wq.chores);
    if (n) SQ_INFO("worker: redis chores work again (%s) after %lld failed tries", what, (long long)n);
  } else if (sq__backoff_fail(&w->wq.chores, sq_now_mono_ms())) {
    SQ_WARN("worker: %s failed (%s); chores wait %lld ms (failure %lld in a row; waits double up to %d ms)", what,
            sq_queue_errstr(w->wq.link.q), (long long)w->wq.chores.delay_ms, (long long)w->wq.chores.failures,
            SQ__BACKOFF_MAX_MS);
  }
  return rc;
}

int sq__wq_cache_get(worker *w, const char *ns, const char *key, char **out, size_t *len) {
  sq_queue *q = chore_queue(w);
  if (!q) return SQ_ENOTFOUND;
  int rc = sq_queue_cache_get(q, ns, key, out, len);
  return rc == SQ_ENOTFOUND ? rc : chore_done(w, rc, "reading the verdict cache");
}

void sq__wq_cache_set(worker *w, const char *ns, const char *key, const char *val, int64_t ttl_s) {
  sq_queue *q = chore_queue(w);
  if (q) chore_done(w, sq_queue_cache_set(q, ns, key, val, strlen(val), ttl_s), "writing the verdict cache");
}

int sq__wq_add_cost(worker *w, const char *batch, double usd) {
  sq_queue *q = chore_queue(w);
  return q ? chore_done(w, sq_queue_batch_add_cost(q, batch, usd), "adding to a batch's cost") : SQ_EREDIS_CONN;
}

int sq__wq_batch_spend(worker *w, const char *batch, double *cost_usd, double *budget_usd) {
  sq_queue *q = chore_queue(w);
  return q ? chore_done(w, sq_queue_batch_spend(q, batch, cost_usd, budget_usd), "reading a batch's spend")
           : SQ_EREDIS_CONN;
}

int sq__wq_metrics_flush(worker *w, int64_t now_wall_ms) {
  sq_queue *q = chore_queue(w);
  /* On failure the changes are kept for the next flush. */
  return q ? chore_done(w, sq_metrics_flush(w->metrics, q, now_wall_ms), "flushing metrics") : SQ_EREDIS_CONN;
}

int sq__wq_health_put(worker *w, const sq_health *h) {
  sq_queue *q = chore_queue(w);
  if (!q) return SQ_EREDIS_CONN;
  return chore_done(w, h ? sq_health_put(q, h) : sq_health_remove(q, w->cfg.worker_id), "writing health");
}

int sq__wq_audit_add(worker *w, const sq_queue_stream_batch *b) {
  sq_queue *q = chore_queue(w);
  return q ? chore_done(w, sq_queue_stream_add(q, b), "appending to the audit stream") : SQ_EREDIS_CONN;
}

int sq__wq_rollout_step(worker *w, int64_t now_wall_ms, sq_rollout *r) {
  sq_queue *q = chore_queue(w);
  bool changed = false;
  if (!q) return SQ_EREDIS_CONN;
  int rc = sq_rollout_step(q, &w->cfg.metrics, w->cfg.worker_id, now_wall_ms, r, &changed);
  /* A damaged state (SQ_EPARSE, r->damage set) is read fine: Redis works. */
  rc = rc == SQ_EPARSE ? (chore_done(w, 0, "following the rollout"), rc) : chore_done(w, rc, "following the rollout");
  if (rc == 0 && changed)
    SQ_LOGT(r->state == SQ_ROLLOUT_ROLLED_BACK ? SQ_LOG_WARN : SQ_LOG_INFO, NULL, "rollout of %s %s: now %d%% (%s): %s",
            r->candidate, r->state == SQ_ROLLOUT_ROLLED_BACK ? "rolled back" : "advanced", r->pct,
            sq_rollout_state_name(r->state), r->reason);
  return rc;
}
