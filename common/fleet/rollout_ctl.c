/* rollout_ctl.c: the rollout's Redis side. The state is one hash,
 * sq:{Q}:rollout, every write a compare-and-set on its version (the
 * functions library's sq1_hash_cas); the controller step runs wherever the
 * fleet-wide lock sq:{Q}:rollout:lock is free, so one process decides at a
 * time, at most once per LOCK_MS. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "rollout.h"
#include "util.h"

#define LOCK_MS 1000
#define N_FIELDS 20

/* The plan's integer keys, as stored (and as config keys without
 * "rollout_"), with the ranges common/config/config.c allows for them: a
 * stored value outside is damage, never used. */
static const struct {
  const char *name;
  size_t offset;
  int64_t min, max;
} plan_ints[] = {
    {"hold_s", offsetof(sq_rollout_plan, hold_s), 1, 7 * 24 * 3600},
    {"min_requests", offsetof(sq_rollout_plan, min_requests), 1, 1000000000},
    {"min_samples", offsetof(sq_rollout_plan, min_samples), 1, 1000000000},
    {"window_s", offsetof(sq_rollout_plan, window_s), 1, 24 * 3600},
    {"max_error_pct", offsetof(sq_rollout_plan, max_error_pct), 0, 100},
    {"error_margin_pct", offsetof(sq_rollout_plan, error_margin_pct), 0, 100},
    {"p95_ratio_pct", offsetof(sq_rollout_plan, p95_ratio_pct), 100, 100000},
    {"p95_margin_ms", offsetof(sq_rollout_plan, p95_margin_ms), 0, 3600 * 1000},
    {"max_p95_ms", offsetof(sq_rollout_plan, max_p95_ms), 0, 3600 * 1000},
};
#define N_PLAN_INTS (sizeof plan_ints / sizeof plan_ints[0])
#define MAX_WALL_MS 253402300799999LL /* 9999-12-31 */

static int64_t *plan_int(sq_rollout_plan *p, size_t i) { return (int64_t *)(void *)((char *)p + plan_ints[i].offset); }

/* Notes the first damaged field in r->damage (the value shown short and
 * printable); the field keeps its default. */
static void damaged(sq_rollout *r, const char *f, const char *v, const char *what) {
  if (r->damage[0]) return;
  char shown[48];
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)v; *p && o + 1 < sizeof shown; p++)
    shown[o++] = *p < 0x20 || *p >= 0x7f ? '?' : (char)*p;
  shown[o] = 0;
  snprintf(r->damage, sizeof r->damage, "sq:{Q}:" SQ_ROLLOUT_KEY " field '%.32s' = '%s' %s", f, shown, what);
}

/* An integer field in [min, max] into *out; anything else is damage
 * (returns -1, *out untouched). */
static int int_field(sq_rollout *r, const char *f, const char *v, int64_t min, int64_t max, int64_t *out) {
  int64_t n;
  char what[80];
  if (sq_parse_i64(v, min, max, &n) == 0) {
    *out = n;
    return 0;
  }
  snprintf(what, sizeof what, "is not an integer in %lld..%lld", (long long)min, (long long)max);
  damaged(r, f, v, what);
  return -1;
}

/* A string field that must fit dst (n bytes). */
static void str_field(sq_rollout *r, const char *f, const char *v, char *dst, size_t n) {
  if (strlen(v) < n) snprintf(dst, n, "%s", v);
  else damaged(r, f, v, "is too long");
}

