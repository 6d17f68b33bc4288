/* rollout_log.c: each finished stage of the rollout with the figures the
 * controller judged it by, one field per stage in sq:{Q}:rollout:stages,
 * so `sandq-producer rollout status` can show how every stage went and
 * why it ended. Written after the state's own compare-and-set won;
 * best effort (the state is the truth, this is its history). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "rollout.h"

#define MAX_LOGGED 64

static double pct_of(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

int sq_rollout_log_stage(sq_queue *q, const sq_rollout *before, const sq_rollout *after, const sq_rollout_input *in) {
  char field[16], text[768];
  snprintf(field, sizeof field, "%d", before->stage + 1);
  const char *how = after->state == SQ_ROLLOUT_ROLLED_BACK ? "rolled back"
                    : after->state == SQ_ROLLOUT_DONE      ? "done"
                                                           : "advanced";
  snprintf(text, sizeof text,
           "%d%%: held %lld s, %.0f request(s) at this stage; over the last %lld s the candidate had %.0f "
           "request(s), %.1f%% errors, p95 %.0f ms, the baseline %.0f, %.1f%%, %.0f ms; %s: %s",
           before->pct, (long long)((in->now_ms - before->stage_started_ms) / 1000),
           in->cand_requests_total - before->stage_requests0, (long long)before->plan.window_s, in->cand.requests,
           pct_of(in->cand.errors, in->cand.requests), in->cand.p95_ms, in->base.requests,
           pct_of(in->base.errors, in->base.requests), in->base.p95_ms, how, after->reason);
  return sq_queue_hash_set(q, SQ_ROLLOUT_STAGES_KEY, field, text);
}

int sq_rollout_log_clear(sq_queue *q) { return sq_queue_hash_clear(q, SQ_ROLLOUT_STAGES_KEY); }

typedef struct {
  char *text[MAX_LOGGED + 1]; /* by stage number, 1-based */
} logged;

static int on_field(const char *f, const char *v, void *ud) {
  logged *l = ud;
  long n = strtol(f, NULL, 10);
  if (n < 1 || n > MAX_LOGGED || l->text[n]) return 0;
  l->text[n] = strdup(v);
  return l->text[n] ? 0 : SQ_ENOMEM;
}

int sq_rollout_log_each(sq_queue *q, sq_rollout_stage_fn fn, void *ud) {
  logged l = {0};
  int rc = sq_queue_hash_get_all(q, SQ_ROLLOUT_STAGES_KEY, on_field, &l);
  for (int i = 1; i <= MAX_LOGGED; i++) {
    if (rc == 0 && l.text[i]) rc = fn(i, l.text[i], ud);
    free(l.text[i]);
  }
  return rc;
}
