/* llm.c: the parts of the chat-completions client that concern one request:
 * the client's life cycle, the request (body, headers, curl options), and
 * the response (content, usage, cost, why it failed). The event loop that
 * drives many requests is llm_multi.c; the retry policy llm_retry.c; the
 * circuit breaker llm_breaker.c.
 *
 * curl_global_init runs once per process (pthread_once in sq_llm_new) and is
 * never undone: curl_global_cleanup would race with other threads' clients. */
#include "llm.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "errors.h"
#include "json_scan.h"
#include "llm_internal.h"

#define LLM_DEFAULT_TIMEOUT_MS 60000
#define LLM_CONNECT_TIMEOUT_CAP_MS 10000
#define LLM_MAX_RETRIES_CAP 10
/* Each request in flight holds curl's receive buffer (16 KiB by default):
 * with a thousand in flight that was a fifth of the worker's peak RSS. A
 * reply of code is a few KiB; a larger one only takes more reads. */
#define LLM_RECV_BUFFER_BYTES 4096L

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

static void curl_init_once(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }


void sq_llm_set_options(sq_llm *c, const sq_llm_options *o) {
  sq_llm_options d;
  sq_llm_options_defaults(&d);
  if (o) {
#define TAKE(f) if (o->f > 0) d.f = o->f
    TAKE(backoff_base_ms);
    TAKE(backoff_cap_ms);
    TAKE(retry_after_cap_ms);
    TAKE(breaker_window_ms);
    TAKE(breaker_min_samples);
    TAKE(breaker_error_pct);
    TAKE(breaker_open_ms);
#undef TAKE
  }
  c->opt = d;
  for (int i = 0; i < c->n; i++)
    sq__breaker_init(&c->prov[i].br, &c->opt);
}

/* xorshift64*: provider choice and backoff jitter; not for secrets. */
uint64_t sq__llm_rand(sq_llm *c) {
  uint64_t x = c->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  c->rng = x;
  return x * 0x2545F4914F6CDD1DULL;
}

int sq_llm_new(const sq_llm_provider *providers, int n, sq_llm **out, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!out) return sq_errf(err, errlen, SQ_EINVAL, "no place for the client");
  *out = NULL;
  if (!providers || n <= 0) return sq_errf(err, errlen, SQ_EINVAL, "no provider configured");
  int64_t total_weight = 0;
  for (int i = 0; i < n; i++) {
    if (!providers[i].base_url[0] || !providers[i].model[0])
      return sq_errf(err, errlen, SQ_EINVAL, "provider %d ('%s') needs base_url and model", i, providers[i].name);
    if (providers[i].weight > 0) total_weight += providers[i].weight;
  }
  if (total_weight <= 0) return sq_errf(err, errlen, SQ_EINVAL, "no provider has a positive weight");
  pthread_once(&curl_once, curl_init_once);
  if (curl_init_rc != CURLE_OK)
    return sq_errf(err, errlen, SQ_EHTTP, "curl_global_init: %s", curl_easy_strerror(curl_init_rc));
  sq_llm *c = calloc(1, sizeof *c);
  if (!c) return sq_errf(err, errlen, SQ_ENOMEM, "out of memory");
  c->epfd = -1;
  c->prov = calloc((size_t)n, sizeof *c->prov);
  int rc = c->prov ? sq__llm_multi_init(c) : SQ_ENOMEM;
  if (rc) {
    sq_llm_free(c);
    return sq_errf(err, errlen, rc, "cannot set up the client's event loop: %s", sq_strerror(rc));
  }
  long max_conns = 0;
  for (int i = 0; i < n; i++) {
    sq_llm_provider *p = &c->prov[i].cfg;
    *p = providers[i];
    if (p->timeout_ms <= 0) p->timeout_ms = LLM_DEFAULT_TIMEOUT_MS;
    if (p->max_retries < 0) p->max_retries = 0;
    if (p->max_retries > LLM_MAX_RETRIES_CAP) p->max_retries = LLM_MAX_RETRIES_CAP;
    if (p->max_in_flight <= 0) p->max_in_flight = 1;
    if (p->weight < 0) p->weight = 0;
    c->prov[i].weight = p->weight;
    if (!p->name[0]) snprintf(p->name, sizeof p->name, "provider%d", i);
    max_conns += p->max_in_flight;
  }
  c->n = n;
  /* Keep one idle connection per slot so keep-alive survives bursts. */
  curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, max_conns);
  c->rng = (uint64_t)sq_now_wall_ms() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)c;
  if (!c->rng) c->rng = 0x9E3779B97F4A7C15ULL;
  sq_llm_set_options(c, NULL);
  *out = c;
  return 0;
}

