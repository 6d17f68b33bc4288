/* test_llm_policy.c: the pure parts of the LLM side: retry decisions,
 * backoff and Retry-After, the circuit breaker, the risk reply parser and
 * the block/warn/allow policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "errors.h"
#include "llm_internal.h"
#include "reply.h"
#include "risk.h"

static void test_retryable(void) {
  const char *why;
  CHECK(sq__llm_retryable(CURLE_OK, 429, false, &why));
  CHECK(sq__llm_retryable(CURLE_OK, 500, false, &why));
  CHECK(sq__llm_retryable(CURLE_OK, 503, false, &why));
  CHECK(sq__llm_retryable(CURLE_OPERATION_TIMEDOUT, 0, false, &why));
  CHECK(sq__llm_retryable(CURLE_COULDNT_CONNECT, 0, false, &why));
  CHECK(sq__llm_retryable(CURLE_RECV_ERROR, 0, false, &why));
  CHECK(!sq__llm_retryable(CURLE_OK, 400, false, &why));
  CHECK_CONTAINS(why, "4xx other than 429");
  CHECK(!sq__llm_retryable(CURLE_OK, 401, false, &why));
  CHECK(!sq__llm_retryable(CURLE_OK, 200, true, &why));
  CHECK_CONTAINS(why, "size cap");
  CHECK(!sq__llm_retryable(CURLE_UNSUPPORTED_PROTOCOL, 0, false, &why));
  CHECK(why != NULL);
  CHECK(sq__llm_provider_failure(CURLE_OK, 503));
  CHECK(sq__llm_provider_failure(CURLE_OK, 429));
  CHECK(!sq__llm_provider_failure(CURLE_OK, 400));
  CHECK(!sq__llm_provider_failure(CURLE_OK, 200));
}

static void test_backoff(void) {
  sq_llm_options o;
  sq_llm_options_defaults(&o);
  o.backoff_base_ms = 100;
  o.backoff_cap_ms = 1000;
  o.retry_after_cap_ms = 5000;
  for (uint64_t r = 0; r < 200; r += 7) {
    int64_t d0 = sq__llm_backoff_ms(&o, 0, -1, r), d3 = sq__llm_backoff_ms(&o, 3, -1, r);
    CHECK(d0 >= 50 && d0 <= 100);
    CHECK(d3 >= 400 && d3 <= 800);
    CHECK(sq__llm_backoff_ms(&o, 20, -1, r) <= 1000);
  }
  CHECK_EQ(sq__llm_backoff_ms(&o, 0, 3000, 0), 3000);   /* honoured */
  CHECK_EQ(sq__llm_backoff_ms(&o, 0, 60000, 0), 5000);  /* capped */
  CHECK_EQ(sq__llm_parse_retry_after("7", 0), 7000);
  CHECK_EQ(sq__llm_parse_retry_after(" 0 ", 0), 0);
  CHECK_EQ(sq__llm_parse_retry_after("soon", 0), -1);
  CHECK_EQ(sq__llm_parse_retry_after("-3", 0), -1);
  /* An HTTP date 1994: from a "now" 10 s before it. */
  int64_t when_ms = (int64_t)784111777 * 1000;
  CHECK_EQ(sq__llm_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", when_ms - 10000), 10000);
  CHECK_EQ(sq__llm_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", when_ms + 10000), 0);
}

static void test_breaker(void) {
  sq_llm_options o;
  sq_llm_options_defaults(&o);
  o.breaker_window_ms = 1000;
  o.breaker_min_samples = 4;
  o.breaker_error_pct = 50;
  o.breaker_open_ms = 500;
  sq__breaker b;
  sq__breaker_init(&b, &o);
  int64_t t = 10000;
  /* Below the minimum sample: never opens, even at 100% failures. */
  for (int i = 0; i < 3; i++)
    sq__breaker_record(&b, t, true);
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED);
  sq__breaker_record(&b, t, true);
  CHECK_EQ(b.state, SQ__BREAKER_OPEN);
  CHECK(!sq__breaker_available(&b, t + 100));
  /* Half-open after the cool-down: exactly one probe. */
  CHECK(sq__breaker_available(&b, t + 500));
  sq__breaker_acquire(&b, t + 500);
  CHECK_EQ(b.state, SQ__BREAKER_HALF_OPEN);
  CHECK(!sq__breaker_available(&b, t + 501));
  sq__breaker_record(&b, t + 600, true); /* the probe failed: open again */
  CHECK_EQ(b.state, SQ__BREAKER_OPEN);
  CHECK(!sq__breaker_available(&b, t + 700));
  sq__breaker_acquire(&b, t + 1200);
  sq__breaker_record(&b, t + 1300, false); /* the probe succeeded: closed, fresh */
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED);
  for (int i = 0; i < SQ__BREAKER_SLICES; i++) CHECK_EQ(b.slice[i].n, 0);
  /* Old failures fall out of the window. */
  t = 50000;
  sq__breaker_record(&b, t, true);
  sq__breaker_record(&b, t, true);
  sq__breaker_record(&b, t + 2000, false);
  sq__breaker_record(&b, t + 2000, true);
  sq__breaker_record(&b, t + 2000, false);
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED); /* 1 of 3 in the window */
  sq__breaker_record(&b, t + 2000, false);
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED); /* 1 of 4: 25% */
  sq__breaker_record(&b, t + 2000, true);
  sq__breaker_record(&b, t + 2000, true);
  CHECK_EQ(b.state, SQ__BREAKER_OPEN);   /* 3 of 6: 50% */

  /* The window is time, not a number of exchanges: at a high rate, 1,000
   * successes of the last two seconds still count against 999 failures
   * (under 50%), and the 1,000th failure (50%) opens it. A window of the
   * last 256 exchanges would have opened at about the 128th. */
  o.breaker_window_ms = 10000;
  sq__breaker_init(&b, &o);
  t = 100000;
  for (int i = 0; i < 1000; i++) sq__breaker_record(&b, t + i, false);
  for (int i = 0; i < 999; i++) sq__breaker_record(&b, t + 1000 + i / 2, true);
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED);
  sq__breaker_record(&b, t + 1600, true);
  CHECK_EQ(b.state, SQ__BREAKER_OPEN);
}

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
    int rc = sq_reply_parse_risk(c->content, &v, err, sizeof err);
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
  CHECK_EQ(sq_reply_parse_risk("{\"level\":\"low\",\"reason\":\"a\\nb\"}", &v, err, sizeof err), 0);
  CHECK_STR(v.reason, "a b"); /* one line */
}

static void test_policy(void) {
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
  test_retryable();
  test_backoff();
  test_breaker();
  test_risk_parse();
  test_policy();
  return sq_check_done("test_llm_policy");
}
