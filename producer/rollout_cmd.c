/* rollout_cmd.c: `sandq-producer rollout start [--force] CANDIDATE BASELINE
 * | status | abort | clear`: the operator's side of the gradual provider
 * rollout. The plan comes from this command's configuration (rollout_*
 * keys) and is stored with the state, so every worker's controller follows
 * the same one. start refuses providers no live worker has configured
 * (their health records name them) unless --force. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "health.h"
#include "producer.h"
#include "rollout.h"
#include "util.h"

static void usage(void) {
  fprintf(stderr, "usage: sandq-producer rollout start [--force] CANDIDATE BASELINE | status | abort | clear\n");
}

static void show_window(sq_queue *q, const sq_config *cfg, const sq_rollout *r, const char *role, const char *name,
                        sq_metrics_window *w) {
  if (sq_metrics_read_window(q, &cfg->metrics, name, r->plan.window_s, 0, sq_now_wall_ms(), w) != 0) return;
  printf("%-9s %s: %.0f requests in the last %lld s, error rate %.1f%%, p95 %.0f ms\n", role, name, w->requests,
         (long long)r->plan.window_s, w->requests > 0 ? 100.0 * w->errors / w->requests : 0.0, w->p95_ms);
}

static int print_stage(int stage, const char *text, void *ud) {
  (void)ud;
  printf("stage %d: %s\n", stage, text);
  return 0;
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
  sq_rollout_log_each(q, print_stage, NULL);
  sq_rollout_input in = {.now_ms = sq_now_wall_ms()};
  show_window(q, cfg, &r, "candidate", r.candidate, &in.cand);
  show_window(q, cfg, &r, "baseline", r.baseline, &in.base);
  if (r.state == SQ_ROLLOUT_RUNNING && sq_metrics_read_requests(q, r.candidate, &in.cand_requests_total) == 0) {
    char why[256];
    sq_rollout_decide(&r, &in, why, sizeof why); /* what the controller would decide now; nothing is written */
    printf("now: %s\n", why);
  }
  return SQ_EXIT_OK;
}

/* ---- which providers the live workers have ---- */

#define MAX_NAMES 64

typedef struct {
  const char *candidate, *baseline;
  int64_t now_ms, stale_ms;
  int live, with_both;
  char names[MAX_NAMES][64];
  int count[MAX_NAMES], n;
} fleet_view;

static int on_health(const char *id, const sq_health *h, const char *err, void *ud) {
  (void)id, (void)err;
  fleet_view *v = ud;
  if (!h || v->now_ms - h->updated_ms > v->stale_ms) return 0; /* unreadable or not live */
  v->live++;
  bool c = false, b = false;
  for (int i = 0; i < h->n_breakers; i++) { /* one breaker per configured provider */
    const char *p = h->breakers[i].provider;
    c = c || strcmp(p, v->candidate) == 0;
    b = b || strcmp(p, v->baseline) == 0;
    int k = 0;
    while (k < v->n && strcmp(v->names[k], p) != 0) k++;
    if (k == v->n && v->n < MAX_NAMES) snprintf(v->names[v->n++], sizeof v->names[0], "%s", p);
    if (k < v->n) v->count[k]++;
  }
  v->with_both += c && b;
  return 0;
}

static int on_worker(const char *id, int64_t at_ms, void *ud) {
  (void)id, (void)at_ms, (void)ud;
  return 0;
}

/* 0 when some live worker has both providers; else explains on stderr and
 * returns SQ_EXIT_ERROR. */
static int check_fleet(sq_queue *q, const sq_config *cfg, const char *candidate, const char *baseline) {
  fleet_view v = {.candidate = candidate, .baseline = baseline, .stale_ms = cfg->health_stale_ms};
  int rc = sq_queue_workers(q, on_worker, NULL, &v.now_ms); /* the server's clock, as health judges */
  if (!rc) rc = sq_health_each(q, on_health, &v);
  if (rc) {
    fprintf(stderr, "sandq-producer: rollout start: reading the workers' health: %s\n", sq_queue_errstr(q));
    return SQ_EXIT_ERROR;
  }
  if (v.with_both > 0) return 0;
  char have[1024] = "";
  size_t off = 0;
  for (int k = 0; k < v.n; k++)
    off += (size_t)snprintf(have + off, off < sizeof have ? sizeof have - off : 0, "%s%s (%d worker%s)",
                            k ? ", " : "", v.names[k], v.count[k], v.count[k] == 1 ? "" : "s");
  if (v.live == 0)
    fprintf(stderr, "sandq-producer: rollout start: no live worker reports its providers, so none has '%s' and '%s' "
                    "configured (start the workers first, or --force)\n", candidate, baseline);
  else
    fprintf(stderr, "sandq-producer: rollout start: no live worker has both '%s' and '%s' configured; the %d live "
                    "worker(s) have: %s (use --force to start anyway)\n", candidate, baseline, v.live,
            v.n ? have : "no provider");
  return SQ_EXIT_ERROR;
}

int sq__rollout_run(const sq_config *cfg, const sq_cli *cli) {
  bool force = sq_cli_get(cli, "force") != NULL;
  size_t argc = cli->n_operands;
  char **argv = cli->operands;
  const char *sub = argc > 0 ? argv[0] : "";
  bool start = strcmp(sub, "start") == 0 && argc == 3;
  bool other = (strcmp(sub, "status") == 0 || strcmp(sub, "abort") == 0 || strcmp(sub, "clear") == 0) && argc == 1;
  if ((!start && !other) || (force && !start)) {
    usage();
    return SQ_EXIT_USAGE;
  }
  sq_queue *q = NULL;
  if (sq__open_queue(cfg, &q) != 0) return SQ_EXIT_ERROR;
  int code = SQ_EXIT_OK, rc = 0;
  char err[512] = "";
  /* (a provider against itself is refused below, naming the mistake) */
  if (start && !force && strcmp(argv[1], argv[2]) != 0 && (code = check_fleet(q, cfg, argv[1], argv[2])) != 0) {
    sq_queue_free(q);
    return code;
  }
  if (start) {
    rc = sq_rollout_start(q, &cfg->rollout, argv[1], argv[2], sq_now_wall_ms(), err, sizeof err);
    if (rc == 0) printf("rollout of %s against %s started at %s%%%s\n", argv[1], argv[2], cfg->rollout.stages,
                        force ? " (--force: the live workers were not asked)" : "");
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
