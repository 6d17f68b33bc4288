/* rollout_cmd.c: `sandq-producer rollout start CANDIDATE BASELINE | status
 * | abort | clear`: the operator's side of the gradual provider rollout.
 * The plan comes from this command's configuration (rollout_* keys) and is
 * stored with the state, so every worker's controller follows the same one. */
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "producer.h"
#include "rollout.h"
#include "util.h"

static void usage(void) {
  fprintf(stderr, "usage: sandq-producer rollout start CANDIDATE BASELINE | status | abort | clear\n");
}

static void show_window(sq_queue *q, const sq_config *cfg, const sq_rollout *r, const char *role, const char *name) {
  sq_metrics_window w;
  if (sq_metrics_read_window(q, &cfg->metrics, name, r->plan.window_s, sq_now_wall_ms(), &w) != 0) return;
  printf("%-9s %s: %.0f requests in the last %lld s, error rate %.1f%%, p95 %.0f ms\n", role, name, w.requests,
         (long long)r->plan.window_s, w.requests > 0 ? 100.0 * w.errors / w.requests : 0.0, w.p95_ms);
}

static int status(sq_queue *q, const sq_config *cfg) {
  sq_rollout r;
  int rc = sq_rollout_load(q, &r);
  if (rc == SQ_EPARSE) {
    printf("state: damaged\n");
    fprintf(stderr, "sandq-producer: rollout status: %s; workers use their configured weights meanwhile. Repair: "
            "`sandq-producer rollout abort` (rewrites it aborted, damaged fields at their defaults) or `rollout "
            "clear`\n", r.damage);
    return SQ_EXIT_ERROR;
  }
  if (rc) {
    fprintf(stderr, "sandq-producer: rollout status: %s\n", sq_queue_errstr(q));
    return SQ_EXIT_ERROR;
  }
  printf("state: %s\n", sq_rollout_state_name(r.state));
  if (r.state == SQ_ROLLOUT_NONE) return SQ_EXIT_OK;
  printf("candidate: %s\nbaseline: %s\npct: %d\nstage: %d (%s)\nreason: %s\nversion: %lld\n", r.candidate, r.baseline,
         r.pct, r.stage + 1, r.plan.stages, r.reason, (long long)r.version);
  printf("plan: hold %lld s, %lld requests per stage, judged over %lld s once %lld requests are in; roll back above "
         "%lld%% errors or baseline + %lld, p95 above baseline x %lld%% + %lld ms%s\n",
         (long long)r.plan.hold_s, (long long)r.plan.min_requests, (long long)r.plan.window_s,
         (long long)r.plan.min_samples, (long long)r.plan.max_error_pct, (long long)r.plan.error_margin_pct,
         (long long)r.plan.p95_ratio_pct, (long long)r.plan.p95_margin_ms, r.plan.max_p95_ms ? " or the cap" : "");
  show_window(q, cfg, &r, "candidate", r.candidate);
  show_window(q, cfg, &r, "baseline", r.baseline);
  return SQ_EXIT_OK;
}

int sq__rollout_run(const sq_config *cfg, int argc, char **argv) {
  const char *sub = argc > 0 ? argv[0] : "";
  bool start = strcmp(sub, "start") == 0 && argc == 3;
  bool other = (strcmp(sub, "status") == 0 || strcmp(sub, "abort") == 0 || strcmp(sub, "clear") == 0) && argc == 1;
  if (!start && !other) {
    usage();
    return SQ_EXIT_USAGE;
  }
  sq_queue *q = NULL;
  if (sq__open_queue(cfg, &q) != 0) return SQ_EXIT_ERROR;
  int code = SQ_EXIT_OK, rc = 0;
  char err[512] = "";
  if (start) {
    rc = sq_rollout_start(q, &cfg->rollout, argv[1], argv[2], sq_now_wall_ms(), err, sizeof err);
    if (rc == 0) printf("rollout of %s against %s started at %s%%\n", argv[1], argv[2], cfg->rollout.stages);
  } else if (strcmp(sub, "status") == 0) {
    code = status(q, cfg);
  } else if (strcmp(sub, "abort") == 0) {
    rc = sq_rollout_abort(q, "aborted by an operator", sq_now_wall_ms());
    if (rc == SQ_ENOTFOUND) snprintf(err, sizeof err, "no rollout is running");
    if (rc == 0) printf("rollout aborted: the candidate gets 0%%\n");
  } else {
    rc = sq_rollout_clear(q);
    if (rc == 0) printf("rollout cleared: workers use their configured weights\n");
  }
  if (rc) {
    fprintf(stderr, "sandq-producer: rollout %s: %s\n", sub, err[0] ? err : sq_queue_errstr(q));
    code = rc == SQ_ECONFIG || rc == SQ_EINVAL ? SQ_EXIT_USAGE : SQ_EXIT_ERROR;
  }
  sq_queue_free(q);
  return code;
}
