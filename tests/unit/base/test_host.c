/* test_host.c: the sizing's view of the host (sq_config_host_probe) within
 * the limits of the process's cgroup and every cgroup above it: a process
 * in a group below one with half a core of CPU quota and 1 GiB of memory
 * is sized for one core and 1024 MiB, and sq_config_derive says why; a
 * quota of 1.5 cores counts as 2. Real cgroups (v1 cpu and memory
 * hierarchies, or v2 with both controllers at its root), made below the
 * root and removed after. Skipped (77) without root or those hierarchies.
 * And a process's own cgroup directory (sq_host_cgroup_dir) where it sits
 * in a cgroup namespace of its own but sees the whole tree mounted (a
 * container given the host's /sys/fs/cgroup): found in the tree, not taken
 * as the mount's root. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "host.h"

static bool v2;
static char cpu_top[128], cpu_leaf[160], mem_top[128], mem_leaf[160];

/* The groups, each a parent with the limits and a leaf below it with none
 * (v2: one pair for both). false when this host cannot have them. */
static bool make_groups(void) {
  struct stat st;
  v2 = stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0;
  if (v2) {
    snprintf(cpu_top, sizeof cpu_top, "/sys/fs/cgroup/sandq-test-host-%d", (int)getpid());
    snprintf(mem_top, sizeof mem_top, "%s", cpu_top);
  } else {
    snprintf(cpu_top, sizeof cpu_top, "/sys/fs/cgroup/cpu/sandq-test-host-%d", (int)getpid());
    snprintf(mem_top, sizeof mem_top, "/sys/fs/cgroup/memory/sandq-test-host-%d", (int)getpid());
  }
  snprintf(cpu_leaf, sizeof cpu_leaf, "%s/leaf", cpu_top);
  snprintf(mem_leaf, sizeof mem_leaf, "%s/leaf", mem_top);
  if (mkdir(cpu_top, 0755) != 0) return false;
  if (!v2 && mkdir(mem_top, 0755) != 0) return false;
  if (mkdir(cpu_leaf, 0755) != 0 || (!v2 && mkdir(mem_leaf, 0755) != 0)) return false;
  char path[300];
  snprintf(path, sizeof path, "%s/%s", cpu_top, v2 ? "cpu.max" : "cpu.cfs_quota_us");
  if (stat(path, &st) != 0) return false; /* v2 without the cpu controller at its root */
  snprintf(path, sizeof path, "%s/%s", mem_top, v2 ? "memory.max" : "memory.limit_in_bytes");
  return stat(path, &st) == 0;
}

static void remove_groups(void) {
  const char *dirs[] = {cpu_leaf, mem_leaf, cpu_top, mem_top};
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 200 && rmdir(dirs[i]) != 0 && errno == EBUSY; k++) usleep(10000);
}

/* Half a core: cpu_millis 500; sets the parent's quota. */
static int set_cpu(int cpu_millis) {
  char v[48];
  if (v2) {
    snprintf(v, sizeof v, "%d 100000", cpu_millis * 100);
    return sq_check_put(cpu_top, "cpu.max", v);
  }
  snprintf(v, sizeof v, "%d", cpu_millis * 100);
  return sq_check_put(cpu_top, "cpu.cfs_period_us", "100000") || sq_check_put(cpu_top, "cpu.cfs_quota_us", v);
}

/* In a child moved into the leaves: the probe, and what derive says. */
static int probe_in_leaf(int64_t want_cores, bool want_quota) {
  char pid[24];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  if (sq_check_put(cpu_leaf, "cgroup.procs", pid) != 0 || (!v2 && sq_check_put(mem_leaf, "cgroup.procs", pid) != 0)) return 10;
  sq_config_host h;
  sq_config_host_probe(&h);
  cpu_set_t set;
  long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  int64_t phys = (int64_t)pages * page / (1024 * 1024);
  int64_t cores = want_cores < cpus ? want_cores : cpus, mib = phys < 1024 ? phys : 1024;
  bool quota = want_quota && want_cores < cpus;
  int ret = 0;
  if (h.cores != cores || h.cpu_quota != quota) ret = 20;
  if (h.memory_mib != mib || h.memory_limited != (phys > 1024)) ret = 21;
  sq_config c;
  sq_config_defaults(&c);
  char note[512];
  sq_config_derive(&c, &h, note, sizeof note);
  if (c.jail_threads != (cores < mib / 512 ? cores : mib / 512)) ret = 22; /* one per core */
  if (quota && !strstr(note, "core(s) (its cgroup's CPU quota)")) ret = 23;
  if (phys > 1024 && !strstr(note, "1024 MiB (its cgroup's memory limit)")) ret = 24;
  if (ret)
    fprintf(stderr, "probe: %lld core(s) quota %d, %lld MiB limited %d; want %lld, %d, %lld; note: %s\n",
            (long long)h.cores, h.cpu_quota, (long long)h.memory_mib, h.memory_limited, (long long)cores, quota,
            (long long)mib, note);
  return ret;
}

