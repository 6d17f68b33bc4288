/* llm.c: the OpenAI-compatible chat-completions client. Provider choice,
 * request building, one HTTP exchange, response parsing and the retry policy
 * each live in their own static function so the exchange can move to the
 * curl multi interface without touching the rest.
 *
 * Threads: a client owns one curl easy handle (kept for keep-alive), so one
 * client must not be used by two threads at once; give each thread its own.
 * curl_global_init runs once per process (pthread_once in sq_llm_new) and is
 * never undone: curl_global_cleanup would race with other threads' clients. */
#include "llm.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "log.h"
#include "util.h"

#define LLM_MAX_BODY_BYTES ((size_t)8 * 1024 * 1024)
#define LLM_BACKOFF_BASE_MS 100
#define LLM_BACKOFF_CAP_MS 2000
#define LLM_DEFAULT_TIMEOUT_MS 60000
#define LLM_CONNECT_TIMEOUT_CAP_MS 10000
#define LLM_MAX_RETRIES_CAP 10
#define LLM_ERRMSG_MAX 160 /* chars of a provider's error message we keep */

struct sq_llm {
  sq_llm_provider *providers;
  int n;
  int64_t total_weight;
  CURL *curl; /* reused across requests: curl keeps the connection alive */
  uint64_t rng;
};

/* What one HTTP exchange produced. */
typedef struct {
  sq_buf body;
  bool too_big;
  bool nomem;
  long http_status; /* 0 when no response arrived */
  CURLcode curl_rc;
  int64_t retry_after_ms; /* -1 when the response had no Retry-After */
  char curl_err[CURL_ERROR_SIZE];
} llm_exchange;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

