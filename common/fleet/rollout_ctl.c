/* rollout_ctl.c: the rollout's Redis side. The state is one hash,
 * sq:{Q}:rollout, every write a compare-and-set on its version (the
 * functions library's sq1_hash_cas); the controller step runs wherever the
 * fleet-wide lock sq:{Q}:rollout:lock is free, so one process decides at a
 * time, at most once per LOCK_MS. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "rollout.h"

#define LOCK_MS 1000
#define N_FIELDS 20

/* The plan's integer keys, as stored (and as config keys without "rollout_"). */
static const struct {
  const char *name;
  size_t offset;
} plan_ints[] = {
    {"hold_s", offsetof(sq_rollout_plan, hold_s)},
    {"min_requests", offsetof(sq_rollout_plan, min_requests)},
    {"min_samples", offsetof(sq_rollout_plan, min_samples)},
    {"window_s", offsetof(sq_rollout_plan, window_s)},
    {"max_error_pct", offsetof(sq_rollout_plan, max_error_pct)},
    {"error_margin_pct", offsetof(sq_rollout_plan, error_margin_pct)},
    {"p95_ratio_pct", offsetof(sq_rollout_plan, p95_ratio_pct)},
    {"p95_margin_ms", offsetof(sq_rollout_plan, p95_margin_ms)},
    {"max_p95_ms", offsetof(sq_rollout_plan, max_p95_ms)},
};
#define N_PLAN_INTS (sizeof plan_ints / sizeof plan_ints[0])

static int64_t *plan_int(sq_rollout_plan *p, size_t i) { return (int64_t *)(void *)((char *)p + plan_ints[i].offset); }

static int on_field(const char *f, const char *v, void *ud) {
  sq_rollout *r = ud;
  long long n = strtoll(v, NULL, 10);
  if (strcmp(f, "state") == 0) {
    for (int s = SQ_ROLLOUT_NONE; s <= SQ_ROLLOUT_ABORTED; s++)
      if (strcmp(v, sq_rollout_state_name((sq_rollout_state)s)) == 0) r->state = (sq_rollout_state)s;
  } else if (strcmp(f, "candidate") == 0) snprintf(r->candidate, sizeof r->candidate, "%s", v);
  else if (strcmp(f, "baseline") == 0) snprintf(r->baseline, sizeof r->baseline, "%s", v);
  else if (strcmp(f, "stages") == 0) snprintf(r->plan.stages, sizeof r->plan.stages, "%s", v);
  else if (strcmp(f, "reason") == 0) snprintf(r->reason, sizeof r->reason, "%s", v);
  else if (strcmp(f, "pct") == 0) r->pct = (int)n;
  else if (strcmp(f, "stage") == 0) r->stage = (int)n;
  else if (strcmp(f, "started_ms") == 0) r->started_ms = n;
  else if (strcmp(f, "stage_started_ms") == 0) r->stage_started_ms = n;
  else if (strcmp(f, "updated_ms") == 0) r->updated_ms = n;
  else if (strcmp(f, "stage_requests0") == 0) r->stage_requests0 = strtod(v, NULL);
  else if (strcmp(f, "version") == 0) r->version = n;
  else
    for (size_t i = 0; i < N_PLAN_INTS; i++)
      if (strcmp(f, plan_ints[i].name) == 0) *plan_int(&r->plan, i) = n;
  return 0;
}

int sq_rollout_load(sq_queue *q, sq_rollout *r) {
  memset(r, 0, sizeof *r);
  sq_rollout_plan_defaults(&r->plan);
  return sq_queue_hash_get_all(q, SQ_ROLLOUT_KEY, on_field, r);
}

/* Writes every field of r, if its version is still expected (< 0: any). */
static int save(sq_queue *q, const sq_rollout *r, int64_t expected, const char *lock, const char *owner) {
  const char *names[N_FIELDS];
  char vals[N_FIELDS][64];
  const char *values[N_FIELDS];
  size_t n = 0;
#define PUT(k, ...) (names[n] = (k), snprintf(vals[n], sizeof vals[n], __VA_ARGS__), values[n] = vals[n], n++)
  PUT("state", "%s", sq_rollout_state_name(r->state));
  names[n] = "candidate", values[n++] = r->candidate;
  names[n] = "baseline", values[n++] = r->baseline;
  names[n] = "stages", values[n++] = r->plan.stages;
  names[n] = "reason", values[n++] = r->reason;
  PUT("pct", "%d", r->pct);
  PUT("stage", "%d", r->stage);
  PUT("started_ms", "%lld", (long long)r->started_ms);
  PUT("stage_started_ms", "%lld", (long long)r->stage_started_ms);
  PUT("updated_ms", "%lld", (long long)r->updated_ms);
  PUT("stage_requests0", "%.0f", r->stage_requests0);
  sq_rollout_plan plan = r->plan;
  for (size_t i = 0; i < N_PLAN_INTS; i++) PUT(plan_ints[i].name, "%lld", (long long)*plan_int(&plan, i));
#undef PUT
  return sq_queue_hash_cas(q, SQ_ROLLOUT_KEY, expected, lock, owner, names, values, n, NULL);
}

