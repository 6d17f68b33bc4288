/* wq.c: every word the worker says to the queue, in one place, so a new
 * queue protocol (leases, fencing tokens, heartbeats) changes this file and
 * not the loop: claim, store + acknowledge, hand back, reconnect, and the
 * LLM side's verdict cache (batch spend: spend.c). */
#include <bson/bson.h>
#include <stdio.h>
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
  /* With tasks in hand we keep trying after a stop request: the heartbeat
   * thread's grace clock ends the process if Redis never comes back. The
   * waits between tries keep the tasks in hand moving (LLM replies, jail
   * runs); what finishes waits on the done list for Redis. */
  while (sq__worker_stop < 2 && (!sq__worker_stop || w->in_flight > 0)) {
    if (sq_queue_new_opts(w->cfg.redis_url, w->cfg.queue, &w->cfg.queue_opts, &w->queue) == 0) {
      sq_queue_set_stop(w->queue, &sq__worker_stop);
      SQ_INFO("reconnected to redis");
      return 0;
    }
    for (int64_t until = sq_now_mono_ms() + delay_ms, now; (now = sq_now_mono_ms()) < until && sq__worker_stop < 2;)
      sq__loop_service(w, (int)(until - now));
    delay_ms = delay_ms * 2 > 5000 ? 5000 : delay_ms * 2;
  }
  return SQ_EINTERRUPTED;
}

int sq__wq_claim(worker *w, int timeout_ms, sq_claim *out, size_t max, size_t *n) {
  *n = 0;
  if (!w->queue && sq__wq_reconnect(w) != 0) return SQ_EINTERRUPTED;
  int rc = 0;
  if (w->lost_claim[0]) {
    /* Tasks Redis gave us in a reply we never read: hand them back before
     * claiming again, else our heartbeat keeps them leased forever. */
    size_t back = 0;
    rc = sq_queue_claim_undo(w->queue, w->cfg.worker_id, w->lost_claim, &back);
    if (rc == 0) {
      if (back) SQ_WARN("handed back %zu task(s) of a claim whose reply was lost", back);
      w->lost_claim[0] = 0;
    }
  }
  int64_t t0 = sq_now_mono_ms();
  if (rc == 0) rc = sq_queue_claim_many(w->queue, w->cfg.worker_id, timeout_ms, out, max, n);
  if (rc == 0 && *n > 0) {
    sq_metrics_stage(w->metrics, SQ_METRICS_STAGE_CLAIM, sq_now_mono_ms() - t0);
    w->last_claim_ms = sq_now_wall_ms();
  }
  if (rc && rc != SQ_EEMPTY && rc != SQ_EINTERRUPTED) {
    if (!w->lost_claim[0]) sq_queue_lost_claim(w->queue, w->lost_claim, sizeof w->lost_claim);
    SQ_WARN("claim failed: %s; reconnecting", sq_queue_errstr(w->queue));
    sq_queue_free(w->queue);
    w->queue = NULL;
  }
  return rc;
}

/* A transient failure: schedule another attempt. Returns true when the task
 * is settled that way (retried, or no longer ours); false when attempts ran
 * out and j must be stored as it is. */
static bool retry_later(worker *w, job *j) {
  int64_t delay_ms = 0;
  int rc = sq_queue_retry(w->queue, &j->claim, -1, j->reason, &delay_ms);
  if (rc == 0) {
    sq_metrics_task_retried(w->metrics);
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "transient failure, retrying in %lld ms: %s", (long long)delay_ms, j->reason);
    return true;
  }
  if (rc == SQ_EEXHAUSTED) {
    size_t n = strlen(j->reason);
    snprintf(j->reason + n, sizeof j->reason - n, " (after %lld attempts)", (long long)w->cfg.queue_opts.max_attempts);
    return false;
  }
  /* Fenced, or Redis trouble: the lease (or the reaper) settles it. */
  SQ_LOGT(SQ_LOG_WARN, j->r.id, "could not schedule a retry (%s); the lease will expire and requeue it",
          sq_strerror(rc));
  return true;
}

/* Encodes j's result into doc (initialised here; the caller destroys it)
 * and fills its completion. Returns 0 or SQ_EBSON. */
static int encode(const job *j, bson_t *doc, sq_completion *c) {
  bson_init(doc);
  int rc = sq_result_to_bson(&j->r, doc);
  *c = (sq_completion){.claim = &j->claim, .batch = j->r.batch, .id = j->r.id,
                       .status = sq_status_name(j->r.status), .bson = bson_get_data(doc), .bson_len = doc->len};
  return rc;
}

/* What sq_queue_complete's rc means for j: 0 when settled (stored, or
 * refused: a result existed, or the lease was lost and another worker owns
 * the task), else the Redis error. */