static void curl_init_once(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

/* xorshift64*: provider choice and backoff jitter; not for secrets. */
static uint64_t rng_next(sq_llm *c) {
  uint64_t x = c->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  c->rng = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static void sleep_ms(int64_t ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int sq_llm_new(const sq_llm_provider *providers, int n, sq_llm **out) {
  if (!out) return SQ_EINVAL;
  *out = NULL;
  if (!providers || n <= 0) {
    SQ_ERROR("llm: no provider configured");
    return SQ_EINVAL;
  }
  int64_t total_weight = 0;
  for (int i = 0; i < n; i++) {
    const sq_llm_provider *p = &providers[i];
    if (!p->base_url[0] || !p->model[0] || p->weight < 0) {
      SQ_ERROR("llm: provider %d ('%s') needs a base_url, a model and a weight >= 0", i, p->name);
      return SQ_EINVAL;
    }
    total_weight += p->weight;
  }
  if (total_weight <= 0) {
    SQ_ERROR("llm: every provider has weight 0; at least one needs weight > 0");
    return SQ_EINVAL;
  }
  pthread_once(&curl_once, curl_init_once);
  if (curl_init_rc != CURLE_OK) {
    SQ_ERROR("llm: curl_global_init: %s", curl_easy_strerror(curl_init_rc));
    return SQ_EHTTP;
  }

  sq_llm *c = calloc(1, sizeof *c);
  if (!c) return SQ_ENOMEM;
  c->providers = calloc((size_t)n, sizeof *c->providers);
  if (!c->providers) goto fail_client;
  memcpy(c->providers, providers, (size_t)n * sizeof *providers);
  for (int i = 0; i < n; i++) {
    sq_llm_provider *p = &c->providers[i];
    if (p->timeout_ms <= 0) p->timeout_ms = LLM_DEFAULT_TIMEOUT_MS;
    if (p->max_retries < 0) p->max_retries = 0;
    if (p->max_retries > LLM_MAX_RETRIES_CAP) p->max_retries = LLM_MAX_RETRIES_CAP;
    if (!p->name[0]) snprintf(p->name, sizeof p->name, "provider%d", i);
  }
  c->n = n;
  c->total_weight = total_weight;
  c->curl = curl_easy_init();
  if (!c->curl) goto fail_providers;
  c->rng = (uint64_t)sq_now_wall_ms() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)c;
  if (!c->rng) c->rng = 0x9E3779B97F4A7C15ULL;
  *out = c;
  return 0;

fail_providers:
  free(c->providers);
fail_client:
  free(c);
  return SQ_ENOMEM;
}

void sq_llm_free(sq_llm *c) {
  if (!c) return;
  curl_easy_cleanup(c->curl);
  free(c->providers);
  free(c);
}

void sq_llm_reply_clear(sq_llm_reply *r) {
  if (!r) return;
  free(r->content);
  memset(r, 0, sizeof *r);
}

/* Weighted random choice; weight 0 is never picked. */
static const sq_llm_provider *pick_provider(sq_llm *c) {
  int64_t r = (int64_t)(rng_next(c) % (uint64_t)c->total_weight);
  for (int i = 0; i < c->n; i++) {
    if (r < c->providers[i].weight) return &c->providers[i];
    r -= c->providers[i].weight;
  }
  return &c->providers[0]; /* unreachable: total_weight > 0 */
}

/* The request body as a malloc'd JSON string, or NULL when out of memory. */
static char *build_request_body(const sq_llm_provider *p, const char *system, const char *user) {
  char *json = NULL;
  cJSON *root = cJSON_CreateObject();
  if (!root || !cJSON_AddStringToObject(root, "model", p->model)) goto out;
  cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
  if (!msgs) goto out;
  const char *roles[2] = {"system", "user"};
  const char *texts[2] = {system, user};
  for (int i = 0; i < 2; i++) {
    if (!texts[i]) continue;
    cJSON *m = cJSON_CreateObject();
    if (!m) goto out;
    cJSON_AddItemToArray(msgs, m);
    if (!cJSON_AddStringToObject(m, "role", roles[i]) || !cJSON_AddStringToObject(m, "content", texts[i]))
      goto out;
  }
  if (!cJSON_AddNumberToObject(root, "temperature", 0)) goto out;
  json = cJSON_PrintUnformatted(root);
out:
  cJSON_Delete(root);
  return json;
}

/* Request headers; the Authorization line only when the key variable is set
 * and non-empty; *key is set to the key used (or NULL). NULL on ENOMEM. */
static struct curl_slist *build_headers(const sq_llm_provider *p, const char **key) {
  *key = p->api_key_env[0] ? getenv(p->api_key_env) : NULL;
  if (*key && !**key) *key = NULL;
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  struct curl_slist *t;
  if (!h) return NULL;
  if (!(t = curl_slist_append(h, "Accept: application/json"))) goto fail;
  if (!(t = curl_slist_append(h, "Expect:"))) goto fail; /* no 100-continue round trip */
  if (*key) {
    sq_buf line = {0};
    if (sq_buf_appendf(&line, "Authorization: Bearer %s", *key) != 0) goto fail;
    t = curl_slist_append(h, line.data);
    explicit_bzero(line.data, line.len);
    sq_buf_clear(&line);
    if (!t) goto fail;
  }
  return h;
fail:
  curl_slist_free_all(h);
  return NULL;
}

/* Frees headers after wiping them, so the key does not linger in freed memory. */
static void free_headers(struct curl_slist *h) {
  for (struct curl_slist *n = h; n; n = n->next)
    explicit_bzero(n->data, strlen(n->data));
  curl_slist_free_all(h);
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata) {
  llm_exchange *x = userdata;
  size_t n = size * nmemb;
  if (x->body.len + n > LLM_MAX_BODY_BYTES) {
    x->too_big = true;
    return 0;
  }
  if (sq_buf_append(&x->body, ptr, n) != 0) {
    x->nomem = true;
    return 0;
  }
  return n;
}

/* One POST of body to url. Fills x; never retries. */
static void http_post(CURL *h, const sq_llm_provider *p, const char *url, struct curl_slist *headers,
                      const char *body, llm_exchange *x) {
  memset(x, 0, sizeof *x);
  x->retry_after_ms = -1;
  int64_t connect_ms =
      p->timeout_ms < LLM_CONNECT_TIMEOUT_CAP_MS ? p->timeout_ms : LLM_CONNECT_TIMEOUT_CAP_MS;

  curl_easy_reset(h); /* keeps the connection cache */
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
  curl_easy_setopt(h, CURLOPT_USERAGENT, "sandq/0.1");
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)p->timeout_ms);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_ms);
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)LLM_MAX_BODY_BYTES);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->curl_err);

  x->curl_rc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x->http_status);
  curl_off_t retry_after_s = 0;
  if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &retry_after_s) == CURLE_OK && retry_after_s > 0)
    x->retry_after_ms = (int64_t)retry_after_s * 1000;
  if (x->curl_rc == CURLE_FILESIZE_EXCEEDED) x->too_big = true;
  /* Nothing of ours may outlive the call inside the handle. */
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
}

/* Transport failures worth another try: the peer may come back. */
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

/* Retry policy: 429, 5xx and transient transport errors. */
static bool exchange_retryable(const llm_exchange *x) {
  if (x->too_big || x->nomem) return false;
  if (x->curl_rc != CURLE_OK) return transport_retryable(x->curl_rc);
  return x->http_status == 429 || (x->http_status >= 500 && x->http_status <= 599);
}

/* Backoff before retry number attempt+1: 100 ms * 2^attempt capped at 2 s,
 * jittered to [half, full]; a Retry-After is honoured up to the cap. */
