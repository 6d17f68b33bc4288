/* redis_link.c: the worker's words to the queue (redis_link.h): the link
 * both threads use, the heartbeat thread's words, and the event loop's
 * claim, store + acknowledge, retry, stall and hand back. */
#include "redis_link.h"

#include <bson/bson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_log.h"
#include "errors.h"
#include "heartbeat.h"
#include "housekeeping.h"
#include "job.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "util.h"
#include "worker.h"

/* ---- the link (both threads) ---- */

struct sq__link {
  const sq_config *cfg;         /* borrowed */
  const char *who;              /* for log lines */
  volatile sig_atomic_t *stop;  /* claims give up once set; may be NULL */
  sq_queue *q;                  /* NULL until the first connection; it reconnects itself */
  sq__backoff *bo;
  char err[256];                /* why the last connection attempt failed */
};

int sq__link_new(const sq_config *cfg, const char *who, volatile sig_atomic_t *stop, sq__link **out) {
  sq__link *l = calloc(1, sizeof *l);
  *out = NULL;
  if (!l || sq__backoff_new(&l->bo) != 0) {
    free(l);
    return SQ_ENOMEM;
  }
  l->cfg = cfg;
  l->who = who;
  l->stop = stop;
  *out = l;
  return 0;
}

void sq__link_free(sq__link *l) {
  if (!l) return;
  sq_queue_free(l->q);
  sq__backoff_free(l->bo);
  free(l);
}

sq_queue *sq__link_queue(const sq__link *l) { return l->q; }

sq__backoff *sq__link_backoff(const sq__link *l) { return l->bo; }

int sq__link_get(sq__link *l, sq_queue **q) {
  /* Once made, a handle stays: it reconnects itself on its next call, and
   * keeps the id of a claim whose reply a broken connection lost. */
  if (!l->q) {
    int rc = sq_queue_new_opts(l->cfg->redis_url, l->cfg->queue, &l->cfg->queue_opts, &l->q, l->err, sizeof l->err);
    if (rc) {
      l->q = NULL;
      *q = NULL;
      return rc;
    }
    sq_queue_set_stop(l->q, l->stop);
  }
  *q = l->q;
  return 0;
}

void sq__link_failed(sq__link *l, int rc, const char *what, const char *task_id) {
  if (!sq__backoff_fail(l->bo, sq_now_mono_ms())) return;
  bool conn = rc == SQ_EREDIS_CONN || !l->q;
  SQ_LOGT(SQ_LOG_WARN, task_id, "%s: %s failed (%s); %s in %lld ms (failure %lld in a row; waits double up to %d ms)",
          l->who, what, sq__link_errstr(l), conn ? "reconnecting" : "trying again",
          (long long)sq__backoff_delay_ms(l->bo), (long long)sq__backoff_failures(l->bo), SQ__BACKOFF_MAX_MS);
}

void sq__link_ok(sq__link *l, const char *what) {
  int64_t n = sq__backoff_ok(l->bo);
  if (n) SQ_INFO("%s: redis works again (%s) after %lld failed tr%s", l->who, what, (long long)n, n == 1 ? "y" : "ies");
}

const char *sq__link_errstr(const sq__link *l) {
  return l->q ? sq_queue_errstr(l->q) : l->err[0] ? l->err : "cannot connect to redis";
}

int sq__link_heartbeat_held(sq__link *l, const int64_t *seen, int n_seen, const sq_held_claim *held, size_t n,
                            sq_heartbeat_report *report) {
  sq_queue *q;
  int rc = sq__link_get(l, &q);
  return rc ? rc : sq_queue_heartbeat_held(q, l->cfg->worker_id, seen, n_seen, held, n, report);
}

