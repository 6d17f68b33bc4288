/* jail_plan.c: a run's plan and the one rlimit setter (jail_plan.h). No
 * library calls but setrlimit: the zygote loop compiles it too. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jail_plan.h"

#include <stdint.h>
#include <sys/resource.h>

const sq__zygote_rlimit sq__jail_fixed_rlimits[SQ__JAIL_FIXED_RLIMITS] = {
    {RLIMIT_NOFILE, SQ__JAIL_NOFILE_MAX, SQ__JAIL_NOFILE_MAX},
    {RLIMIT_FSIZE, SQ__JAIL_FSIZE_BYTES, SQ__JAIL_FSIZE_BYTES},
    {RLIMIT_NPROC, SQ__JAIL_NPROC_MAX, SQ__JAIL_NPROC_MAX},
    {RLIMIT_CORE, 0, 0},
    {RLIMIT_STACK, SQ__JAIL_STACK_BYTES, SQ__JAIL_STACK_BYTES},
    {RLIMIT_MEMLOCK, 0, 0},
};

void sq__jail_task_rlimits(int64_t cpu_s, int64_t as_bytes, sq__zygote_rlimit out[2]) {
  out[0] = (sq__zygote_rlimit){.res = RLIMIT_CPU, .soft = cpu_s, .hard = cpu_s + 1};
  out[1] = (sq__zygote_rlimit){.res = RLIMIT_AS, .soft = as_bytes, .hard = as_bytes};
}

void sq__jail_plan_make(const sq_jail_limits *lim, uint32_t widenings, sq__jail_plan *p) {
  p->lim = *lim;
  p->widenings = widenings;
  p->cpu_s = sq_jail_cpu_limit_s(lim->cpu_ms);
  int64_t as_mib = sq_jail_address_space_mib(lim);
  p->as_bytes = as_mib > (INT64_MAX >> 20) ? -1 : as_mib << 20; /* past 8 EiB: none */
  p->cgroup_mib = lim->memory_mib;
  sq__jail_task_rlimits(p->cpu_s, p->as_bytes, p->rlimits);
  for (int i = 0; i < SQ__JAIL_FIXED_RLIMITS; i++) p->rlimits[2 + i] = sq__jail_fixed_rlimits[i];
}

int sq__jail_rlimits_set(const sq__zygote_rlimit *l, int n) {
  for (int i = 0; i < n; i++) {
    struct rlimit rl = {.rlim_cur = l[i].soft < 0 ? RLIM_INFINITY : (rlim_t)l[i].soft,
                        .rlim_max = l[i].hard < 0 ? RLIM_INFINITY : (rlim_t)l[i].hard};
    if (setrlimit(l[i].res, &rl) != 0) return i;
  }
  return -1;
}

static const char *rlimit_name(int res) {
  switch (res) {
  case RLIMIT_CPU: return "RLIMIT_CPU";
  case RLIMIT_AS: return "RLIMIT_AS";
  case RLIMIT_NOFILE: return "RLIMIT_NOFILE";
  case RLIMIT_FSIZE: return "RLIMIT_FSIZE";
  case RLIMIT_NPROC: return "RLIMIT_NPROC";
  case RLIMIT_CORE: return "RLIMIT_CORE";
  case RLIMIT_STACK: return "RLIMIT_STACK";
  case RLIMIT_MEMLOCK: return "RLIMIT_MEMLOCK";
  default: return NULL;
  }
}

/* Appends s at *at within cap - 1 bytes. */
static void put(char *out, size_t cap, size_t *at, const char *s) {
  while (*s && *at + 1 < cap) out[(*at)++] = *s++;
}

static void put_num(char *out, size_t cap, size_t *at, int64_t v) {
  if (v < 0) {
    put(out, cap, at, "unlimited");
    return;
  }
  char d[24];
  int i = (int)sizeof d - 1;
  d[i] = '\0';
  do {
    d[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v && i > 0);
  put(out, cap, at, d + i);
}

void sq__jail_rlimit_describe(const char *prefix, const sq__zygote_rlimit *l, char *out, size_t cap) {
  if (!cap) return;
  size_t at = 0;
  put(out, cap, &at, prefix);
  const char *name = rlimit_name(l->res);
  if (name) put(out, cap, &at, name);
  else {
    put(out, cap, &at, "rlimit ");
    put_num(out, cap, &at, l->res);
  }
  put(out, cap, &at, "=");
  put_num(out, cap, &at, l->soft);
  put(out, cap, &at, ":");
  put_num(out, cap, &at, l->hard);
  out[at] = '\0';
}
