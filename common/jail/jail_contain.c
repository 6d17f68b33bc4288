/* jail_contain.c: the child's side of the jail, between clone and exec.
 *
 * One function runs the containment steps in order and reads as a
 * checklist. Each step is a small function returning 0 or -1 with errno
 * set; a failed step dies loudly (a message on the status pipe and on
 * stderr, exit SQ__JAIL_EXIT_SETUP) and never unwinds. Everything here is
 * async-signal-safe: the parent prepared argv, envp and the seccomp filter
 * before clone, since the worker may have threads.
 *
 * With namespaces the cloned child is pid 1 of a new pid namespace: it
 * builds the root, drops its identity, starts the payload and reaps until
 * the payload ends, then exits, which kills whatever the payload left. A
 * spawn slot's init is cloned ahead as a standby (sq__jail_standby): it
 * runs the steps that need no descriptor of the run before the run exists,
 * and the rest once the run's descriptors arrive. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail_internal.h"
#include "util.h"

/* Fixed descriptor numbers once set_up_descriptors ran. A warm zygote's
 * channel to its init takes FD_SYNC's number once that is closed. */
enum { FD_STATUS = 3, FD_RESULT = 4, FD_NOTIFY = 5, FD_SYNC = 6, FD_PROGRAM = 7, FD_INTERP = 8, FD_FIRST_FREE = 9 };
enum { FD_ZYGOTE_INIT = SQ__ZYGOTE_INIT_FD };
_Static_assert(SQ__ZYGOTE_INIT_FD == FD_SYNC, "the zygote's init channel reuses the sync pipe's number");
_Static_assert(SQ__ZYGOTE_CTL_FD == FD_NOTIFY, "the zygote's control socket is the notify socket");

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

void sq__jail_die_to(int status, int err_fd) {
  status_fd = status;
  stderr_fd = err_fd;
}

_Noreturn void sq__jail_die(const char *step, int err, const char *hint) {
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

/* A standby init (sq__jail_standby) prepares before it has anywhere to
 * report to: while deferring, a failed step is remembered (the first one)
 * and reported once the run's status pipe has arrived. */
static bool deferring;
static struct {
  const char *name;
  const char *hint;
  int err;
} deferred;

static void step(int rc, const char *name, const char *hint) {
  if (rc == 0) return;
  if (!deferring) sq__jail_die(name, errno, hint);
  if (!deferred.name) {
    deferred.name = name;
    deferred.hint = hint;
    deferred.err = errno;
  }
}

/* A session (and process group) of its own: the parent kills the whole
 * tree with kill(-pid); the filter keeps the tree from leaving it. */
static int new_session(void) { return setsid() < 0 ? -1 : 0; }

/* Moves fd to want (close-on-exec unless keep); for a -1 fd, want is
 * closed (whatever the parent left there must not stay open). */
static int place(int fd, int want, bool cloexec) {
  if (fd < 0) {
    close(want);
    return 0;
  }
  return dup3(fd, want, cloexec ? O_CLOEXEC : 0) < 0 ? -1 : 0;
}

/* 0 from /dev/null (or the run's input), 1 and 2 onto the pipes, the status pipe on 3, the
 * init's result pipe on 4, the notification socket on 5, the sync pipe on
 * 6, the program's memfd on 7, the interpreter's copies on 8 until the
 * root is built (all close-on-exec; 5 kept across exec for the warm
 * zygote), every other descriptor closed. */
static int set_up_descriptors(const sq__jail_child *c) {
  int in = c->has_input ? c->input_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0) return -1;
  /* Move everything above the fixed numbers first so no dup clobbers a source. */
  int src[] = {in, c->stdout_fd, c->stderr_fd, c->status_fd, c->result_fd, c->notify_sock, c->sync_fd,
               c->program_fd, c->interp ? c->interp->fd : -1};
  int hi[9];
  for (int i = 0; i < 9; i++) {
    hi[i] = src[i] < 0 ? -1 : fcntl(src[i], F_DUPFD_CLOEXEC, 16);
    if (src[i] >= 0 && hi[i] < 0) return -1;
  }
  if (dup2(hi[0], 0) < 0 || dup2(hi[1], 1) < 0 || dup2(hi[2], 2) < 0) return -1;
  if (place(hi[3], FD_STATUS, true) || place(hi[4], FD_RESULT, true) ||
      place(hi[5], FD_NOTIFY, !c->warm) || place(hi[6], FD_SYNC, true) || place(hi[7], FD_PROGRAM, true) ||
      place(hi[8], FD_INTERP, true))
    return -1;
  status_fd = FD_STATUS;
  stderr_fd = 2;
  if (close_range(FD_FIRST_FREE, ~0u, 0) == 0) return 0;
  if (errno != ENOSYS) return -1;
  for (int fd = FD_FIRST_FREE; fd < 65536; fd++) close(fd);
  return 0;
}

