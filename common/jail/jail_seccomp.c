/* jail_seccomp.c: the jail's system-call filter (libseccomp), compiled once
 * in the parent and installed in the child with one async-signal-safe call
 * (jail_seccomp_install.c, which the zygote loop compiles in too).
 *
 * Default deny: only the calls the jail's programs make are allowed:
 * CPython and its standard library, and the compilers and runtimes of the
 * other languages workspace.py runs (found with strace, docs/security.md),
 * plus a language's widenings (SQ_JAIL_WIDEN_*) for its runs alone;
 * anything else fails with EPERM.
 * Calls only an attack needs are sent to the supervisor through a seccomp
 * user-notification listener: it records the call's name and kills the
 * whole tree, so the blocked call never returns. Foreign architectures and
 * x32 calls kill the process outright (SIGSYS, name unknown). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "errors.h"
#include "jail_internal.h"
#include "log.h"

/* What every run may call (Python and the other languages' toolchains).
 * ioctl, socket, clone and prlimit64 are allowed below with argument checks. */
static const char *const allowed_syscalls[] = {
    /* memory */
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync", "mincore", "membarrier",
    /* files and descriptors */
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "lseek",
    "open", "openat", "close", "close_range", "dup", "dup2", "dup3", "fcntl", "flock",
    "stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat",
    "faccessat2", "readlink", "readlinkat", "getdents64", "getcwd", "chdir", "fchdir",
    "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
    "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "umask",
    "truncate", "ftruncate", "fsync", "fdatasync", "fadvise64", "fallocate", "utimensat",
    "copy_file_range", "sendfile", "splice", "pipe", "pipe2", "eventfd2", "memfd_create",
    "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
    /* polling and time */
    "poll", "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl", "epoll_wait",
    "epoll_pwait", "nanosleep", "clock_nanosleep", "clock_gettime", "clock_getres",
    "gettimeofday", "time", "times", "alarm", "setitimer", "getitimer", "timerfd_create",
    "timerfd_settime", "timerfd_gettime",
    /* signals */
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
    "rt_sigpending", "sigaltstack", "restart_syscall", "kill", "tgkill", "tkill", "pause",
    /* processes and threads (clone is checked below) */
    "vfork", "fork", "execve", "exit", "exit_group", "wait4", "waitid", "set_tid_address",
    "set_robust_list", "get_robust_list", "rseq", "futex", "sched_yield", "sched_getaffinity",
    "sched_getparam", "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min",
    "getpriority", "arch_prctl", "getrlimit", "getrusage", "sysinfo", "uname",
    "getrandom", "getcpu", "pidfd_open",
    /* identity (reading it; and setresuid, with which a warm zygote's child
     * takes the slot's uid: a process without capabilities can only choose
     * among the uids it has, which for a task are the slot's alone) */
    "getpid", "getppid", "gettid", "getuid", "geteuid", "getgid", "getegid", "getgroups",
    "getresuid", "getresgid", "getpgrp", "getpgid", "getsid", "setresuid",
    /* AF_UNIX sockets (multiprocessing, socketpair) */
    "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto", "recvfrom",
    "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "getsockname", "getpeername",
    "setsockopt", "getsockopt",
};

/* Calls beyond Python's that a language needs (run.h, SQ_JAIL_WIDEN_*;
 * docs/security.md, "Languages"). The filter is the same for every run (a
 * warm zygote loads it once for all its tasks), so it sends them to the
 * supervisor, which lets them run for a run that keeps the widening and
 * answers EPERM to any other (jail_supervise.c). Without a listener that
 * can let a call run, the filter allows them, and a spawn run that does
 * not keep them stacks a narrowing that gives them EPERM
 * (sq__jail_seccomp_spawn_narrowing). */
static const struct {
  uint32_t bit;
  const char *const calls[6];
} widenings[] = {
    /* POSIX timers of the calling process (Ruby's timer thread): they
     * signal the caller only */
    {SQ_JAIL_WIDEN_TIMERS, {"timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete"}},
};

