/* rollout.h: a gradual move of LLM traffic from a baseline provider to a
 * candidate (e.g. 10 -> 30 -> 70 -> 100 %), advancing after a hold time and
 * a number of requests while the candidate's windowed error rate and p95
 * latency stay within bounds (absolute, and relative to the baseline), and
 * rolling back to 0 % on its own when they do not.
 *
 * rollout.c holds the plan, the state, its Redis hash form and the pure
 * decision; rollout_ctl.c the Redis side (start, abort, one controller step
 * under a fleet-wide lock, with a compare-and-set on the state's version).
 * Knows nothing of the LLM client: workers turn the state into weights. */
#ifndef SQ_ROLLOUT_H
#define SQ_ROLLOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "queue.h"

#define SQ_ROLLOUT_KEY "rollout"           /* hash under the queue's prefix */
#define SQ_ROLLOUT_LOCK "rollout:lock"     /* the controller's lock */
#define SQ_ROLLOUT_STAGES_KEY "rollout:stages" /* each finished stage's figures (rollout_log.c) */


typedef enum {
  SQ_ROLLOUT_NONE,        /* no rollout: configured weights */
  SQ_ROLLOUT_RUNNING,
  SQ_ROLLOUT_DONE,        /* the candidate has 100 % */
  SQ_ROLLOUT_ROLLED_BACK, /* the controller took the candidate to 0 % */
  SQ_ROLLOUT_ABORTED,     /* an operator took it to 0 % */
} sq_rollout_state;

const char *sq_rollout_state_name(sq_rollout_state s);

typedef struct {
  sq_rollout_state state;
  char candidate[64], baseline[64];
  int pct;                    /* the candidate's share of traffic now */
  int stage;                  /* index into the plan's stages */
  sq_rollout_plan plan;
  int64_t started_ms, stage_started_ms, updated_ms; /* wall clock */
  double stage_requests0;     /* the candidate's cumulative requests when the stage began */
  char reason[256];           /* why the last transition happened */
  int64_t version;            /* bumped by every write */
  char damage[256];           /* sq_rollout_load: the first stored field that could not be used; "" when sound */
} sq_rollout;

/* What the controller saw. */
typedef struct {
  sq_metrics_window cand, base; /* over plan.window_s */
  double cand_requests_total;   /* cumulative, to count requests at this stage */
  int64_t now_ms;
} sq_rollout_input;

typedef enum { SQ_ROLLOUT_HOLD, SQ_ROLLOUT_ADVANCE, SQ_ROLLOUT_ROLLBACK } sq_rollout_action;

/* The pure decision for a running rollout (HOLD for any other state); why
 * says what was seen and which bound decided. */
sq_rollout_action sq_rollout_decide(const sq_rollout *r, const sq_rollout_input *in, char *why, size_t whylen);
/* Moves r along action (ADVANCE: next stage, or DONE after the last;
 * ROLLBACK: 0 %), stamping times and reason. */
void sq_rollout_apply(sq_rollout *r, sq_rollout_action action, const sq_rollout_input *in, const char *why);

/* ---- the Redis side (rollout_ctl.c) ---- */

/* Reads the state; state NONE when there is none. Every field is checked
 * (integers in their config ranges, the stage within the plan, the plan
 * valid): a damaged one is named in r->damage, left at its default, and the
 * call returns SQ_EPARSE with the rest of r filled. Returns 0, SQ_EPARSE or
 * SQ_EREDIS*. */
int sq_rollout_load(sq_queue *q, sq_rollout *r);
/* Starts a rollout of candidate against baseline with plan (validated),
 * unless one is running (SQ_EEXISTS). */
int sq_rollout_start(sq_queue *q, const sq_rollout_plan *plan, const char *candidate, const char *baseline,
                     int64_t now_ms, char *err, size_t errlen);
/* An operator's stop: the candidate to 0 %, state aborted. SQ_ENOTFOUND
 * when no rollout is running. Also the repair of a damaged state: it is
 * rewritten aborted, its damaged fields at their defaults. */
int sq_rollout_abort(sq_queue *q, const char *why, int64_t now_ms);
/* Forgets the rollout: configured weights again. */
int sq_rollout_clear(sq_queue *q);
/* One controller step: reads the state into r; when running and this
 * process wins the fleet-wide lock (at most one step per second across the
 * fleet), measures, decides and writes a transition (compare-and-set on
 * the version, so an abort in between wins). *changed tells whether r moved;
 * then r->state, r->pct and r->reason say how and why, for the caller to
 * report (this module logs nothing). A damaged state returns SQ_EPARSE with
 * r->state NONE and r->damage set: follow the configured weights, never the
 * damaged ones. */
int sq_rollout_step(sq_queue *q, const sq_metrics_options *mo, const char *owner, int64_t now_ms, sq_rollout *r,
                    bool *changed);

/* ---- each stage's figures (rollout_log.c) ---- */

/* Records how the stage before ended (moved to after, judged on in). */
int sq_rollout_log_stage(sq_queue *q, const sq_rollout *before, const sq_rollout *after, const sq_rollout_input *in);
/* Forgets every stage (a new rollout starts, or it is cleared). */
int sq_rollout_log_clear(sq_queue *q);
/* Calls fn(stage number from 1, text) for each finished stage in order;
 * text is borrowed for the call. */
typedef int (*sq_rollout_stage_fn)(int stage, const char *text, void *ud);
int sq_rollout_log_each(sq_queue *q, sq_rollout_stage_fn fn, void *ud);

#endif
