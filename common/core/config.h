/* config.h: the one configuration struct of producer and worker.
 *
 * Filled in order: defaults, a JSON config file, the environment, the
 * command line; validated last, with messages that name the field. Secrets
 * are never stored here: a provider names the environment variable that
 * holds its key. */
#ifndef SQ_CONFIG_H
#define SQ_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "options.h"
#include "policy.h"
#include "run.h"

#define SQ_CONFIG_MAX_PROVIDERS 8

typedef struct {
  char redis_url[512];
  char queue[64];
  char worker_id[128];        /* empty: <hostname>-<pid> */
  sq_log_level log_level;
  int64_t max_task_kib;       /* a larger task is invalid_task */
  int64_t claim_timeout_ms;   /* how long one claim waits for work */
  sq_queue_options queue_opts; /* leases, stalls, retries, retention, length cap */
  int64_t heartbeat_ms;       /* how often a worker extends its leases; < lease_ms */
  int64_t shutdown_grace_ms;  /* SIGTERM: finish the task in hand within this, else hand it back */

  char python_path[256];
  char scratch_root[256];
  sq_jail_limits default_limits; /* used where a task sets none */
  sq_jail_limits max_limits;     /* a task's limits are clamped to these */
  sq_jail_mode jail_mode;        /* spawn (fork+exec per task) or warm (zygote pool) */
  int64_t jail_pool_size;        /* warm zygotes per worker */

  char system_prompt[1024];   /* sent before a task's prompt */
  int n_providers;
  sq_llm_provider providers[SQ_CONFIG_MAX_PROVIDERS];

  /* The static pre-check: keys policy.import_allowlist (a comma-separated
   * string, or an array in the file) and policy.actions.<kind> = record |
   * block, where <kind> may be "all". */
  sq_policy_config policy;
  /* The worker's concurrency and the LLM side (docs/llm.md). */
  int64_t max_tasks_in_flight; /* tasks one worker holds at once (claimed, not yet stored) */
  int64_t jail_threads;        /* jail runs in parallel; 0: one per core */
  int64_t claim_batch;         /* tasks claimed per round trip (and results stored per pipeline) */
  sq_llm_options llm;          /* backoff, Retry-After cap, circuit breaker */
  sq_risk_scope risk;          /* key risk: off, generated (LLM-written code only) or all */
  sq_risk_policy risk_policy;  /* keys risk_block_level (none|low|medium|high|critical: at or
                                * above blocks) and risk_fallback (warn|block: when no verdict) */
  int64_t risk_cache_ttl_s;    /* verdicts cached in Redis by sha256 of the code */
  int64_t max_repairs;         /* self-repair rounds after failed/runtime_error */
  int64_t repair_error_kib;    /* the error sent back is trimmed to this */
  /* Metrics, health and the provider rollout (docs/operations.md). */
  int64_t metrics_flush_ms;    /* a worker sends its metrics at most this often */
  sq_metrics_options metrics;  /* window width (fleet-wide) and the windows' TTL */
  int64_t health_stale_ms;     /* a worker silent this long is reported stale */
  sq_rollout_plan rollout;     /* the plan `sandq-producer rollout start` writes */
  char metrics_listen[256];    /* a worker's GET /metrics and /healthz (HOST:PORT); "": none */
  int64_t audit_max_len;       /* the audit stream sq:{Q}:audit keeps about this many entries; 0: no audit */
} sq_config;

/* Fills cfg with the defaults. */
void sq_config_defaults(sq_config *cfg);

/* Reads a JSON config file over cfg. Unknown keys and wrong types are
 * errors naming the key. Returns 0, SQ_EIO or SQ_ECONFIG with err set. */
int sq_config_load_file(sq_config *cfg, const char *path, char *err, size_t errlen);

/* The same for JSON text already in memory (len bytes, need not be
 * NUL-terminated); name stands for the file in messages. Returns 0 or
 * SQ_ECONFIG (SQ_ENOMEM) with err set. The fuzzer's way in. */
int sq_config_load_json(sq_config *cfg, const char *text, size_t len, const char *name, char *err, size_t errlen);

/* Applies the environment: SANDQ_REDIS_URL, SANDQ_QUEUE, SANDQ_LOG_LEVEL,
 * SANDQ_WORKER_ID, SANDQ_PYTHON, SANDQ_SCRATCH_ROOT, SANDQ_JAIL_MODE,
 * SANDQ_METRICS_LISTEN, SANDQ_AUDIT_MAX_LEN, and, when no provider
 * is configured yet, SANDQ_LLM_BASE_URL/SANDQ_LLM_MODEL (key in
 * SANDQ_LLM_API_KEY). Returns 0 or SQ_ECONFIG with err naming the variable. */
int sq_config_load_env(sq_config *cfg, char *err, size_t errlen);

/* Sets one field by its config-file key ("redis_url", "queue",
 * "max_limits.wall_ms", ...); used for command-line flags. Returns 0 or
 * SQ_ECONFIG with err naming the key. */
int sq_config_set(sq_config *cfg, const char *key, const char *value, char *err, size_t errlen);

/* Checks every field; returns 0 or SQ_ECONFIG with err naming the first bad
 * field and what would be valid. Fills worker_id when empty. */
int sq_config_validate(sq_config *cfg, char *err, size_t errlen);

#endif
