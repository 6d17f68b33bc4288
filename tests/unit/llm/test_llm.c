/* test_llm.c: the LLM client against the fake LLM over real loopback HTTP.
 * Run by tests/integration/llm_client.sh, which starts the fake with
 * tests/fake_llm/test-replies.jsonl and exports SANDQ_LLM_BASE_URL. Each
 * case uses its own "[t:...]" match string so the rules do not interfere. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "llm.h"
#include "log.h"
#include "extract.h"
#include "risk.h"
#include "util.h"

#define TEST_KEY "sk-test-123"
#define PRICE_IN 2.5
#define PRICE_OUT 10.0

static const char *base_url;

static sq_llm_provider provider(const char *name, const char *url) {
  sq_llm_provider p;
  memset(&p, 0, sizeof p);
  snprintf(p.name, sizeof p.name, "%s", name);
  snprintf(p.base_url, sizeof p.base_url, "%s", url);
  snprintf(p.model, sizeof p.model, "fake-coder");
  p.price_in_usd_per_mtok = PRICE_IN;
  p.price_out_usd_per_mtok = PRICE_OUT;
  p.timeout_ms = 5000;
  p.max_retries = 0;
  p.max_in_flight = 1;
  p.weight = 1;
  return p;
}

static int64_t ceil4(size_t chars) { return chars == 0 ? 1 : (int64_t)((chars + 3) / 4); }

static size_t on_stats(char *ptr, size_t size, size_t nmemb, void *ud) {
  return sq_buf_append(ud, ptr, size * nmemb) == 0 ? size * nmemb : 0;
}

/* GET /stats from the fake; returns the parsed object (caller deletes) or NULL. */
static cJSON *fetch_stats(void) {
  char url[600];
  size_t n = strlen(base_url);
  if (n >= 3 && strcmp(base_url + n - 3, "/v1") == 0) n -= 3;
  snprintf(url, sizeof url, "%.*s/stats", (int)n, base_url);
  sq_buf b = {0};
  CURL *h = curl_easy_init();
  if (!h) return NULL;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stats);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
  CURLcode rc = curl_easy_perform(h);
  curl_easy_cleanup(h);
  cJSON *j = rc == CURLE_OK && b.data ? cJSON_Parse(b.data) : NULL;
  sq_buf_clear(&b);
  CHECK(j != NULL);
  return j;
}

static int64_t stat_auth(void) {
  cJSON *j = fetch_stats();
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "authorization_headers");
  int64_t n = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
  cJSON_Delete(j);
  return n;
}

static int64_t stat_hits(const char *match) {
  cJSON *j = fetch_stats();
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "hits"), match);
  int64_t n = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
  cJSON_Delete(j);
  return n;
}

/* The retry observer: the client logs nothing, so the test logs each retry
 * (llm_client.sh greps the log: the key must be in no line) and counts them. */
static int retries_seen;
static void on_retry(const sq_llm_retry_note *n, void *ud) {
  (void)ud;
  retries_seen++;
  SQ_LOGT(SQ_LOG_WARN, n->task_id, "%s; retry %d/%d in %lld ms (provider %s)", n->error, n->attempt,
          n->max_retries, (long long)n->delay_ms, n->provider);
}

/* One call through a fresh single-provider client. */
static int call(const sq_llm_provider *p, const char *system, const char *user, sq_llm_reply *r) {
  sq_llm *c = NULL;
  char err[256];
  int rc = sq_llm_new(p, 1, &c, err, sizeof err);
  CHECK_EQ(rc, 0);
  if (rc != 0) return rc;
  sq_llm_set_retry_observer(c, on_retry, NULL);
  rc = sq_llm_complete(c, system, user, "task-test", r);
  sq_llm_free(c);
  return rc;
}