int sq__link_reap(sq__link *l) {
  sq_queue *q;
  int rc = sq__link_get(l, &q);
  size_t requeued = 0, dead = 0;
  if (rc == 0) rc = sq_queue_reap(q, l->cfg->worker_id, NULL, &requeued, &dead);
  if (rc == 0 && (requeued || dead))
    SQ_WARN("reaper: %zu expired lease(s) requeued, %zu task(s) to the dead letter", requeued, dead);
  return rc;
}

int sq__link_release_all(sq__link *l, size_t *n) {
  sq_queue *q;
  if (n) *n = 0;
  int rc = sq__link_get(l, &q);
  return rc ? rc : sq_queue_release_all(q, l->cfg->worker_id, n);
}

/* ---- the event loop's words ---- */

/* Whether the worker may keep waiting for Redis: with tasks in hand it
 * does after a first stop request (the heartbeat thread's grace clock ends
 * the process if Redis never comes back); a second one ends the wait. */
static bool may_wait(const worker *w) { return sq__worker_stop < 2 && (!sq__worker_stop || w->in_flight > 0); }

/* Waits out the backoff, keeping the tasks in hand moving meanwhile (LLM
 * replies, jail runs; what finishes waits on the done list), then hands out
 * the connection. Returns 0 or SQ_EINTERRUPTED. */
static int ready(worker *w, sq_queue **q, const char *what, const char *task_id) {
  sq__link *l = w->link;
  for (;;) {
    for (int64_t now; !sq__backoff_due(l->bo, now = sq_now_mono_ms()) && may_wait(w);)
      sq__loop_service(w, (int)(sq__backoff_next_try_ms(l->bo) - now));
    if (!may_wait(w)) return SQ_EINTERRUPTED;
    int rc = sq__link_get(l, q);
    if (rc == 0) return 0;
    sq__link_failed(l, rc, what, task_id);
  }
}

int sq__redis_open(worker *w) {
  sq_queue *q;
  int rc = sq__link_new(&w->cfg, "worker", &sq__worker_stop, &w->link);
  if (rc) return rc;
  /* Refused credentials at start-up are configuration, not an outage: say
   * so and stop (serve exits 2). An unreachable Redis is waited for; later
   * failures of either kind back off (sq__link_failed). */
  rc = sq__link_get(w->link, &q);
  if (rc == SQ_EREDIS_AUTH) {
    SQ_ERROR("%s", sq__link_errstr(w->link));
    return rc;
  }
  if (rc != 0 && ready(w, &q, "connecting", NULL) != 0) return SQ_EINTERRUPTED;
  sq__link_ok(w->link, "connecting");
  /* an evicting maxmemory-policy or no persistence: one warning line each */
  char text[512];
  if (sq_queue_check_server(q, text, sizeof text) > 0) {
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) SQ_WARN("%s", line);
  }
  size_t requeued = 0, dead = 0;
  int rec = sq_queue_recover(q, w->cfg.worker_id, &requeued, &dead);
  if (rec == 0 && (requeued || dead))
    SQ_WARN("an earlier run of %s left %zu task(s): %zu requeued, %zu to the dead letter", w->cfg.worker_id,
            requeued + dead, requeued, dead);
  if (rec) SQ_WARN("recovering an earlier run's tasks failed: %s; their leases will expire", sq_queue_errstr(q));
  return 0;
}

void sq__redis_close(worker *w) {
  sq__link_free(w->link);
  w->link = NULL;
}

bool sq__redis_up(const worker *w) { return w->link && w->link->q; }

