/* worker.h: the state the files of `sandq-worker serve` share. serve_cmd.c
 * sets it up and tears it down; loop.c drives it; each module keeps its
 * own state behind an opaque handle (see their headers). */
#ifndef SQ_WORKER_H
#define SQ_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

typedef struct sq_jail sq_jail;
typedef struct sq_llm sq_llm;
typedef struct sq_metrics sq_metrics;
typedef struct sq_heartbeat sq_heartbeat;
typedef struct jail_pool jail_pool;
typedef struct job job;
typedef struct sq__link sq__link;
typedef struct sq__backoff sq__backoff;
typedef struct sq__housekeeping sq__housekeeping;
typedef struct sq__budget_cache sq__budget_cache;
typedef struct sq__audit_log sq__audit_log;
typedef struct sq__endpoint sq__endpoint;
typedef struct sq__profiles sq__profiles;
typedef struct sq__compile_cache sq__compile_cache;
typedef struct sq__plans sq__plans;
typedef struct sq__expected sq__expected;

typedef struct worker worker;
struct worker {
  sq_config cfg;
  sq__link *link;         /* redis_link.c: the event loop's connection: claims, results, retries */
  sq__backoff *best_effort; /* best_effort.c: spend, verdict cache, metrics, health, rollout back off apart */
  sq_jail *jail;
  sq__profiles *profiles; /* profiles.c: the runners of the other interpreter profiles */
  sq_llm *llm;            /* NULL when no provider is configured */
  jail_pool *pool;        /* pool.c */
  sq_heartbeat *heartbeat;  /* keeps our leases alive; runs the fleet's reaper in turn */
  sq_risk_policy risk_policy;
  int in_flight;          /* jobs claimed and not yet stored */
  int llm_waiting;        /* of those, jobs waiting on an LLM reply now */
  int llm_jobs;           /* of those, jobs that went to the LLM at all (the rest came with their code) */
  int in_jail;            /* of those, jobs in the jail pool (waiting for a thread or running) */
  job *done_head, *done_tail; /* finished, waiting to be stored */
  int done_n;             /* how many */
  int64_t done_since_ms;  /* when the oldest of them finished (monotonic) */
  job *parked;            /* finished, their batch's key damaged: stored again now and then (loop.c) */
  int64_t parked_retry_ms; /* when they are tried next (monotonic) */
  int64_t parked_wait_ms;  /* the wait after the next failed try: doubles up to 30 s */
  bool fatal;             /* the host cannot run the jail: stop and hand everything back */
  char host_error[256];   /* why, for the last health record (health.h host_error) */
  sq_metrics *metrics;    /* this worker's counters, flushed by housekeeping.c */
  sq__housekeeping *housekeeping; /* housekeeping.c: its clocks and the rollout followed */
  sq__budget_cache *budget;       /* budget_cache.c: batch spend and budgets */
  sq__audit_log *audit;           /* audit_log.c: runs not yet in the audit stream */
  sq__endpoint *endpoint; /* endpoint.c: GET /metrics, /healthz; NULL without metrics_listen */
  sq__compile_cache *compile_cache; /* compile_cache.c: compiled builds; NULL when compile_cache_mib is 0 */
  sq__plans *plans;                 /* judge_plans.c: the Python judge's plans of tests seen */
  sq__expected *expected; /* expected.c: evalplus's expected values by tests; NULL until first used */
};

#endif