static void test_new_invalid(void) {
  sq_llm *c = (sq_llm *)1;
  sq_llm_provider p = provider("p", base_url);
  char err[256];
  CHECK_EQ(sq_llm_new(&p, 0, &c, err, sizeof err), SQ_EINVAL);
  CHECK(c == NULL);
  CHECK_STR(err, "no provider configured");
  p.model[0] = '\0';
  CHECK_EQ(sq_llm_new(&p, 1, &c, err, sizeof err), SQ_EINVAL);
  CHECK_STR(err, "provider 0 ('p') needs base_url and model");
  p = provider("p", "");
  CHECK_EQ(sq_llm_new(&p, 1, &c, NULL, 0), SQ_EINVAL);
  p = provider("p", base_url);
  p.weight = 0;
  CHECK_EQ(sq_llm_new(&p, 1, &c, err, sizeof err), SQ_EINVAL);
  CHECK_STR(err, "no provider has a positive weight");
  sq_llm_free(NULL);
  sq_llm_reply r = {0};
  sq_llm_reply_clear(&r);
}

static void test_normal(void) {
  const char *sys = "You write Python.";
  const char *user = "[t:normal] compute six times seven";
  sq_llm_provider p = provider("fake", base_url);
  sq_llm_reply r = {0};
  CHECK_EQ(call(&p, sys, user, &r), 0);
  CHECK_STR(r.error, "");
  CHECK_CONTAINS(r.content, "```python\nprint(6 * 7)\n```");
  CHECK_EQ(r.http_status, 200);
  CHECK_STR(r.provider, "fake");
  CHECK_STR(r.model, "fake-coder");
  CHECK(!r.usage_estimated);
  /* The fake counts ceil(chars/4) of every message and of the reply. */
  int64_t pt = ceil4(strlen(sys) + strlen(user)), ct = ceil4(strlen(r.content ? r.content : ""));
  CHECK_EQ(r.prompt_tokens, pt);
  CHECK_EQ(r.completion_tokens, ct);
  double want_cost = (double)pt * PRICE_IN / 1e6 + (double)ct * PRICE_OUT / 1e6;
  CHECK(r.cost_usd > 0 && fabs(r.cost_usd - want_cost) < 1e-12);
  CHECK(r.latency_ms >= 0 && r.latency_ms < 5000);

  char *code = NULL;
  char err[64];
  CHECK_EQ(sq_extract_code(r.content, "python", &code, err, sizeof err), 0);
  CHECK_STR(code, "print(6 * 7)\n");
  free(code);
  sq_llm_reply_clear(&r);
  CHECK(r.content == NULL);

  /* No system message, and a base_url with a trailing slash. */
  char url[600];
  snprintf(url, sizeof url, "%s/", base_url);
  p = provider("slash", url);
  CHECK_EQ(call(&p, NULL, user, &r), 0);
  CHECK_EQ(r.prompt_tokens, ceil4(strlen(user)));
  sq_llm_reply_clear(&r);
}

static void check_no_key(const sq_llm_reply *r) {
  CHECK(!r->content || !strstr(r->content, TEST_KEY));
  CHECK(!strstr(r->error, TEST_KEY));
  CHECK(!strstr(r->provider, TEST_KEY));
  CHECK(!strstr(r->model, TEST_KEY));
}

static void test_key(void) {
  setenv("SQ_TEST_KEY", TEST_KEY, 1);
  sq_llm_provider p = provider("keyed", base_url);
  snprintf(p.api_key_env, sizeof p.api_key_env, "SQ_TEST_KEY");
  sq_llm_reply r = {0};
  int64_t before = stat_auth();
  CHECK_EQ(call(&p, NULL, "[t:key] hello", &r), 0);
  CHECK_STR(r.content, "key test reply");
  CHECK_EQ(stat_auth(), before + 1);
  check_no_key(&r);
  sq_llm_reply_clear(&r);

  /* The provider echoes the key in its error: it must not reach us. */
  CHECK_EQ(call(&p, NULL, "[t:key-echo] hello", &r), SQ_ELLM);
  CHECK_CONTAINS(r.error, "HTTP 401");
  CHECK_CONTAINS(r.error, "Incorrect API key provided: ***");
  check_no_key(&r);
  sq_llm_reply_clear(&r);

  /* An unset or empty key variable sends no Authorization header. */
  before = stat_auth();
  snprintf(p.api_key_env, sizeof p.api_key_env, "SQ_TEST_KEY_UNSET");
  unsetenv("SQ_TEST_KEY_UNSET");
  CHECK_EQ(call(&p, NULL, "[t:key] hello", &r), 0);
  sq_llm_reply_clear(&r);
  setenv("SQ_TEST_KEY_EMPTY", "", 1);
  snprintf(p.api_key_env, sizeof p.api_key_env, "SQ_TEST_KEY_EMPTY");
  CHECK_EQ(call(&p, NULL, "[t:key] hello", &r), 0);
  sq_llm_reply_clear(&r);
  CHECK_EQ(stat_auth(), before);
}

