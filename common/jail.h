/* jail.h: run one Python program under limits and report what happened.
 *
 * The jail takes a program, limits and a scratch root, and nothing else: it
 * knows nothing of Redis, HTTP, the LLM or the task format, so it can be
 * tested, fuzzed and benchmarked alone. The containment steps live in
 * jail_contain.c and run in order from one function that reads as a
 * checklist. */
#ifndef SQ_JAIL_H
#define SQ_JAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per-run limits. 0 in a field means "use the default" where a default
 * applies (see sq_jail_limits_apply). */
typedef struct {
  int64_t wall_ms;    /* wall clock before the whole tree is killed */
  int64_t cpu_ms;     /* CPU time (RLIMIT_CPU, rounded up to seconds) */
  int64_t memory_mib; /* address space (RLIMIT_AS) */
  int64_t output_kib; /* stdout and stderr each kept up to this, then output_limit */
} sq_jail_limits;

/* Fills zero fields of lim from defaults, then clamps every field to max. */
void sq_jail_limits_apply(sq_jail_limits *lim, const sq_jail_limits *defaults,
                          const sq_jail_limits *max);

/* How a run ended, from the jail's point of view. */
typedef enum {
  SQ_JAIL_EXITED_OK = 0,   /* exit status 0 */
  SQ_JAIL_EXITED_ERROR,    /* non-zero exit, uncaught exception other than below */
  SQ_JAIL_ASSERTION,       /* uncaught AssertionError (reported by the harness) */
  SQ_JAIL_SIGNALED,        /* killed by a signal not listed below */
  SQ_JAIL_TIMEOUT,         /* wall clock expired; the tree was killed */
  SQ_JAIL_CPU_LIMIT,       /* SIGXCPU or the hard CPU kill */
  SQ_JAIL_MEMORY_LIMIT,    /* MemoryError or an allocation failure under the limit */
  SQ_JAIL_OUTPUT_LIMIT,    /* stdout or stderr exceeded output_kib; the tree was killed */
  SQ_JAIL_POLICY,          /* killed by seccomp (SIGSYS) */
  SQ_JAIL_SETUP_ERROR,     /* the jail itself could not be set up; see error */
} sq_jail_end;

/* Returns a stable name ("exited_ok", "timeout", ...); never NULL. */
const char *sq_jail_end_name(sq_jail_end e);

/* How a run starts: a fresh interpreter per run (fork + exec), or a fork
 * of a warm zygote from a pool (see jail_zygote.c). */
typedef enum { SQ_JAIL_MODE_SPAWN = 0, SQ_JAIL_MODE_WARM } sq_jail_mode;
/* "spawn" or "warm"; never NULL. */
const char *sq_jail_mode_name(sq_jail_mode m);
/* Parses "spawn"/"warm"; returns 0 or SQ_EINVAL. */
int sq_jail_mode_parse(const char *s, sq_jail_mode *out);

/* Containment layers; a run records which were in force. */
typedef enum {
  SQ_JAIL_LAYER_PID_NS = 1u << 0,
  SQ_JAIL_LAYER_NET_NS = 1u << 1,
  SQ_JAIL_LAYER_MOUNT_NS = 1u << 2,
  SQ_JAIL_LAYER_IPC_NS = 1u << 3,
  SQ_JAIL_LAYER_UTS_NS = 1u << 4,
  SQ_JAIL_LAYER_CGROUP_NS = 1u << 5,
  SQ_JAIL_LAYER_NEW_ROOT = 1u << 6,     /* pivot_root into a minimal read-only tree */
  SQ_JAIL_LAYER_UID = 1u << 7,          /* unprivileged uid/gid, no groups */
  SQ_JAIL_LAYER_CAPS = 1u << 8,         /* capability bounding set emptied */
  SQ_JAIL_LAYER_NO_NEW_PRIVS = 1u << 9,
  SQ_JAIL_LAYER_RLIMITS = 1u << 10,
  SQ_JAIL_LAYER_CGROUP_MEMORY = 1u << 11,
  SQ_JAIL_LAYER_CGROUP_PIDS = 1u << 12,
  SQ_JAIL_LAYER_SECCOMP = 1u << 13,     /* default-deny allowlist */
  SQ_JAIL_LAYER_SECCOMP_NOTIFY = 1u << 14, /* a killed run names the call */
} sq_jail_layer;
#define SQ_JAIL_LAYER_COUNT 15
/* Stable name of a single layer bit ("pid_ns", "seccomp", ...), or NULL. */
const char *sq_jail_layer_name(uint32_t layer);

