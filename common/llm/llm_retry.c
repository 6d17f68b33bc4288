/* llm_retry.c: the retry policy: what is worth another try (429, 5xx,
 * transport errors and timeouts; the same answer is the reply's transient
 * flag, for the caller's own later attempts), how long to wait (exponential backoff
 * with jitter, a provider's Retry-After honoured up to a cap), and what
 * counts against a provider's circuit breaker. Pure functions. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "llm_internal.h"

static bool transport_retryable(CURLcode rc) {
  switch (rc) {
  case CURLE_COULDNT_CONNECT:
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM: return true;
  default: return false;
  }
}

bool sq__llm_retryable(CURLcode rc, long http_status, bool too_big, const char **why) {
  *why = NULL;
  if (too_big) {
    *why = "not retried: the reply is over the size cap";
    return false;
  }
  if (rc != CURLE_OK) {
    if (transport_retryable(rc)) return true;
    *why = "not retried: a transport error another try would not fix";
    return false;
  }
  if (http_status == 429 || (http_status >= 500 && http_status <= 599)) return true;
  if (http_status >= 400 && http_status <= 499) {
    *why = "not retried: the provider refused the request itself (4xx other than 429)";
    return false;
  }
  if (http_status < 200 || http_status > 299) {
    *why = "not retried: unexpected HTTP status";
    return false;
  }
  return false;
}

bool sq__llm_transient(CURLcode rc, long http_status, bool too_big) {
  const char *why;
  return sq__llm_retryable(rc, http_status, too_big, &why);
}

bool sq__llm_start_failure_transient(int rc) { return rc == SQ_EHTTP; /* libcurl refused a handle; not our request */ }

bool sq__llm_provider_failure(CURLcode rc, long http_status) {
  if (rc != CURLE_OK) return transport_retryable(rc);
  return http_status == 429 || http_status >= 500;
}

int64_t sq__llm_backoff_ms(const sq_llm_options *o, int attempt, int64_t retry_after_ms, uint64_t rnd) {
  int64_t base = o->backoff_base_ms > 0 ? o->backoff_base_ms : 1;
  for (int i = 0; i < attempt && base < o->backoff_cap_ms; i++)
    base *= 2;
  if (base > o->backoff_cap_ms) base = o->backoff_cap_ms;
  int64_t delay = base / 2 + (int64_t)(rnd % (uint64_t)(base / 2 + 1));
  if (retry_after_ms >= 0) {
    int64_t ra = retry_after_ms < o->retry_after_cap_ms ? retry_after_ms : o->retry_after_cap_ms;
    if (ra > delay) delay = ra;
  }
  return delay;
}

int64_t sq__llm_parse_retry_after(const char *value, int64_t now_wall_ms) {
  if (!value) return -1;
  while (isspace((unsigned char)*value))
    value++;
  if (!*value) return -1;
  if (isdigit((unsigned char)*value)) {
    char *end;
    long long s = strtoll(value, &end, 10);
    while (isspace((unsigned char)*end))
      end++;
    if (*end || s < 0) return -1;
    if (s > 86400LL * 365) s = 86400LL * 365;
    return (int64_t)s * 1000;
  }
  time_t t = curl_getdate(value, NULL); /* RFC 7231 HTTP-date and its old forms */
  if (t == (time_t)-1) return -1;
  int64_t ms = (int64_t)t * 1000 - now_wall_ms;
  return ms > 0 ? ms : 0;
}
