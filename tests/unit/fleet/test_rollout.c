/* test_rollout.c: the pure parts of a staged rollout: stage lists, every
 * branch of the decision (advance, hold, roll back on each bound) and
 * applying a decision. The Redis side (state, the controller) is tested by
 * tests/integration/rollout.sh. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "rollout.h"

static void test_stages(void) {
  int pct[SQ_ROLLOUT_MAX_STAGES], n;
  CHECK_EQ(sq_rollout_stages_parse("10,30,70,100", pct, &n), 0);
  CHECK_EQ(n, 4);
  CHECK_EQ(pct[1], 30);
  CHECK_EQ(sq_rollout_stages_parse("100", pct, &n), 0);
  CHECK_EQ(sq_rollout_stages_parse("10, 30 ,100", pct, &n), 0);
  CHECK_EQ(sq_rollout_stages_parse("", pct, &n), SQ_EINVAL);
  CHECK_EQ(sq_rollout_stages_parse("10,10,100", pct, &n), SQ_EINVAL);
  CHECK_EQ(sq_rollout_stages_parse("10,50", pct, &n), SQ_EINVAL);
  CHECK_EQ(sq_rollout_stages_parse("10,101", pct, &n), SQ_EINVAL);
  CHECK_EQ(sq_rollout_stages_parse("1,2,3,4,5,6,7,8,100", pct, &n), SQ_EINVAL);
}

/* A running rollout at stage 0 (10 %), started at t = 0 with 0 requests. */
static sq_rollout running(void) {
  sq_rollout r = {.state = SQ_ROLLOUT_RUNNING, .pct = 10, .stage = 0, .version = 3};
  sq_rollout_plan_defaults(&r.plan);
  r.plan.hold_s = 60;
  r.plan.min_requests = 100;
  r.plan.min_samples = 20;
  snprintf(r.candidate, sizeof r.candidate, "cand");
  snprintf(r.baseline, sizeof r.baseline, "base");
  return r;
}

/* Healthy figures at t = 61 s: 200 candidate requests at this stage. */
static sq_rollout_input healthy(void) {
  return (sq_rollout_input){.cand = {.requests = 50, .errors = 1, .p95_ms = 300},
                            .base = {.requests = 450, .errors = 9, .p95_ms = 280},
                            .cand_requests_total = 200,
                            .now_ms = 61000};
}

static void expect(const sq_rollout *r, const sq_rollout_input *in, sq_rollout_action want, const char *needle) {
  char why[256];
  sq_rollout_action got = sq_rollout_decide(r, in, why, sizeof why);
  CHECK_EQ(got, want);
  CHECK_CONTAINS(why, needle);
}

static void test_decide(void) {
  sq_rollout r = running();
  sq_rollout_input in = healthy();
  expect(&r, &in, SQ_ROLLOUT_ADVANCE, "healthy at 10%");
  /* hold time, stage requests and window samples each hold it back */
  in.now_ms = 30000;
  expect(&r, &in, SQ_ROLLOUT_HOLD, "30/60 s");
  in = healthy();
  in.cand_requests_total = 99;
  expect(&r, &in, SQ_ROLLOUT_HOLD, "99/100 requests");
  in = healthy();
  in.cand.requests = 19, in.cand.errors = 19; /* all failing, but too few to judge */
  expect(&r, &in, SQ_ROLLOUT_HOLD, "19/20 in the window");
  /* absolute error bound */
  in = healthy();
  in.cand.errors = 6; /* 12 % > 10 % */
  expect(&r, &in, SQ_ROLLOUT_ROLLBACK, "above the bound of 10%");
  /* relative error bound: baseline 2 %, margin 2 -> 5 % is too much */
  in = healthy();
  in.cand.errors = 2.5;
  expect(&r, &in, SQ_ROLLOUT_ROLLBACK, "above the baseline's 2.0% + 2");
  /* relative p95: 280 x 1.5 + 100 = 520 */
  in = healthy();
  in.cand.p95_ms = 521;
  expect(&r, &in, SQ_ROLLOUT_ROLLBACK, "p95 521 ms is above the baseline's 280 ms");
  in.cand.p95_ms = 519;
  expect(&r, &in, SQ_ROLLOUT_ADVANCE, "healthy");
  /* ...which needs baseline samples to apply */
  in.cand.p95_ms = 5000;
  in.base.requests = 0, in.base.errors = 0;
  expect(&r, &in, SQ_ROLLOUT_ADVANCE, "healthy");
  /* absolute p95 cap */
  r.plan.max_p95_ms = 4000;
  expect(&r, &in, SQ_ROLLOUT_ROLLBACK, "p95 5000 ms is above the bound of 4000 ms");
  /* not running: nothing to decide */
  r = running();
  r.state = SQ_ROLLOUT_ROLLED_BACK;
  in = healthy();
  in.cand.errors = 50;
  expect(&r, &in, SQ_ROLLOUT_HOLD, "not running");
}

static void test_apply(void) {
  sq_rollout r = running();
  sq_rollout_input in = healthy();
  int want[] = {30, 70, 100};
  for (int i = 0; i < 3; i++) {
    sq_rollout_apply(&r, SQ_ROLLOUT_ADVANCE, &in, "ok");
    CHECK_EQ(r.pct, want[i]);
    CHECK_EQ(r.state, SQ_ROLLOUT_RUNNING);
    CHECK_EQ(r.stage_started_ms, in.now_ms);
    CHECK_EQ((long long)r.stage_requests0, 200);
  }
  sq_rollout_apply(&r, SQ_ROLLOUT_ADVANCE, &in, "all good");
  CHECK_EQ(r.state, SQ_ROLLOUT_DONE);
  CHECK_EQ(r.pct, 100);
  CHECK_STR(r.reason, "all good");
  r = running();
  sq_rollout_apply(&r, SQ_ROLLOUT_HOLD, &in, "x");
  CHECK_EQ(r.pct, 10);
  sq_rollout_apply(&r, SQ_ROLLOUT_ROLLBACK, &in, "bad");
  CHECK_EQ(r.pct, 0);
  CHECK_EQ(r.state, SQ_ROLLOUT_ROLLED_BACK);
  CHECK_STR(sq_rollout_state_name(r.state), "rolled_back");
}

int main(void) {
  test_stages();
  test_decide();
  test_apply();
  return sq_check_done("test_rollout");
}