/* What sq_jail_probe found for one layer. */
typedef struct {
  uint32_t layer;
  bool ok;
  char detail[160]; /* why not, or how */
} sq_jail_probe_line;

typedef struct {
  const char *python_path; /* interpreter, e.g. /usr/bin/python3 */
  const char *scratch_root; /* per-run scratch dirs (and the roots' mount point) below it */
  sq_jail_mode mode;        /* default for runs */
  int pool_size;            /* warm zygotes (0: none started; warm runs then fail) */
} sq_jail_config;

typedef struct sq_jail sq_jail;

/* Creates a jail runner. cfg strings are copied. Probes which layers the
 * host enforces and logs a warning naming each missing one. In warm mode
 * starts cfg->pool_size zygotes: each is started by execve with the fixed
 * environment, so it carries nothing of the caller's memory or secrets;
 * still, create the runner before loading secrets where you can.
 * Returns 0, SQ_ENOMEM, SQ_EINVAL, or SQ_EJAIL (scratch root unusable, or
 * the pool could not start). */
int sq_jail_new(const sq_jail_config *cfg, sq_jail **out);
/* Frees the runner; NULL is a no-op. */
void sq_jail_free(sq_jail *j);

typedef struct {
  sq_jail_end end;
  int exit_code;           /* valid when the process exited, else -1 */
  int signal;              /* terminating signal, else 0 */
  char *stdout_buf;        /* owned; NUL-terminated; at most output_kib KiB */
  size_t stdout_len;
  bool stdout_truncated;
  char *stderr_buf;        /* owned; NUL-terminated; at most output_kib KiB */
  size_t stderr_len;
  bool stderr_truncated;
  int64_t wall_ms;
  int64_t cpu_ms;          /* user + system of the whole tree */
  int64_t memory_kib;      /* peak RSS (ru_maxrss of the largest child) */
  char blocked_syscall[32];/* name of the system call seccomp killed, when known */
  sq_jail_mode mode;       /* how the run started */
  uint32_t layers;         /* SQ_JAIL_LAYER_* in force for this run */
  bool oom_killed;         /* the cgroup's OOM killer fired */
  char error[256];         /* set with SQ_JAIL_SETUP_ERROR */
} sq_jail_outcome;

/* Runs program (Python source, program_len bytes) under lim, in the
 * runner's mode. Thread-safe: several threads may call it at once on one
 * runner (each run takes a slot: its own uid, cgroups and, in warm mode,
 * its own zygote); at most 64 runs at once (more fail with SQ_EJAIL);
 * warm runs beyond pool_size wait for a zygote. The outcome's buffers are owned by the caller. The outcome's
 * buffers are owned by the caller: release with sq_jail_outcome_clear.
 * Returns 0 when the program ran (whatever its end), or a negative SQ_E*
 * code when the jail could not be set up (outcome->end is then
 * SQ_JAIL_SETUP_ERROR and outcome->error says why). task_id is used for
 * logging only and may be NULL. */
int sq_jail_run(sq_jail *j, const char *program, size_t program_len, const sq_jail_limits *lim,
                const char *task_id, sq_jail_outcome *outcome);
/* Same, in the mode given (warm needs a pool: pool_size > 0). */
int sq_jail_run_mode(sq_jail *j, sq_jail_mode mode, const char *program, size_t program_len,
                     const sq_jail_limits *lim, const char *task_id, sq_jail_outcome *outcome);

/* Layers this runner enforces (spawn mode). */
uint32_t sq_jail_layers(const sq_jail *j);

/* Probes each layer on this host for `sandq-worker check`: fills up to max
 * lines (one per layer, SQ_JAIL_LAYER_COUNT suffices) and returns how many.
 * python_path is used to try a real run of the interpreter's needs. */
int sq_jail_probe(const char *python_path, sq_jail_probe_line *lines, int max);

/* Frees the outcome's buffers and zeroes it; safe on a zeroed outcome. */
void sq_jail_outcome_clear(sq_jail_outcome *o);

#endif