int sq__redis_claim(worker *w, int timeout_ms, sq_claim *out, size_t max, size_t *n) {
  sq_queue *q;
  char lost[24];
  *n = 0;
  int rc = ready(w, &q, "claiming", NULL);
  if (rc) return rc;
  /* Tasks Redis gave us in a reply we never read (the handle remembers the
   * claim): hand them back before claiming again, else our heartbeat keeps
   * them leased forever. */
  if (sq_queue_lost_claim(q, lost, sizeof lost)) {
    size_t back = 0;
    if ((rc = sq_queue_claim_undo(q, w->cfg.worker_id, lost, &back)) != 0) {
      sq__link_failed(w->link, rc, "handing back a claim whose reply was lost", NULL);
      return rc;
    }
    if (back) SQ_WARN("handed back %zu task(s) of a claim whose reply was lost", back);
  }
  int64_t t0 = sq_now_mono_ms();
  rc = sq_queue_claim_many(q, w->cfg.worker_id, timeout_ms, out, max, n);
  if (rc == 0 && *n > 0) {
    /* held from now: the heartbeat renews what the worker holds, only */
    for (size_t i = 0; i < *n; i++)
      if (sq_heartbeat_hold(w->heartbeat, &out[i]) != 0)
        SQ_LOGT(SQ_LOG_WARN, NULL, "out of memory noting claim %lld: its lease is not renewed",
                (long long)out[i].token);
    sq_metrics_stage(w->metrics, SQ_METRICS_STAGE_CLAIM, sq_now_mono_ms() - t0);
    sq__housekeeping_claimed(w->housekeeping, sq_now_wall_ms());
  }
  if (rc == 0 || rc == SQ_EEMPTY) sq__link_ok(w->link, "claiming");
  else if (rc != SQ_EINTERRUPTED) sq__link_failed(w->link, rc, "claiming", NULL);
  return rc;
}

/* ---- settling a job ---- */

/* Encodes j's result into doc (initialised here; the caller destroys it)
 * and fills its completion. Returns 0 or SQ_EBSON. */
static int encode(const job *j, bson_t *doc, sq_completion *c) {
  bson_init(doc);
  char note[256];
  int rc = sq_result_to_stored_bson(&j->r, doc, note, sizeof note);
  if (note[0]) SQ_LOGT(SQ_LOG_WARN, j->r.id, "%s", note);
  *c = (sq_completion){.claim = &j->claim, .batch = j->r.batch, .id = j->r.id,
                       .status = sq_status_name(j->r.status), .bson = bson_get_data(doc), .bson_len = doc->len};
  return rc;
}

/* What sq_queue_complete's rc means for j: 0 when settled (stored, or
 * refused: a result existed, or the claim is no longer this worker's),
 * else the Redis error. */
static int settled(const job *j, int rc) {
  if (rc == 0) sq_metrics_task(j->w->metrics, j->r.status);
  if (rc == 0 && j->task && j->r.language) sq_metrics_task_language(j->w->metrics, j->task->language, j->r.status);
  if (rc == SQ_EEXISTS || rc == SQ_EFENCED) sq_metrics_result_refused(j->w->metrics, rc == SQ_EFENCED);
  if (rc == SQ_EEXISTS) {
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "a result for this task already exists in batch %s; kept the first", j->r.batch);
    return 0;
  }
  if (rc == SQ_EFENCED) { /* the task's result comes from its new owner */
    SQ_LOGT(SQ_LOG_WARN, j->r.id,
            "result refused: claim %lld is no longer this worker's (its lease expired and the reaper took the task "
            "back, or redis lost the claim in a restart); not stored", (long long)j->claim.token);
    return 0;
  }
  if (rc == 0)
    SQ_LOGT(SQ_LOG_INFO, j->r.id, "batch=%s status=%s total_ms=%lld", j->r.batch, sq_status_name(j->r.status),
            (long long)j->r.total_ms);
  return rc;
}

/* The task's provider is unavailable (j->outage): wait for it, no attempt
 * charged, while the task has waited less than llm_outage_max_s since its
 * first attempt; each wait is about one breaker cool-down (the provider is
 * probed again after it). Returns 0 when deferred (or no longer ours),
 * SQ_EEXHAUSTED when the outage outlasted llm_outage_max_s (j->transient is
 * cleared and the reason says how long it waited), 1 when there is no
 * waiting (llm_outage_max_s 0: an attempt like any other), or the Redis
 * error. */