static void test_retries(void) {
  sq_llm_provider p = provider("retry", base_url);
  sq_llm_reply r = {0};

  p.max_retries = 3;
  retries_seen = 0;
  CHECK_EQ(call(&p, NULL, "[t:500x2] go", &r), 0);
  CHECK_EQ(retries_seen, 2); /* the observer saw each retry */
  CHECK_STR(r.content, "recovered after two 500s");
  CHECK_EQ(r.http_status, 200);
  CHECK_EQ(stat_hits("[t:500x2]"), 3);
  sq_llm_reply_clear(&r);

  p.max_retries = 2;
  CHECK_EQ(call(&p, NULL, "[t:503-always] go", &r), SQ_ELLM);
  CHECK_CONTAINS(r.error, "HTTP 503 from provider 'retry'");
  CHECK_CONTAINS(r.error, "after 3 HTTP requests");
  CHECK_EQ(r.http_status, 503);
  CHECK(r.content == NULL);
  CHECK_EQ(stat_hits("[t:503-always]"), 3);
  sq_llm_reply_clear(&r);

  p.max_retries = 3;
  int64_t t0 = sq_now_mono_ms();
  CHECK_EQ(call(&p, NULL, "[t:429] go", &r), 0);
  int64_t took = sq_now_mono_ms() - t0;
  CHECK_STR(r.content, "served after Retry-After");
  CHECK(took >= 1000);
  CHECK(r.latency_ms >= 1000);
  CHECK(took < 3000);
  CHECK_EQ(stat_hits("[t:429]"), 2);
  sq_llm_reply_clear(&r);

  CHECK_EQ(call(&p, NULL, "[t:400] go", &r), SQ_ELLM);
  CHECK_CONTAINS(r.error, "HTTP 400 from provider 'retry': the prompt is not acceptable");
  CHECK(!strstr(r.error, "attempts"));
  CHECK_EQ(r.http_status, 400);
  CHECK_EQ(stat_hits("[t:400]"), 1); /* not retried */
  sq_llm_reply_clear(&r);

  p.max_retries = 1;
  CHECK_EQ(call(&p, NULL, "[t:reset-once] go", &r), 0);
  CHECK_STR(r.content, "recovered after a reset");
  CHECK_EQ(stat_hits("[t:reset-once]"), 2);
  sq_llm_reply_clear(&r);
}

static void test_bad_replies(void) {
  sq_llm_provider p = provider("bad", base_url);
  sq_llm_reply r = {0};

  CHECK_EQ(call(&p, NULL, "[t:malformed] go", &r), SQ_ELLM_REPLY);
  CHECK_CONTAINS(r.error, "not JSON");
  CHECK(r.content == NULL);
  CHECK_EQ(r.http_status, 200);
  sq_llm_reply_clear(&r);

  const char *sys = "sys", *user = "[t:no-usage] go";
  CHECK_EQ(call(&p, sys, user, &r), 0);
  CHECK_STR(r.content, "0123456789");
  CHECK(r.usage_estimated);
  CHECK_EQ(r.prompt_tokens, ceil4(strlen(sys) + strlen(user)));
  CHECK_EQ(r.completion_tokens, 3);
  CHECK(fabs(r.cost_usd - ((double)r.prompt_tokens * PRICE_IN + 3 * PRICE_OUT) / 1e6) < 1e-12);
  sq_llm_reply_clear(&r);

  CHECK_EQ(call(&p, NULL, "[t:empty] go", &r), 0);
  CHECK_STR(r.content, "");
  sq_llm_reply_clear(&r);

  /* 9 MiB of content: over the 8 MiB cap, an error and not retried. */
  p.max_retries = 2;
  CHECK_EQ(call(&p, NULL, "[t:huge] go", &r), SQ_ELLM_REPLY);
  CHECK_CONTAINS(r.error, "exceeds 8 MiB");
  CHECK(r.content == NULL);
  CHECK_EQ(stat_hits("[t:huge]"), 1);
  sq_llm_reply_clear(&r);
  p.max_retries = 0;

  CHECK_EQ(call(&p, NULL, "[t:truncated] go", &r), SQ_EHTTP);
  CHECK(r.error[0] != '\0');
  CHECK(r.content == NULL);
  sq_llm_reply_clear(&r);

  p.max_retries = 1;
  int64_t hits = stat_hits("[t:reset]");
  CHECK_EQ(call(&p, NULL, "[t:reset] go", &r), SQ_EHTTP);
  CHECK_CONTAINS(r.error, "provider 'bad'");
  CHECK_CONTAINS(r.error, "after 2 HTTP requests");
  CHECK_EQ(stat_hits("[t:reset]"), hits + 2);
  sq_llm_reply_clear(&r);
}

