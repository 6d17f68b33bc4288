/* tick.c: the worker's periodic chores, run from its event loop (so no
 * locks: the metrics registry, the LLM client and the queue link all
 * belong to that one thread): flushing metrics, writing this worker's
 * health record (common/fleet/health.h), following the provider rollout
 * (weights) and taking a turn as its controller, publishing what the
 * scrape endpoint answers (endpoint.c) and sending audit entries that no
 * result pipeline took (audit.c). Redis is reached through
 * wq_chores.c, which backs off on its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "worker.h"

#define ROLLOUT_EVERY_MS 1000

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

int sq__tick_init(worker *w) {
  const char *names[SQ_CONFIG_MAX_PROVIDERS];
  for (int i = 0; i < w->cfg.n_providers; i++) names[i] = w->cfg.providers[i].name;
  int rc = sq_metrics_new(names, w->cfg.n_providers, &w->cfg.metrics, &w->metrics);
  if (rc) return rc;
  if (w->llm) sq_llm_set_observer(w->llm, on_exchange, w);
  w->tick.started_ms = sq_now_wall_ms();
  w->tick.rollout_version = -1;
  w->tick.rollout_pct = -1;
  return 0;
}

/* ---- health ---- */

static void health_fill(worker *w, int64_t now_ms, sq_health *h) {
  *h = (sq_health){.updated_ms = now_ms, .started_ms = w->tick.started_ms, .last_claim_ms = w->tick.last_claim_ms,
                   .in_flight = w->in_flight, .jail_mode = sq_jail_mode_in_force(w->jail, NULL),
                   .jail_layers = w->jail ? sq_jail_layers(w->jail) : 0, .rollout_pct = w->tick.rollout_pct};
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
  if (!w->llm || r->version == w->tick.rollout_version) return;
  w->tick.rollout_version = r->version;
  sq_llm_reset_weights(w->llm);
  w->tick.rollout_pct = -1;
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
  w->tick.rollout_pct = r->pct;
  SQ_INFO("rollout (%s): %s gets %d%% of LLM traffic, %s %d%%", sq_rollout_state_name(r->state), r->candidate, r->pct,
          r->baseline, 100 - r->pct);
}

void sq__tick(worker *w) {
  int64_t now = sq_now_mono_ms();
  sq__endpoint_publish(w); /* whatever Redis does: /healthz says so */
  if (!sq__wq_up(w)) return;
  sq__spend_flush(w, false);
  sq__audit_flush(w, false);
  if (now >= w->tick.next_flush_ms) {
    w->tick.next_flush_ms = now + w->cfg.metrics_flush_ms;
    int64_t wall = sq_now_wall_ms();
    sq_health h;
    health_fill(w, wall, &h);
    if (sq__wq_metrics_flush(w, wall) == 0) sq__wq_health_put(w, &h); /* failures: logged by wq, kept for the next */
  }
  if (w->llm && now >= w->tick.next_rollout_ms) {
    w->tick.next_rollout_ms = now + ROLLOUT_EVERY_MS;
    sq_rollout r;
    int rc = sq__wq_rollout_step(w, sq_now_wall_ms(), &r);
    if (rc == 0 || rc == SQ_EPARSE) follow(w, &r);
  }
}

void sq__tick_final(worker *w) {
  if (!sq__wq_up(w)) return;
  sq__backoff_ok(&w->wq.chores); /* one last try, whatever the backoff */
  sq__spend_flush(w, true);
  sq__audit_flush(w, true);
  sq__wq_metrics_flush(w, sq_now_wall_ms());
  if (w->fatal) { /* stays in the record, so `health` names why this worker stopped */
    sq_health h;
    health_fill(w, sq_now_wall_ms(), &h);
    snprintf(h.host_error, sizeof h.host_error, "%s", w->host_error);
    sq__wq_health_put(w, &h);
  } else {
    sq__wq_health_put(w, NULL);
  }
}
