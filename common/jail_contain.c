/* jail_contain.c: the child's side of the jail, between fork and exec.
 *
 * One function runs the containment steps in order and reads as a
 * checklist. Each step is a small function returning 0 or -1 with errno
 * set; a failed step dies loudly (a message on the status pipe and on
 * stderr, exit SQ__JAIL_EXIT_SETUP) and never unwinds. Everything here is
 * async-signal-safe: the parent prepared argv, envp and the seccomp filter
 * before fork, since the worker may have threads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <grp.h>

#include "jail_internal.h"

/* Limits the jail sets besides the per-run ones. */
#define FSIZE_BYTES (16ll << 20) /* largest file the program may write */
#define NPROC_MAX 64             /* processes of the jail's uid */
#define NOFILE_MAX 64            /* open descriptors */

/* Where die() writes; they move to 3 and 2 once descriptors are set up. */
static int status_fd = -1;
static int stderr_fd = -1;

static void put(const char *s) {
  size_t n = strlen(s);
  if (status_fd >= 0 && write(status_fd, s, n) < 0) { /* nothing else to do */
  }
  if (stderr_fd >= 0 && write(stderr_fd, s, n) < 0) {
  }
}

/* Writes "sandq-jail: <step> failed: <ERRNAME> (errno N); hint" and exits. */
static _Noreturn void die(const char *step, int err, const char *hint) {
  char num[16];
  int i = (int)sizeof num - 1;
  num[i] = '\0';
  unsigned v = (unsigned)err;
  do {
    num[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v && i > 0);
  const char *name = strerrorname_np(err);
  put("sandq-jail: ");
  put(step);
  put(" failed: ");
  put(name ? name : "unknown error");
  put(" (errno ");
  put(num + i);
  put(")");
  if (hint) {
    put("; ");
    put(hint);
  }
  put("\n");
  _exit(SQ__JAIL_EXIT_SETUP);
}

static void step(int rc, const char *name, const char *hint) {
  if (rc != 0) die(name, errno, hint);
}

/* A session (and process group) of its own: the parent kills the whole
 * tree with kill(-pid); the filter keeps the tree from leaving it. */
static int new_session(void) { return setsid() < 0 ? -1 : 0; }

/* 0 from /dev/null, 1 and 2 onto the pipes, the status pipe on 3
 * (close-on-exec), every other descriptor closed. */
static int set_up_descriptors(const sq__jail_child *c) {
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0) return -1;
  /* Move everything above 3 first so no dup2 clobbers a source. */
  int out = fcntl(c->stdout_fd, F_DUPFD_CLOEXEC, 10);
  int err = fcntl(c->stderr_fd, F_DUPFD_CLOEXEC, 10);
  int st = fcntl(c->status_fd, F_DUPFD_CLOEXEC, 10);
  int hi_in = fcntl(in, F_DUPFD_CLOEXEC, 10);
  if (out < 0 || err < 0 || st < 0 || hi_in < 0) return -1;
  if (dup2(hi_in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) return -1;
  if (dup3(st, 3, O_CLOEXEC) < 0) return -1;
  status_fd = 3;
  stderr_fd = 2;
  if (close_range(4, ~0u, 0) == 0) return 0;
  if (errno != ENOSYS) return -1;
  struct rlimit rl;
  int top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
  for (int fd = 4; fd < top; fd++) close(fd);
  return 0;
}

static int set_umask(void) {
  umask(077);
  return 0;
}

static int enter_scratch(const sq__jail_child *c) { return chdir(c->scratch_dir); }

static int limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
  return setrlimit(resource, &rl);
}

/* CPU is rounded up to whole seconds: SIGXCPU at the soft limit, SIGKILL
 * one second later at the hard one. */
static int set_limits(const sq__jail_child *c) {
  const sq_jail_limits *l = c->lim;
  rlim_t cpu_s = (rlim_t)((l->cpu_ms + 999) / 1000);
  if (cpu_s < 1) cpu_s = 1;
  rlim_t as = (rlim_t)l->memory_mib << 20;
  if (limit(RLIMIT_CPU, cpu_s, cpu_s + 1) != 0) return -1;
  if (limit(RLIMIT_AS, as, as) != 0) return -1;
  if (limit(RLIMIT_NOFILE, NOFILE_MAX, NOFILE_MAX) != 0) return -1;
  if (limit(RLIMIT_FSIZE, FSIZE_BYTES, FSIZE_BYTES) != 0) return -1;
  if (limit(RLIMIT_NPROC, NPROC_MAX, NPROC_MAX) != 0) return -1;
  if (limit(RLIMIT_CORE, 0, 0) != 0) return -1;
  if (limit(RLIMIT_MEMLOCK, 0, 0) != 0) return -1;
  return 0;
}

/* As root: no supplementary groups, then gid and uid nobody; checked by
 * trying to get root back. */
static int drop_privileges(const sq__jail_child *c) {
  if (!c->drop_uid) return 0;
  if (setgroups(0, NULL) != 0) return -1;
  if (setresgid(SQ__JAIL_UID, SQ__JAIL_UID, SQ__JAIL_UID) != 0) return -1;
  if (setresuid(SQ__JAIL_UID, SQ__JAIL_UID, SQ__JAIL_UID) != 0) return -1;
  if (setuid(0) == 0) {
    errno = EPERM;
    return -1;
  }
  return 0;
}

static int no_new_privs(void) { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }

_Noreturn void sq__jail_contain(const sq__jail_child *c) {
  status_fd = c->status_fd;
  stderr_fd = c->stderr_fd;

  step(new_session(), "setsid", NULL);
  step(set_up_descriptors(c), "descriptors", NULL);
  step(set_umask(), "umask", NULL);
  step(enter_scratch(c), "chdir to the scratch dir", "is the scratch root searchable?");
  step(set_limits(c), "rlimits", NULL);
  /* Next jail: namespaces (user, pid, mount, net, ipc, uts) go here. */
  /* Next jail: a new root (pivot_root into a minimal tree) goes here. */
  /* Next jail: joining the run's cgroup (memory, pids, cpu) goes here; a
   * warm pool would fork from a pre-contained template at this point. */
  step(drop_privileges(c), "dropping to uid 65534", NULL);
  step(no_new_privs(), "PR_SET_NO_NEW_PRIVS", NULL);
  step(sq__jail_seccomp_install(c->seccomp), "loading the seccomp filter",
       "does the kernel have CONFIG_SECCOMP_FILTER?");
  execve(c->python_path, c->argv, c->envp);
  die("execve of the interpreter", errno, "check python_path");
}
