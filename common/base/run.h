/* run.h: the vocabulary of one jailed run, shared by the jail (which fills
 * it), the verdict (which reads it) and config (which sets its limits).
 *
 * Types, names and limit arithmetic only: nothing here runs a program, so a
 * module that needs to speak of a run (the producer's config, the verdict)
 * links no jail code. */
#ifndef SQ_RUN_H
#define SQ_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per-run limits. 0 in a field means "use the default" where a default
 * applies (see sq_jail_limits_apply). */
typedef struct {
  int64_t wall_ms;    /* wall clock before the whole tree is killed */
  int64_t cpu_ms;     /* CPU time of the whole tree */
  int64_t memory_mib; /* address space (RLIMIT_AS) */
  int64_t output_kib; /* stdout and stderr each kept up to this, then output_limit */
  int64_t address_space_mib; /* RLIMIT_AS when > 0 (else memory_mib): for a runtime that reserves
                                far more than it uses (the JVM), held by the memory cgroup instead;
                                never filled or clamped by sq_jail_limits_apply */
} sq_jail_limits;

/* Widenings of the jail's seccomp filter beyond what Python needs, one bit
 * each (jail_seccomp.c lists their calls). A run without a bit gets EPERM
 * for those calls (docs/security.md, "Languages"). */
typedef enum {
  SQ_JAIL_WIDEN_TIMERS = 1u << 0, /* POSIX timers of the caller (Ruby's timer thread) */
} sq_jail_widening;
#define SQ_JAIL_WIDEN_ALL 0x1u

/* The wall clock counts what a run could have run: the time its processes
 * were runnable but waited for a CPU (a busy host) moves its deadline by
 * as much, up to this many times wall_ms of real time in all (the
 * backstop). CPU-bound work meets cpu_ms however busy the host. */
#define SQ_JAIL_WALL_BACKSTOP 6

/* Fills zero fields of lim from defaults, then clamps every field to max.
 * defaults and max may be NULL (nothing filled, nothing clamped). */
void sq_jail_limits_apply(sq_jail_limits *lim, const sq_jail_limits *defaults,
                          const sq_jail_limits *max);

/* A run's RLIMIT_CPU soft limit for cpu_ms: whole seconds rounded up, at
 * least 1 (SIGXCPU there, SIGKILL a second later). The jail's run plan and
 * a workspace program's own limits (common/judge/workspace.c) both use it.
 * Inline: the zygote loop, which links no library, needs it too. */
static inline int64_t sq_jail_cpu_limit_s(int64_t cpu_ms) {
  int64_t s = (cpu_ms + 999) / 1000;
  return s < 1 ? 1 : s;
}

/* A run's address space (RLIMIT_AS) in MiB: address_space_mib when set,
 * else memory_mib. */
static inline int64_t sq_jail_address_space_mib(const sq_jail_limits *lim) {
  return lim->address_space_mib > 0 ? lim->address_space_mib : lim->memory_mib;
}

/* How a run ended, from the jail's point of view: X(enum suffix, wire name). */
#define SQ_JAIL_END_LIST(X)                                                                        \
  X(EXITED_OK, "exited_ok")       /* exit status 0 */                                              \
  X(EXITED_ERROR, "exited_error") /* non-zero exit, uncaught exception other than below */          \
  X(ASSERTION, "assertion")       /* uncaught AssertionError (reported by the harness) */           \
  X(SIGNALED, "signaled")         /* killed by a signal not listed below */                         \
  X(TIMEOUT, "timeout")           /* wall clock expired; the tree was killed */                     \
  X(CPU_LIMIT, "cpu_limit")       /* SIGXCPU or the hard CPU kill */                                \
  X(MEMORY_LIMIT, "memory_limit") /* MemoryError or an allocation failure under the limit */        \
  X(OUTPUT_LIMIT, "output_limit") /* stdout or stderr exceeded output_kib; the tree was killed */   \
  X(POLICY, "policy")             /* killed by seccomp (SIGSYS) */                                  \
  X(SETUP_ERROR, "setup_error")   /* the jail itself could not be set up; see error */