static int run_probe(int64_t want_cores, bool want_quota) {
  pid_t p = fork();
  if (p == 0) _exit(probe_in_leaf(want_cores, want_quota));
  int st = 0;
  waitpid(p, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

/* In a child: moved into a group two levels below the cgroup2 mount, then
 * into a cgroup namespace of its own, so /proc/self/cgroup says "/" while
 * the mount still shows the whole tree. */
static int dir_in_namespace(const char *mount, const char *leaf) {
  char pid[24], got[512], before[512], after[512];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  if (sq_check_put(leaf, "cgroup.procs", pid) != 0) return 10;
  if (sq_host_cgroup_dir(mount, "", got, sizeof got) != 0 || strcmp(got, leaf) != 0) return 11; /* no namespace */
  bool v1_memory = access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0;
  if (v1_memory && sq_host_cgroup_dir("/sys/fs/cgroup/memory", "memory", before, sizeof before) != 0) return 12;
  if (unshare(CLONE_NEWCGROUP) != 0) return 13;
  char own[256];
  if (sq_host_cgroup_path("", own, sizeof own) != 0 || own[0]) return 14; /* "/" now */
  if (sq_host_cgroup_dir(mount, "", got, sizeof got) != 0 || strcmp(got, leaf) != 0) {
    fprintf(stderr, "in a cgroup namespace: %s, want %s\n", got, leaf);
    return 15;
  }
  if (v1_memory && (sq_host_cgroup_dir("/sys/fs/cgroup/memory", "memory", after, sizeof after) != 0 ||
                    strcmp(after, before) != 0)) {
    fprintf(stderr, "v1 memory in a cgroup namespace: %s, want %s\n", after, before);
    return 16;
  }
  return 0;
}

static void test_dir_in_namespace(void) {
  const char *mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
  const char *mount = NULL;
  for (int i = 0; i < 2 && !mount; i++) {
    struct statfs sf;
    if (statfs(mounts[i], &sf) == 0 && sf.f_type == 0x63677270) mount = mounts[i]; /* CGROUP2_SUPER_MAGIC */
  }
  if (!mount) {
    sq_check_skip("dir in a namespace", "no cgroup2 hierarchy mounted");
    return;
  }
  char top[128], leaf[160];
  snprintf(top, sizeof top, "%s/sandq-test-host-ns-%d", mount, (int)getpid());
  snprintf(leaf, sizeof leaf, "%s/inner", top);
  CHECK_EQ(mkdir(top, 0755), 0);
  CHECK_EQ(mkdir(leaf, 0755), 0);
  pid_t p = fork();
  if (p == 0) _exit(dir_in_namespace(mount, leaf));
  int st = 0;
  waitpid(p, &st, 0);
  CHECK_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : 100, 0);
  for (int k = 0; k < 200 && rmdir(leaf) != 0 && errno == EBUSY; k++) usleep(10000);
  CHECK_EQ(rmdir(top), 0);
}

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: making cgroups needs root\n");
    return 77;
  }
  test_dir_in_namespace();
  if (!make_groups()) {
    sq_check_skip("limits", "no writable cgroup with CPU quota and memory limit files here");
    remove_groups();
    return sq_check_done("test_host");
  }
  CHECK_EQ(sq_check_put(mem_top, v2 ? "memory.max" : "memory.limit_in_bytes", "1073741824"), 0);
  CHECK_EQ(set_cpu(500), 0);
  CHECK_EQ(run_probe(1, true), 0);  /* half a core: one */
  CHECK_EQ(set_cpu(1500), 0);
  CHECK_EQ(run_probe(2, true), 0); /* a core and a half: two */
  remove_groups();
  struct stat st;
  CHECK(stat(cpu_top, &st) != 0 && stat(mem_top, &st) != 0);
  return sq_check_done("test_host");
}
