/* jail_seccomp.c: the jail's system-call filter (libseccomp), compiled once
 * in the parent and installed in the child with one async-signal-safe call.
 *
 * First jail policy: allow by default; fail what ordinary code may probe
 * (network sockets, new sessions, clone3) with an error; kill the process
 * for what only an attack needs. Foreign architectures and x32 calls are
 * killed too. Namespaces and a tighter allowlist come with the next jail. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"
#include "jail_internal.h"
#include "log.h"

/* Only an attack needs these: the process is killed (SIGSYS). */
static const char *const killed_syscalls[] = {
    "ptrace",        "mount",           "umount2",         "pivot_root",
    "chroot",        "bpf",             "kexec_load",      "kexec_file_load",
    "init_module",   "finit_module",    "delete_module",   "keyctl",
    "add_key",       "request_key",     "userfaultfd",     "perf_event_open",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "unshare",
    "setns",         "personality",     "process_vm_readv", "process_vm_writev",
    "swapon",        "swapoff",         "reboot",
};

/* clone() with any of these makes a namespace: killed like unshare. */
static const unsigned long clone_ns_flags[] = {
    CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
    CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
                const struct scmp_arg_cmp *cmp) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) {
    SQ_WARN("seccomp: system call %s unknown on this architecture; not filtered", name);
    return 0;
  }
  int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
  if (rc < 0) {
    SQ_ERROR("seccomp: cannot add a rule for %s: %s", name, strerror(-rc));
    return SQ_EJAIL;
  }
  return 0;
}

static int add_rules(scmp_filter_ctx ctx) {
  const uint32_t kill = SCMP_ACT_KILL_PROCESS;
  for (size_t i = 0; i < sizeof killed_syscalls / sizeof *killed_syscalls; i++)
    if (rule(ctx, kill, killed_syscalls[i], 0, NULL) != 0) return SQ_EJAIL;

  /* Network probes get EPERM, not a crash; AF_UNIX stays (multiprocessing). */
  struct scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
  if (rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 1, &not_unix) != 0) return SQ_EJAIL;

  /* Injecting input into a terminal. The command is an unsigned int. */
  struct scmp_arg_cmp tiocsti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
  if (rule(ctx, kill, "ioctl", 1, &tiocsti) != 0) return SQ_EJAIL;

  /* The process group is the jail's handle on the whole tree until a pid
   * namespace arrives: leaving it (a setsid'ed daemon) must fail. */
  if (rule(ctx, SCMP_ACT_ERRNO(EPERM), "setsid", 0, NULL) != 0) return SQ_EJAIL;
  if (rule(ctx, SCMP_ACT_ERRNO(EPERM), "setpgid", 0, NULL) != 0) return SQ_EJAIL;

  /* clone3 passes its flags in memory a filter cannot read: ENOSYS makes
   * libc fall back to clone, whose flags we can check. */
  if (rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL) != 0) return SQ_EJAIL;
  for (size_t i = 0; i < sizeof clone_ns_flags / sizeof *clone_ns_flags; i++) {
    struct scmp_arg_cmp ns = SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns_flags[i], clone_ns_flags[i]);
    if (rule(ctx, kill, "clone", 1, &ns) != 0) return SQ_EJAIL;
  }
  return 0;
}

int sq__jail_seccomp_build(struct sock_fprog *prog) {
  int ret = SQ_EJAIL, fd = -1;
  memset(prog, 0, sizeof *prog);
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return SQ_ENOMEM;
  /* The context holds the native architecture only. A call made under any
   * other ABI, and on x86_64 an x32 call (nr | 0x40000000, which libseccomp
   * sends to the bad-arch action when x32 is not in the filter), kills. */
  if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0) {
    SQ_ERROR("seccomp: cannot set the bad-architecture action");
    goto out;
  }
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0) goto out; /* the child sets it */
  if (add_rules(ctx) != 0) goto out;

  /* libseccomp 2.5 exports to a descriptor only: go through a memfd. */
  fd = memfd_create("sandq-seccomp", MFD_CLOEXEC);
  if (fd < 0) {
    SQ_PERROR("seccomp: memfd_create");
    goto out;
  }
  int rc = seccomp_export_bpf(ctx, fd);
  if (rc < 0) {
    SQ_ERROR("seccomp: cannot export the filter: %s", strerror(-rc));
    goto out;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
      st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
    SQ_ERROR("seccomp: exported filter has a bad size");
    goto out;
  }
  struct sock_filter *insns = malloc((size_t)st.st_size);
  if (!insns) {
    ret = SQ_ENOMEM;
    goto out;
  }
  if (pread(fd, insns, (size_t)st.st_size, 0) != st.st_size) {
    SQ_PERROR("seccomp: reading the exported filter");
    free(insns);
    goto out;
  }
  prog->filter = insns;
  prog->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
  ret = 0;
out:
  if (fd >= 0) close(fd);
  seccomp_release(ctx);
  return ret;
}

void sq__jail_seccomp_free(struct sock_fprog *prog) {
  if (!prog) return;
  free(prog->filter);
  prog->filter = NULL;
  prog->len = 0;
}

int sq__jail_seccomp_install(const struct sock_fprog *prog) {
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) == 0 ? 0 : -1;
}
