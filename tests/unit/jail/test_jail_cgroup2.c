/* test_jail_cgroup2.c: the cgroup v2 delegation (sq__jail_cgroup2_delegate)
 * on this host's real cgroup2 hierarchy: a worker alone in its cgroup
 * moves into a leaf below it and enables the controllers for the groups it
 * makes beside that leaf; one that shares its cgroup with another process,
 * or asks for a controller its cgroup is not handed, is refused with the
 * reason and changes nothing.
 *
 * The memory and pids controllers are what the jail asks for; a host whose
 * cgroup2 hierarchy offers neither (cgroup v1 holds them, as on a hybrid
 * host) lends whichever controller it does offer (hugetlb here): the steps
 * are the same for any. Skipped (77) without root or without a cgroup2
 * hierarchy offering a controller. It makes its groups below the
 * hierarchy's root, enables the lent controller there only if it was not,
 * and undoes both. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "jail_internal.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static char root[64], ctl[32];

static void get(const char *dir, const char *file, char *out, size_t len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, out, len - 1) : -1;
  if (fd >= 0) close(fd);
  out[n > 0 ? n : 0] = '\0';
}

static bool has_word(const char *list, const char *w) {
  size_t k = strlen(w);
  for (const char *p = list; (p = strstr(p, w)); p += k)
    if ((p == list || p[-1] == ' ') && (p[k] == ' ' || p[k] == '\n' || p[k] == '\0')) return true;
  return false;
}

/* The cgroup2 hierarchy and a controller it offers; false when none. */
static bool find_hierarchy(void) {
  static const char *const mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
  static const char *const prefer[] = {"pids", "memory", "hugetlb", "cpu", "io", "misc", "rdma"};
  for (size_t i = 0; i < sizeof mounts / sizeof *mounts; i++) {
    struct statfs sf;
    if (statfs(mounts[i], &sf) != 0 || sf.f_type != CGROUP2_SUPER_MAGIC) continue;
    char offered[256];
    get(mounts[i], "cgroup.controllers", offered, sizeof offered);
    for (size_t k = 0; k < sizeof prefer / sizeof *prefer; k++)
      if (has_word(offered, prefer[k])) {
        snprintf(root, sizeof root, "%s", mounts[i]);
        snprintf(ctl, sizeof ctl, "%s", prefer[k]);
        return true;
      }
  }
  return false;
}

/* In a child moved into base (with a companion process there too when
 * crowded): the delegation of ctl, then what it left. Exit 0 when all is as
 * expected. */
static int child(const char *base, bool crowded) {
  char pid[24], why[512];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  pid_t friend = 0;
  if (crowded && (friend = fork()) == 0) {
    pause();
    _exit(0);
  }
  if (sq_check_put(base, "cgroup.procs", pid) != 0) return 10;
  if (friend > 0) {
    snprintf(pid, sizeof pid, "%d", (int)friend);
    if (sq_check_put(base, "cgroup.procs", pid) != 0) return 11;
  }
  const char *want[] = {ctl};
  int lock = -1;
  int rc = sq__jail_cgroup2_delegate(base, want, 1, &lock, why, sizeof why);
  char own[256], expect_own[256], enabled[256];
  FILE *f = fopen("/proc/self/cgroup", "re");
  own[0] = '\0';
  while (f && fgets(own, sizeof own, f) && strncmp(own, "0::", 3) != 0) {
  }
  if (f) fclose(f);
  get(base, "cgroup.subtree_control", enabled, sizeof enabled);
  int ret = 0;
  if (crowded) {
    /* Refused, with the reason, and nothing moved or enabled. */
    char friend_s[48];
    snprintf(friend_s, sizeof friend_s, "pid %d", (int)friend);
    if (rc != -1 || !strstr(why, "other processes") || !strstr(why, friend_s)) ret = 20;
    if (lock != -1 || has_word(enabled, ctl)) ret = 21;
    snprintf(expect_own, sizeof expect_own, "0::%s\n", base + strlen(root));
    if (strcmp(own, expect_own) != 0) ret = 22;
    kill(friend, SIGKILL);
    waitpid(friend, NULL, 0);
  } else {
    /* Moved into base/sandq-self-PID, ctl enabled in base; a group made
     * below base is handed ctl; asking again changes nothing. */
    snprintf(expect_own, sizeof expect_own, "0::%s/sandq-self-%d\n", base + strlen(root), (int)getpid());
    if (rc != 0) ret = 30;
    else if (lock < 0) ret = 31;
    else if (strcmp(own, expect_own) != 0) ret = 32;
    else if (!has_word(enabled, ctl)) ret = 33;
    char run[512], offered[256];
    snprintf(run, sizeof run, "%s/sandq-run", base);
    if (!ret && mkdir(run, 0755) != 0) ret = 34;
    get(run, "cgroup.controllers", offered, sizeof offered);
    if (!ret && !has_word(offered, ctl)) ret = 35;
    rmdir(run);
    int again = -1;
    if (!ret && (sq__jail_cgroup2_delegate(base, want, 1, &again, why, sizeof why) != 0 || again != -1)) ret = 36;
    /* A controller base is not handed: refused, named. */
    const char *nosuch[] = {"nosuchctl"};
    if (!ret && (sq__jail_cgroup2_delegate(base, nosuch, 1, &again, why, sizeof why) != -1 ||
                 !strstr(why, "nosuchctl is not handed down")))
      ret = 37;
  }
  if (ret) fprintf(stderr, "child (%s): rc %d, why '%s', cgroup %s", crowded ? "crowded" : "alone", rc, why, own);
  return ret;
}