void sq_llm_reply_clear(sq_llm_reply *r) {
  if (!r) return;
  free(r->content);
  memset(r, 0, sizeof *r);
}

const char *sq_llm_breaker_state(sq_llm *c, int i) {
  if (!c || i < 0 || i >= c->n) return NULL;
  return sq__breaker_state_name(c->prov[i].br.state);
}

/* ---- the request ---- */

/* The request body as a malloc'd JSON string, or NULL when out of memory.
 * model NULL: the provider's. */
static char *build_request_body(const sq_llm_provider *p, const char *model, double temperature, const char *system,
                                const char *user) {
  char *json = NULL;
  cJSON *root = cJSON_CreateObject();
  if (!root || !cJSON_AddStringToObject(root, "model", model ? model : p->model)) goto out;
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
  if (!cJSON_AddNumberToObject(root, "temperature", temperature)) goto out;
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
  sq__llm_call *x = userdata;
  size_t n = size * nmemb;
  if (x->resp.len + n > SQ__LLM_MAX_BODY_BYTES) {
    x->too_big = true;
    return 0;
  }
  if (sq_buf_append(&x->resp, ptr, n) != 0) {
    x->nomem = true;
    return 0;
  }
  return n;
}

/* Keeps the Retry-After header (seconds or an HTTP date). */
static size_t on_header(char *ptr, size_t size, size_t nitems, void *userdata) {
  sq__llm_call *x = userdata;
  size_t n = size * nitems;
  static const char name[] = "retry-after:";
  if (n > sizeof name - 1 && n < 256 && strncasecmp(ptr, name, sizeof name - 1) == 0) {
    char v[256];
    memcpy(v, ptr + sizeof name - 1, n - (sizeof name - 1));
    v[n - (sizeof name - 1)] = '\0';
    x->retry_after_ms = sq__llm_parse_retry_after(v, sq_now_wall_ms());
  }
  return n;
}

static void url_of(const sq_llm_provider *p, char *url, size_t len) {
  size_t blen = strnlen(p->base_url, sizeof p->base_url);
  while (blen > 0 && p->base_url[blen - 1] == '/')
    blen--;
  snprintf(url, len, "%.*s/chat/completions", (int)blen, p->base_url);
}

int sq__llm_prepare(sq__llm_call *x) {
  const sq_llm_provider *p = &x->c->prov[x->prov].cfg;
  sq_buf_clear(&x->resp);
  x->too_big = x->nomem = false;
  x->retry_after_ms = -1;
  x->curl_err[0] = '\0';
  x->body = build_request_body(p, x->model, x->temperature, x->system, x->user);
  x->headers = x->body ? build_headers(p, &x->key) : NULL;
  x->easy = x->headers ? curl_easy_init() : NULL;
  if (!x->easy) {
    sq__llm_unprepare(x);
    return SQ_ENOMEM;
  }
  char url[sizeof p->base_url + 32];
  url_of(p, url, sizeof url);
  int64_t connect_ms = p->timeout_ms < LLM_CONNECT_TIMEOUT_CAP_MS ? p->timeout_ms : LLM_CONNECT_TIMEOUT_CAP_MS;
  CURL *h = x->easy;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, x->headers);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, x->body);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(x->body));
  curl_easy_setopt(h, CURLOPT_USERAGENT, "sandq/0.1");
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)p->timeout_ms);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_ms);
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)SQ__LLM_MAX_BODY_BYTES);
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, LLM_RECV_BUFFER_BYTES);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->curl_err);
  curl_easy_setopt(h, CURLOPT_PRIVATE, x);
  return 0;
}

void sq__llm_unprepare(sq__llm_call *x) {
  if (x->easy) curl_easy_cleanup(x->easy);
  x->easy = NULL;
  free_headers(x->headers);
  x->headers = NULL;
  free(x->body);
  x->body = NULL;
}

/* ---- the response ---- */

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
    copy_printable(dst, dstlen, msg->valuestring, SQ__LLM_ERRMSG_MAX);
  else if (cJSON_IsString(err) && err->valuestring)
    copy_printable(dst, dstlen, err->valuestring, SQ__LLM_ERRMSG_MAX);
  else
    copy_printable(dst, dstlen, body->data, 80);
  cJSON_Delete(root);
}