static int on_field(const char *f, const char *v, void *ud) {
  sq_rollout *r = ud;
  int64_t n = 0;
  if (strcmp(f, "state") == 0) {
    int s;
    for (s = SQ_ROLLOUT_NONE; s <= SQ_ROLLOUT_ABORTED; s++)
      if (strcmp(v, sq_rollout_state_name((sq_rollout_state)s)) == 0) break;
    if (s <= SQ_ROLLOUT_ABORTED) r->state = (sq_rollout_state)s;
    else damaged(r, f, v, "is not none, running, done, rolled_back or aborted");
  } else if (strcmp(f, "candidate") == 0) str_field(r, f, v, r->candidate, sizeof r->candidate);
  else if (strcmp(f, "baseline") == 0) str_field(r, f, v, r->baseline, sizeof r->baseline);
  else if (strcmp(f, "stages") == 0) {
    int pct[SQ_ROLLOUT_MAX_STAGES], k;
    if (sq_rollout_stages_parse(v, pct, &k) == 0) snprintf(r->plan.stages, sizeof r->plan.stages, "%s", v);
    else damaged(r, f, v, "is not increasing percentages ending at 100");
  } else if (strcmp(f, "reason") == 0) snprintf(r->reason, sizeof r->reason, "%s", v);
  else if (strcmp(f, "pct") == 0) {
    if (int_field(r, f, v, 0, 100, &n) == 0) r->pct = (int)n;
  } else if (strcmp(f, "stage") == 0) {
    if (int_field(r, f, v, 0, SQ_ROLLOUT_MAX_STAGES - 1, &n) == 0) r->stage = (int)n;
  } else if (strcmp(f, "started_ms") == 0) int_field(r, f, v, 0, MAX_WALL_MS, &r->started_ms);
  else if (strcmp(f, "stage_started_ms") == 0) int_field(r, f, v, 0, MAX_WALL_MS, &r->stage_started_ms);
  else if (strcmp(f, "updated_ms") == 0) int_field(r, f, v, 0, MAX_WALL_MS, &r->updated_ms);
  else if (strcmp(f, "stage_requests0") == 0) {
    char *end = NULL;
    double d = strtod(v, &end);
    if (*v && !*end && d >= 0 && d <= 1e15) r->stage_requests0 = d;
    else damaged(r, f, v, "is not a count of requests");
  } else if (strcmp(f, "version") == 0) int_field(r, f, v, 0, INT64_MAX - 1, &r->version);
  else
    for (size_t i = 0; i < N_PLAN_INTS; i++)
      if (strcmp(f, plan_ints[i].name) == 0)
        int_field(r, f, v, plan_ints[i].min, plan_ints[i].max, plan_int(&r->plan, i));
  return 0;
}

/* What the fields cannot say one by one: the stage against the plan, the
 * names a running rollout needs, the plan's own rules. */
static void check_whole(sq_rollout *r) {
  int pct[SQ_ROLLOUT_MAX_STAGES], n = 0;
  char err[256], v[16];
  if (r->damage[0]) return;
  sq_rollout_stages_parse(r->plan.stages, pct, &n);
  if (r->stage >= n) {
    snprintf(v, sizeof v, "%d", r->stage);
    damaged(r, "stage", v, "is past the last of the plan's stages");
    r->stage = 0;
  } else if (r->state != SQ_ROLLOUT_NONE && (!r->candidate[0] || !r->baseline[0])) {
    damaged(r, !r->candidate[0] ? "candidate" : "baseline", "", "is missing");
  } else if (sq_rollout_plan_validate(&r->plan, err, sizeof err) != 0) {
    snprintf(r->damage, sizeof r->damage, "sq:{Q}:" SQ_ROLLOUT_KEY ": %.200s", err);
  }
}

int sq_rollout_load(sq_queue *q, sq_rollout *r) {
  memset(r, 0, sizeof *r);
  sq_rollout_plan_defaults(&r->plan);
  int rc = sq_queue_hash_get_all(q, SQ_ROLLOUT_KEY, on_field, r);
  if (rc) return rc;
  check_whole(r);
  return r->damage[0] ? SQ_EPARSE : 0;
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
  if ((rc = sq_rollout_load(q, &cur)) == SQ_EPARSE)
    return sq_errf(err, errlen, rc, "the stored rollout state is damaged (%s); run `rollout abort` or `rollout clear` "
                   "first", cur.damage);
  if (rc) return sq_errf(err, errlen, rc, "%s", sq_queue_errstr(q));
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
  bool repair = rc == SQ_EPARSE; /* damaged fields are back at their defaults in r: write a sound state */
  if (rc && !repair) return rc;
  if (!repair && r.state != SQ_ROLLOUT_RUNNING && r.state != SQ_ROLLOUT_DONE) return SQ_ENOTFOUND;
  if (repair) r.stage = 0;
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
  if (rc == SQ_EPARSE) r->state = SQ_ROLLOUT_NONE; /* damaged: no rollout, configured weights */
  if (rc || r->state != SQ_ROLLOUT_RUNNING) return rc;
  bool got = false;
  if ((rc = sq_queue_lock(q, SQ_ROLLOUT_LOCK, owner, LOCK_MS, &got)) || !got) return rc;
  sq_rollout_input in = {.now_ms = now_ms};
  /* Judged on this rollout's traffic only: what the candidate did before
   * it started (an earlier rollout's, at another share) is not its. */
  int64_t from = r->started_ms;
  if ((rc = sq_metrics_read_window(q, mo, r->candidate, r->plan.window_s, from, now_ms, &in.cand)) ||
      (rc = sq_metrics_read_window(q, mo, r->baseline, r->plan.window_s, from, now_ms, &in.base)) ||
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
