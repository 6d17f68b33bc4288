/* risk.h: the risk analysis of a program: the request sent to the model,
 * the verdict's cache form (Redis, keyed by sha256 of the code), the
 * fallback when no verdict can be had, and the policy that turns a verdict
 * into block, warn or allow.
 *
 * Knows nothing of HTTP or Redis: the worker sends the prompt through the
 * LLM client and stores the cache form through the queue. */
#ifndef SQ_RISK_H
#define SQ_RISK_H

#include <stdbool.h>
#include <stddef.h>

#include "extract.h"

typedef enum { SQ_RISK_FROM_MODEL, SQ_RISK_FROM_FALLBACK, SQ_RISK_FROM_CACHE } sq_risk_source;

/* A verdict, where it came from, and what the policy made of it. */
typedef struct {
  sq_risk_verdict v;
  sq_risk_source source;
  sq_risk_action decision;
} sq_risk_result;

const char *sq_risk_source_name(sq_risk_source s);

/* The system prompt of a risk request (static text). */
const char *sq_risk_system_prompt(void);
/* The user message for code: malloc'd, the caller frees; NULL on ENOMEM. */
char *sq_risk_user_prompt(const char *code);

/* sha256 of code as 64 hex digits and a NUL. */
void sq_risk_code_sha256(const char *code, size_t len, char hex[65]);

/* The decision: block when the model says block or the level reaches
 * block_level; warn when it says warn or the level is medium or above;
 * else allow. A fallback verdict decides policy->fallback. */
sq_risk_action sq_risk_decide(const sq_risk_verdict *v, sq_risk_source src, const sq_risk_policy *p);

/* Fills r with the fallback verdict (level none, confidence -1) whose reason
 * says why no verdict could be had, decided by policy. */
void sq_risk_fallback(sq_risk_result *r, const char *why, const sq_risk_policy *p);

/* The verdict as compact JSON for the cache (malloc'd; NULL on ENOMEM), and
 * back (0, or SQ_EPARSE for an entry that is not a verdict). */
char *sq_risk_to_json(const sq_risk_verdict *v);
int sq_risk_from_json(const char *json, size_t len, sq_risk_verdict *v);

#endif
