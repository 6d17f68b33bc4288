/* test_llm_retry.c: the LLM client's retry policy (llm_retry.c): which
 * transport errors and HTTP statuses are retried and which count against a
 * provider, backoff with jitter and its caps, and Retry-After (seconds and
 * HTTP dates). */
#include "check.h"
#include "errors.h"
#include "llm_internal.h"

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
  CHECK_CONTAINS(why, "transport error another try would not fix");
  CHECK(sq__llm_retryable(CURLE_OK, 502, false, &why));
  CHECK(why == NULL); /* retried: no reason to refuse */
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

int main(void) {
  test_retryable();
  test_backoff();
  return sq_check_done("test_llm_retry");
}