static void test_timeouts_and_refused(void) {
  sq_llm_provider p = provider("hang", base_url);
  sq_llm_reply r = {0};
  p.timeout_ms = 500;
  p.max_retries = 0;
  int64_t t0 = sq_now_mono_ms();
  CHECK_EQ(call(&p, NULL, "[t:hang] go", &r), SQ_EHTTP);
  int64_t took = sq_now_mono_ms() - t0;
  CHECK(took >= 450 && took < 1500);
  CHECK_CONTAINS(r.error, "provider 'hang'");
  CHECK_EQ(r.http_status, 0);
  sq_llm_reply_clear(&r);

  /* A slow but timely reply is fine, and latency shows it. */
  p.timeout_ms = 5000;
  CHECK_EQ(call(&p, NULL, "[t:slow] go", &r), 0);
  CHECK(r.latency_ms >= 300);
  sq_llm_reply_clear(&r);

  /* A port nobody listens on: bound, then released. */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof sa;
  CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
  close(fd);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", ntohs(sa.sin_port));
  p = provider("closed", url);
  t0 = sq_now_mono_ms();
  CHECK_EQ(call(&p, NULL, "[t:normal] go", &r), SQ_EHTTP);
  CHECK(sq_now_mono_ms() - t0 < 1000);
  CHECK_CONTAINS(r.error, "provider 'closed'");
  CHECK_EQ(r.http_status, 0);
  sq_llm_reply_clear(&r);
}

static void test_weights(void) {
  /* weight 0 is never chosen: it points at a dead port. */
  sq_llm_provider ps[3] = {provider("never", "http://127.0.0.1:9/v1"), provider("a", base_url),
                           provider("b", base_url)};
  ps[0].weight = 0;
  ps[1].weight = 1;
  ps[2].weight = 3;
  sq_llm *c = NULL;
  CHECK_EQ(sq_llm_new(ps, 3, &c, NULL, 0), 0);
  int n_a = 0, n_b = 0, n_fail = 0;
  for (int i = 0; i < 60; i++) {
    sq_llm_reply r = {0};
    if (sq_llm_complete(c, NULL, "[t:weights] go", "task-w", &r) != 0) n_fail++;
    if (strcmp(r.provider, "a") == 0) n_a++;
    if (strcmp(r.provider, "b") == 0) n_b++;
    sq_llm_reply_clear(&r);
  }
  sq_llm_free(c);
  CHECK_EQ(n_fail, 0);
  CHECK_EQ(n_a + n_b, 60);
  CHECK(n_a >= 1 && n_b > n_a); /* expected 15 vs 45; failure odds are negligible */
}

typedef struct {
  int done, failed;
  int64_t last_ms;
} tally;

static void on_tally(sq_llm_reply *r, int rc, void *ud) {
  tally *t = ud;
  t->done++;
  if (rc) t->failed++;
  t->last_ms = sq_now_mono_ms();
  CHECK(rc != 0 || strstr(r->content, "together"));
}