static int64_t backoff_ms(sq_llm *c, int attempt, int64_t retry_after_ms) {
  int64_t base = LLM_BACKOFF_BASE_MS;
  for (int i = 0; i < attempt && base < LLM_BACKOFF_CAP_MS; i++)
    base *= 2;
  if (base > LLM_BACKOFF_CAP_MS) base = LLM_BACKOFF_CAP_MS;
  int64_t delay = base / 2 + (int64_t)(rng_next(c) % (uint64_t)(base / 2 + 1));
  if (retry_after_ms > 0) {
    int64_t ra = retry_after_ms < LLM_BACKOFF_CAP_MS ? retry_after_ms : LLM_BACKOFF_CAP_MS;
    if (ra > delay) delay = ra;
  }
  return delay;
}

/* Copies at most max chars of s into dst, control characters as spaces. */
static void copy_printable(char *dst, size_t dstlen, const char *s, size_t max) {
  size_t n = 0;
  for (; s[n] && n < max && n + 1 < dstlen; n++) {
    unsigned char ch = (unsigned char)s[n];
    dst[n] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
  }
  dst[n] = '\0';
  if (s[n] && n + 4 < dstlen) strcat(dst, "...");
}

/* The provider's own words from an error body (error.message in OpenAI form),
 * else the start of the body, truncated and made printable. */
static void error_detail(const sq_buf *body, char *dst, size_t dstlen) {
  if (!body->data || body->len == 0) {
    snprintf(dst, dstlen, "(empty body)");
    return;
  }
  cJSON *root = cJSON_ParseWithLength(body->data, body->len);
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(err, "message");
  if (cJSON_IsString(msg) && msg->valuestring)
    copy_printable(dst, dstlen, msg->valuestring, LLM_ERRMSG_MAX);
  else if (cJSON_IsString(err) && err->valuestring)
    copy_printable(dst, dstlen, err->valuestring, LLM_ERRMSG_MAX);
  else
    copy_printable(dst, dstlen, body->data, 80);
  cJSON_Delete(root);
}

/* Replaces every occurrence of key in s with "***" (providers echo keys in
 * their error messages). Keys shorter than 4 chars are left alone: masking
 * them would mangle ordinary text, and they protect nothing. */
static void redact(char *s, const char *key) {
  size_t klen = key ? strlen(key) : 0;
  if (klen < 4) return;
  char *hit;
  while ((hit = strstr(s, key)) != NULL) { /* shrinks s each time: terminates */
    memmove(hit + 3, hit + klen, strlen(hit + klen) + 1);
    memcpy(hit, "***", 3);
  }
}

static bool valid_tokens(const cJSON *v, int64_t *out) {
  if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e15) return false;
  if ((double)(int64_t)v->valuedouble != v->valuedouble) return false;
  *out = (int64_t)v->valuedouble;
  return true;
}

/* Parses a 2xx body into out (content and tokens). prompt_chars feeds the
 * estimate when usage is missing. Returns 0, SQ_ELLM_REPLY with why, or
 * SQ_ENOMEM. */
