/* test_risk.c: the block/warn/allow decision on a risk verdict (risk.c):
 * level and action against the policy, the fallback when there is no
 * verdict, the cache form and the code's digest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "risk.h"

static void test_decide(void) {
  sq_risk_policy p = {.block_level = SQ_RISK_HIGH, .fallback = SQ_RISK_WARN};
  sq_risk_verdict v = {.level = SQ_RISK_CRITICAL, .action = SQ_RISK_ALLOW};
  CHECK_EQ(sq_risk_decide(&v, SQ_RISK_FROM_MODEL, &p), SQ_RISK_BLOCK); /* level wins */
  v = (sq_risk_verdict){.level = SQ_RISK_NONE, .action = SQ_RISK_BLOCK};
  CHECK_EQ(sq_risk_decide(&v, SQ_RISK_FROM_MODEL, &p), SQ_RISK_BLOCK); /* action wins */
  v = (sq_risk_verdict){.level = SQ_RISK_MEDIUM, .action = SQ_RISK_ALLOW};
  CHECK_EQ(sq_risk_decide(&v, SQ_RISK_FROM_CACHE, &p), SQ_RISK_WARN);
  v = (sq_risk_verdict){.level = SQ_RISK_LOW, .action = SQ_RISK_ALLOW};
  CHECK_EQ(sq_risk_decide(&v, SQ_RISK_FROM_MODEL, &p), SQ_RISK_ALLOW);
  p.block_level = SQ_RISK_MEDIUM;
  v = (sq_risk_verdict){.level = SQ_RISK_MEDIUM, .action = SQ_RISK_ALLOW};
  CHECK_EQ(sq_risk_decide(&v, SQ_RISK_FROM_MODEL, &p), SQ_RISK_BLOCK);
  sq_risk_result r;
  sq_risk_fallback(&r, "timeout", &p);
  CHECK_EQ(r.decision, SQ_RISK_WARN);
  CHECK_EQ(r.source, SQ_RISK_FROM_FALLBACK);
  CHECK_CONTAINS(r.v.reason, "timeout");
  p.fallback = SQ_RISK_BLOCK;
  sq_risk_fallback(&r, "unparsable", &p);
  CHECK_EQ(r.decision, SQ_RISK_BLOCK);

  /* The cache form round-trips; a foreign entry is refused. */
  v = (sq_risk_verdict){.level = SQ_RISK_HIGH, .action = SQ_RISK_WARN, .confidence = 0.25};
  snprintf(v.reason, sizeof v.reason, "opens \"sockets\"");
  char *json = sq_risk_to_json(&v);
  sq_risk_verdict back;
  CHECK_EQ(sq_risk_from_json(json, strlen(json), &back), 0);
  CHECK_EQ(back.level, SQ_RISK_HIGH);
  CHECK_EQ(back.action, SQ_RISK_WARN);
  CHECK_STR(back.reason, v.reason);
  free(json);
  CHECK_EQ(sq_risk_from_json("{\"level\":1}", 11, &back), SQ_EPARSE);

  char hex[65];
  sq_risk_code_sha256("abc", 3, hex);
  CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

int main(void) {
  test_decide();
  return sq_check_done("test_risk");
}