/* Waits for the parent to place us in the run's cgroups (and to be sure
 * the parent is still there); on cgroup v1 we enter them ourselves first
 * (self_cg: sq__jail_cgroup_self_enterable says why), and the parent's
 * byte only says it is there. A run started by its slot's holder is born
 * in the cgroups and has nothing to wait for. */
static int wait_for_parent(const sq__jail_child *c) {
  if (c->sync_fd < 0) return 0;
  if (c->self_cg && sq__jail_cgroup_enter(c->self_cg) != 0) return -1;
  char b;
  ssize_t n;
  while ((n = read(FD_SYNC, &b, 1)) < 0 && errno == EINTR) {
  }
  close(FD_SYNC);
  if (n == 1) return 0;
  errno = n == 0 ? EPIPE : errno;
  return -1;
}

/* A spawn run's init dies with the supervising thread (and with it the
 * whole namespace). Not for a zygote: the thread that started it may end
 * long before the pool; a zygote's init ends its namespace when the
 * worker's end of the control socket closes (warm_init). */
static int die_with_parent(const sq__jail_child *c) {
  return c->warm ? 0 : prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
}

static int set_hostname(void) { return sethostname(SQ__JAIL_HOSTNAME, sizeof SQ__JAIL_HOSTNAME - 1); }