typedef enum {
#define SQ__X(e, name) SQ_JAIL_##e,
  SQ_JAIL_END_LIST(SQ__X)
#undef SQ__X
} sq_jail_end;

/* Returns a stable name ("exited_ok", "timeout", ...); never NULL. */
const char *sq_jail_end_name(sq_jail_end e);

/* How a run starts: a fresh interpreter per run (fork + exec), or a fork
 * of a warm zygote from a pool (see jail_pool.c). */
typedef enum { SQ_JAIL_MODE_SPAWN = 0, SQ_JAIL_MODE_WARM } sq_jail_mode;
/* "spawn" or "warm"; never NULL. */
const char *sq_jail_mode_name(sq_jail_mode m);
/* Parses "spawn"/"warm"; returns 0 or SQ_EINVAL. */
int sq_jail_mode_parse(const char *s, sq_jail_mode *out);

/* Containment layers, one bit each in this order; a run records which were
 * in force. X(enum suffix, wire name). */
#define SQ_JAIL_LAYER_LIST(X)                                                                      \
  X(PID_NS, "pid_ns")                                                                              \
  X(NET_NS, "net_ns")                                                                              \
  X(MOUNT_NS, "mount_ns")                                                                          \
  X(IPC_NS, "ipc_ns")                                                                              \
  X(UTS_NS, "uts_ns")                                                                              \
  X(CGROUP_NS, "cgroup_ns")                                                                        \
  X(NEW_ROOT, "new_root")             /* pivot_root into a minimal read-only tree */               \
  X(UID, "uid")                       /* unprivileged uid/gid, no groups */                        \
  X(CAPS, "caps")                     /* capability bounding set emptied */                        \
  X(NO_NEW_PRIVS, "no_new_privs")                                                                  \
  X(RLIMITS, "rlimits")                                                                            \
  X(CGROUP_MEMORY, "cgroup_memory")                                                                \
  X(CGROUP_PIDS, "cgroup_pids")                                                                    \
  X(SECCOMP, "seccomp")               /* default-deny allowlist */                                 \
  X(SECCOMP_NOTIFY, "seccomp_notify") /* a killed run names the call */                           \
  X(CGROUP_CPU, "cgroup_cpu")         /* the whole tree's CPU time measured and limited */

enum {
#define SQ__X(e, name) SQ__JAIL_LAYER_BIT_##e,
  SQ_JAIL_LAYER_LIST(SQ__X)
#undef SQ__X
  SQ_JAIL_LAYER_COUNT
};
typedef enum {
#define SQ__X(e, name) SQ_JAIL_LAYER_##e = 1u << SQ__JAIL_LAYER_BIT_##e,
  SQ_JAIL_LAYER_LIST(SQ__X)
#undef SQ__X
} sq_jail_layer;

/* Stable name of a single layer bit ("pid_ns", "seccomp", ...), or NULL. */
const char *sq_jail_layer_name(uint32_t layer);
/* Fills names[0..) with the names of the bits set in layers, in list order,
 * at most max of them (SQ_JAIL_LAYER_COUNT suffices); returns how many.
 * The names are static. */
int sq_jail_layers_names(uint32_t layers, const char **names, int max);

/* What one run reported. */
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
  int64_t cpu_wait_ms;     /* how long the tree was runnable but waited for a CPU (a busy
                              host); credited to the wall clock, see SQ_JAIL_WALL_BACKSTOP */
  bool starved;            /* ended TIMEOUT by the backstop while it still had credit due:
                              the host's doing, not the program's (worth another attempt) */
  char blocked_syscall[32];/* name of the system call seccomp killed, when known */
  sq_jail_mode mode;       /* how the run started */
  uint32_t layers;         /* SQ_JAIL_LAYER_* in force for this run */
  bool oom_killed;         /* the cgroup's OOM killer fired */
  char error[256];         /* set with SQ_JAIL_SETUP_ERROR */
} sq_jail_outcome;

/* Frees the outcome's buffers and zeroes it; safe on a zeroed outcome. */
void sq_jail_outcome_clear(sq_jail_outcome *o);

#endif
