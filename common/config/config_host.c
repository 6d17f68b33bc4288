/* config_host.c: what this process may use of the machine, for the sizing
 * derived from it (config.c, sq_config_derive): the cores it may run on,
 * capped by its cgroup's CPU quota, and the machine's memory, capped by its
 * cgroup's memory limit. A container or a systemd unit with limits is sized
 * to its limits, not to the machine under it: a worker in a 2-CPU, 2 GiB
 * container on a 64-core host runs 2 x 2 jail threads, not 128 that the
 * quota would throttle and whose memory limits add up past the container's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config.h"
#include "host.h"

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CG_ROOT "/sys/fs/cgroup"

/* The first line of dir/file into buf; false when unreadable. */
static bool read_line(const char *dir, const char *file, char *buf, size_t len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "re");
  bool ok = f && fgets(buf, (int)len, f);
  if (f) fclose(f);
  return ok;
}

/* The smallest limit along this process's cgroup and its ancestors (the
 * kernel enforces each of them), by calling limit_of on each directory
 * from the hierarchy's root at base; -1 when none is set. */
static int64_t smallest(const char *base, const char *own, int64_t (*limit_of)(const char *dir)) {
  char path[512];
  int64_t min = -1;
  snprintf(path, sizeof path, "%s%s", base, own);
  for (;;) {
    int64_t v = limit_of(path);
    if (v > 0 && (min < 0 || v < min)) min = v;
    if (strlen(path) <= strlen(base)) break;
    char *slash = strrchr(path + strlen(base), '/');
    if (!slash) break;
    *slash = '\0';
  }
  return min;
}

/* CPU quota in thousandths of a core; -1 unlimited. */
static int64_t v2_cpu(const char *dir) {
  char b[64];
  long long quota, period;
  if (!read_line(dir, "cpu.max", b, sizeof b) || sscanf(b, "%lld %lld", &quota, &period) != 2 || period <= 0)
    return -1; /* "max PERIOD" does not scan: unlimited */
  return quota * 1000 / period;
}

static int64_t v1_cpu(const char *dir) {
  char q[32], p[32];
  if (!read_line(dir, "cpu.cfs_quota_us", q, sizeof q) || !read_line(dir, "cpu.cfs_period_us", p, sizeof p))
    return -1;
  long long quota = atoll(q), period = atoll(p);
  return quota > 0 && period > 0 ? quota * 1000 / period : -1;
}

/* Memory limit in bytes; -1 unlimited ("max", or v1's page-counter max). */
static int64_t v2_mem(const char *dir) {
  char b[64];
  if (!read_line(dir, "memory.max", b, sizeof b) || strncmp(b, "max", 3) == 0) return -1;
  long long v = atoll(b);
  return v > 0 ? v : -1;
}

static int64_t v1_mem(const char *dir) {
  char b[64];
  if (!read_line(dir, "memory.limit_in_bytes", b, sizeof b)) return -1;
  long long v = atoll(b);
  return v > 0 && v < (1LL << 60) ? v : -1; /* unlimited reads as about 2^63 */
}

/* The cgroup limits on this process: CPU in thousandths of a core and
 * memory in bytes, -1 where none. */
static void cgroup_limits(int64_t *cpu_milli, int64_t *mem_bytes) {
  char dir[512];
  *cpu_milli = *mem_bytes = -1;
  if (access(CG_ROOT "/cgroup.controllers", F_OK) == 0) { /* v2 only */
    if (sq_host_cgroup_dir(CG_ROOT, "", dir, sizeof dir) != 0) return;
    *cpu_milli = smallest(CG_ROOT, dir + strlen(CG_ROOT), v2_cpu);
    *mem_bytes = smallest(CG_ROOT, dir + strlen(CG_ROOT), v2_mem);
    return;
  }
  if (sq_host_cgroup_dir(CG_ROOT "/cpu", "cpu", dir, sizeof dir) == 0)
    *cpu_milli = smallest(CG_ROOT "/cpu", dir + strlen(CG_ROOT "/cpu"), v1_cpu);
  if (sq_host_cgroup_dir(CG_ROOT "/memory", "memory", dir, sizeof dir) == 0)
    *mem_bytes = smallest(CG_ROOT "/memory", dir + strlen(CG_ROOT "/memory"), v1_mem);
}

void sq_config_host_probe(sq_config_host *host) {
  cpu_set_t set;
  long cores = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cores = CPU_COUNT(&set);
  if (cores <= 0) cores = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  int64_t mib = pages > 0 && page > 0 ? (int64_t)pages * page / (1024 * 1024) : 0;
  int64_t cpu_milli, mem_bytes;
  cgroup_limits(&cpu_milli, &mem_bytes);
  host->cpu_quota = host->memory_limited = false;
  if (cpu_milli > 0 && (cpu_milli + 999) / 1000 < cores) { /* a quota of 1.5 cores: 2 */
    cores = (long)((cpu_milli + 999) / 1000);
    host->cpu_quota = true;
  }
  if (mem_bytes > 0 && mem_bytes / (1024 * 1024) < mib) {
    mib = mem_bytes / (1024 * 1024);
    host->memory_limited = true;
  }
  host->cores = cores > 0 ? cores : 1;
  host->memory_mib = mib > 0 ? mib : 64; /* the limit as it is: the worker refuses one too small to run in */
}
