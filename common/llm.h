/* llm.h: an OpenAI-compatible chat-completions client (libcurl).
 *
 * Knows nothing of the jail or the queue. Provider keys are read from the
 * environment variable the provider names; they are never logged and never
 * returned. */
#ifndef SQ_LLM_H
#define SQ_LLM_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
  char name[64];
  char base_url[512];     /* e.g. https://api.openai.com/v1 ; /chat/completions is appended */
  char model[128];
  char api_key_env[64];   /* variable holding the key; empty: no Authorization header */
  double price_in_usd_per_mtok;
  double price_out_usd_per_mtok;
  int64_t timeout_ms;
  int max_retries;
  int max_in_flight;
  int weight;
} sq_llm_provider;

typedef struct sq_llm sq_llm;

/* Creates a client over n providers (copied). Returns 0, SQ_EINVAL (no
 * provider, empty base_url or model) or SQ_ENOMEM. */
int sq_llm_new(const sq_llm_provider *providers, int n, sq_llm **out);
/* Frees the client; NULL is a no-op. */
void sq_llm_free(sq_llm *c);

typedef struct {
  char *content;             /* owned: choices[0].message.content */
  int64_t prompt_tokens;
  int64_t completion_tokens;
  bool usage_estimated;      /* usage was missing; tokens were estimated */
  double cost_usd;
  int64_t latency_ms;
  int http_status;           /* last HTTP status seen, 0 when none */
  char provider[64];
  char model[128];
  char error[256];           /* why the call failed; empty on success */
} sq_llm_reply;

/* Sends one chat completion (system may be NULL) and waits for the reply.
 * Returns 0 with out filled, or SQ_EHTTP (transport), SQ_ELLM (non-2xx),
 * SQ_ELLM_REPLY (body unusable); out->error says why in every case.
 * task_id is for logs only. Release out with sq_llm_reply_clear. */
int sq_llm_complete(sq_llm *c, const char *system, const char *user, const char *task_id,
                    sq_llm_reply *out);

/* Frees out's content and zeroes it; safe on a zeroed reply. */
void sq_llm_reply_clear(sq_llm_reply *r);

#endif
