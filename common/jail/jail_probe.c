/* jail_probe.c: what `sandq-worker check` reports: which containment
 * layers this host can enforce, each probed for real (a clone with the
 * namespace, a cgroup made and removed, a filter loaded in a child). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail_internal.h"

static bool clone_ok(unsigned long flag, char *detail, size_t len) {
  long pid = syscall(SYS_clone, flag | SIGCHLD, NULL, NULL, NULL, 0);
  if (pid == 0) _exit(0);
  if (pid < 0) {
    const char *why = errno == EPERM ? sq_jail_ns_missing_reason() : NULL;
    snprintf(detail, len, "clone failed: %s%s%s%s", strerror(errno), why ? " (" : "", why ? why : "", why ? ")" : "");
    return false;
  }
  int st = 0;
  while (waitpid((pid_t)pid, &st, 0) < 0 && errno == EINTR) {
  }
  snprintf(detail, len, "clone with this namespace works");
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void line(sq_jail_probe_line *l, uint32_t layer, bool ok, const char *detail) {
  l->layer = layer;
  l->ok = ok;
  snprintf(l->detail, sizeof l->detail, "%s", detail);
}

int sq_jail_probe(const char *python_path, sq_jail_probe_line *lines, int max) {
  static const struct {
    uint32_t layer;
    unsigned long flag;
  } ns[] = {{SQ_JAIL_LAYER_PID_NS, CLONE_NEWPID}, {SQ_JAIL_LAYER_NET_NS, CLONE_NEWNET},
            {SQ_JAIL_LAYER_MOUNT_NS, CLONE_NEWNS}, {SQ_JAIL_LAYER_IPC_NS, CLONE_NEWIPC},
            {SQ_JAIL_LAYER_UTS_NS, CLONE_NEWUTS}, {SQ_JAIL_LAYER_CGROUP_NS, CLONE_NEWCGROUP}};
  int n = 0;
  char d[400];
  bool root = geteuid() == 0;
  for (size_t i = 0; i < sizeof ns / sizeof *ns && n < max; i++) {
    bool ok = root && clone_ok(ns[i].flag, d, sizeof d);
    line(&lines[n++], ns[i].layer, ok, root ? d : "needs root (the worker drops to an unprivileged uid itself)");
  }
  bool mnt = n > 2 && lines[2].ok;
  if (n < max) {
    bool py = access(python_path, X_OK) == 0;
    snprintf(d, sizeof d, "%s; read-only /usr, /lib*, /bin, 3 files of /etc, /dev/{null,zero,urandom,random}, "
             "tmpfs scratch (%d MiB, %d inodes)", py ? python_path : "python not found",
             SQ__JAIL_SCRATCH_MIB, SQ__JAIL_SCRATCH_INODES);
    line(&lines[n++], SQ_JAIL_LAYER_NEW_ROOT, mnt && py, mnt ? d : "needs a mount namespace");
  }
  if (n < max) {
    snprintf(d, sizeof d, "uid/gid %u + 64 x block + slot, no supplementary groups", SQ__JAIL_UID_BASE);
    line(&lines[n++], SQ_JAIL_LAYER_UID, root, root ? d : "not root: runs keep the worker's uid");
  }
  if (n < max) line(&lines[n++], SQ_JAIL_LAYER_CAPS, root, root ? "bounding set emptied" : "not root: nothing to drop");
  if (n < max) line(&lines[n++], SQ_JAIL_LAYER_NO_NEW_PRIVS, true, "PR_SET_NO_NEW_PRIVS");
  if (n < max) line(&lines[n++], SQ_JAIL_LAYER_RLIMITS, true, "CPU, AS, NPROC, NOFILE, FSIZE, CORE=0, STACK, MEMLOCK=0");
  uint32_t cg = sq__jail_cgroup_probe(d, sizeof d);
  if (n > 0 && !lines[0].ok) { /* the jail makes cgroups for namespaced runs only (jail.c host_layers) */
    cg = 0;
    snprintf(d, sizeof d, "unused without the namespaces above: runs get rlimits only");
  }
  if (n < max) line(&lines[n++], SQ_JAIL_LAYER_CGROUP_MEMORY, cg & SQ_JAIL_LAYER_CGROUP_MEMORY, d);
  if (n < max) line(&lines[n++], SQ_JAIL_LAYER_CGROUP_PIDS, cg & SQ_JAIL_LAYER_CGROUP_PIDS, d);
  if (n < max) line(&lines[n++], SQ_JAIL_LAYER_CGROUP_CPU, cg & SQ_JAIL_LAYER_CGROUP_CPU, d);
  struct sock_fprog prog;
  bool built = sq__jail_seccomp_build(&prog) == 0;
  bool sec = built && sq__jail_seccomp_probe(&prog, d, sizeof d);
  if (built) sq__jail_seccomp_free(&prog);
  if (n < max) line(&lines[n++], SQ_JAIL_LAYER_SECCOMP, sec, built ? d : "libseccomp could not build the filter");
  bool notify = sec && sq__jail_seccomp_notify_supported();
  if (n < max)
    line(&lines[n++], SQ_JAIL_LAYER_SECCOMP_NOTIFY, notify,
         notify ? "blocked calls are named (user notification)" : "kernel < 5.0 or old libseccomp: killed calls go unnamed");
  return n;
}
