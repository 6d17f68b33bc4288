/* best_effort.c: the best-effort Redis calls (best_effort.h): their
 * backoff, and the words of batch spend, the verdict cache and the audit
 * trail. */
#include "best_effort.h"

#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "redis_link.h"
#include "worker.h"

sq_queue *sq__best_effort_queue(worker *w) {
  return sq__redis_up(w) && w->best_effort && sq__backoff_due(w->best_effort, sq_now_mono_ms())
             ? sq__link_queue(w->link)
             : NULL;
}

int sq__best_effort_done(worker *w, int rc, const char *what) {
  if (rc == 0) {
    int64_t n = sq__backoff_ok(w->best_effort);
    if (n) SQ_INFO("worker: redis chores work again (%s) after %lld failed tries", what, (long long)n);
  } else if (sq__backoff_fail(w->best_effort, sq_now_mono_ms())) {
    SQ_WARN("worker: %s failed (%s); chores wait %lld ms (failure %lld in a row; waits double up to %d ms)", what,
            sq_queue_errstr(sq__link_queue(w->link)), (long long)sq__backoff_delay_ms(w->best_effort),
            (long long)sq__backoff_failures(w->best_effort), SQ__BACKOFF_MAX_MS);
  }
  return rc;
}

void sq__best_effort_retry_now(worker *w) {
  if (w->best_effort) sq__backoff_ok(w->best_effort);
}

int sq__best_effort_cache_get(worker *w, const char *ns, const char *key, char **out, size_t *len) {
  sq_queue *q = sq__best_effort_queue(w);
  if (!q) return SQ_ENOTFOUND;
  int rc = sq_queue_cache_get(q, ns, key, out, len);
  return rc == SQ_ENOTFOUND ? rc : sq__best_effort_done(w, rc, "reading the verdict cache");
}

void sq__best_effort_cache_set(worker *w, const char *ns, const char *key, const char *val, int64_t ttl_s) {
  sq_queue *q = sq__best_effort_queue(w);
  if (q) sq__best_effort_done(w, sq_queue_cache_set(q, ns, key, val, strlen(val), ttl_s), "writing the verdict cache");
}

static int add_cost(void *ud, const char *batch, double usd) {
  worker *w = ud;
  sq_queue *q = sq__best_effort_queue(w);
  return q ? sq__best_effort_done(w, sq_queue_batch_add_cost(q, batch, usd), "adding to a batch's cost") : SQ_EREDIS_CONN;
}

static int read_spend(void *ud, const char *batch, double *cost_usd, double *budget_usd) {
  worker *w = ud;
  sq_queue *q = sq__best_effort_queue(w);
  return q ? sq__best_effort_done(w, sq_queue_batch_spend(q, batch, cost_usd, budget_usd), "reading a batch's spend")
           : SQ_EREDIS_CONN;
}

int sq__best_effort_audit_add(worker *w, const sq_queue_stream_batch *b) {
  sq_queue *q = sq__best_effort_queue(w);
  return q ? sq__best_effort_done(w, sq_queue_stream_add(q, b), "appending to the audit stream") : SQ_EREDIS_CONN;
}


static bool up(void *ud) { return sq__redis_up(ud); }

static int64_t now_ms(void *ud) {
  (void)ud;
  return sq_now_mono_ms();
}

const sq__budget_store sq__best_effort_budget_store = {
    .add_cost = add_cost, .read_spend = read_spend, .up = up, .now_ms = now_ms};
