/* test_health.c: the worker health record (common/fleet/health.c): what the
 * worker writes, the producer reads back field for field; a record with
 * numbers that do not fit (1e19, -1, 1.5, NaN-like strings) or no
 * updated_ms is refused with a named field, never turned into an
 * overflowing time (the producer's judge once computed now - 1e19). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "health.h"

static void roundtrip(void) {
  sq_health h = {.updated_ms = 1700000000123, .started_ms = 1700000000000, .last_claim_ms = 0, .in_flight = 7,
                 .jail_mode = SQ_JAIL_MODE_WARM, .jail_layers = SQ_JAIL_LAYER_PID_NS | SQ_JAIL_LAYER_SECCOMP,
                 .n_breakers = 2, .rollout_pct = 25};
  snprintf(h.worker, sizeof h.worker, "w-1");
  snprintf(h.breakers[0].provider, sizeof h.breakers[0].provider, "a");
  snprintf(h.breakers[0].state, sizeof h.breakers[0].state, "closed");
  snprintf(h.breakers[1].provider, sizeof h.breakers[1].provider, "b");
  snprintf(h.breakers[1].state, sizeof h.breakers[1].state, "open");
  char *json = NULL;
  CHECK_EQ(sq_health_to_json(&h, &json), 0);
  CHECK_CONTAINS(json, "\"jail_layers\":[\"pid_ns\",\"seccomp\"]");
  CHECK_CONTAINS(json, "\"breakers\":{\"a\":\"closed\",\"b\":\"open\"}");
  sq_health back;
  char err[160] = "";
  CHECK_EQ(sq_health_parse(json, strlen(json), &back, err, sizeof err), 0);
  CHECK_STR(back.worker, "w-1");
  CHECK_EQ(back.updated_ms, h.updated_ms);
  CHECK_EQ(back.started_ms, h.started_ms);
  CHECK_EQ(back.last_claim_ms, 0);
  CHECK_EQ(back.in_flight, 7);
  CHECK_EQ(back.jail_mode, SQ_JAIL_MODE_WARM);
  CHECK_EQ(back.jail_layers, h.jail_layers);
  CHECK_EQ(back.n_breakers, 2);
  CHECK_STR(back.breakers[1].provider, "b");
  CHECK_STR(back.breakers[1].state, "open");
  CHECK_EQ(back.rollout_pct, 25);
  free(json);
}

/* parse must refuse json with SQ_EPARSE and an error naming want. */
static void refused(const char *json, const char *want) {
  sq_health h;
  char err[160] = "";
  int rc = sq_health_parse(json, strlen(json), &h, err, sizeof err);
  CHECK_EQ(rc, SQ_EPARSE);
  CHECK_CONTAINS(err, want);
}

static void garbage(void) {
  refused("", "not a JSON object");
  refused("[1,2]", "not a JSON object");
  refused("{\"in_flight\": 1}", "no updated_ms");
  refused("{\"updated_ms\": 1e19}", "updated_ms");
  refused("{\"updated_ms\": -1}", "updated_ms");
  refused("{\"updated_ms\": 1.5}", "updated_ms");
  refused("{\"updated_ms\": \"soon\"}", "updated_ms");
  refused("{\"updated_ms\": 1, \"last_claim_ms\": 1e300}", "last_claim_ms");
  refused("{\"updated_ms\": 1, \"in_flight\": -3}", "in_flight");
  refused("{\"updated_ms\": 1, \"rollout_pct\": 101}", "rollout_pct");
  refused("{\"updated_ms\": 1, \"jail_mode\": \"lukewarm\"}", "jail_mode");
  /* A newer worker's extra fields and layers are not errors. */
  sq_health h;
  char err[160] = "";
  const char *newer = "{\"updated_ms\": 5, \"jail_layers\": [\"seccomp\", \"quantum\"], \"gpu\": true}";
  CHECK_EQ(sq_health_parse(newer, strlen(newer), &h, err, sizeof err), 0);
  CHECK_EQ(h.jail_layers, SQ_JAIL_LAYER_SECCOMP);
  CHECK_EQ(h.rollout_pct, -1);
}

int main(void) {
  roundtrip();
  garbage();
  return sq_check_done("test_health");
}
