/* tick.c: the worker's periodic chores, run from its event loop (so no
 * locks: the metrics registry, the LLM client and the queue handle all
 * belong to that one thread): flushing metrics, writing this worker's
 * health into sq:{Q}:health, following the provider rollout (weights) and
 * taking a turn as its controller. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "worker.h"

#define ROLLOUT_EVERY_MS 1000
#define HEALTH_KEY "health"

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
  w->started_ms = sq_now_wall_ms();
  w->rollout_version = -1;
  w->rollout_pct = -1;
  return 0;
}

/* ---- health ---- */

static char *health_json(worker *w, int64_t now_ms) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "worker", w->cfg.worker_id);
  cJSON_AddNumberToObject(o, "updated_ms", (double)now_ms);
  cJSON_AddNumberToObject(o, "started_ms", (double)w->started_ms);
  cJSON_AddNumberToObject(o, "last_claim_ms", (double)w->last_claim_ms);
  cJSON_AddNumberToObject(o, "in_flight", w->in_flight);
  cJSON_AddStringToObject(o, "jail_mode", sq_jail_mode_name(w->cfg.jail_mode));
  cJSON *layers = cJSON_AddArrayToObject(o, "jail_layers");
  uint32_t have = w->jail ? sq_jail_layers(w->jail) : 0;
  const char *names[SQ_JAIL_LAYER_COUNT];
  for (int i = 0, n = sq_jail_layers_names(have, names, SQ_JAIL_LAYER_COUNT); i < n; i++)
    cJSON_AddItemToArray(layers, cJSON_CreateString(names[i]));
  cJSON *br = cJSON_AddObjectToObject(o, "breakers");
  for (int i = 0; w->llm && i < sq_llm_n_providers(w->llm); i++)
    cJSON_AddStringToObject(br, sq_llm_provider_name(w->llm, i), sq_llm_breaker_state(w->llm, i));
  cJSON_AddNumberToObject(o, "rollout_pct", w->rollout_pct);
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

/* ---- rollout ---- */

/* Turns the fleet's rollout state into this client's weights: candidate
 * pct, baseline 100 - pct, every other provider 0; with no rollout (or one
 * naming a provider this worker does not have) the configured weights. */
static void follow(worker *w, const sq_rollout *r) {
  if (!w->llm || r->version == w->rollout_version) return;
  w->rollout_version = r->version;
  sq_llm_reset_weights(w->llm);
  w->rollout_pct = -1;
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
  w->rollout_pct = r->pct;
  SQ_INFO("rollout (%s): %s gets %d%% of LLM traffic, %s %d%%", sq_rollout_state_name(r->state), r->candidate, r->pct,
          r->baseline, 100 - r->pct);
}

void sq__tick(worker *w) {
  int64_t now = sq_now_mono_ms();
  if (!w->queue) return;
  sq__spend_flush(w, false);
  if (now >= w->next_flush_ms) {
    w->next_flush_ms = now + w->cfg.metrics_flush_ms;
    int64_t wall = sq_now_wall_ms();
    if (sq_metrics_flush(w->metrics, w->queue, wall) != 0)
      SQ_WARN("metrics flush failed (%s); kept for the next one", sq_queue_errstr(w->queue));
    char *h = health_json(w, wall);
    if (h && sq_queue_hash_set(w->queue, HEALTH_KEY, w->cfg.worker_id, h) != 0)
      SQ_WARN("writing health failed: %s", sq_queue_errstr(w->queue));
    free(h);
  }
  if (w->llm && now >= w->next_rollout_ms) {
    w->next_rollout_ms = now + ROLLOUT_EVERY_MS;
    sq_rollout r;
    bool changed = false;
    int rc = sq_rollout_step(w->queue, &w->cfg.metrics, w->cfg.worker_id, sq_now_wall_ms(), &r, &changed);
    if (rc == 0 || rc == SQ_EPARSE) follow(w, &r);
  }
}

void sq__tick_final(worker *w) {
  if (!w->queue) return;
  sq__spend_flush(w, true);
  sq_metrics_flush(w->metrics, w->queue, sq_now_wall_ms());
  sq_queue_hash_del(w->queue, HEALTH_KEY, w->cfg.worker_id);
}
