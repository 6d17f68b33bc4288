/* housekeeping.c: the worker's periodic work (housekeeping.h), run from
 * its event loop, so no locks: the metrics registry, the LLM client and
 * the queue link all belong to that one thread. Redis is reached through
 * best_effort.c, which backs off on its own. */
#include "housekeeping.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "audit_log.h"
#include "best_effort.h"
#include "compile_cache.h"
#include "endpoint.h"
#include "health.h"
#include "jail.h"
#include "kill_watch.h"
#include "llm.h"
#include "metrics.h"
#include "redis_link.h"
#include "rollout.h"
#include "worker.h"

#define ROLLOUT_EVERY_MS 1000

struct sq__housekeeping {
  int64_t next_flush_ms, next_rollout_ms, next_kill_ms; /* monotonic */
  int64_t started_ms, last_claim_ms;      /* wall clock; 0: never */
  int64_t rollout_version;                /* the rollout state the weights follow; -1: none yet */
  int64_t rollout_started_ms;             /* and its start (wall clock): a cleared rollout's
                                             successor starts again at version 1 */
  int rollout_pct;                        /* the candidate's share in force (-1: configured weights) */
};

/* The LLM client's per-exchange report, into the metrics. */
static void on_exchange(const char *provider, sq_llm_outcome outcome, int64_t latency_ms, void *ud) {
  static const sq_metrics_llm_kind kind[] = {
      [SQ_LLM_OUTCOME_OK] = SQ_METRICS_LLM_TRANSPORT, /* unused */
      [SQ_LLM_OUTCOME_TRANSPORT] = SQ_METRICS_LLM_TRANSPORT,
      [SQ_LLM_OUTCOME_HTTP_429] = SQ_METRICS_LLM_HTTP_429,
      [SQ_LLM_OUTCOME_HTTP_5XX] = SQ_METRICS_LLM_HTTP_5XX,
      [SQ_LLM_OUTCOME_HTTP_4XX] = SQ_METRICS_LLM_HTTP_4XX,
      [SQ_LLM_OUTCOME_BAD_REPLY] = SQ_METRICS_LLM_BAD_REPLY,
  };
  worker *w = ud;
  sq_metrics_llm_exchange(w->metrics, provider, outcome == SQ_LLM_OUTCOME_OK, kind[outcome], latency_ms);
}

int sq__housekeeping_new(worker *w) {
  sq__housekeeping *h = calloc(1, sizeof *h);
  if (!h) return SQ_ENOMEM;
  const char *names[SQ_CONFIG_MAX_PROVIDERS];
  for (int i = 0; i < w->cfg.n_providers; i++) names[i] = w->cfg.providers[i].name;
  int rc = sq_metrics_new(names, w->cfg.n_providers, &w->cfg.metrics, &w->metrics);
  if (rc) {
    free(h);
    return rc;
  }
  if (w->llm) sq_llm_set_observer(w->llm, on_exchange, w);
  h->started_ms = sq_now_wall_ms();
  h->rollout_version = -1;
  h->rollout_pct = -1;
  w->housekeeping = h;
  return 0;
}

void sq__housekeeping_free(sq__housekeeping *h) { free(h); }

void sq__housekeeping_claimed(sq__housekeeping *h, int64_t wall_ms) { h->last_claim_ms = wall_ms; }

int64_t sq__housekeeping_started_ms(const sq__housekeeping *h) { return h->started_ms; }

/* ---- Redis, best effort ---- */

/* Sends the metrics changed since the last flush. */
static int metrics_flush(worker *w, int64_t now_wall_ms) {
  sq_queue *q = sq__best_effort_queue(w);
  /* On failure the changes are kept for the next flush. */
  return q ? sq__best_effort_done(w, sq_metrics_flush(w->metrics, q, now_wall_ms), "flushing metrics") : SQ_EREDIS_CONN;
}

/* Writes (NULL: removes) this worker's health record. */
static int health_put(worker *w, const sq_health *h) {
  sq_queue *q = sq__best_effort_queue(w);
  if (!q) return SQ_EREDIS_CONN;
  return sq__best_effort_done(w, h ? sq_health_put(q, h) : sq_health_remove(q, w->cfg.worker_id), "writing health");
}

/* Follows the fleet's rollout, taking a turn as its controller. */
static int rollout_step(worker *w, int64_t now_wall_ms, sq_rollout *r) {
  sq_queue *q = sq__best_effort_queue(w);
  bool changed = false;
  if (!q) return SQ_EREDIS_CONN;
  int rc = sq_rollout_step(q, &w->cfg.metrics, w->cfg.worker_id, now_wall_ms, r, &changed);
  /* A damaged state (SQ_EPARSE, r->damage set) is read fine: Redis works. */
  rc = rc == SQ_EPARSE ? (sq__best_effort_done(w, 0, "following the rollout"), rc) : sq__best_effort_done(w, rc, "following the rollout");
  if (rc == 0 && changed)
    SQ_LOGT(r->state == SQ_ROLLOUT_ROLLED_BACK ? SQ_LOG_WARN : SQ_LOG_INFO, NULL, "rollout of %s %s: now %d%% (%s): %s",
            r->candidate, r->state == SQ_ROLLOUT_ROLLED_BACK ? "rolled back" : "advanced", r->pct,
            sq_rollout_state_name(r->state), r->reason);
  return rc;
}