/* Providers echo keys in their error messages. Keys shorter than 4 chars
 * are left alone: masking them would mangle ordinary text. */
void sq__llm_redact(char *s, const char *key) {
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
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (error) { /* some providers say "quota exceeded" with a 200 */
      char detail[SQ__LLM_ERRMSG_MAX + 8];
      error_detail(body, detail, sizeof detail);
      snprintf(why, whylen, "an error in an HTTP 200 reply: %s", detail);
    } else {
      snprintf(why, whylen, "reply has no choices");
    }
    goto out;
  }
  /* cJSON would cut the content at a NUL: refused, not shortened (code
   * cannot hold one anyway: Python source cannot contain NUL). */
  size_t n_members = (size_t)cJSON_GetArraySize(root), i = 0;
  bool *nul = calloc(n_members + 1, sizeof *nul);
  if (!nul) {
    rc = SQ_ENOMEM;
    snprintf(why, whylen, "out of memory");
    goto out;
  }
  sq_json_nul_members(body->data, body->len, nul, n_members);
  bool choices_nul = false;
  for (const cJSON *m = root->child; m; m = m->next, i++)
    if (m == choices) choices_nul = nul[i];
  free(nul);
  if (choices_nul) {
    snprintf(why, whylen, "choices holds a NUL character (\\u0000); refused rather than cut short");
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

int sq__llm_judge(sq__llm_call *x, CURLcode crc, long http_status) {
  const sq_llm_provider *p = &x->c->prov[x->prov].cfg;
  sq_llm_reply *out = &x->reply;
  if (crc == CURLE_FILESIZE_EXCEEDED || (crc == CURLE_WRITE_ERROR && x->too_big)) x->too_big = true;
  out->http_status = (int)http_status;
  out->attempts = x->attempt;
  out->error[0] = '\0';
  if (crc == CURLE_OK && !x->too_big && !x->nomem && http_status >= 200 && http_status <= 299) {
    char why[SQ__LLM_ERRMSG_MAX + 64];
    size_t prompt_chars = strlen(x->user) + (x->system ? strlen(x->system) : 0);
    int rc = parse_completion(&x->resp, prompt_chars, out, why, sizeof why);
    if (rc) set_error(out, "provider '%s': %s", p->name, why);
    sq__llm_redact(out->error, x->key);
    return rc;
  }
  char tries[40] = ""; /* HTTP requests; the queue's attempts of the task are counted apart */
  if (x->attempt > 1) snprintf(tries, sizeof tries, " (after %d HTTP requests)", x->attempt);
  if (x->nomem) {
    set_error(out, "out of memory reading the reply of provider '%s'", p->name);
    return SQ_ENOMEM;
  }
  const char *why_not = NULL;
  bool retry = sq__llm_retryable(crc, http_status, x->too_big, &why_not);
  char detail[SQ__LLM_ERRMSG_MAX + 8];
  int rc;
  if (x->too_big) {
    set_error(out, "reply from provider '%s' exceeds %zu MiB", p->name, SQ__LLM_MAX_BODY_BYTES >> 20);
    return SQ_ELLM_REPLY;
  } else if (crc == CURLE_OUT_OF_MEMORY
#if LIBCURL_VERSION_NUM >= 0x080600
             || crc == CURLE_TOO_LARGE
#endif
  ) {
    /* curl says "Out of memory" for a response header past its 100 KiB
     * cap, the likely cause: a reply, not a transient failure. */
    set_error(out, "provider '%s': the response is too large for curl (a header over curl's 100 KiB limit, or "
              "out of memory): %s", p->name, curl_easy_strerror(crc));
    return SQ_ELLM_REPLY;
  } else if (crc != CURLE_OK) {
    copy_printable(detail, sizeof detail, x->curl_err[0] ? x->curl_err : curl_easy_strerror(crc),
                   SQ__LLM_ERRMSG_MAX);
    set_error(out, "provider '%s': %s%s", p->name, detail, tries);
    rc = SQ_EHTTP;
  } else {
    error_detail(&x->resp, detail, sizeof detail);
    set_error(out, "HTTP %ld from provider '%s': %s%s%s%s", http_status, p->name, detail, tries,
              why_not ? "; " : "", why_not ? why_not : "");
    rc = SQ_ELLM;
  }
  sq__llm_redact(out->error, x->key);
  return retry && x->attempt <= p->max_retries ? 1 : rc;
}