/* Only an attack needs these: the supervisor names the call and kills the
 * tree (the process is killed outright where no listener is available). */
static const char *const killed_syscalls[] = {
    "ptrace",        "mount",           "umount2",         "pivot_root",
    "chroot",        "bpf",             "kexec_load",      "kexec_file_load",
    "init_module",   "finit_module",    "delete_module",   "keyctl",
    "add_key",       "request_key",     "userfaultfd",     "perf_event_open",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "unshare",
    "setns",         "personality",     "process_vm_readv", "process_vm_writev",
    "swapon",        "swapoff",         "reboot",          "open_by_handle_at",
    "name_to_handle_at", "move_mount",  "open_tree",       "fsopen",
    "fsmount",       "fspick",          "mount_setattr",   "pidfd_getfd",
    "settimeofday",  "clock_settime",   "clock_adjtime",   "adjtimex",
    "acct",          "quotactl",        "lookup_dcookie",  "fanotify_init",
    "kcmp",          "iopl",            "ioperm",          "modify_ldt",
    "vmsplice",      "seccomp",
};

/* ioctl commands Python uses (isatty, non-blocking, close-on-exec). */
static const unsigned long allowed_ioctls[] = {TCGETS, TIOCGWINSZ, FIONBIO, FIOCLEX, FIONCLEX,
                                               FIONREAD, TIOCGPGRP};

/* clone() with any of these makes a namespace, or (CLONE_PARENT) hands the
 * new process to the caller's parent, a warm task's zygote: killed like
 * unshare. */
#define CLONE_NS_FLAGS                                                                             \
  (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |    \
   CLONE_NEWNET | CLONE_PARENT)

/* Whether the listener can let a call run (SECCOMP_USER_NOTIF_FLAG_CONTINUE,
 * Linux 5.5; API level 6 needs 5.7): then the widenings' calls go to it. */
static bool widen_by_listener(void) { return seccomp_api_get() >= 6; }

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
                const struct scmp_arg_cmp *cmp) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) {
    SQ_DEBUG("seccomp: system call %s unknown on this architecture; not listed", name);
    return 0;
  }
  int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
  if (rc < 0) {
    SQ_ERROR("seccomp: cannot add a rule for %s: %s", name, strerror(-rc));
    return SQ_EJAIL;
  }
  return 0;
}

static int add_rules(scmp_filter_ctx ctx, uint32_t kill) {
  for (size_t i = 0; i < sizeof allowed_syscalls / sizeof *allowed_syscalls; i++)
    if (rule(ctx, SCMP_ACT_ALLOW, allowed_syscalls[i], 0, NULL) != 0) return SQ_EJAIL;
  uint32_t widen = kill == SCMP_ACT_NOTIFY && widen_by_listener() ? SCMP_ACT_NOTIFY : SCMP_ACT_ALLOW;
  for (size_t i = 0; i < sizeof widenings / sizeof *widenings; i++)
    for (size_t k = 0; widenings[i].calls[k]; k++)
      if (rule(ctx, widen, widenings[i].calls[k], 0, NULL) != 0) return SQ_EJAIL;
  for (size_t i = 0; i < sizeof killed_syscalls / sizeof *killed_syscalls; i++)
    if (rule(ctx, kill, killed_syscalls[i], 0, NULL) != 0) return SQ_EJAIL;

  /* Network probes get EPERM, not a crash; AF_UNIX stays (multiprocessing).
   * The domain is an int: compare its low 32 bits only. */
  struct scmp_arg_cmp unix_only = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_UNIX);
  if (rule(ctx, SCMP_ACT_ALLOW, "socket", 1, &unix_only) != 0) return SQ_EJAIL;

  /* ioctl: a short list by command (an unsigned int: the kernel ignores the
   * high bits, so the filter masks them too); TIOCSTI kills. */
  for (size_t i = 0; i < sizeof allowed_ioctls / sizeof *allowed_ioctls; i++) {
    struct scmp_arg_cmp cmd = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, allowed_ioctls[i]);
    if (rule(ctx, SCMP_ACT_ALLOW, "ioctl", 1, &cmd) != 0) return SQ_EJAIL;
  }
  struct scmp_arg_cmp tiocsti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
  if (rule(ctx, kill, "ioctl", 1, &tiocsti) != 0) return SQ_EJAIL;

  /* The process group is a second fence in spawn mode (the pid namespace
   * is the first; a warm zygote kills every process of its namespace after
   * each task): leaving it (a setsid'ed daemon) fails: setsid and setpgid
   * are left out of the allowlist on purpose, so they get the default
   * EPERM. */

  /* prlimit64 on the caller only (pid 0, as glibc's getrlimit/setrlimit
   * call it): another process of the same uid, a warm task's zygote above
   * all, keeps its limits. An int: its low 32 bits. Anything else: EPERM. */
  struct scmp_arg_cmp self = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0);
  if (rule(ctx, SCMP_ACT_ALLOW, "prlimit64", 1, &self) != 0) return SQ_EJAIL;

  /* clone3 passes its flags in memory a filter cannot read: ENOSYS makes
   * libc fall back to clone, whose flags we can check. */
  if (rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL) != 0) return SQ_EJAIL;
  struct scmp_arg_cmp no_ns = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NS_FLAGS, 0);
  if (rule(ctx, SCMP_ACT_ALLOW, "clone", 1, &no_ns) != 0) return SQ_EJAIL;
  for (unsigned long bit = 1; bit; bit <<= 1) {
    if (!(CLONE_NS_FLAGS & bit)) continue;
    struct scmp_arg_cmp ns = SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit);
    if (rule(ctx, kill, "clone", 1, &ns) != 0) return SQ_EJAIL;
  }
  return 0;
}