static int wait_for_provider(worker *w, sq_queue *q, job *j) {
  int64_t max_ms = w->cfg.llm_outage_max_s * 1000;
  if (!j->outage || max_ms <= 0) return 1;
  int64_t first = j->claim.first_claimed_at_ms > 0 ? j->claim.first_claimed_at_ms : j->claim.claimed_at_ms;
  int64_t waited = sq_now_wall_ms() - first;
  if (waited < 0) waited = 0;
  if (waited >= max_ms) {
    char tail[160];
    snprintf(tail, sizeof tail, " (the provider was unavailable; waited %lld s for it, llm_outage_max_s is %lld)",
             (long long)(waited / 1000), (long long)w->cfg.llm_outage_max_s);
    size_t n = strlen(j->reason);
    snprintf(j->reason + n, sizeof j->reason - n, "%s", tail);
    j->transient = false;
    return SQ_EEXHAUSTED;
  }
  /* one cool-down, jittered to its second half so waiting tasks come back spread out */
  int64_t open = w->cfg.llm.breaker_open_ms > 0 ? w->cfg.llm.breaker_open_ms : 10000;
  int64_t delay = open / 2 + (int64_t)((uint64_t)sq_now_mono_ms() * 2654435761u % (uint64_t)(open / 2 + 1));
  if (delay < 200) delay = 200;
  if (delay > max_ms - waited) delay = max_ms - waited;
  int rc = sq_queue_defer(q, &j->claim, delay, j->reason);
  if (rc == 0)
    SQ_LOGT(SQ_LOG_WARN, j->r.id,
            "provider unavailable, waiting %lld ms for it (no attempt charged; waited %lld s of llm_outage_max_s %lld): %s",
            (long long)delay, (long long)(waited / 1000), (long long)w->cfg.llm_outage_max_s, j->reason);
  else if (rc == SQ_EFENCED) {
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "not deferred: claim %lld is no longer this worker's (its lease expired and the "
            "reaper took the task back, or redis lost the claim in a restart)", (long long)j->claim.token);
    rc = 0;
  }
  return rc;
}

/* A transient failure: schedule another attempt. Returns 0 when j is
 * settled that way (retried, deferred, or no longer ours), SQ_EEXHAUSTED
 * when attempts (or the wait for an unavailable provider) ran out
 * (j->transient is cleared: store it as it is), or the Redis error (the
 * claim is still ours: try again). */
static int retry_later(worker *w, sq_queue *q, job *j) {
  int64_t delay_ms = 0;
  int rc = wait_for_provider(w, q, j);
  if (rc != 1) {
    if (rc == SQ_EEXHAUSTED) SQ_LOGT(SQ_LOG_WARN, j->r.id, "%s: %s", sq_status_name(j->r.status), j->reason);
    return rc;
  }
  rc = sq_queue_retry(q, &j->claim, -1, j->reason, &delay_ms);
  if (rc == 0) {
    sq_metrics_task_retried(w->metrics);
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "transient failure, retrying in %lld ms: %s", (long long)delay_ms, j->reason);
  } else if (rc == SQ_EEXHAUSTED) {
    size_t n = strlen(j->reason);
    snprintf(j->reason + n, sizeof j->reason - n, " (after %lld attempts)", (long long)w->cfg.queue_opts.max_attempts);
    j->transient = false;
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "%s: %s", sq_status_name(j->r.status), j->reason);
  } else if (rc == SQ_EFENCED) {
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "no retry scheduled: claim %lld is no longer this worker's (its lease expired "
            "and the reaper took the task back, or redis lost the claim in a restart)", (long long)j->claim.token);
    rc = 0;
  }
  return rc;
}

/* One try at settling j: a retry when transient, else the result stored
 * and the claim acknowledged in one fenced step. Returns 0 (settled),
 * SQ_EBSON, or a Redis error (nothing was dropped: try again). */
