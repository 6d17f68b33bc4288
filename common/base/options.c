/* options.c: defaults and pure checks of the modules' option types. */
#include "options.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "errors.h"
#include "util.h"

void sq_llm_options_defaults(sq_llm_options *o) {
  *o = (sq_llm_options){.backoff_base_ms = 200,
                        .backoff_cap_ms = 5000,
                        .retry_after_cap_ms = 30000,
                        .breaker_window_ms = 30000,
                        .breaker_min_samples = 20,
                        .breaker_error_pct = 50,
                        .breaker_open_ms = 10000};
}

static const char *const scope_names[] = {"off", "generated", "all"};
static const char *const level_names[] = {"none", "low", "medium", "high", "critical"};
static const char *const action_names[] = {"allow", "warn", "block"};
#define N_OF(a) (int)(sizeof(a) / sizeof(a)[0])

const char *sq_risk_scope_name(sq_risk_scope s) {
  return (unsigned)s < (unsigned)N_OF(scope_names) ? scope_names[s] : "?";
}
const char *sq_risk_level_name(sq_risk_level l) {
  return (unsigned)l < (unsigned)N_OF(level_names) ? level_names[l] : "?";
}
const char *sq_risk_action_name(sq_risk_action a) {
  return (unsigned)a < (unsigned)N_OF(action_names) ? action_names[a] : "?";
}

/* Index of s (trimmed, any case) in names, or -1. */
static int lookup(const char *s, const char *const *names, int n) {
  if (!s) return -1;
  while (isspace((unsigned char)*s))
    s++;
  size_t len = strlen(s);
  while (len > 0 && isspace((unsigned char)s[len - 1]))
    len--;
  for (int i = 0; i < n; i++)
    if (strlen(names[i]) == len && strncasecmp(s, names[i], len) == 0) return i;
  return -1;
}

int sq_risk_scope_parse(const char *s, sq_risk_scope *out) {
  int i = lookup(s, scope_names, N_OF(scope_names));
  if (i < 0) return SQ_EINVAL;
  *out = (sq_risk_scope)i;
  return 0;
}

int sq_risk_level_parse(const char *s, sq_risk_level *out) {
  int i = lookup(s, level_names, N_OF(level_names));
  if (i < 0) return SQ_EINVAL;
  *out = (sq_risk_level)i;
  return 0;
}

int sq_risk_action_parse(const char *s, sq_risk_action *out) {
  int i = lookup(s, action_names, N_OF(action_names));
  if (i < 0) return SQ_EINVAL;
  *out = (sq_risk_action)i;
  return 0;
}

void sq_queue_options_default(sq_queue_options *o) {
  *o = (sq_queue_options){.lease_ms = 30000,
                          .max_stalls = 3,
                          .max_attempts = 5,
                          .backoff_base_ms = 1000,
                          .backoff_max_ms = 60000,
                          .retention_s = 7 * 24 * 3600,
                          .max_queue_len = 1000000,
                          .reap_interval_ms = 1000,
                          .dead_retention_s = 30 * 24 * 3600,
                          .shards = 1,
                          .wait_replicas = 0,
                          .wait_timeout_ms = 1000};
}

void sq_rollout_plan_defaults(sq_rollout_plan *p) {
  *p = (sq_rollout_plan){.hold_s = 300,
                         .min_requests = 100,
                         .min_samples = 20,
                         .window_s = 60,
                         .max_error_pct = 10,
                         .error_margin_pct = 2,
                         .p95_ratio_pct = 150,
                         .p95_margin_ms = 100,
                         .max_p95_ms = 0};
  snprintf(p->stages, sizeof p->stages, "10,30,70,100");
}

int sq_rollout_stages_parse(const char *s, int *pct, int *n) {
  *n = 0;
  char buf[64];
  if (!s || strlen(s) >= sizeof buf) return SQ_EINVAL;
  snprintf(buf, sizeof buf, "%s", s);
  char *save = NULL;
  for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
    int64_t v;
    if (*n >= SQ_ROLLOUT_MAX_STAGES || sq_parse_i64(t, 1, 100, &v) != 0) return SQ_EINVAL;
    if (*n > 0 && v <= pct[*n - 1]) return SQ_EINVAL;
    pct[(*n)++] = (int)v;
  }
  return *n > 0 && pct[*n - 1] == 100 ? 0 : SQ_EINVAL;
}

int sq_rollout_plan_validate(const sq_rollout_plan *p, char *err, size_t errlen) {
  int pct[SQ_ROLLOUT_MAX_STAGES], n;
  if (sq_rollout_stages_parse(p->stages, pct, &n) != 0)
    return sq_errf(err, errlen, SQ_ECONFIG,
                   "rollout_stages: '%s' must be 1-%d increasing percentages in 1..100 ending at 100, e.g. "
                   "\"10,30,70,100\"",
                   p->stages, SQ_ROLLOUT_MAX_STAGES);
  if (p->min_samples > p->min_requests)
    return sq_errf(err, errlen, SQ_ECONFIG, "rollout_min_samples: %lld is above rollout_min_requests (%lld)",
                   (long long)p->min_samples, (long long)p->min_requests);
  return 0;
}
