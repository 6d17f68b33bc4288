/* llm.h: an OpenAI-compatible chat-completions client (libcurl multi): many
 * requests in flight on one event loop, retries that respect the provider,
 * a circuit breaker per provider, usage and cost.
 *
 * Knows nothing of the jail or the queue. Provider keys are read from the
 * environment variable the provider names; they are never returned, and
 * every error text is redacted of them. One client belongs to one thread
 * (its event loop).
 *
 * The client logs nothing. A call's failure is its reply->error; a client
 * failure is sq_llm_errstr; what it decides on its own while no caller
 * waits (each retry, each exchange) goes to the observers below, set by
 * the program that wants to count or log it. */
#ifndef SQ_LLM_H
#define SQ_LLM_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"


typedef struct sq_llm sq_llm;

/* Creates a client over n providers (copied) with default options. Returns
 * 0, SQ_EINVAL (no provider, empty base_url or model, no positive weight),
 * SQ_EHTTP (libcurl would not initialise), SQ_ESYS (no epoll set) or
 * SQ_ENOMEM, with the reason in err (errlen bytes; err may be NULL). */
int sq_llm_new(const sq_llm_provider *providers, int n, sq_llm **out, char *err, size_t errlen);
/* Why the client's last sq_llm_poll failed (never NULL). */
const char *sq_llm_errstr(const sq_llm *c);
/* Replaces the retry and breaker settings (copied; zero fields: defaults). */
void sq_llm_set_options(sq_llm *c, const sq_llm_options *o);
/* Frees the client; calls still in flight are abandoned without their
 * callbacks. NULL is a no-op. */
void sq_llm_free(sq_llm *c);

typedef struct {
  char *content;             /* owned: choices[0].message.content */
  int64_t prompt_tokens;
  int64_t completion_tokens;
  bool usage_estimated;      /* usage was missing; tokens were estimated (chars/4) */
  double cost_usd;           /* tokens x the provider's prices (0 on failure) */
  int64_t latency_ms;        /* submit to completion, retries and queueing included */
  int attempts;              /* HTTP exchanges made */
  int http_status;           /* last HTTP status seen, 0 when none */
  char provider[64];
  char model[128];
  char error[256];           /* why the call failed; empty on success */
  bool transient;            /* failed in a way that may pass (transport trouble the retry policy
                                retries, 429, 5xx, every breaker open): worth another attempt
                                later. Decided here, once (llm_retry.c); false on success */
  bool outage;               /* transient because the provider is unavailable: every breaker open, or
                                the last exchange a 429, a 5xx or a transport failure the policy
                                retries (sq__llm_provider_failure). A caller may wait for the
                                provider to come back instead of spending an attempt */
} sq_llm_reply;

/* One chat completion. Strings are copied by sq_llm_submit. */
typedef struct {
  const char *system;  /* may be NULL */
  const char *user;    /* required */
  const char *task_id; /* logs only; may be NULL */
  const char *model;   /* asked for instead of the provider's model; NULL: the provider's */
  double temperature;  /* sampling temperature sent as is (0: deterministic, the default) */
} sq_llm_request;

/* Called once per submitted request, from sq_llm_poll (or sq_llm_submit when
 * it fails at once). rc is 0, SQ_EHTTP (transport), SQ_ELLM (non-2xx or
 * every breaker open), SQ_ELLM_REPLY (body unusable) or SQ_ENOMEM;
 * reply->error says why. reply is borrowed for the call; take
 * reply->content (set it to NULL) to keep it. The callback may submit. */
typedef void (*sq_llm_done_fn)(sq_llm_reply *reply, int rc, void *ud);

/* Queues one request. It goes on the wire when its provider (a weighted
 * choice among providers whose breaker is not open) has a free slot.
 * Returns 0 (fn will be called exactly once) or SQ_EINVAL/SQ_ENOMEM (fn is
 * not called). */
int sq_llm_submit(sq_llm *c, const sq_llm_request *req, sq_llm_done_fn fn, void *ud);

/* Drives every transfer: waits up to timeout_ms for network activity, a due
 * retry, or wake_fd (-1: none) becoming readable, then runs callbacks of
 * finished requests. Returns 0 or SQ_EHTTP when the multi handle failed
 * (sq_llm_errstr says how). */
int sq_llm_poll(sq_llm *c, int timeout_ms, int wake_fd);

/* Requests submitted and not yet called back (on the wire, queued behind
 * max_in_flight, or waiting to retry). */
int sq_llm_outstanding(const sq_llm *c);

/* Sends one chat completion and waits for it (submit + poll). Same errors
 * as the callback's rc. Release out with sq_llm_reply_clear. */
int sq_llm_complete(sq_llm *c, const char *system, const char *user, const char *task_id,
                    sq_llm_reply *out);

/* Frees out's content and zeroes it; safe on a zeroed reply. */
void sq_llm_reply_clear(sq_llm_reply *r);

/* How one HTTP exchange (one attempt) with a provider ended, for metrics. */
typedef enum {
  SQ_LLM_OUTCOME_OK,        /* a 2xx with a usable body */
  SQ_LLM_OUTCOME_TRANSPORT, /* connect, timeout, reset, truncated body */
  SQ_LLM_OUTCOME_HTTP_429,
  SQ_LLM_OUTCOME_HTTP_5XX,
  SQ_LLM_OUTCOME_HTTP_4XX,  /* other non-2xx */
  SQ_LLM_OUTCOME_BAD_REPLY, /* a 2xx whose body is not a usable completion, or too large */
} sq_llm_outcome;

/* Called once per exchange, from sq_llm_poll, before the request's own
 * callback: the provider's name (borrowed for the call), how it ended and
 * how long that attempt took (retries are separate exchanges). */
typedef void (*sq_llm_exchange_fn)(const char *provider, sq_llm_outcome outcome, int64_t latency_ms, void *ud);

/* Sets (fn NULL: removes) the exchange observer. */
void sq_llm_set_observer(sq_llm *c, sq_llm_exchange_fn fn, void *ud);

/* A retry the client decided on its own, after a failed exchange and before
 * the request's callback: all strings borrowed for the call; error is
 * redacted of the provider's key. */
typedef struct {
  const char *task_id;  /* the request's, or NULL */
  const char *provider; /* the provider of the failed attempt */
  const char *error;    /* why that attempt failed */
  int attempt;          /* exchanges made so far (1: the first failed) */
  int max_retries;      /* the provider's */
  int64_t delay_ms;     /* the wait before the next attempt */
} sq_llm_retry_note;
typedef void (*sq_llm_retry_fn)(const sq_llm_retry_note *note, void *ud);

/* Sets (fn NULL: removes) the retry observer, called from sq_llm_poll: the
 * client's one background decision a program may want in its log. */
void sq_llm_set_retry_observer(sq_llm *c, sq_llm_retry_fn fn, void *ud);

/* Sets the weight of the provider named name for requests routed from now
 * on (0: never chosen); a gradual rollout moves traffic this way. Returns 0,
 * SQ_EINVAL (weight < 0) or SQ_ENOTFOUND (no such provider). */
int sq_llm_set_weight(sq_llm *c, const char *name, int weight);
/* Puts every provider's weight back to its configured value. */
void sq_llm_reset_weights(sq_llm *c);

/* The number of providers and the name of provider i (NULL when out of range). */
int sq_llm_n_providers(const sq_llm *c);
const char *sq_llm_provider_name(const sq_llm *c, int i);

/* The breaker state of provider i ("closed", "open", "half_open"), for
 * tests and logs; NULL when i is out of range. */
const char *sq_llm_breaker_state(sq_llm *c, int i);

#endif