static int run_child(const char *base, bool crowded, pid_t *pid) {
  pid_t p = fork();
  if (p == 0) _exit(child(base, crowded));
  *pid = p;
  int st = 0;
  waitpid(p, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

/* rmdir of dir and of the leaves a delegation made in it (whichever
 * case left one, so a failed check leaves no group behind), again while
 * the kernel still counts a process that just exited. */
static int remove_group(const char *dir) {
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (strncmp(e->d_name, "sandq-self-", 11) != 0) continue;
    char leaf[512];
    snprintf(leaf, sizeof leaf, "%s/%s", dir, e->d_name);
    for (int i = 0; i < 200 && rmdir(leaf) != 0 && errno == EBUSY; i++) usleep(10000);
  }
  if (d) closedir(d);
  char minus[40];
  snprintf(minus, sizeof minus, "-%s", ctl);
  sq_check_put(dir, "cgroup.subtree_control", minus);
  for (int i = 0; i < 200; i++) {
    if (rmdir(dir) == 0 || errno == ENOENT) return 0;
    if (errno != EBUSY) break;
    usleep(10000);
  }
  fprintf(stderr, "rmdir %s: %s\n", dir, strerror(errno));
  return -1;
}

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: moving processes between cgroups needs root\n");
    return 77;
  }
  if (!find_hierarchy()) {
    fprintf(stderr, "SKIP: no cgroup2 hierarchy here offers a controller (cgroup v1 holds them all)\n");
    return 77;
  }
  char enabled[256], plus[40], minus[40];
  snprintf(plus, sizeof plus, "+%s", ctl);
  snprintf(minus, sizeof minus, "-%s", ctl);
  get(root, "cgroup.subtree_control", enabled, sizeof enabled);
  bool enabled_here = !has_word(enabled, ctl);
  if (enabled_here) CHECK_EQ(sq_check_put(root, "cgroup.subtree_control", plus), 0);
  fprintf(stderr, "cgroup2 at %s, lending controller %s\n", root, ctl);
  char alone[128], crowded[160], self[200];
  snprintf(alone, sizeof alone, "%s/sandq-test-%d", root, (int)getpid());
  snprintf(crowded, sizeof crowded, "%s-crowded", alone);
  CHECK_EQ(mkdir(alone, 0755), 0);
  CHECK_EQ(mkdir(crowded, 0755), 0);

  pid_t p1 = 0, p2 = 0;
  CHECK_EQ(run_child(alone, false, &p1), 0);
  CHECK_EQ(run_child(crowded, true, &p2), 0);

  /* Undo: the processes are gone, so their groups can go. */
  snprintf(self, sizeof self, "%s/sandq-self-%d", alone, (int)p1);
  struct stat st;
  CHECK(stat(self, &st) == 0); /* the leaf the delegation made, until removed below */
  CHECK_EQ(remove_group(alone), 0);
  CHECK_EQ(remove_group(crowded), 0);
  if (enabled_here) CHECK_EQ(sq_check_put(root, "cgroup.subtree_control", minus), 0);
  return sq_check_done("test_jail_cgroup2");
}
