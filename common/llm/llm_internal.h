/* llm_internal.h: what the llm_*.c files share: the client, one call in
 * flight, the retry policy and the circuit breaker. Not a public API; unit
 * tests include it to test the policy functions alone. */
#ifndef SQ_LLM_INTERNAL_H
#define SQ_LLM_INTERNAL_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>

#include "llm.h"
#include "util.h"

#define SQ__LLM_MAX_BODY_BYTES ((size_t)8 * 1024 * 1024)
#define SQ__LLM_ERRMSG_MAX 160 /* chars of a provider's error message we keep */

/* ---- circuit breaker (llm_breaker.c) ---- */

#define SQ__BREAKER_SLICES 20 /* the window is counted in this many time slices */

typedef enum { SQ__BREAKER_CLOSED, SQ__BREAKER_OPEN, SQ__BREAKER_HALF_OPEN } sq__breaker_state;

/* Exchanges and failures in one slice of time (window_ms / SQ__BREAKER_SLICES
 * wide): the window holds every exchange of its span, whatever the rate. */
typedef struct {
  int64_t epoch; /* now_ms / slice_ms when the slice was last reset */
  int64_t n, bad;
} sq__breaker_slice;

typedef struct {
  int64_t window_ms, min_samples, error_pct, open_ms;
  int64_t slice_ms;
  sq__breaker_slice slice[SQ__BREAKER_SLICES];
  sq__breaker_state state;
  int64_t opened_at_ms;
  bool probe_out; /* half-open: the one probe is on its way */
} sq__breaker;

void sq__breaker_init(sq__breaker *b, const sq_llm_options *o);
/* Whether a request may go to this provider now (no side effect). */
bool sq__breaker_available(const sq__breaker *b, int64_t now_ms);
/* Takes the slot sq__breaker_available promised: an open breaker whose
 * cool-down is over turns half-open and lends out its one probe. */
void sq__breaker_acquire(sq__breaker *b, int64_t now_ms);
/* Records one exchange's outcome (failed: 429, 5xx, transport error). */
void sq__breaker_record(sq__breaker *b, int64_t now_ms, bool failed);
const char *sq__breaker_state_name(sq__breaker_state s);

/* ---- retry policy (llm_retry.c) ---- */

/* Whether an exchange is worth another try; when not, *why (static text)
 * says why for the error message, or is NULL for a success. */
bool sq__llm_retryable(CURLcode rc, long http_status, bool too_big, const char **why);
/* Whether a call that failed this way may pass later (sq_llm_reply's
 * transient): exactly what the retry policy retries. */
bool sq__llm_transient(CURLcode rc, long http_status, bool too_big);
/* Whether a call that could not even start (rc from preparing it) may. */
bool sq__llm_start_failure_transient(int rc);
/* Whether an exchange counts against the provider's breaker. */
bool sq__llm_provider_failure(CURLcode rc, long http_status);
/* The wait before retry number attempt+1 (attempt counts from 0):
 * base * 2^attempt capped, jittered to [half, full] with rnd; a Retry-After
 * (ms, -1 none) is honoured up to retry_after_cap_ms. */
int64_t sq__llm_backoff_ms(const sq_llm_options *o, int attempt, int64_t retry_after_ms, uint64_t rnd);
/* A Retry-After header value (delay-seconds or an HTTP date) in ms from
 * now_wall_ms; -1 when unparsable. A date in the past gives 0. */
int64_t sq__llm_parse_retry_after(const char *value, int64_t now_wall_ms);

/* ---- one request (llm.c builds and parses, llm_multi.c drives) ---- */

typedef struct sq__llm_call sq__llm_call;

typedef struct {
  sq_llm_provider cfg;
  int weight;                     /* in force now (cfg.weight unless a rollout moved it) */
  int active;                     /* on the wire */
  sq__breaker br;
  sq__llm_call *pend_head, *pend_tail; /* waiting for a free slot */
} sq__llm_prov;

struct sq__llm_call {
  sq__llm_call *next;
  sq__llm_call *all_prev, *all_next; /* every live call of the client */
  sq_llm *c;
  int prov;
  char *system, *user, *task_id;
  char *model;                    /* NULL: the provider's */
  double temperature;
  sq_llm_done_fn fn;
  void *ud;
  int attempt;                    /* exchanges finished so far */
  int64_t t0_ms, due_ms;
  int64_t attempt_t0_ms;          /* this exchange went on the wire */
  CURL *easy;
  struct curl_slist *headers;
  char *body;
  const char *key;                /* getenv pointer, not owned; for redaction */
  sq_buf resp;
  bool too_big, nomem;
  int64_t retry_after_ms;
  char curl_err[CURL_ERROR_SIZE];
  sq_llm_reply reply;
};

struct sq_llm {
  sq__llm_prov *prov;
  int n;
  sq_llm_options opt;
  CURLM *multi;
  int epfd;                       /* the multi's sockets (llm_multi.c), -1 before sq__llm_multi_init */
  int64_t timer_due_ms;           /* when curl wants its timeout run; -1: no timer */
  uint64_t rng;
  sq__llm_call *waiting;          /* retries, unsorted: few at a time */
  sq__llm_call *all;              /* every live call, for sq_llm_free */
  int outstanding;
  sq_llm_exchange_fn observe;     /* may be NULL */
  void *observe_ud;
  sq_llm_retry_fn on_retry;       /* may be NULL */
  void *on_retry_ud;
  char errstr[256];               /* why the last sq_llm_poll failed */
};

uint64_t sq__llm_rand(sq_llm *c);
/* Creates c->multi and the epoll set its sockets are watched in (the
 * multi's socket interface: a poll costs what is active, not what is in
 * flight). Returns 0, SQ_ENOMEM or SQ_ESYS; sq_llm_free undoes it. */
int sq__llm_multi_init(sq_llm *c);
/* Builds the easy handle, body and headers of call for its provider. */
int sq__llm_prepare(sq__llm_call *call);
/* Frees what sq__llm_prepare made (headers wiped). */
void sq__llm_unprepare(sq__llm_call *call);
/* Turns a finished exchange into call->reply; returns the call's rc, or 1
 * when it should be retried (reply->error already describes the failure). */
int sq__llm_judge(sq__llm_call *call, CURLcode rc, long http_status);
/* Replaces every occurrence of key (when 4+ chars) in s with "***". */
void sq__llm_redact(char *s, const char *key);

#endif