static int settle(worker *w, sq_queue *q, job *j) {
  if (j->transient) {
    int rc = retry_later(w, q, j);
    if (rc != SQ_EEXHAUSTED) return rc;
  }
  bson_t doc;
  sq_completion done;
  int rc = encode(j, &doc, &done);
  int64_t t0 = sq_now_mono_ms();
  if (rc == 0) rc = settled(j, sq_queue_complete(q, &done));
  if (rc == 0) sq_metrics_stage(w->metrics, SQ_METRICS_STAGE_STORE, sq_now_mono_ms() - t0);
  bson_destroy(&doc);
  return rc;
}

int sq__redis_store(worker *w, job *j) {
  sq_queue *q;
  int rc;
  /* Until stored, the claim stays ours under its lease (kept alive by the
   * heartbeat thread; the queue library (common/queue/lua/) refuses a completion it cannot write before
   * touching the claim), so nothing is lost while this waits. */
  while ((rc = ready(w, &q, "storing a result", j->r.id)) == 0) {
    if ((rc = settle(w, q, j)) == 0) {
      sq__link_ok(w->link, "storing results");
      sq_heartbeat_let_go(w->heartbeat, &j->claim);
      return 0;
    }
    if (rc == SQ_EBSON) return rc;
    /* A damaged key of the task's own (its batch's: "CORRUPT KEY: ...",
     * nothing changed) stays so until someone repairs it: waiting on it
     * here would hold every other batch's results behind this one. */
    if (rc == SQ_EREDIS && strstr(sq_queue_errstr(q), "CORRUPT ")) return SQ_ECONFLICT;
    sq__link_failed(w->link, rc, "storing a result", j->r.id);
  }
  return rc;
}

/* Parks j (its claim still held, its lease kept by the heartbeat): the
 * loop stores it again now and then (sq__redis_store_parked). */
static void park(worker *w, job *j, sq_queue *q) {
  if (!j->parked)
    SQ_LOGT(SQ_LOG_ERROR, j->r.id, "result not stored: %s; it waits, claim held, and is stored once the key is "
            "repaired (the other batches go on)", q ? sq_queue_errstr(q) : "a damaged key");
  j->parked = true;
  j->next = w->parked;
  w->parked = j;
  if (!w->parked_wait_ms) w->parked_wait_ms = 1000;
  if (!w->parked_retry_ms) w->parked_retry_ms = sq_now_mono_ms() + w->parked_wait_ms;
}

int sq__redis_store_parked(worker *w) {
  if (!w->parked || sq_now_mono_ms() < w->parked_retry_ms) return 0;
  job *list = w->parked;
  w->parked = NULL;
  w->parked_retry_ms = 0;
  int stored = 0;
  while (list) {
    job *j = list;
    list = j->next;
    j->next = NULL;
    int rc = sq__redis_store(w, j);
    if (rc == SQ_ECONFLICT) {
      park(w, j, w->link->q);
      continue;
    }
    if (rc == SQ_EINTERRUPTED) { /* stopping: the claim is handed back at exit */
      j->parked = false;
      sq__job_free(j);
      w->in_flight--;
      continue;
    }
    if (rc == 0) SQ_LOGT(SQ_LOG_INFO, j->r.id, "result stored after its key was repaired");
    else SQ_LOGT(SQ_LOG_ERROR, j->r.id, "result not stored; the task stays claimed and is handed back at exit");
    sq__job_free(j);
    w->in_flight--;
    stored++;
  }
  if (w->parked) { /* still damaged: wait longer */
    w->parked_wait_ms = w->parked_wait_ms * 2 > 30000 ? 30000 : w->parked_wait_ms * 2;
    w->parked_retry_ms = sq_now_mono_ms() + w->parked_wait_ms;
  } else {
    w->parked_wait_ms = 0;
  }
  return stored;
}