int sq_rollout_start(sq_queue *q, const sq_rollout_plan *plan, const char *candidate, const char *baseline,
                     int64_t now_ms, char *err, size_t errlen) {
  int rc = sq_rollout_plan_validate(plan, err, errlen);
  if (rc) return rc;
  if (!candidate[0] || !baseline[0] || strcmp(candidate, baseline) == 0 || strlen(candidate) >= 64 ||
      strlen(baseline) >= 64)
    return sq_errf(err, errlen, SQ_EINVAL, "candidate and baseline must be two different provider names");
  sq_rollout cur;
  if ((rc = sq_rollout_load(q, &cur))) return sq_errf(err, errlen, rc, "%s", sq_queue_errstr(q));
  if (cur.state == SQ_ROLLOUT_RUNNING)
    return sq_errf(err, errlen, SQ_EEXISTS, "a rollout of %s against %s is running (abort it first)",
                   cur.candidate, cur.baseline);
  sq_rollout r = {.state = SQ_ROLLOUT_RUNNING, .plan = *plan, .started_ms = now_ms, .stage_started_ms = now_ms,
                  .updated_ms = now_ms};
  int pct[SQ_ROLLOUT_MAX_STAGES], n;
  sq_rollout_stages_parse(plan->stages, pct, &n);
  r.pct = pct[0];
  snprintf(r.candidate, sizeof r.candidate, "%s", candidate);
  snprintf(r.baseline, sizeof r.baseline, "%s", baseline);
  snprintf(r.reason, sizeof r.reason, "started by an operator");
  if ((rc = sq_metrics_read_requests(q, candidate, &r.stage_requests0)) == 0)
    rc = save(q, &r, cur.version, NULL, NULL);
  if (rc == SQ_ECONFLICT) return sq_errf(err, errlen, rc, "the rollout changed meanwhile; try again");
  if (rc) return sq_errf(err, errlen, rc, "%s", sq_queue_errstr(q));
  sq_rollout_log_clear(q); /* the last rollout's stages */
  return 0;
}

int sq_rollout_abort(sq_queue *q, const char *why, int64_t now_ms) {
  sq_rollout r;
  int rc = sq_rollout_load(q, &r);
  if (rc) return rc;
  if (r.state != SQ_ROLLOUT_RUNNING && r.state != SQ_ROLLOUT_DONE) return SQ_ENOTFOUND;
  r.state = SQ_ROLLOUT_ABORTED;
  r.pct = 0;
  r.updated_ms = now_ms;
  snprintf(r.reason, sizeof r.reason, "%s", why);
  return save(q, &r, -1, NULL, NULL); /* an operator's word wins over any controller */
}

int sq_rollout_clear(sq_queue *q) {
  sq_rollout_log_clear(q);
  return sq_queue_hash_clear(q, SQ_ROLLOUT_KEY);
}

int sq_rollout_step(sq_queue *q, const sq_metrics_options *mo, const char *owner, int64_t now_ms, sq_rollout *r,
                    bool *changed) {
  *changed = false;
  int rc = sq_rollout_load(q, r);
  if (rc || r->state != SQ_ROLLOUT_RUNNING) return rc;
  bool got = false;
  if ((rc = sq_queue_lock(q, SQ_ROLLOUT_LOCK, owner, LOCK_MS, &got)) || !got) return rc;
  sq_rollout_input in = {.now_ms = now_ms};
  if ((rc = sq_metrics_read_window(q, mo, r->candidate, r->plan.window_s, now_ms, &in.cand)) ||
      (rc = sq_metrics_read_window(q, mo, r->baseline, r->plan.window_s, now_ms, &in.base)) ||
      (rc = sq_metrics_read_requests(q, r->candidate, &in.cand_requests_total)))
    return rc;
  char why[256];
  sq_rollout_action a = sq_rollout_decide(r, &in, why, sizeof why);
  if (a == SQ_ROLLOUT_HOLD) return 0;
  sq_rollout next = *r;
  sq_rollout_apply(&next, a, &in, why);
  rc = save(q, &next, r->version, SQ_ROLLOUT_LOCK, owner);
  if (rc == SQ_ECONFLICT) return 0; /* an operator (or a newer controller) moved it: theirs stands */
  if (rc) return rc;
  next.version = r->version + 1;
  sq_rollout_log_stage(q, r, &next, &in); /* its history; the state above is the truth */
  *r = next;
  *changed = true;
  return 0;
}