static int settled(const job *j, int rc) {
  if (rc == 0) sq_metrics_task(j->w->metrics, j->r.status);
  if (rc == SQ_EEXISTS || rc == SQ_EFENCED) sq_metrics_result_refused(j->w->metrics, rc == SQ_EFENCED);
  if (rc == SQ_EEXISTS) {
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "a result for this task already exists in batch %s; kept the first", j->r.batch);
    return 0;
  }
  if (rc == SQ_EFENCED) return 0; /* logged by the queue; the task's result comes from its new owner */
  if (rc == 0)
    SQ_LOGT(SQ_LOG_INFO, j->r.id, "batch=%s status=%s total_ms=%lld", j->r.batch, sq_status_name(j->r.status),
            (long long)j->r.total_ms);
  return rc;
}

/* Stores j's result and acknowledges the claim in one fenced step. Returns
 * 0 (settled), SQ_EREDIS, SQ_EREDIS_CONN or SQ_EBSON. */
static int complete(worker *w, job *j) {
  bson_t doc;
  sq_completion done;
  int rc = encode(j, &doc, &done);
  int64_t t0 = sq_now_mono_ms();
  if (rc == 0) rc = settled(j, sq_queue_complete(w->queue, &done));
  if (rc == 0) sq_metrics_stage(w->metrics, SQ_METRICS_STAGE_STORE, sq_now_mono_ms() - t0);
  bson_destroy(&doc);
  return rc;
}

int sq__wq_store(worker *w, job *j) {
  int rc = SQ_EREDIS;
  if (j->transient && w->queue && retry_later(w, j)) return 0;
  /* Until stored, the claim stays ours under its lease (kept alive by the
   * heartbeat thread), so a Redis outage here loses nothing. */
  while (sq__worker_stop < 2) {
    if (w->queue && (rc = complete(w, j)) == 0) return 0;
    if (rc == SQ_EBSON) return rc;
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "storing the result failed (%s); retrying", sq_strerror(rc));
    if (sq__wq_reconnect(w) != 0) return rc;
  }
  return rc;
}

static void store_one(worker *w, job *j) {
  if (sq__wq_store(w, j) != 0)
    SQ_LOGT(SQ_LOG_ERROR, j->r.id, "result not stored; the lease will expire and the task be requeued");
}

void sq__wq_store_many(worker *w, job **js, size_t n) {
  sq_completion *c = calloc(n, sizeof *c);
  bson_t *docs = calloc(n, sizeof *docs);
  int *rcs = calloc(n, sizeof *rcs);
  job **piped = calloc(n, sizeof *piped);
  size_t m = 0;
  bool can_pipe = c && docs && rcs && piped && w->queue;
  for (size_t i = 0; i < n; i++) {
    /* Retries, and anything the pipeline cannot take, go one at a time. */
    if (!can_pipe || js[i]->transient) {
      store_one(w, js[i]);
    } else if (encode(js[i], &docs[m], &c[m]) != 0) {
      bson_destroy(&docs[m]);
      store_one(w, js[i]);
    } else {
      piped[m++] = js[i];
    }
  }
  int64_t t0 = sq_now_mono_ms();
  int rc = m ? sq_queue_complete_many(w->queue, c, m, rcs) : 0;
  if (m) sq_metrics_stage(w->metrics, SQ_METRICS_STAGE_STORE, sq_now_mono_ms() - t0);
  for (size_t i = 0; i < m; i++) {
    /* A Redis error (for one, or the whole pipeline): that job again, alone,
     * through the reconnecting path; its claim is still fenced by its token,
     * so a completion that did land is refused the second time. */
    if (settled(piped[i], rc ? rc : rcs[i]) != 0) store_one(w, piped[i]);
    bson_destroy(&docs[i]);
  }
  free(c);
  free(docs);
  free(rcs);
  free(piped);
}

void sq__wq_stall(worker *w, job *j, const char *why) {
  char text[320];
  snprintf(text, sizeof text, "jail failure: %s", why);
  bool dead = false;
  int rc = w->queue ? sq_queue_stall(w->queue, &j->claim, text, &dead) : SQ_EREDIS_CONN;
  if (rc == 0) SQ_LOGT(SQ_LOG_WARN, j->r.id, "handed back as a stall%s", dead ? ": now in the dead letter" : "");
  else SQ_LOGT(SQ_LOG_WARN, j->r.id, "could not hand it back as a stall (%s): its lease expiry will", sq_strerror(rc));
}

void sq__wq_hand_back(worker *w) {
  size_t n = 0;
  if (w->queue && sq_queue_release_all(w->queue, w->cfg.worker_id, &n) == 0 && n)
    SQ_WARN("handed %zu task(s) back to the queue", n);
}

int sq__wq_cache_get(worker *w, const char *ns, const char *key, char **out, size_t *len) {
  if (!w->queue) return SQ_ENOTFOUND;
  return sq_queue_cache_get(w->queue, ns, key, out, len);
}

void sq__wq_cache_set(worker *w, const char *ns, const char *key, const char *val, int64_t ttl_s) {
  if (w->queue && sq_queue_cache_set(w->queue, ns, key, val, strlen(val), ttl_s) != 0)
    SQ_WARN("caching %s:%s failed: %s", ns, key, sq_queue_errstr(w->queue));
}