/* Whether this kernel and libseccomp support user notification. */
bool sq__jail_seccomp_notify_supported(void) { return seccomp_api_get() >= 5; }

/* ctx exported into *prog (its instructions malloc'ed). 0, SQ_ENOMEM or
 * SQ_EJAIL. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_fprog *prog) {
  int ret = SQ_EJAIL;
  /* libseccomp 2.5 exports to a descriptor only: go through a memfd. */
  int fd = memfd_create("sandq-seccomp", MFD_CLOEXEC);
  if (fd < 0) {
    SQ_PERROR("seccomp: memfd_create");
    return SQ_EJAIL;
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
  close(fd);
  return ret;
}

int sq__jail_seccomp_build(struct sock_fprog *prog) {
  int ret = SQ_EJAIL;
  memset(prog, 0, sizeof *prog);
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (!ctx) return SQ_ENOMEM;
  /* The context holds the native architecture only. A call made under any
   * other ABI, and on x86_64 an x32 call (nr | 0x40000000, which libseccomp
   * sends to the bad-arch action when x32 is not in the filter), kills. */
  if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0) {
    SQ_ERROR("seccomp: cannot set the bad-architecture action");
    goto out;
  }
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0) goto out; /* the child sets it */
  /* A binary tree over the call numbers rather than a linear list: the
   * kernel emulates the filter for every call number when it is loaded (its
   * action cache), which takes 260 us for the linear filter and 65 us for
   * the tree; same decisions either way. */
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0) SQ_WARN("seccomp: no binary-tree filter layout");
  if (add_rules(ctx, sq__jail_seccomp_notify_supported() ? SCMP_ACT_NOTIFY : SCMP_ACT_KILL_PROCESS) != 0) goto out;
  ret = export_bpf(ctx, prog);
out:
  seccomp_release(ctx);
  return ret;
}

/* The narrowings by the widenings a run keeps (index): built once, kept for
 * the process's life (forked and cloned children read them). len 0: none. */
static struct sock_fprog narrowings[SQ_JAIL_WIDEN_ALL + 1];
static pthread_once_t narrowings_once = PTHREAD_ONCE_INIT;
static int narrowings_rc;
static bool narrow_spawn; /* the filter allows the widenings' calls: spawn runs stack their narrowing */

/* A filter that allows everything but the calls of the widenings not in
 * kept (EPERM). Other architectures pass: the shared filter kills them. */