static int parse_completion(const sq_buf *body, size_t prompt_chars, sq_llm_reply *out, char *why,
                            size_t whylen) {
  int rc = SQ_ELLM_REPLY;
  cJSON *root = body->data ? cJSON_ParseWithLength(body->data, body->len) : NULL;
  if (!root) {
    snprintf(why, whylen, "reply is not JSON (%zu bytes)", body->len);
    goto out;
  }
  const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
  if (!cJSON_IsArray(choices) || cJSON_GetArraySize(choices) == 0) {
    snprintf(why, whylen, "reply has no choices");
    goto out;
  }
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(choices, 0), "message");
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
  if (!cJSON_IsString(content) || !content->valuestring) {
    snprintf(why, whylen, "choices[0].message.content is missing or not a string");
    goto out;
  }
  out->content = strdup(content->valuestring);
  if (!out->content) {
    rc = SQ_ENOMEM;
    snprintf(why, whylen, "out of memory");
    goto out;
  }
  const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
  int64_t pt = 0, ct = 0;
  if (valid_tokens(cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens"), &pt) &&
      valid_tokens(cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens"), &ct)) {
    out->prompt_tokens = pt;
    out->completion_tokens = ct;
  } else {
    out->prompt_tokens = (int64_t)((prompt_chars + 3) / 4);
    out->completion_tokens = (int64_t)((strlen(out->content) + 3) / 4);
    out->usage_estimated = true;
  }
  rc = 0;
out:
  cJSON_Delete(root);
  return rc;
}

/* Sets out->error; long messages are cut to fit, on purpose. */
static void set_error(sq_llm_reply *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(sq_llm_reply *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out->error, sizeof out->error, fmt, ap);
  va_end(ap);
}

/* Why a finished exchange failed, into out->error; returns the code. */
static int describe_failure(const sq_llm_provider *p, const llm_exchange *x, int attempts,
                            sq_llm_reply *out) {
  char detail[LLM_ERRMSG_MAX + 8];
  char tries[32] = "";
  if (attempts > 1) snprintf(tries, sizeof tries, " (after %d attempts)", attempts);
  if (x->too_big) {
    set_error(out, "reply from provider '%s' exceeds %zu MiB", p->name, LLM_MAX_BODY_BYTES >> 20);
    return SQ_ELLM_REPLY;
  }
  if (x->nomem) {
    set_error(out, "out of memory reading the reply of provider '%s'", p->name);
    return SQ_ENOMEM;
  }
  if (x->curl_rc != CURLE_OK) {
    copy_printable(detail, sizeof detail, x->curl_err[0] ? x->curl_err : curl_easy_strerror(x->curl_rc),
                   LLM_ERRMSG_MAX);
    set_error(out, "provider '%s': %s%s", p->name, detail, tries);
    return SQ_EHTTP;
  }
  error_detail(&x->body, detail, sizeof detail);
  set_error(out, "HTTP %ld from provider '%s': %s%s", x->http_status, p->name, detail, tries);
  return SQ_ELLM;
}

int sq_llm_complete(sq_llm *c, const char *system, const char *user, const char *task_id, sq_llm_reply *out) {
  if (!out) return SQ_EINVAL;
  memset(out, 0, sizeof *out);
  if (!c || !user) {
    snprintf(out->error, sizeof out->error, "no client or no prompt");
    return SQ_EINVAL;
  }
  int rc = 0;
  int64_t t0 = sq_now_mono_ms();
  const sq_llm_provider *p = pick_provider(c);
  snprintf(out->provider, sizeof out->provider, "%s", p->name);
  snprintf(out->model, sizeof out->model, "%s", p->model);

  char url[sizeof p->base_url + 32];
  size_t blen = strnlen(p->base_url, sizeof p->base_url);
  while (blen > 0 && p->base_url[blen - 1] == '/')
    blen--;
  snprintf(url, sizeof url, "%.*s/chat/completions", (int)blen, p->base_url);

  const char *key = NULL;
  llm_exchange x = {0};
  char *body = build_request_body(p, system, user);
  struct curl_slist *headers = body ? build_headers(p, &key) : NULL;
  if (!body || !headers) {
    snprintf(out->error, sizeof out->error, "out of memory building the request");
    rc = SQ_ENOMEM;
    goto out;
  }
  size_t prompt_chars = strlen(user) + (system ? strlen(system) : 0);

  for (int attempt = 0;; attempt++) {
    SQ_LOGT(SQ_LOG_DEBUG, task_id, "POST %s (provider '%s', model '%s', %zu bytes, attempt %d)", url, p->name,
            p->model, strlen(body), attempt + 1);
    sq_buf_clear(&x.body);
    http_post(c->curl, p, url, headers, body, &x);
    out->http_status = (int)x.http_status;
    bool ok = x.curl_rc == CURLE_OK && !x.too_big && x.http_status >= 200 && x.http_status <= 299;
    if (ok) {
      char why[128];
      rc = parse_completion(&x.body, prompt_chars, out, why, sizeof why);
      if (rc != 0) set_error(out, "provider '%s': %s", p->name, why);
      break;
    }
    if (attempt >= p->max_retries || !exchange_retryable(&x)) {
      rc = describe_failure(p, &x, attempt + 1, out);
      break;
    }
    describe_failure(p, &x, 1, out);
    int64_t delay = backoff_ms(c, attempt, x.retry_after_ms);
    redact(out->error, key);
    SQ_LOGT(SQ_LOG_WARN, task_id, "%s; retry %d/%d in %lld ms", out->error, attempt + 1, p->max_retries,
            (long long)delay);
    out->error[0] = '\0';
    sleep_ms(delay);
  }

out:
  redact(out->error, key);
  if (rc == 0) {
    out->error[0] = '\0';
    out->cost_usd = (double)out->prompt_tokens * p->price_in_usd_per_mtok / 1e6 +
                    (double)out->completion_tokens * p->price_out_usd_per_mtok / 1e6;
  } else {
    free(out->content);
    out->content = NULL;
    SQ_LOGT(SQ_LOG_DEBUG, task_id, "llm call failed: %s", out->error);
  }
  out->latency_ms = sq_now_mono_ms() - t0;
  sq_buf_clear(&x.body);
  free_headers(headers);
  free(body);
  return rc;
}
