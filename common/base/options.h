/* options.h: the option types of every module, as config fills them.
 *
 * Plain data with their defaults and pure checks, so the one config struct
 * (config.h) can be filled and validated by a program that links none of
 * the modules they configure: the producer carries no LLM client and no
 * jail. Each module's header includes this one. */
#ifndef SQ_OPTIONS_H
#define SQ_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"

/* ---- the LLM client (llm.h) --------------------------------------- */

typedef struct {
  char name[64];
  char base_url[512];     /* e.g. https://api.openai.com/v1 ; /chat/completions is appended */
  char model[128];
  char api_key_env[64];   /* variable holding the key; empty: no Authorization header */
  double price_in_usd_per_mtok;
  double price_out_usd_per_mtok;
  int64_t timeout_ms;     /* one attempt, connect to last byte */
  int max_retries;        /* attempts after the first, for retryable failures */
  int max_in_flight;      /* requests on the wire at once; more wait in a FIFO */
  int weight;             /* weighted random choice; 0 is never chosen */
} sq_llm_provider;

/* Client-wide retry and circuit-breaker settings (config keys of the same
 * names, docs/llm.md). Zero fields take the defaults of sq_llm_options_defaults. */
typedef struct {
  int64_t backoff_base_ms;    /* retry k (from 0) waits b/2..b, b = min(base * 2^k, cap), uniformly */
  int64_t backoff_cap_ms;     /* exponential backoff never waits longer */
  int64_t retry_after_cap_ms; /* a provider's Retry-After is honoured up to this */
  int64_t breaker_window_ms;  /* the error rate is measured over this window... */
  int64_t breaker_min_samples;/* ...once it holds at least this many exchanges */
  int64_t breaker_error_pct;  /* opens at or above this percentage of failures */
  int64_t breaker_open_ms;    /* stays open this long, then lets one probe through */
} sq_llm_options;

void sq_llm_options_defaults(sq_llm_options *o);

/* ---- the risk check (risk.h) ---------------------------------------- */

/* Which programs get a risk verdict (config key risk). */
typedef enum {
  SQ_RISK_SCOPE_OFF,       /* "off": none */
  SQ_RISK_SCOPE_GENERATED, /* "generated": LLM-written code only */
  SQ_RISK_SCOPE_ALL        /* "all": every program, a task's own code included */
} sq_risk_scope;

/* A verdict's level and action, as a model gives them and as the policy
 * compares them (ordered: a higher value is riskier). */
typedef enum { SQ_RISK_NONE, SQ_RISK_LOW, SQ_RISK_MEDIUM, SQ_RISK_HIGH, SQ_RISK_CRITICAL } sq_risk_level;
typedef enum { SQ_RISK_ALLOW, SQ_RISK_WARN, SQ_RISK_BLOCK } sq_risk_action;

/* What a verdict turns into (config keys risk_block_level, risk_fallback). */
typedef struct {
  sq_risk_level block_level;  /* a level at or above this blocks */
  sq_risk_action fallback;    /* SQ_RISK_WARN or SQ_RISK_BLOCK: the decision when no verdict can be had */
} sq_risk_policy;

/* Stable lower-case names ("generated", "high", "block"); "?" out of range, never NULL. */
const char *sq_risk_scope_name(sq_risk_scope s);
const char *sq_risk_level_name(sq_risk_level l);
const char *sq_risk_action_name(sq_risk_action a);
/* Names to values, case-insensitive, surrounding blanks ignored (lenient:
 * a model's reply goes through them; config takes only the exact names).
 * Return 0, or SQ_EINVAL with *out untouched. */
int sq_risk_scope_parse(const char *s, sq_risk_scope *out);
int sq_risk_level_parse(const char *s, sq_risk_level *out);
int sq_risk_action_parse(const char *s, sq_risk_action *out);

/* ---- the queue (queue.h) ------------------------------------------- */

/* Lease, retry and retention policy of a handle (config: docs/configuration.md). */
typedef struct {
  int64_t lease_ms;         /* a claim not heartbeaten for this long is reaped */
  int64_t max_stalls;       /* stalls (lease lost, worker died) before the dead letter */
  int64_t max_attempts;     /* runs of a task that asks for retries, first one included */
  int64_t backoff_base_ms;  /* first retry delay; doubles per attempt, with jitter */
  int64_t backoff_max_ms;   /* cap on one retry delay */
  int64_t retention_s;      /* results, batch counters and task records expire after this */
  int64_t max_queue_len;    /* push refuses (SQ_EFULL) beyond this many waiting tasks; 0: no cap */
  int64_t reap_interval_ms; /* at most one reaper run per interval across the fleet */
  int64_t dead_retention_s; /* the reaper drops dead-letter entries older than this; 0: keep them */
  int64_t shards;           /* hash tags the queue's tasks spread over ({Q#0}..{Q#N-1}); 1: one, {Q} */
  int64_t wait_replicas;    /* push, complete and hand-backs wait for this many replicas (WAIT); 0: no wait */
  int64_t wait_timeout_ms;  /* how long one WAIT may take before the write counts as not acknowledged */
} sq_queue_options;

/* Fills o with the defaults (lease 30 s, 3 stalls, 5 attempts, backoff 1 s
 * to 60 s, retention 7 days, 1,000,000 tasks, reaper every 1 s, dead
 * letters kept 30 days, one shard, no replica wait (1 s when set)). */
void sq_queue_options_default(sq_queue_options *o);

/* ---- fleet metrics (metrics.h) ---------------------------------------- */

#define SQ_METRICS_MAX_PROVIDERS 8

typedef struct {
  int64_t window_s;    /* width of one time window (fleet-wide: every process must agree) */
  int64_t retention_s; /* how long a window's hash lives (its TTL) */
} sq_metrics_options;

/* ---- the provider rollout (rollout.h) --------------------------------- */

#define SQ_ROLLOUT_MAX_STAGES 8

/* The plan (config keys rollout_*; docs/configuration.md). Written into
 * Redis by `rollout start`, so the whole fleet follows one plan. */
typedef struct {
  char stages[64];            /* candidate percentages, increasing, ending at 100: "10,30,70,100" */
  int64_t hold_s;             /* at least this long at a stage before advancing */
  int64_t min_requests;       /* and at least this many candidate requests at the stage */
  int64_t min_samples;        /* candidate requests in the window before it is judged at all */
  int64_t window_s;           /* error rate and p95 are measured over the last window_s */
  int64_t max_error_pct;      /* absolute: candidate error rate above this rolls back */
  int64_t error_margin_pct;   /* relative: above the baseline's error rate + this rolls back */
  int64_t p95_ratio_pct;      /* relative: p95 above baseline p95 x this / 100 + p95_margin_ms rolls back */
  int64_t p95_margin_ms;
  int64_t max_p95_ms;         /* absolute: p95 above this rolls back; 0: no absolute bound */
} sq_rollout_plan;

void sq_rollout_plan_defaults(sq_rollout_plan *p);
/* Parses "10,30,70,100" into pct[0..*n). Returns 0, or SQ_EINVAL when not
 * 1..SQ_ROLLOUT_MAX_STAGES strictly increasing integers in 1..100 ending at 100. */
int sq_rollout_stages_parse(const char *s, int *pct, int *n);
/* Checks a plan; returns 0 or SQ_ECONFIG with err naming the bad key. */
int sq_rollout_plan_validate(const sq_rollout_plan *p, char *err, size_t errlen);

#endif