void sq__redis_drop_parked(worker *w) {
  while (w->parked) {
    job *j = w->parked;
    w->parked = j->next;
    sq__job_free(j);
    w->in_flight--;
  }
}

static void store_one(worker *w, job *j) {
  int rc = sq__redis_store(w, j);
  if (rc == SQ_ECONFLICT) park(w, j, w->link->q);
  else if (rc != 0)
    SQ_LOGT(SQ_LOG_ERROR, j->r.id, "result not stored; the task stays claimed and is handed back at exit");
}

void sq__redis_store_many(worker *w, job **js, size_t n) {
  sq_completion *c = calloc(n, sizeof *c);
  /* bson_t asks for 128-byte alignment, which calloc does not give (UBSan:
   * misaligned store); sizeof is a multiple of it, as aligned_alloc wants. */
  bson_t *docs = aligned_alloc(_Alignof(bson_t), n * sizeof *docs);
  if (docs) memset(docs, 0, n * sizeof *docs);
  int *rcs = calloc(n, sizeof *rcs);
  job **piped = calloc(n, sizeof *piped);
  size_t m = 0;
  sq_queue *q = w->link->q;
  bool can_pipe = c && docs && rcs && piped && q && sq__backoff_due(w->link->bo, sq_now_mono_ms());
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
  /* The audit trail's waiting entries ride in the same round trip. */
  sq_queue_stream_batch log = {0};
  sq_audit_form *forms = NULL;
  int log_rc = 0;
  if (m) sq__audit_log_batch(w->audit, &log, &forms);
  int64_t t0 = sq_now_mono_ms();
  int rc = m ? sq_queue_complete_many_log(q, c, m, rcs, &log, &log_rc) : 0;
  if (m) sq_metrics_stage(w->metrics, SQ_METRICS_STAGE_STORE, sq_now_mono_ms() - t0);
  if (log.n && log_rc == 0) sq__audit_log_sent(w->audit, log.n); /* else they wait for the next pipeline or housekeeping */
  free(forms);
  int failed = 0;
  for (size_t i = 0; i < m; i++) {
    rcs[i] = settled(piped[i], rc ? rc : rcs[i]);
    if (rcs[i] && !failed) failed = rcs[i];
  }
  /* A Redis error (for one, or the whole pipeline) counts once; then each
   * such job again, alone, through the backing-off path. Its claim is still
   * fenced by its token, so a completion that did land is refused the
   * second time. */
  if (failed) sq__link_failed(w->link, failed, "storing results", NULL);
  else if (m) sq__link_ok(w->link, "storing results");
  for (size_t i = 0; i < m; i++) {
    if (rcs[i]) store_one(w, piped[i]);
    else sq_heartbeat_let_go(w->heartbeat, &piped[i]->claim);
    bson_destroy(&docs[i]);
  }
  free(c);
  free(docs);
  free(rcs);
  free(piped);
}

void sq__redis_stall(worker *w, job *j, const char *why) {
  char text[320];
  snprintf(text, sizeof text, "jail failure: %s", why);
  bool dead = false;
  sq_queue *q = w->link->q;
  int rc = q ? sq_queue_stall(q, &j->claim, text, &dead) : SQ_EREDIS_CONN;
  sq_heartbeat_let_go(w->heartbeat, &j->claim); /* handed back, or left to its lease's expiry */
  if (rc == 0) SQ_LOGT(SQ_LOG_WARN, j->r.id, "handed back as a stall%s", dead ? ": now in the dead letter" : "");
  else SQ_LOGT(SQ_LOG_WARN, j->r.id, "could not hand it back as a stall (%s): its lease expiry will", sq_strerror(rc));
}

void sq__redis_hand_back(worker *w) {
  size_t n = 0;
  if (sq__redis_up(w) && sq__link_release_all(w->link, &n) == 0 && n) SQ_WARN("handed %zu task(s) back to the queue", n);
}