/* ---- health ---- */

static void health_fill(worker *w, int64_t now_ms, sq_health *h) {
  *h = (sq_health){.updated_ms = now_ms, .started_ms = w->housekeeping->started_ms, .last_claim_ms = w->housekeeping->last_claim_ms,
                   .in_flight = w->in_flight, .jail_mode = sq_jail_mode_in_force(w->jail, NULL),
                   .jail_layers = w->jail ? sq_jail_layers(w->jail) : 0, .rollout_pct = w->housekeeping->rollout_pct};
  snprintf(h->worker, sizeof h->worker, "%s", w->cfg.worker_id);
  for (int i = 0; w->llm && i < sq_llm_n_providers(w->llm) && h->n_breakers < SQ_HEALTH_MAX_BREAKERS; i++) {
    sq_health_breaker *b = &h->breakers[h->n_breakers++];
    snprintf(b->provider, sizeof b->provider, "%s", sq_llm_provider_name(w->llm, i));
    snprintf(b->state, sizeof b->state, "%s", sq_llm_breaker_state(w->llm, i));
  }
}

/* ---- rollout ---- */

/* Turns the fleet's rollout state into this client's weights: candidate
 * pct, baseline 100 - pct, every other provider 0; with no rollout (or one
 * naming a provider this worker does not have) the configured weights. */
static void follow(worker *w, const sq_rollout *r) {
  sq__housekeeping *h = w->housekeeping;
  if (!w->llm || (r->version == h->rollout_version && r->started_ms == h->rollout_started_ms)) return;
  h->rollout_version = r->version;
  h->rollout_started_ms = r->started_ms;
  sq_llm_reset_weights(w->llm);
  h->rollout_pct = -1;
  if (r->damage[0])
    SQ_WARN("rollout state is damaged (%s): configured weights in force until `sandq-producer rollout abort` or "
            "`rollout clear` repairs it", r->damage);
  if (r->state == SQ_ROLLOUT_NONE) return;
  bool known_c = false, known_b = false;
  for (int i = 0; i < sq_llm_n_providers(w->llm); i++) {
    known_c = known_c || strcmp(sq_llm_provider_name(w->llm, i), r->candidate) == 0;
    known_b = known_b || strcmp(sq_llm_provider_name(w->llm, i), r->baseline) == 0;
  }
  if (!known_c || !known_b) {
    SQ_WARN("rollout of '%s' against '%s': this worker lacks one of them; keeping its configured weights",
            r->candidate, r->baseline);
    return;
  }
  for (int i = 0; i < sq_llm_n_providers(w->llm); i++) sq_llm_set_weight(w->llm, sq_llm_provider_name(w->llm, i), 0);
  sq_llm_set_weight(w->llm, r->candidate, r->pct);
  sq_llm_set_weight(w->llm, r->baseline, 100 - r->pct);
  w->housekeeping->rollout_pct = r->pct;
  SQ_INFO("rollout (%s): %s gets %d%% of LLM traffic, %s %d%%", sq_rollout_state_name(r->state), r->candidate, r->pct,
          r->baseline, 100 - r->pct);
}

void sq__housekeeping_run(worker *w) {
  int64_t now = sq_now_mono_ms();
  sq__compile_toolchains_poll(); /* the compilers' versions, for the compile cache */
  sq__endpoint_publish(w); /* whatever Redis does: /healthz says so */
  if (!sq__redis_up(w)) return;
  sq__budget_cache_flush(w->budget, false);
  sq__audit_log_flush(w->audit, w, false);
  if (now >= w->housekeeping->next_kill_ms) {
    w->housekeeping->next_kill_ms = now + SQ__KILL_CHECK_MS;
    sq__kill_watch_check(w);
  }
  if (now >= w->housekeeping->next_flush_ms) {
    w->housekeeping->next_flush_ms = now + w->cfg.metrics_flush_ms;
    int64_t wall = sq_now_wall_ms();
    sq_health h;
    health_fill(w, wall, &h);
    if (metrics_flush(w, wall) == 0) health_put(w, &h); /* failures: logged by best_effort.c, kept for the next */
  }
  if (w->llm && now >= w->housekeeping->next_rollout_ms) {
    w->housekeeping->next_rollout_ms = now + ROLLOUT_EVERY_MS;
    sq_rollout r;
    int rc = rollout_step(w, sq_now_wall_ms(), &r);
    if (rc == 0 || rc == SQ_EPARSE) follow(w, &r);
  }
}

void sq__housekeeping_final(worker *w) {
  if (!sq__redis_up(w)) return;
  sq__best_effort_retry_now(w); /* one last try, whatever the backoff */
  sq__budget_cache_flush(w->budget, true);
  sq__audit_log_flush(w->audit, w, true);
  metrics_flush(w, sq_now_wall_ms());
  if (w->fatal) { /* stays in the record, so `health` names why this worker stopped */
    sq_health h;
    health_fill(w, sq_now_wall_ms(), &h);
    snprintf(h.host_error, sizeof h.host_error, "%s", w->host_error);
    health_put(w, &h);
  } else {
    health_put(w, NULL);
  }
}