static int build_narrowing(uint32_t kept, struct sock_fprog *prog) {
  int ret = SQ_EJAIL;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return SQ_ENOMEM;
  if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW) < 0 ||
      seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0)
    goto out;
  for (size_t i = 0; i < sizeof widenings / sizeof *widenings; i++)
    for (size_t k = 0; !(kept & widenings[i].bit) && widenings[i].calls[k]; k++)
      if (rule(ctx, SCMP_ACT_ERRNO(EPERM), widenings[i].calls[k], 0, NULL) != 0) goto out;
  ret = export_bpf(ctx, prog);
out:
  seccomp_release(ctx);
  return ret;
}

static void build_narrowings(void) {
  narrow_spawn = !(sq__jail_seccomp_notify_supported() && widen_by_listener());
  for (uint32_t kept = 0; kept < SQ_JAIL_WIDEN_ALL && narrowings_rc == 0; kept++)
    narrowings_rc = build_narrowing(kept, &narrowings[kept]);
}

int sq__jail_seccomp_narrowings_build(void) {
  pthread_once(&narrowings_once, build_narrowings);
  return narrowings_rc;
}

const struct sock_fprog *sq__jail_seccomp_narrowing(uint32_t kept) {
  const struct sock_fprog *p = &narrowings[kept & SQ_JAIL_WIDEN_ALL];
  return p->len ? p : NULL;
}

const struct sock_fprog *sq__jail_seccomp_spawn_narrowing(uint32_t kept) {
  return narrow_spawn ? sq__jail_seccomp_narrowing(kept) : NULL;
}

void sq__jail_seccomp_free(struct sock_fprog *prog) {
  if (!prog) return;
  free(prog->filter);
  prog->filter = NULL;
  prog->len = 0;
}

/* The widening call nr (native architecture) belongs to, or 0. */
static uint32_t widening_of(int nr) {
  for (size_t i = 0; i < sizeof widenings / sizeof *widenings; i++)
    for (size_t k = 0; widenings[i].calls[k]; k++)
      if (seccomp_syscall_resolve_name(widenings[i].calls[k]) == nr) return widenings[i].bit;
  return 0;
}

int sq__jail_seccomp_read(int fd, char *name, size_t name_len, uint64_t *id, uint32_t *widening) {
  struct seccomp_notif req;
  memset(&req, 0, sizeof req);
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return -1;
  char *s = seccomp_syscall_resolve_num_arch(req.data.arch, req.data.nr);
  if (s) snprintf(name, name_len, "%s", s);
  else snprintf(name, name_len, "syscall_%d", req.data.nr);
  free(s);
  *id = req.id;
  *widening = req.data.arch == seccomp_arch_native() ? widening_of(req.data.nr) : 0;
  return 0;
}

int sq__jail_seccomp_answer(int fd, uint64_t id, bool run) {
  /* CONTINUE: the kernel runs the call as made. Safe here: the decision
   * reads the call's number only, never its arguments in the caller's
   * memory, which could change under it. */
  struct seccomp_notif_resp resp = {.id = id};
  if (run) resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  else resp.error = -EPERM;
  return ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

bool sq__jail_seccomp_probe(const struct sock_fprog *prog, char *detail, size_t len) {
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(detail, len, "fork: %s", strerror(errno));
    return false;
  }
  if (pid == 0) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(2);
    int fd = sq__jail_seccomp_install(prog);
    if (fd < 0) _exit(3);
    /* A denied call must fail with EPERM under the filter. */
    if (syscall(SYS_socket, AF_INET, SOCK_STREAM, 0) >= 0 || errno != EPERM) _exit(4);
    _exit(fd > 0 ? 0 : 5);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  static const char *const why[] = {"default-deny allowlist with a notification listener", "?",
                                    "PR_SET_NO_NEW_PRIVS failed", "the filter could not be loaded",
                                    "the filter did not deny a blocked call",
                                    "no listener: killed calls are not named"};
  snprintf(detail, len, "%s", code >= 0 && code <= 5 ? why[code] : "the probe crashed");
  return code == 0 || code == 5;
}