int sq__jail_program_memfd(const char *program, size_t len) {
  int fd = memfd_create("sandq-main.py", MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (sq_write_all(fd, program, len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int sq__jail_input_memfd(const char *input, size_t len) {
  if (!input) return open("/dev/null", O_RDONLY | O_CLOEXEC);
  int fd = sq__jail_program_memfd(input, len);
  if (fd >= 0 && lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Copies the program's memfd to fd. */
static int copy_program(int fd) {
  char buf[16384];
  off_t off = 0;
  for (;;) {
    ssize_t n = pread(FD_PROGRAM, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    if (sq_write_all(fd, buf, (size_t)n) != 0) return -1;
    off += n;
  }
  return close(FD_PROGRAM);
}

/* main.py into the scratch tmpfs, written as the run's uid (the init has
 * dropped to it; the scratch is its own): from the program's memfd (a
 * holder's run) or from memory. */
static int write_program(const sq__jail_child *c) {
  if (c->warm) return 0; /* the zygote's child writes each task's program */
  int fd = open(SQ__JAIL_SCRATCH "/main.py", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return -1;
  int rc = c->program_fd >= 0 ? copy_program(fd) : sq_write_all(fd, c->program, c->program_len);
  close(fd);
  return rc;
}

/* The root: a holder prepared it once for its slot (only a fresh scratch
 * tmpfs is mounted per run), or it is built here. */
static int build_root(const sq__jail_child *c) {
  if (c->root_prepared) return sq__jail_mnt_scratch("", c->uid);
  int rc = sq__jail_mnt_build(c->root_dir, c->uid, true, c->warm, c->interp, c->interp ? FD_INTERP : -1, c->binds);
  int err = errno;
  close(FD_INTERP); /* nothing after the root needs the copies' tmpfs */
  errno = err;
  return rc;
}

static int set_umask(void) {
  umask(077);
  return 0;
}

static int enter_scratch(const sq__jail_child *c) {
  return chdir(c->layers & SQ_JAIL_LAYER_NEW_ROOT ? SQ__JAIL_SCRATCH : c->scratch_dir);
}

/* The step's name once set_limits failed: the limit and its values. */
static char limits_step[96] = "rlimits";

/* The plan's rlimits (jail_plan.h); a warm zygote's task child sets the
 * same through the zygote (jail_zygote.c, zygote_loop.c). */
static int set_limits(const sq__jail_child *c) {
  if (c->warm) return 0;
  int bad = sq__jail_rlimits_set(c->plan->rlimits, SQ__JAIL_PLAN_RLIMITS);
  if (bad < 0) return 0;
  sq__jail_rlimit_describe("setting ", &c->plan->rlimits[bad], limits_step, sizeof limits_step);
  return -1;
}

/* Empties the capability bounding set (needs CAP_SETPCAP: before the uid
 * drop). Capabilities past the kernel's last one fail EINVAL: done. */
static int drop_bounding_set(const sq__jail_child *c) {
  if (!c->drop_uid) return 0;
  for (int cap = 0; cap <= 63; cap++)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) return 0;
      return -1;
    }
  return 0;
}

/* As root: no supplementary groups, then the run's gid, and real_uid as
 * the real and saved uid, the run's as the effective one; checked by
 * trying to get root back. Raw system calls: glibc's wrappers broadcast the
 * change to every thread it believes exists, and this copy of a threaded
 * worker has only one (it would wait for the others forever). */
static int set_identity(const sq__jail_child *c, unsigned real_uid) {
  if (syscall(SYS_setgroups, 0, NULL) != 0) return -1;
  if (syscall(SYS_setresgid, c->uid, c->uid, c->uid) != 0) return -1;
  if (syscall(SYS_setresuid, real_uid, c->uid, real_uid) != 0) return -1;
  if (syscall(SYS_setuid, 0) == 0) {
    errno = EPERM;
    return -1;
  }
  return 0;
}

/* The run's uid and gid in all three. */
static int drop_privileges(const sq__jail_child *c) { return c->drop_uid ? set_identity(c, c->uid) : 0; }

static int no_new_privs(void) { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }

ssize_t sq__jail_recv_run(int sock, char *buf, size_t cap, int *fds) {
  struct iovec iov = {.iov_base = buf, .iov_len = cap - 1};
  union {
    char b[CMSG_SPACE(SQ__JAIL_MAX_SEND_FDS * sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
  ssize_t n;
  while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return n;
  int got[SQ__JAIL_MAX_SEND_FDS], nfds = 0;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      if (nfds > SQ__JAIL_MAX_SEND_FDS) nfds = SQ__JAIL_MAX_SEND_FDS;
      memcpy(got, CMSG_DATA(cm), (size_t)nfds * sizeof(int));
    }
  if (nfds != SQ__JAIL_RUN_FDS || (size_t)n <= sizeof(sq__jail_hold_req) || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
    for (int i = 0; i < nfds; i++) close(got[i]);
    errno = EPROTO;
    return -1;
  }
  memcpy(fds, got, sizeof(int) * SQ__JAIL_RUN_FDS);
  buf[n] = '\0';
  return n;
}

/* The filter, its listener handed to the supervisor; the last step before
 * exec. A warm zygote loads it itself, once its modules are imported.
 * Where the listener cannot answer the widenings' calls the filter allows
 * them: the run's narrowing, stacked first, denies those it does not keep. */
static int load_seccomp(const sq__jail_child *c) {
  if (c->warm) return 0;
  if (sq__jail_seccomp_narrow(sq__jail_seccomp_spawn_narrowing(c->plan->widenings)) != 0) return -1;
  int fd = sq__jail_seccomp_install(c->seccomp);
  if (fd < 0) return -1;
  if (fd > 0) {
    char next[SQ__ZYGOTE_NEXT_MAX];
    size_t len = sq__zygote_encode_next(next, sizeof next, -1); /* NEXT, bare: the clock is already going */
    if (c->notify_sock >= 0 && sq__jail_send_fds(FD_NOTIFY, next, len, &fd, 1) != 0) return -1;
    close(fd);
  }
  if (c->notify_sock >= 0) close(FD_NOTIFY);
  return 0;
}

static _Noreturn void exec_interpreter(const sq__jail_child *c) {
  execve(c->python_path, c->argv, c->envp);
  sq__jail_die("execve of the interpreter", errno, "check python_path");
}

/* A warm zygote's init stays root (it mounts each task's fresh scratch), so
 * its payload drops the identity itself, and unblocks what the init
 * blocked. Real and saved uid the zygote's own, effective uid the slot's
 * (sq__jail_zygote_uid): the exec makes the saved uid the effective one
 * (and the exec a secure one: AT_SECURE), the zygote's loop sets it back
 * to the real one, and each task's child takes the slot's uid in all
 * three. The loop sets no_new_privs: set here, the exec would reset the
 * effective uid to the real one. */
static int warm_identity(const sq__jail_child *c) {
  if (!c->warm) return 0;
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, NULL) != 0) return -1;
  return set_identity(c, c->zygote_uid);
}

/* The payload: its own session, limits, the filter, the interpreter. */
static _Noreturn void payload(const sq__jail_child *c) {
  if (c->layers & SQ_JAIL_LAYER_PID_NS) close(FD_RESULT);
  step(warm_identity(c), "dropping the zygote to the run's uid", NULL);
  step(new_session(), "setsid", NULL);
  step(set_limits(c), limits_step, NULL);
  step(load_seccomp(c), "loading the seccomp filter", "does the kernel have CONFIG_SECCOMP_FILTER?");
  exec_interpreter(c);
}

/* pid 1: reaps until the payload ends, then kills and reaps whatever it
 * left, and reports the payload's wait status with the CPU time of the
 * whole tree (sq__jail_init_report). The run has ended when the report is
 * written: the namespaces are torn down after, off the supervisor's path. */
static _Noreturn void init_finish(sq__jail_init_report *rep);

static _Noreturn void init_reap(pid_t child) {
  sq__jail_init_report rep;
  memset(&rep, 0, sizeof rep);
  for (;;) {
    int status = 0;
    pid_t p = waitpid(-1, &status, __WALL);
    if (p < 0 && errno == EINTR) continue;
    if (p < 0) break;
    if (p == child) {
      rep.status = status;
      rep.reaped_ms = sq_now_mono_ms();
      break;
    }
  }
  init_finish(&rep);
}

/* Kills and reaps whatever is left, reports, exits. */
static _Noreturn void init_finish(sq__jail_init_report *rep_in) {
  sq__jail_init_report rep = *rep_in;
  kill(-1, SIGKILL); /* every other process of the namespace */
  for (;;) {
    pid_t p = waitpid(-1, NULL, __WALL);
    if (p < 0 && errno != EINTR) break;
  }
  getrusage(RUSAGE_CHILDREN, &rep.ru);
  if (sq_write_all(FD_RESULT, (const char *)&rep, sizeof rep) != 0) { /* nobody listens */
  }
  _exit(0);
}

/* AddressSanitizer cannot follow a jump to a stack of our own (it warns on
 * the payload's stderr, and may report falsely after): its builds start the
 * payload as a plain fork-style copy instead. */
#if defined(__SANITIZE_ADDRESS__)
#define SQ__JAIL_PAYLOAD_COPIES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SQ__JAIL_PAYLOAD_COPIES 1
#endif
#endif

#ifndef SQ__JAIL_PAYLOAD_COPIES
/* The payload shares the init's memory until it execs (vfork-style: no
 * copy of the init's page tables, and the init waits meanwhile); it runs on
 * this stack and touches nothing else but its own descriptor table. glibc's
 * clone() is a bare wrapper: unlike fork() it takes no lock that another
 * thread of the worker may have held when the init was cloned. */
static char payload_stack[64 * 1024] __attribute__((aligned(16)));

static int payload_entry(void *arg) { payload(arg); }
#endif

static pid_t start_payload(const sq__jail_child *c) {
#ifdef SQ__JAIL_PAYLOAD_COPIES
  pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
  if (pid == 0) payload(c);
  return pid;
#else
  return (pid_t)clone(payload_entry, payload_stack + sizeof payload_stack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      (void *)c);
#endif
}

/* pid 1's steps before it has a run: what needs no descriptor of the run,
 * so a standby init does them ahead. */
static void prepare_init(const sq__jail_child *c) {
  step(die_with_parent(c), "PR_SET_PDEATHSIG", NULL);
  step(wait_for_parent(c), "entering the cgroups and waiting for the supervisor", NULL);
  step(set_hostname(), "sethostname in the UTS namespace", NULL);
  step(build_root(c), "building the new root",
       "the scratch root must be on a local filesystem; see docs/security.md");
  step(set_umask(), "umask", NULL);
  step(enter_scratch(c), "chdir to the scratch dir", NULL);
  step(drop_bounding_set(c), "emptying the capability bounding set", NULL);
}

/* Replaces the scratch tmpfs with a fresh one, whatever the last task left
 * in it (nested directories, modes, a deleted main.py): detached, so even a
 * process still inside it cannot keep it in view. */
static int fresh_scratch(const sq__jail_child *c) {
  if (umount2(SQ__JAIL_SCRATCH, MNT_DETACH) != 0) return -1;
  return sq__jail_mnt_scratch("", c->uid);
}

/* A warm zygote's init: pid 1 of the zygote's namespaces, it stays root
 * while its payload (the zygote, dropped to the run's uid) serves tasks. It
 * mounts a fresh scratch whenever the zygote asks (on FD_ZYGOTE_INIT; a
 * task's child has closed its copy), reaps every process the namespace
 * orphans as it goes (SIGCHLD through a signalfd), and ends the namespace
 * when the zygote exits or when the worker is gone: FD_NOTIFY, the zygote's
 * control socket, hangs up once the worker's end is closed, so a worker
 * killed with SIGKILL takes its zygotes and their running tasks with it. */
static _Noreturn void warm_init(const sq__jail_child *c) {
  int sp[2];
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  step(chdir("/"), "chdir / (a zygote's init stays out of the scratch it replaces)", NULL);
  step(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), "socketpair for the zygote's init channel", NULL);
  int mine = fcntl(sp[0], F_DUPFD_CLOEXEC, FD_FIRST_FREE); /* sp[0] may be FD_ZYGOTE_INIT itself */
  if (mine < 0 || dup3(sp[1], FD_ZYGOTE_INIT, 0) < 0) sq__jail_die("descriptors (the zygote's init channel)", errno, NULL);
  if (sp[0] != FD_ZYGOTE_INIT) close(sp[0]);
  if (sp[1] != FD_ZYGOTE_INIT) close(sp[1]);
  sp[0] = mine;
  step(sigprocmask(SIG_BLOCK, &chld, NULL), "blocking SIGCHLD", NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) sq__jail_die("signalfd", errno, NULL);
  pid_t child = start_payload(c);
  if (child < 0) sq__jail_die("fork of the payload", errno, NULL);
  close(FD_ZYGOTE_INIT);
  close(FD_STATUS); /* EOF there tells the parent the payload exec'd (or died) */
  close(0);         /* the input is the payload's alone */
  close(1);
  close(2);
  sq__jail_init_report rep;
  memset(&rep, 0, sizeof rep);
  struct pollfd p[3] = {{.fd = sfd, .events = POLLIN}, {.fd = sp[0], .events = POLLIN}, {.fd = FD_NOTIFY, .events = 0}};
  for (;;) {
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[2].revents) break; /* the worker is gone: so is everything here */
    if (p[0].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) > 0) {
      }
      int status = 0;
      bool ended = false;
      for (pid_t r; (r = waitpid(-1, &status, WNOHANG | __WALL)) > 0;)
        if (r == child) {
          rep.status = status;
          rep.reaped_ms = sq_now_mono_ms();
          ended = true;
        }
      if (ended) break;
    }
    if (p[1].revents) { /* SCRATCH (zygote_proto.h): anything else is answered SCRATCH_FAILED */
      char b[SQ__ZYGOTE_SHORT_MAX], answer[SQ__ZYGOTE_SHORT_MAX];
      int nfds;
      ssize_t n = sq__jail_recv_fds(sp[0], b, sizeof b, 0, NULL, 0, &nfds, NULL);
      if (n == 0 || (n < 0 && errno != EMSGSIZE)) { /* the zygote is going; its exit ends us */
        p[1].fd = -1;
        continue;
      }
      sq__zygote_msg m;
      bool ok = n > 0 && sq__zygote_decode(SQ__ZYGOTE_AT_INIT, b, (size_t)n, nfds, &m) == SQ__ZYGOTE_SCRATCH &&
                fresh_scratch(c) == 0;
      size_t len = sq__zygote_encode_short(ok ? SQ__ZYGOTE_SCRATCH_OK : SQ__ZYGOTE_SCRATCH_FAILED, answer, sizeof answer);
      if (sq__jail_send_fds(sp[0], answer, len, NULL, 0) != 0) p[1].fd = -1;
    }
  }
  init_finish(&rep);
}

/* pid 1 with its run: the identity (a standby stays root until it has a
 * run: no process runs as a slot's uid between runs), the program, the
 * payload, the reaping. A warm zygote's init goes its own way (above). */
static _Noreturn void run_init(const sq__jail_child *c) {
  if (c->warm) warm_init(c);
  step(drop_privileges(c), "dropping to the run's uid", NULL);
  step(no_new_privs(), "PR_SET_NO_NEW_PRIVS", NULL);
  step(write_program(c), "writing main.py", NULL);
  pid_t child = start_payload(c);
  if (child < 0) sq__jail_die("fork of the payload", errno, NULL);
  close(FD_STATUS); /* EOF there tells the parent the payload exec'd (or died) */
  close(1);         /* and the output pipes reach EOF when the payload's tree is gone */
  close(2);
  init_reap(child);
}

_Noreturn void sq__jail_contain(const sq__jail_child *c) {
  sq__jail_die_to(c->status_fd, c->stderr_fd);
  bool ns = c->layers & SQ_JAIL_LAYER_PID_NS;

  step(set_up_descriptors(c), "descriptors", NULL);
  if (!ns) { /* no namespaces (not root): the old single-process jail */
    step(set_umask(), "umask", NULL);
    step(enter_scratch(c), "chdir to the scratch dir", "is the scratch root searchable?");
    step(drop_privileges(c), "dropping privileges", NULL);
    step(no_new_privs(), "PR_SET_NO_NEW_PRIVS", NULL);
    payload(c);
  }
  prepare_init(c);
  run_init(c);
}

/* Receives a run (sq__jail_hold_req, python path, SQ__JAIL_RUN_FDS
 * descriptors) on sock into c; static storage, as c points into it. */
static int receive_run(int sock, sq__jail_child *c) {
  static char buf[sizeof(sq__jail_hold_req) + SQ__JAIL_PATH_MAX + 1];
  static sq__jail_hold_req rq;
  int fds[SQ__JAIL_RUN_FDS];
  ssize_t n = sq__jail_recv_run(sock, buf, sizeof buf, fds);
  if (n <= 0) return -1; /* 0: the holder closed our socket */
  memcpy(&rq, buf, sizeof rq);
  c->python_path = buf + sizeof rq;
  c->plan = &rq.plan;
  c->stdout_fd = fds[0];
  c->stderr_fd = fds[1];
  c->status_fd = fds[2];
  c->result_fd = fds[3];
  c->notify_sock = fds[4];
  c->program_fd = fds[5];
  c->has_input = true;
  c->input_fd = fds[6];
  if (sq_write_all(sock, "a", 1) != 0) return -1; /* the holder may go on */
  return close(sock);
}

_Noreturn void sq__jail_standby(sq__jail_child *c, int sock) {
  sq__jail_die_to(-1, -1);
  if (dup3(sock, FD_STATUS, O_CLOEXEC) < 0) _exit(SQ__JAIL_EXIT_SETUP);
  if (close_range(FD_STATUS + 1, ~0u, 0) != 0)
    for (int fd = FD_STATUS + 1; fd < 65536; fd++) close(fd);
  deferring = true;
  prepare_init(c);
  if (receive_run(FD_STATUS, c) != 0) _exit(SQ__JAIL_EXIT_SETUP); /* the holder is gone or broken */
  deferring = false;
  sq__jail_die_to(c->status_fd, c->stderr_fd);
  step(set_up_descriptors(c), "descriptors", NULL);
  if (deferred.name) {
    errno = deferred.err;
    step(-1, deferred.name, deferred.hint);
  }
  run_init(c);
}