/* Many requests in flight on one thread; max_in_flight queues the rest. */
static void test_concurrency(void) {
  sq_llm_provider p = provider("many", base_url);
  p.max_in_flight = 100;
  sq_llm *c = NULL;
  CHECK_EQ(sq_llm_new(&p, 1, &c, NULL, 0), 0);
  tally t = {0};
  int64_t t0 = sq_now_mono_ms();
  sq_llm_request req = {.user = "[t:concurrent] go", .task_id = "task-c"};
  for (int i = 0; i < 100; i++)
    CHECK_EQ(sq_llm_submit(c, &req, on_tally, &t), 0);
  CHECK_EQ(sq_llm_outstanding(c), 100);
  while (sq_llm_outstanding(c) > 0)
    CHECK_EQ(sq_llm_poll(c, 1000, -1), 0);
  int64_t took = t.last_ms - t0;
  CHECK_EQ(t.done, 100);
  CHECK_EQ(t.failed, 0);
  CHECK(took >= 480 && took < 3000); /* 100 x 500 ms in about one round trip, not 50 s */
  sq_llm_free(c);

  /* max_in_flight = 2: six 500 ms requests take three rounds. */
  p.max_in_flight = 2;
  CHECK_EQ(sq_llm_new(&p, 1, &c, NULL, 0), 0);
  t = (tally){0};
  t0 = sq_now_mono_ms();
  for (int i = 0; i < 6; i++)
    CHECK_EQ(sq_llm_submit(c, &req, on_tally, &t), 0);
  while (sq_llm_outstanding(c) > 0)
    CHECK_EQ(sq_llm_poll(c, 1000, -1), 0);
  took = t.last_ms - t0;
  CHECK_EQ(t.done, 6);
  CHECK(took >= 1450);
  /* Freeing a client with calls in flight drops them without callbacks. */
  CHECK_EQ(sq_llm_submit(c, &req, on_tally, &t), 0);
  sq_llm_poll(c, 10, -1);
  sq_llm_free(c);
  CHECK_EQ(t.done, 6);
}

static void test_more_faults(void) {
  sq_llm_provider p = provider("faults", base_url);
  sq_llm_reply r = {0};
  p.max_retries = 2;
  int64_t t0 = sq_now_mono_ms();
  CHECK_EQ(call(&p, NULL, "[t:ra-date] go", &r), 0);
  CHECK_STR(r.content, "served after a dated Retry-After");
  CHECK(sq_now_mono_ms() - t0 >= 900); /* an HTTP date has 1 s resolution: 2 s ahead is at least 1 s */
  CHECK_EQ(r.attempts, 2);
  sq_llm_reply_clear(&r);

  CHECK_EQ(call(&p, NULL, "[t:drip] go", &r), 0);
  CHECK_STR(r.content, "drip");
  CHECK(r.latency_ms >= 100);
  sq_llm_reply_clear(&r);
  p.timeout_ms = 300; /* a drip slower than the timeout is a timeout, retried then given up */
  p.max_retries = 1;
  CHECK_EQ(call(&p, NULL, "[t:drip] go", &r), SQ_EHTTP);
  CHECK_CONTAINS(r.error, "after 2 HTTP requests");
  sq_llm_reply_clear(&r);

  p = provider("odd", base_url);
  CHECK_EQ(call(&p, NULL, "[t:odd-fence] go", &r), 0);
  char *code = NULL, err[64];
  CHECK_EQ(sq_extract_code(r.content, "python", &code, err, sizeof err), 0);
  CHECK_STR(code, "print('odd')\n");
  free(code);
  sq_llm_reply_clear(&r);

  /* A risk prompt gets the risk rule; the verdict parses. */
  CHECK_EQ(call(&p, "You are a security reviewer.", "[t:risk-json] code", &r), 0);
  sq_risk_verdict v;
  CHECK_EQ(sq_extract_risk(r.content, &v, err, sizeof err), 0);
  CHECK_EQ(v.level, SQ_RISK_HIGH);
  CHECK_EQ(v.action, SQ_RISK_BLOCK);
  sq_llm_reply_clear(&r);
}

/* The provider's own words, a header curl cannot
 * take, and a NUL in the content each give an error that says so, and none
 * of them is retried. */
