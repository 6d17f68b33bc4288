/* rollout.c: the rollout's plan, state names and the pure decision
 * (advance, hold or roll back) from what the fleet's metrics show. */
#include "rollout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "util.h"


const char *sq_rollout_state_name(sq_rollout_state s) {
  switch (s) {
  case SQ_ROLLOUT_RUNNING: return "running";
  case SQ_ROLLOUT_DONE: return "done";
  case SQ_ROLLOUT_ROLLED_BACK: return "rolled_back";
  case SQ_ROLLOUT_ABORTED: return "aborted";
  default: return "none";
  }
}

static double pct_of(double part, double whole) {
  if (whole <= 0) return 0;
  double p = 100.0 * part / whole;
  return p > 100 ? 100 : p;
}

sq_rollout_action sq_rollout_decide(const sq_rollout *r, const sq_rollout_input *in, char *why, size_t whylen) {
  const sq_rollout_plan *p = &r->plan;
  const sq_metrics_window *c = &in->cand, *b = &in->base;
  snprintf(why, whylen, "not running");
  if (r->state != SQ_ROLLOUT_RUNNING) return SQ_ROLLOUT_HOLD;
  double err = pct_of(c->errors, c->requests), base_err = pct_of(b->errors, b->requests);
  bool judged = c->requests >= (double)p->min_samples;
  if (judged) {
    if (err > (double)p->max_error_pct) {
      snprintf(why, whylen, "candidate error rate %.1f%% over %.0f requests is above the bound of %lld%%", err,
               c->requests, (long long)p->max_error_pct);
      return SQ_ROLLOUT_ROLLBACK;
    }
    if (err > base_err + (double)p->error_margin_pct) {
      snprintf(why, whylen, "candidate error rate %.1f%% over %.0f requests is above the baseline's %.1f%% + %lld",
               err, c->requests, base_err, (long long)p->error_margin_pct);
      return SQ_ROLLOUT_ROLLBACK;
    }
    if (p->max_p95_ms > 0 && c->p95_ms > (double)p->max_p95_ms) {
      snprintf(why, whylen, "candidate p95 %.0f ms is above the bound of %lld ms", c->p95_ms,
               (long long)p->max_p95_ms);
      return SQ_ROLLOUT_ROLLBACK;
    }
    double bound = b->p95_ms * (double)p->p95_ratio_pct / 100.0 + (double)p->p95_margin_ms;
    if (b->requests >= (double)p->min_samples && c->p95_ms > bound) {
      snprintf(why, whylen, "candidate p95 %.0f ms is above the baseline's %.0f ms x %lld%% + %lld ms", c->p95_ms,
               b->p95_ms, (long long)p->p95_ratio_pct, (long long)p->p95_margin_ms);
      return SQ_ROLLOUT_ROLLBACK;
    }
  }
  int64_t held_s = (in->now_ms - r->stage_started_ms) / 1000;
  double at_stage = in->cand_requests_total - r->stage_requests0;
  if (judged && held_s >= p->hold_s && at_stage >= (double)p->min_requests) {
    snprintf(why, whylen, "healthy at %d%% for %lld s and %.0f requests (error rate %.1f%%, p95 %.0f ms)", r->pct,
             (long long)held_s, at_stage, err, c->p95_ms);
    return SQ_ROLLOUT_ADVANCE;
  }
  snprintf(why, whylen, "holding at %d%%: %lld/%lld s, %.0f/%lld requests, %.0f/%lld in the window", r->pct,
           (long long)held_s, (long long)p->hold_s, at_stage, (long long)p->min_requests, c->requests,
           (long long)p->min_samples);
  return SQ_ROLLOUT_HOLD;
}

void sq_rollout_apply(sq_rollout *r, sq_rollout_action action, const sq_rollout_input *in, const char *why) {
  if (action == SQ_ROLLOUT_HOLD) return;
  snprintf(r->reason, sizeof r->reason, "%s", why);
  r->updated_ms = in->now_ms;
  if (action == SQ_ROLLOUT_ROLLBACK) {
    r->state = SQ_ROLLOUT_ROLLED_BACK;
    r->pct = 0;
    return;
  }
  int pct[SQ_ROLLOUT_MAX_STAGES], n = 0;
  if (sq_rollout_stages_parse(r->plan.stages, pct, &n) != 0 || r->stage < 0 || r->stage >= n) {
    /* a state sq_rollout_load would have refused: never index with it */
    r->state = SQ_ROLLOUT_ROLLED_BACK;
    r->pct = 0;
    snprintf(r->reason, sizeof r->reason, "stage %d does not fit the plan '%.64s'", r->stage, r->plan.stages);
    return;
  }
  if (r->stage + 1 >= n) {
    r->state = SQ_ROLLOUT_DONE;
    r->pct = 100;
    return;
  }
  r->stage++;
  r->pct = pct[r->stage];
  r->stage_started_ms = in->now_ms;
  r->stage_requests0 = in->cand_requests_total;
}
