/* health.c: the worker health record (health.h): its JSON both ways, with
 * every number checked before use, and its place in sq:{Q}:health. */
#include "health.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

#define HEALTH_HASH "health"

int sq_health_to_json(const sq_health *h, char **out) {
  *out = NULL;
  cJSON *o = cJSON_CreateObject();
  if (!o) return SQ_ENOMEM;
  bool ok = cJSON_AddStringToObject(o, "worker", h->worker) &&
            cJSON_AddNumberToObject(o, "updated_ms", (double)h->updated_ms) &&
            cJSON_AddNumberToObject(o, "started_ms", (double)h->started_ms) &&
            cJSON_AddNumberToObject(o, "last_claim_ms", (double)h->last_claim_ms) &&
            cJSON_AddNumberToObject(o, "in_flight", (double)h->in_flight) &&
            cJSON_AddStringToObject(o, "jail_mode", sq_jail_mode_name(h->jail_mode));
  cJSON *layers = ok ? cJSON_AddArrayToObject(o, "jail_layers") : NULL;
  const char *names[SQ_JAIL_LAYER_COUNT];
  for (int i = 0, n = sq_jail_layers_names(h->jail_layers, names, SQ_JAIL_LAYER_COUNT); layers && i < n; i++)
    ok = ok && cJSON_AddItemToArray(layers, cJSON_CreateString(names[i]));
  cJSON *br = ok && layers ? cJSON_AddObjectToObject(o, "breakers") : NULL;
  for (int i = 0; br && i < h->n_breakers && i < SQ_HEALTH_MAX_BREAKERS; i++)
    ok = ok && cJSON_AddStringToObject(br, h->breakers[i].provider, h->breakers[i].state);
  ok = ok && br && cJSON_AddNumberToObject(o, "rollout_pct", h->rollout_pct);
  if (ok && h->host_error[0]) ok = cJSON_AddStringToObject(o, "host_error", h->host_error) != NULL;
  *out = ok ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return *out ? 0 : SQ_ENOMEM;
}

/* o[key] as a whole number in lo..hi into *v (absent: *v untouched unless
 * required). Returns 0 or SQ_EPARSE with err set. */
static int whole(const cJSON *o, const char *key, int64_t lo, int64_t hi, bool required, int64_t *v, char *err,
                 size_t errlen) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!x) {
    if (!required) return 0;
    snprintf(err, errlen, "health record has no %s", key);
    return SQ_EPARSE;
  }
  double d = x->valuedouble;
  if (!cJSON_IsNumber(x) || !isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi) {
    snprintf(err, errlen, "health record: %s is not a whole number in %lld..%lld", key, (long long)lo,
             (long long)hi);
    return SQ_EPARSE;
  }
  *v = (int64_t)d;
  return 0;
}

int sq_health_parse(const char *json, size_t len, sq_health *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->rollout_pct = -1;
  cJSON *o = cJSON_ParseWithLength(json, len);
  int rc = 0;
  if (!cJSON_IsObject(o)) {
    snprintf(err, errlen, "health record is not a JSON object");
    rc = SQ_EPARSE;
    goto out;
  }
  int64_t pct = -1;
  if ((rc = whole(o, "updated_ms", 0, SQ_HEALTH_MS_MAX, true, &out->updated_ms, err, errlen)) ||
      (rc = whole(o, "started_ms", 0, SQ_HEALTH_MS_MAX, false, &out->started_ms, err, errlen)) ||
      (rc = whole(o, "last_claim_ms", 0, SQ_HEALTH_MS_MAX, false, &out->last_claim_ms, err, errlen)) ||
      (rc = whole(o, "in_flight", 0, SQ_HEALTH_MS_MAX, false, &out->in_flight, err, errlen)) ||
      (rc = whole(o, "rollout_pct", -1, 100, false, &pct, err, errlen)))
    goto out;
  out->rollout_pct = (int)pct;
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, "worker");
  if (cJSON_IsString(x)) snprintf(out->worker, sizeof out->worker, "%s", x->valuestring);
  x = cJSON_GetObjectItemCaseSensitive(o, "jail_mode");
  if (x && (!cJSON_IsString(x) || sq_jail_mode_parse(x->valuestring, &out->jail_mode) != 0)) {
    snprintf(err, errlen, "health record: jail_mode is not spawn or warm");
    rc = SQ_EPARSE;
    goto out;
  }
  x = cJSON_GetObjectItemCaseSensitive(o, "host_error");
  if (cJSON_IsString(x)) snprintf(out->host_error, sizeof out->host_error, "%s", x->valuestring);
  cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(o, "jail_layers")) {
    for (int bit = 0; cJSON_IsString(x) && bit < SQ_JAIL_LAYER_COUNT; bit++)
      if (strcmp(x->valuestring, sq_jail_layer_name(1u << bit)) == 0) out->jail_layers |= 1u << bit;
  }
  cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(o, "breakers")) {
    if (out->n_breakers >= SQ_HEALTH_MAX_BREAKERS || !x->string) break;
    sq_health_breaker *b = &out->breakers[out->n_breakers++];
    snprintf(b->provider, sizeof b->provider, "%s", x->string);
    snprintf(b->state, sizeof b->state, "%s", cJSON_IsString(x) ? x->valuestring : "?");
  }
out:
  cJSON_Delete(o);
  return rc;
}

int sq_health_put(sq_queue *q, const sq_health *h) {
  char *json = NULL;
  int rc = sq_health_to_json(h, &json);
  if (rc == 0) rc = sq_queue_hash_set(q, HEALTH_HASH, h->worker, json);
  free(json);
  return rc;
}

int sq_health_remove(sq_queue *q, const char *worker_id) { return sq_queue_hash_del(q, HEALTH_HASH, worker_id); }

typedef struct {
  sq_health_fn fn;
  void *ud;
} each_ctx;

static int on_field(const char *field, const char *value, void *ud) {
  each_ctx *c = ud;
  sq_health h;
  char err[160] = "";
  if (sq_health_parse(value, strlen(value), &h, err, sizeof err) != 0) return c->fn(field, NULL, err, c->ud);
  snprintf(h.worker, sizeof h.worker, "%s", field); /* the field names the worker, whatever the JSON says */
  return c->fn(field, &h, NULL, c->ud);
}

int sq_health_each(sq_queue *q, sq_health_fn fn, void *ud) {
  each_ctx c = {fn, ud};
  return sq_queue_hash_get_all(q, HEALTH_HASH, on_field, &c);
}
