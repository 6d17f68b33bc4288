/* jail_plan.h: a run's plan: every limit a run is held to, worked out once
 * from its sq_jail_limits, and the one function that sets rlimits (in a
 * spawn payload, in a warm zygote and in its task's child). Compiled into
 * the jail library and the zygote loop alike: pure data and
 * async-signal-safe calls only. */
#ifndef SQ_JAIL_PLAN_H
#define SQ_JAIL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"
#include "zygote_proto.h" /* sq__zygote_rlimit: one rlimit, -1 unlimited */

/* Limits the jail sets besides the per-run ones. */
#define SQ__JAIL_FSIZE_BYTES (16ll << 20) /* largest file the program may write */
#define SQ__JAIL_NPROC_MAX 64             /* processes of the run's uid */
#define SQ__JAIL_NOFILE_MAX 64            /* open descriptors */
#define SQ__JAIL_STACK_BYTES (8ll << 20)

/* The rlimits every run gets whatever its limits, in the order they are
 * set: NOFILE, FSIZE, NPROC, CORE 0, STACK, MEMLOCK 0. */
#define SQ__JAIL_FIXED_RLIMITS 6
extern const sq__zygote_rlimit sq__jail_fixed_rlimits[SQ__JAIL_FIXED_RLIMITS];

/* A task's own rlimits (CPU, AS), then the fixed ones. */
#define SQ__JAIL_PLAN_RLIMITS (2 + SQ__JAIL_FIXED_RLIMITS)

typedef struct {
  sq_jail_limits lim; /* the run's limits, every one filled (> 0) */
  uint32_t widenings; /* SQ_JAIL_WIDEN_* the run's filter keeps (sq_jail_run_opts) */
  int64_t cpu_s;      /* RLIMIT_CPU's soft limit (sq_jail_cpu_limit_s): SIGXCPU there,
                         SIGKILL at the hard one, a second later */
  int64_t as_bytes;   /* RLIMIT_AS (sq_jail_address_space_mib) */
  int64_t cgroup_mib; /* the memory cgroup's limit (jail_cgroup.c adds its slack) */
  sq__zygote_rlimit rlimits[SQ__JAIL_PLAN_RLIMITS]; /* what a spawn payload sets, in order */
} sq__jail_plan;

/* Works out p from lim, whose limits are filled (sq_jail_limits_apply),
 * and the widenings the run keeps. */
void sq__jail_plan_make(const sq_jail_limits *lim, uint32_t widenings, sq__jail_plan *p);
/* A task's CPU and AS rlimits from the plan's cpu_s and as_bytes into
 * out[0..2): what a warm task's child sets from its TASK message. */
void sq__jail_task_rlimits(int64_t cpu_s, int64_t as_bytes, sq__zygote_rlimit out[2]);
/* Sets l[0..n) in order. Returns -1 when every one was set, else the
 * index of the one that failed (errno set). Async-signal-safe. */
int sq__jail_rlimits_set(const sq__zygote_rlimit *l, int n);
/* prefix, then one rlimit and its values, into out (cap bytes,
 * NUL-terminated, cut to fit): "RLIMIT_AS=536870912:536870912" (soft:hard,
 * "unlimited" for -1). Leaves errno alone. Async-signal-safe. */
void sq__jail_rlimit_describe(const char *prefix, const sq__zygote_rlimit *l, char *out, size_t cap);

#endif