static void test_reply_errors_named(void) {
  sq_llm_provider p = provider("named", base_url);
  sq_llm_reply r = {0};
  p.max_retries = 2;
  /* HTTP 200 with {"error":{"message":...}} was "reply has no choices" */
  CHECK_EQ(call(&p, NULL, "[t:quota-200] go", &r), SQ_ELLM_REPLY);
  CHECK_CONTAINS(r.error, "You exceeded your current quota");
  CHECK_EQ(stat_hits("[t:quota-200]"), 1);
  sq_llm_reply_clear(&r);
  /* a 200 KB header was "Out of memory", retried as transient */
  CHECK_EQ(call(&p, NULL, "[t:giant-header] go", &r), SQ_ELLM_REPLY);
  CHECK_CONTAINS(r.error, "header over curl's 100 KiB limit");
  CHECK(strstr(r.error, "after") == NULL);
  CHECK_EQ(stat_hits("[t:giant-header]"), 1);
  sq_llm_reply_clear(&r);
  /* code after a NUL was dropped: print(2) never ran, silently */
  CHECK_EQ(call(&p, NULL, "[t:nul-content] go", &r), SQ_ELLM_REPLY);
  CHECK_CONTAINS(r.error, "NUL character");
  CHECK(r.content == NULL);
  sq_llm_reply_clear(&r);
}

/* The breaker opens after enough failures and then fails fast; with a
 * healthy second provider, traffic goes there instead. */
static void test_breaker(void) {
  sq_llm_provider ps[2] = {provider("sick", base_url), provider("well", base_url)};
  sq_llm *c = NULL;
  CHECK_EQ(sq_llm_new(ps, 1, &c, NULL, 0), 0);
  sq_llm_options o = {.breaker_min_samples = 4, .breaker_error_pct = 50, .breaker_open_ms = 400,
                      .breaker_window_ms = 10000};
  sq_llm_set_options(c, &o);
  sq_llm_reply r = {0};
  for (int i = 0; i < 4; i++) {
    CHECK_EQ(sq_llm_complete(c, NULL, "[t:breaker] go", "task-b", &r), SQ_ELLM);
    sq_llm_reply_clear(&r);
  }
  CHECK_STR(sq_llm_breaker_state(c, 0), "open");
  int64_t hits = stat_hits("[t:breaker]");
  CHECK_EQ(sq_llm_complete(c, NULL, "[t:breaker] go", "task-b", &r), SQ_ELLM);
  CHECK_CONTAINS(r.error, "circuit breaker is open");
  CHECK_EQ(stat_hits("[t:breaker]"), hits); /* failed fast: never sent */
  sq_llm_reply_clear(&r);
  usleep(450 * 1000);
  /* Half-open: one probe goes out; it fails, so the breaker opens again. */
  CHECK_EQ(sq_llm_complete(c, NULL, "[t:breaker] go", "task-b", &r), SQ_ELLM);
  CHECK_EQ(stat_hits("[t:breaker]"), hits + 1);
  CHECK_STR(sq_llm_breaker_state(c, 0), "open");
  sq_llm_reply_clear(&r);
  usleep(450 * 1000);
  /* A probe that succeeds closes it. */
  CHECK_EQ(sq_llm_complete(c, NULL, "[t:normal] go", "task-b", &r), 0);
  CHECK_STR(sq_llm_breaker_state(c, 0), "closed");
  sq_llm_reply_clear(&r);
  sq_llm_free(c);

  /* Two providers: once the sick one's breaker opens, all goes to the well one. */
  ps[0] = provider("sick2", "http://127.0.0.1:9/v1"); /* nothing listens on port 9 */
  ps[1] = provider("well", base_url);
  CHECK_EQ(sq_llm_new(ps, 2, &c, NULL, 0), 0);
  sq_llm_set_options(c, &o);
  int n_well = 0;
  for (int i = 0; i < 40; i++) {
    sq_llm_complete(c, NULL, "[t:normal] go", "task-b2", &r);
    n_well += strcmp(r.provider, "well") == 0;
    sq_llm_reply_clear(&r);
  }
  CHECK_STR(sq_llm_breaker_state(c, 0), "open");
  CHECK(n_well >= 30);
  sq_llm_free(c);
}

int main(void) {
  base_url = getenv("SANDQ_LLM_BASE_URL");
  if (!base_url || !*base_url) {
    fprintf(stderr, "SKIP: SANDQ_LLM_BASE_URL is not set (run through tests/integration/llm_client.sh)\n");
    return 77;
  }
  sq_log_init("test_llm", SQ_LOG_DEBUG);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  test_new_invalid();
  test_normal();
  test_key();
  test_retries();
  test_bad_replies();
  test_timeouts_and_refused();
  test_weights();
  test_concurrency();
  test_more_faults();
  test_reply_errors_named();
  test_breaker();
  return sq_check_done("test_llm");
}
