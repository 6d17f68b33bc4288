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

#include "cli.h"
#include "log.h"
#include "options.h"
#include "precheck.h"
#include "run.h"

typedef struct cJSON cJSON;

#define SQ_CONFIG_MAX_PROVIDERS 8
/* The value of a sizing field (jail_threads, jail_pool_size, claim_prefetch,
 * claim_batch, max_tasks_in_flight) nobody set: sq_config_derive fills it
 * from the host. Never a valid explicit value. */
#define SQ_CONFIG_AUTO (-1)

/* An interpreter profile a task may name ("profile"; docs/configuration.md,
 * "Profiles"): the jail's sq_jail_profile and its own limits. */
#define SQ_CONFIG_MAX_PROFILES 8
#define SQ_CONFIG_PROFILE_LIST 8 /* entries in packages, preload and env each */
#define SQ_CONFIG_PROFILE_NAME_MAX 31
typedef struct {
  char name[SQ_CONFIG_PROFILE_NAME_MAX + 1];
  char python[256];              /* "": the worker's python */
  char packages[SQ_CONFIG_PROFILE_LIST][256];
  int n_packages;
  char preload[SQ_CONFIG_PROFILE_LIST][64];
  int n_preload;
  char env[SQ_CONFIG_PROFILE_LIST][256]; /* NAME=VALUE */
  int n_env;
  sq_jail_limits default_limits; /* 0 fields: the worker's default_limits */
  sq_jail_limits max_limits;     /* 0 fields: the worker's max_limits */
} sq_config_profile;

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
  int64_t jail_pool_size;        /* warm zygotes per worker; SQ_CONFIG_AUTO: derived */

  char system_prompt[1024];   /* sent before a task's prompt */
  bool store_llm_reply;       /* keep the code request's raw reply in the result (llm.reply, capped) */
  bool warm_prelude;          /* each full warm zygote loads and rehearses workspace.py (faster runs
                                 with files or in another language: docs/jail-performance.md) */
  int n_providers;
  sq_llm_provider providers[SQ_CONFIG_MAX_PROVIDERS];

  /* The static pre-check: keys policy.import_allowlist (a comma-separated
   * string, or an array in the file) and policy.actions.<kind> = record |
   * block, where <kind> may be "all". */
  sq_precheck_config policy;
  /* The worker's concurrency and the LLM side (docs/llm.md). */
  int64_t max_tasks_in_flight; /* tasks one worker holds at once (claimed, not yet stored) */
  int64_t jail_threads;        /* jail runs in parallel; 0 (SQ_CONFIG_AUTO too): derived */
  int64_t claim_batch;         /* tasks claimed per round trip (and results stored per pipeline) */
  int64_t claim_prefetch;      /* tasks claimed beyond the free jail threads (waiting to start) */
  sq_llm_options llm;          /* backoff, Retry-After cap, circuit breaker */
  sq_risk_scope risk;          /* key risk: off, generated (LLM-written code only) or all */
  sq_risk_policy risk_policy;  /* keys risk_block_level (none|low|medium|high|critical: at or
                                * above blocks) and risk_fallback (warn|block: when no verdict) */
  int64_t risk_cache_ttl_s;    /* verdicts cached in Redis by sha256 of the code */
  int64_t max_repairs;         /* self-repair rounds after failed/runtime_error */
  int64_t llm_outage_max_s;    /* a task failed only by an unavailable provider waits (no attempt
                                * charged) up to this long since its first attempt; 0: no waiting */
  int64_t compile_cache_mib;   /* compiled languages' builds kept in the worker's memory; 0: none */
  int64_t repair_error_kib;    /* the error sent back is trimmed to this */
  /* Metrics, health and the provider rollout (docs/operations.md). */
  int64_t metrics_flush_ms;    /* a worker sends its metrics at most this often */
  sq_metrics_options metrics;  /* window width (fleet-wide) and the windows' TTL */
  int64_t health_stale_ms;     /* a worker silent this long is reported stale */
  sq_rollout_plan rollout;     /* the plan `sandq-producer rollout start` writes */
  char metrics_listen[256];    /* a worker's GET /metrics and /healthz (HOST:PORT); "": none */
  int64_t audit_max_len;       /* the audit stream sq:{Q}:audit keeps about this many entries; 0: no audit */
  int n_profiles;              /* interpreter profiles besides "default" (key profiles) */
  sq_config_profile profiles[SQ_CONFIG_MAX_PROFILES];
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
 * SANDQ_METRICS_LISTEN, SANDQ_AUDIT_MAX_LEN, SANDQ_COMPILE_CACHE_MIB, the queue settings, the sizing (SANDQ_JAIL_THREADS, SANDQ_JAIL_POOL_SIZE,
 * SANDQ_MAX_TASKS_IN_FLIGHT, SANDQ_CLAIM_BATCH, SANDQ_CLAIM_PREFETCH), and,
 * when no provider is configured yet, SANDQ_LLM_BASE_URL/SANDQ_LLM_MODEL (key
 * in SANDQ_LLM_API_KEY; SANDQ_LLM_MAX_IN_FLIGHT and SANDQ_LLM_TIMEOUT_MS, else
 * 16 and 60000). Returns 0 or SQ_ECONFIG with err naming the variable. */
