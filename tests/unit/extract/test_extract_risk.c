/* test_extract_risk.c: the risk verdict out of an LLM reply
 * (sq_extract_risk, extract_risk.c) over a table of reply shapes: fenced,
 * wrapped in prose, nested, odd types and cases, and replies that are not a
 * verdict. */
#include <stdio.h>

#include "check.h"
#include "errors.h"
#include "extract.h"

typedef struct {
  const char *name, *content;
  int rc;
  sq_risk_level level;
  sq_risk_action action;
  double confidence;
} risk_case;

static const risk_case risk_cases[] = {
    {"plain", "{\"level\":\"high\",\"reason\":\"rm -rf\",\"action\":\"block\",\"confidence\":0.9}", 0, SQ_RISK_HIGH,
     SQ_RISK_BLOCK, 0.9},
    {"fenced json", "```json\n{\"level\": \"low\", \"reason\": \"ok\", \"action\": \"allow\", \"confidence\": 1}\n```", 0,
     SQ_RISK_LOW, SQ_RISK_ALLOW, 1},
    {"prose around", "Sure. {\"level\": \"medium\", \"action\": \"warn\", \"confidence\": 0.5} Hope it helps {x}", 0,
     SQ_RISK_MEDIUM, SQ_RISK_WARN, 0.5},
    {"upper case, confidence string", "{\"level\":\"CRITICAL\",\"action\":\" Block \",\"confidence\":\"0.75\"}", 0,
     SQ_RISK_CRITICAL, SQ_RISK_BLOCK, 0.75},
    {"percentage", "{\"level\":\"none\",\"action\":\"allow\",\"confidence\":85}", 0, SQ_RISK_NONE, SQ_RISK_ALLOW,
     0.85},
    {"numeric level, no action", "{\"level\":3,\"reason\":5}", 0, SQ_RISK_HIGH, SQ_RISK_BLOCK, -1},
    {"action only", "{\"action\":\"warn\"}", 0, SQ_RISK_MEDIUM, SQ_RISK_WARN, -1},
    {"nested under another key", "{\"verdict\": {\"level\": \"low\", \"action\": \"allow\"}}", 0, SQ_RISK_LOW,
     SQ_RISK_ALLOW, -1},
    {"confidence out of range clamps", "{\"level\":\"low\",\"action\":\"allow\",\"confidence\":-4}", 0, SQ_RISK_LOW,
     SQ_RISK_ALLOW, 0},
    {"wrong types everywhere", "{\"level\":[1],\"action\":true}", SQ_ELLM_REPLY, 0, 0, 0},
    {"unknown words", "{\"level\":\"severe\",\"action\":\"maybe\"}", SQ_ELLM_REPLY, 0, 0, 0},
    {"no json", "I think it is fine.", SQ_ELLM_REPLY, 0, 0, 0},
    {"broken json", "{\"level\": \"high\", ", SQ_ELLM_REPLY, 0, 0, 0},
    {"empty", "", SQ_ELLM_REPLY, 0, 0, 0},
};

static void test_risk_parse(void) {
  for (size_t i = 0; i < sizeof risk_cases / sizeof risk_cases[0]; i++) {
    const risk_case *c = &risk_cases[i];
    sq_risk_verdict v;
    char err[128] = "";
    int rc = sq_extract_risk(c->content, &v, err, sizeof err);
    if (rc != c->rc) fprintf(stderr, "case '%s'\n", c->name);
    CHECK_EQ(rc, c->rc);
    if (rc) {
      CHECK(err[0] != '\0');
      continue;
    }
    CHECK_EQ(v.level, c->level);
    CHECK_EQ(v.action, c->action);
    CHECK(v.confidence > c->confidence - 1e-9 && v.confidence < c->confidence + 1e-9);
  }
  sq_risk_verdict v;
  char err[64];
  CHECK_EQ(sq_extract_risk("{\"level\":\"low\",\"reason\":\"a\\nb\"}", &v, err, sizeof err), 0);
  CHECK_STR(v.reason, "a b"); /* one line */
}

int main(void) {
  test_risk_parse();
  return sq_check_done("test_reply_risk");
}
