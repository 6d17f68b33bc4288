/* host.c: what this process may use of the machine, for the sizing derived
 * from it (config.c, sq_config_derive): the cores it may run on, capped by
 * its cgroup's CPU quota, and the machine's memory, capped by its cgroup's
 * memory limit. A container or a systemd unit with limits is sized to its
 * limits, not to the machine under it: a worker in a 2-CPU, 2 GiB container
 * on a 64-core host runs 2 x 2 jail threads, not 128 that the quota would
 * throttle and whose memory limits add up past the container's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config.h"
#include "host.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CG_ROOT "/sys/fs/cgroup"

int sq_host_cgroup_path(const char *ctl, char *out, size_t len) {
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f) return -1;
  char line[512];
  int rc = -1;
  while (rc != 0 && fgets(line, sizeof line, f)) {
    char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
    if (!b) continue;
    *b = '\0';
    bool match = !ctl[0] && !a[1];
    char *save = NULL;
    for (char *t = ctl[0] ? strtok_r(a + 1, ",", &save) : NULL; t && !match; t = strtok_r(NULL, ",", &save))
      match = strcmp(t, ctl) == 0;
    if (!match) continue;
    b[1 + strcspn(b + 1, "\n")] = '\0';
    snprintf(out, len, "%s", strcmp(b + 1, "/") == 0 ? "" : b + 1);
    rc = 0;
  }
  fclose(f);
  return rc;
}

/* The root of the mount at mount_point as /proc/self/mountinfo shows it
 * (relative to this process's cgroup namespace: "/../.." for a mount of a
 * tree above it), into out; false when nothing is mounted there. */
static bool mount_root(const char *mount_point, char *out, size_t len) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) return false;
  char line[1024];
  bool found = false;
  while (fgets(line, sizeof line, f)) { /* the last mount there is the one seen */
    char root[512], point[512];
    if (sscanf(line, "%*s %*s %*s %511s %511s", root, point) == 2 && strcmp(point, mount_point) == 0) {
      snprintf(out, len, "%s", root);
      found = true;
    }
  }
  fclose(f);
  return found;
}

/* Whether dir/cgroup.procs lists this process. */
static bool holds_us(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  FILE *f = fopen(path, "re");
  long pid;
  bool us = false;
  while (f && !us && fscanf(f, "%ld", &pid) == 1) us = (pid_t)pid == getpid();
  if (f) fclose(f);
  return us;
}

/* Below dir, depth levels down, the group that holds this process and
 * whose path ends with tail ("" for any), into out; *budget bounds the
 * directories looked at. */
static bool find_us(const char *dir, int depth, const char *tail, char *out, size_t len, int *budget) {
  if (depth == 0) {
    size_t d = strlen(dir), t = strlen(tail);
    if (d >= t && strcmp(dir + d - t, tail) == 0 && holds_us(dir)) {
      snprintf(out, len, "%s", dir);
      return true;
    }
    return false;
  }
  DIR *dp = opendir(dir);
  bool found = false;
  for (struct dirent *e; dp && !found && --*budget > 0 && (e = readdir(dp));) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    char sub[600];
    snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
    found = find_us(sub, depth - 1, tail, out, len, budget);
  }
  if (dp) closedir(dp);
  return found;
}

int sq_host_cgroup_dir(const char *mount_point, const char *ctl, char *out, size_t len) {
  char own[256], root[512];
  if (sq_host_cgroup_path(ctl, own, sizeof own) != 0) return -1;
  snprintf(out, len, "%s%s", mount_point, own);
  if (!mount_root(mount_point, root, sizeof root) || strncmp(root, "/..", 3) != 0) return 0;
  /* The mount shows a tree above our cgroup namespace's root (a container
   * given the host's /sys/fs/cgroup): own is relative to that root, so
   * look for the group that holds us, as deep as the mount's root is above
   * ours plus own's depth. */
  int depth = 0, budget = 100000;
  for (const char *p = root; (p = strstr(p, "/..")); p += 3) depth++;
  for (const char *p = own; (p = strchr(p, '/')); p++) depth++;
  char found[512];
  if (find_us(mount_point, depth, own, found, sizeof found, &budget)) snprintf(out, len, "%s", found);
  return 0;
}

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
  host->memory_mib = mib >= 64 ? mib : 64;
}