int sq_config_load_env(sq_config *cfg, char *err, size_t errlen);

/* Sets one field by its config-file key ("redis_url", "queue",
 * "max_limits.wall_ms", ...); used for command-line flags. Returns 0 or
 * SQ_ECONFIG with err naming the key. */
int sq_config_set(sq_config *cfg, const char *key, const char *value, char *err, size_t errlen);

/* Applies every option of c whose flag names a configuration key
 * (sq_cli_flag.config_key), in command-line order (config_flags.c).
 * Returns 0 or the sq_config_set error with err naming the flag
 * ("--log-level: ..."). */
int sq_config_apply_flags(sq_config *cfg, const sq_cli *c, char *err, size_t errlen);

/* The configuration of a program, in the documented order: defaults, the
 * file of --config (a flag named "config" in c's table), the environment,
 * c's flags with a config key in command-line order, then
 * sq_config_validate (which checks the Redis URL's syntax too). c may be
 * NULL (no command line). Returns 0, or SQ_ECONFIG (SQ_EIO: the file) with
 * err naming the flag, file, variable or field; the caller says it and
 * exits with the usage code. */
int sq_config_build(sq_config *cfg, const sq_cli *c, char *err, size_t errlen);

/* What sq_config_derive sizes the worker by. */
typedef struct {
  int64_t cores;       /* CPUs this process may run on, within its cgroup's CPU quota */
  int64_t memory_mib;  /* physical memory, within its cgroup's memory limit */
  bool cpu_quota;      /* cores is the quota's (rounded up), not the CPUs' */
  bool memory_limited; /* memory_mib is the cgroup limit's */
} sq_config_host;

/* The host this process runs on (sched_getaffinity, sysconf), within the
 * limits of its cgroup and every cgroup above it (v1 cpu.cfs_quota_us and
 * memory.limit_in_bytes, v2 cpu.max and memory.max; common/config/config_host.c);
 * at least 1 core; the memory as the limit says (64 MiB when the machine's
 * cannot be read). */
void sq_config_host_probe(sq_config_host *host);

/* Fills every sizing field still SQ_CONFIG_AUTO (jail_threads 0 counts as
 * auto) from host, after the configured providers (their max_in_flight).
 * An explicit setting is kept as it is. The rule (docs/configuration.md):
 *   jail_threads        1 per core, at most 64 and one per 512 MiB
 *   jail_pool_size      jail_threads (at most 64)
 *   claim_prefetch      jail_threads
 *   max_tasks_in_flight jail_threads + claim_prefetch + the providers'
 *                       max_in_flight summed (at most 10000)
 *   claim_batch         jail_threads + claim_prefetch (at most 64)
 * note (may be NULL) gets one line naming each value and whether it was
 * derived or set. Call after sq_config_validate. */
void sq_config_derive(sq_config *cfg, const sq_config_host *host, char *note, size_t notelen);

/* The "profiles" object of a config file (config_profiles.c) into cfg,
 * replacing any before. Returns 0 or SQ_ECONFIG with err naming the key. */
int sq_config_load_profiles(sq_config *cfg, const cJSON *obj, char *err, size_t errlen);
/* Checks the profiles (names, limits against the worker's); called by
 * sq_config_validate. Whether their paths and modules exist is the
 * worker's start-up check. Returns 0 or SQ_ECONFIG with err set. */
int sq_config_check_profiles(const sq_config *cfg, char *err, size_t errlen);
/* The profile named name, or NULL ("default" is none of them). */
const sq_config_profile *sq_config_profile_find(const sq_config *cfg, const char *name);
/* A profile's limits: its own where set, else the worker's. */
void sq_config_profile_limits(const sq_config *cfg, const sq_config_profile *p, sq_jail_limits *def,
                              sq_jail_limits *max);

/* Checks every field; returns 0 or SQ_ECONFIG with err naming the first bad
 * field and what would be valid. Fills worker_id when empty. */
int sq_config_validate(sq_config *cfg, char *err, size_t errlen);

#endif
