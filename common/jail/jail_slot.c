/* jail_slot.c: spawn mode with namespaces. Each slot has a holder: a small
 * process cloned from the worker once, moved into the slot's cgroups once,
 * in a network namespace of its own (only a down lo) and a mount namespace
 * in which it built the jail's read-only root and pivoted into it. Moving a
 * process into a v1 cgroup waits for an RCU grace period (5-10 ms on this
 * class of host) and building the root in a copy of the host's mount table
 * costs more than the interpreter: the holder pays both once per slot.
 *
 * Every run gets an init of its own in fresh pid, mount, IPC, UTS and
 * cgroup namespaces, born in the slot's cgroups, its mount table a copy of
 * the prepared root's dozen mounts. The holder clones it ahead, as a
 * standby (sq__jail_standby in jail_contain.c): while nothing runs in the
 * slot, it sets its hostname, mounts its fresh scratch tmpfs and empties its
 * capability bounding set, then waits, still root, for a run. A run hands
 * the standby its descriptors; it drops to the slot's uid, writes main.py
 * and starts the payload, and the holder prepares the next standby once
 * this run's init has exited. The first run of a slot, or one after the
 * standby died, waits for a standby made on the spot.
 *
 * Protocol on the holder's socket (SOCK_SEQPACKET):
 *   in  hold_req + python path, with [stdout, stderr, status, result, ctl, program memfd, input memfd]
 *   out 'p' + init's pid, with [init's pidfd]          once the init has the run
 * and between the holder and a standby init (its own socketpair):
 *   in  the request as received                        (its descriptors passed on)
 *   out 'a'                                            the init took the run
 * The run's end is the init's report on the result pipe (written once the
 * payload's whole tree is dead, before the namespaces are torn down); the
 * holder reaps the init. The holder exits when its socket closes, killing
 * its inits; they would die with it anyway (PR_SET_PDEATHSIG). Holder code
 * is async-signal-safe: it is a copy of a threaded worker. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors.h"
#include "jail_internal.h"
#include "log.h"
#include "util.h"


#define HOLDER_REPLY_TIMEOUT_MS 5000
#define HOLDER_FDS SQ__JAIL_RUN_FDS
/* Inits that took a run and are not reaped yet: a run has ended for the
 * supervisor when its init reported, which is before the init has exited,
 * so the next run may start while the last one's namespaces are torn down. */
#define HOLDER_MAX_ENDING 4
/* Namespaces a run gets fresh (the holder keeps the slot's net ns). */
#define RUN_NS_FLAGS (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS)

typedef sq__jail_hold_req hold_req;

typedef struct {
  pid_t pid;  /* 0: no holder */
  int pidfd;
  int sock;
  unsigned long owner; /* the runner (sq__jail_common.id) whose root, and profile, the holder has */
} holder;

/* Slot s's holder; only the slot's owner touches holders[s]. */
static holder holders[SQ__JAIL_MAX_SLOTS];

/* ---- the holder (child side) ---- */

/* Fixed descriptors in the holder. */
enum { H_SOCK = 3, H_STATUS = 4, H_SYNC = 5, H_INTERP = 6, H_FIRST_FREE = 7 };

static _Noreturn void h_die(const char *what) { sq__jail_die(what, errno, NULL); }

/* An init of the holder's: the standby (sock: where its run goes) or one
 * that took a run (sock -1). pid 0: none. */
typedef struct {
  pid_t pid;
  int pidfd;
  int sock;
  uint32_t layers; /* what the standby was prepared for */
  unsigned uid;
} h_init;

static h_init standby;
/* The runs' command line and environment: the profile's (sq__jail_common). */
static char *const *h_argv, *const *h_envp;
static h_init ending[HOLDER_MAX_ENDING];

static void h_reap(h_init *p) {
  while (waitpid(p->pid, NULL, __WALL) < 0 && errno == EINTR) {
  }
  close(p->pidfd);
  if (p->sock >= 0) close(p->sock);
  *p = (h_init){.pid = 0, .pidfd = -1, .sock = -1};
}

static void h_kill(h_init *p) {
  syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
  h_reap(p);
}

/* Sends 'p' + pid with the init's pidfd. */
static int h_send_pidfd(pid_t pid, int pidfd) {
  char m[1 + sizeof pid];
  m[0] = 'p';
  memcpy(m + 1, &pid, sizeof pid);
  return sq__jail_send_fds(H_SOCK, m, sizeof m, &pidfd, 1);
}

/* Clones the next run's init into fresh namespaces, where it prepares
 * everything it can (sq__jail_standby) and waits for its run. */
static int h_standby_start(const struct sock_fprog *seccomp, uint32_t layers, unsigned uid) {
  char *const *argv = h_argv, *const *envp = h_envp;
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0) return -1;
  unsigned long flags = RUN_NS_FLAGS | (layers & SQ_JAIL_LAYER_CGROUP_NS ? CLONE_NEWCGROUP : 0);
  int pidfd = -1;
  pid_t pid = (pid_t)syscall(SYS_clone, flags | CLONE_PIDFD | SIGCHLD, NULL, &pidfd, NULL, 0);
  if (pid == 0) {
    sq__jail_child child = {.program_fd = -1, .root_prepared = true, .argv = argv, .envp = envp,
                            .stdout_fd = -1, .stderr_fd = -1, .status_fd = -1, .result_fd = -1,
                            .notify_sock = -1, .sync_fd = -1, .layers = layers, .uid = uid, .drop_uid = true,
                            .seccomp = seccomp};
    sq__jail_standby(&child, sp[1]);
  }
  close(sp[1]);
  if (pid < 0) {
    close(sp[0]);
    return -1;
  }
  standby = (h_init){.pid = pid, .pidfd = pidfd, .sock = sp[0], .layers = layers, .uid = uid};
  return 0;
}

static bool h_exited(const h_init *p) {
  struct pollfd q = {.fd = p->pidfd, .events = POLLIN};
  return poll(&q, 1, 0) != 0;
}

/* Whether the init took its run: its 'a' on the socket, not its death. */
static bool h_acked(const h_init *p) {
  struct pollfd q[2] = {{.fd = p->sock, .events = POLLIN}, {.fd = p->pidfd, .events = POLLIN}};
  for (;;) {
    if (poll(q, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    char a;
    return (q[0].revents & POLLIN) && read(p->sock, &a, 1) == 1 && a == 'a';
  }
}

/* One run (msg is the request as received): hand it to the standby init
 * (one made on the spot if there is none; a standby that died meanwhile is
 * replaced once), hand the init's pidfd to the supervisor. The next standby
 * is made once this init has exited (h_serve). */
static void h_run(const struct sock_fprog *seccomp, const char *msg, size_t len, const int *fds) {
  hold_req rq;
  memcpy(&rq, msg, sizeof rq);
  h_init run;
  for (int attempt = 0;; attempt++) {
    if (standby.pid > 0 && (h_exited(&standby) || standby.layers != rq.layers || standby.uid != rq.uid))
      h_kill(&standby);
    if (standby.pid == 0 && h_standby_start(seccomp, rq.layers, rq.uid) != 0)
      h_die("slot holder: clone of a run's init"); /* the supervisor sees the socket close */
    run = standby;
    standby = (h_init){.pid = 0, .pidfd = -1, .sock = -1};
    if (sq__jail_send_fds(run.sock, msg, len, fds, HOLDER_FDS) == 0 && h_acked(&run)) break;
    h_kill(&run);
    if (attempt == 1) h_die("slot holder: handing a run to its init");
  }
  for (int i = 0; i < HOLDER_FDS; i++) close(fds[i]);
  close(run.sock);
  run.sock = -1;
  if (h_send_pidfd(run.pid, run.pidfd) != 0) syscall(SYS_pidfd_send_signal, run.pidfd, SIGKILL, NULL, 0);
  int free_at = 0;
  while (ending[free_at].pid != 0 && free_at < HOLDER_MAX_ENDING - 1) free_at++;
  if (ending[free_at].pid != 0) h_reap(&ending[free_at]); /* never expected: wait for the oldest */
  ending[free_at] = run;
}

/* Every init goes when the supervisor does (they would with the holder's
 * death too: PR_SET_PDEATHSIG). */
static _Noreturn void h_exit(void) {
  if (standby.pid > 0) h_kill(&standby);
  for (int i = 0; i < HOLDER_MAX_ENDING; i++)
    if (ending[i].pid > 0) h_kill(&ending[i]);
  _exit(0);
}

/* The holder's loop: requests on H_SOCK; standby and ending inits reaped
 * as they exit. */
static _Noreturn void h_serve(const struct sock_fprog *seccomp) {
  standby = (h_init){.pid = 0, .pidfd = -1, .sock = -1};
  for (int i = 0; i < HOLDER_MAX_ENDING; i++) ending[i] = standby;
  for (;;) {
    struct pollfd p[2 + HOLDER_MAX_ENDING];
    p[0] = (struct pollfd){.fd = H_SOCK, .events = POLLIN};
    p[1] = (struct pollfd){.fd = standby.pid > 0 ? standby.pidfd : -1, .events = POLLIN};
    for (int i = 0; i < HOLDER_MAX_ENDING; i++)
      p[2 + i] = (struct pollfd){.fd = ending[i].pid > 0 ? ending[i].pidfd : -1, .events = POLLIN};
    if (poll(p, 2 + HOLDER_MAX_ENDING, -1) < 0) {
      if (errno == EINTR) continue;
      h_exit();
    }
    if (p[1].revents) h_reap(&standby); /* it died waiting: a new one at the next run */
    for (int i = 0; i < HOLDER_MAX_ENDING; i++)
      if (p[2 + i].revents) {
        /* The next run's init, prepared while nothing runs here. */
        if (standby.pid == 0 && h_standby_start(seccomp, ending[i].layers, ending[i].uid) != 0) {
        }
        h_reap(&ending[i]);
      }
    if (!p[0].revents) continue;
    char buf[sizeof(hold_req) + SQ__JAIL_PATH_MAX + 1];
    int fds[HOLDER_FDS];
    ssize_t n = sq__jail_recv_run(H_SOCK, buf, sizeof buf, fds);
    if (n == 0) h_exit();
    if (n < 0) _exit(SQ__JAIL_EXIT_SETUP); /* a broken request: the supervisor replaces us */
    h_run(seccomp, buf, (size_t)n, fds);
  }
}

static _Noreturn void holder_main(int sock, int status_fd, int sync_fd, const sq__jail_common *c,
                                  const sq__jail_cgroup *self_cg) {
  const char *root_dir = c->root_dir;
  const struct sock_fprog *seccomp = &c->seccomp;
  const sq__jail_interp *interp = &c->interp;
  h_argv = c->spawn_argv;
  h_envp = c->spawn_envp;
  /* The copies' tmpfs was opened early (a low number the others may take):
   * out of their way first. */
  int ifd = interp->fd >= 0 ? fcntl(interp->fd, F_DUPFD_CLOEXEC, H_FIRST_FREE + 16) : -1;
  if ((interp->fd >= 0 && ifd < 0) || dup3(sock, H_SOCK, O_CLOEXEC) < 0 || dup3(status_fd, H_STATUS, O_CLOEXEC) < 0 ||
      dup3(sync_fd, H_SYNC, O_CLOEXEC) < 0 || (ifd >= 0 && dup3(ifd, H_INTERP, O_CLOEXEC) < 0))
    _exit(SQ__JAIL_EXIT_SETUP);
  sq__jail_die_to(H_STATUS, -1);
  if (close_range(H_FIRST_FREE, ~0u, 0) != 0)
    for (int fd = H_FIRST_FREE; fd < 65536; fd++) close(fd);
  /* Nothing of the worker's signal handling: default actions (a run's init,
   * pid 1 of its namespace, then ignores every signal sent from inside),
   * nothing blocked, and a session of its own, away from the terminal's. */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++) sigaction(sig, &dfl, NULL); /* SIGKILL/SIGSTOP fail: fine */
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (setsid() < 0) h_die("slot holder: setsid");
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0) h_die("slot holder: /dev/null");
  close(devnull);
  /* Into the slot's cgroups by ourselves where that is cheaper (cgroup v1:
   * sq__jail_cgroup_self_enterable), then the supervisor's byte. */
  if (self_cg && sq__jail_cgroup_enter(self_cg) != 0) h_die("slot holder: entering the cgroups");
  char b;
  if (read(H_SYNC, &b, 1) != 1) h_die("slot holder: waiting for the cgroups");
  close(H_SYNC);
  if (sethostname(SQ__JAIL_HOSTNAME, sizeof SQ__JAIL_HOSTNAME - 1) != 0) h_die("slot holder: sethostname");
  if (sq__jail_mnt_build(root_dir, 0, false, false, interp, ifd >= 0 ? H_INTERP : -1, &c->binds) != 0)
    h_die("slot holder: building the root");
  close(H_INTERP); /* the copies are bound: their tmpfs is not for the runs */
  if (chdir("/") != 0) h_die("slot holder: chdir /");
  close(H_STATUS); /* EOF: ready */
  sq__jail_die_to(-1, -1); /* descriptor 4 may be a run's from here on */
  h_serve(seccomp);
}

/* ---- the supervisor's side ---- */

static void holder_stop(holder *h) {
  if (h->sock >= 0) close(h->sock);
  if (h->pid > 0) {
    kill(h->pid, SIGKILL);
    while (waitpid(h->pid, NULL, __WALL) < 0 && errno == EINTR) {
    }
  }
  if (h->pidfd >= 0) close(h->pidfd);
  *h = (holder){.pid = 0, .pidfd = -1, .sock = -1};
}

static bool holder_alive(const holder *h) {
  if (h->pid <= 0) return false;
  struct pollfd p = {.fd = h->pidfd, .events = POLLIN};
  return poll(&p, 1, 0) == 0;
}

/* Starts slot's holder in cg. Returns 0 or SQ_EJAIL (error says why). */
static int holder_start(holder *h, const sq__jail_common *c, const sq__jail_cgroup *cg, char *error, size_t len) {
  int sock[2] = {-1, -1}, st[2] = {-1, -1}, sy[2] = {-1, -1}, ret = SQ_EJAIL;
  *h = (holder){.pid = 0, .pidfd = -1, .sock = -1};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) != 0 || pipe2(st, O_CLOEXEC) != 0 ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sy) != 0) { /* sy: a socket, as zygote_start's sync */
    snprintf(error, len, "slot holder: pipes: %s", strerror(errno));
    goto out;
  }
  int pidfd = -1;
  pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUTS | CLONE_PIDFD | SIGCHLD, NULL,
                             &pidfd, NULL, 0);
  if (pid < 0) {
    snprintf(error, len, "slot holder: clone: %s", strerror(errno));
    goto out;
  }
  const sq__jail_cgroup *self_cg = sq__jail_cgroup_self_enterable(cg) ? cg : NULL;
  if (pid == 0) holder_main(sock[1], st[1], sy[0], c, self_cg);
  h->pid = pid;
  h->pidfd = pidfd;
  close(st[1]);
  close(sy[0]);
  close(sock[1]);
  st[1] = sy[0] = sock[1] = -1;
  if (!self_cg && sq__jail_cgroup_attach(cg, pid) != 0) SQ_PERROR("jail: moving a slot holder into its cgroups");
  if (send(sy[1], "g", 1, MSG_NOSIGNAL) != 1) {
    snprintf(error, len, "slot holder: died at start");
    goto out;
  }
  char msg[256];
  if (sq__jail_read_status(st[0], msg, sizeof msg) > 0) {
    snprintf(error, len, "%s", msg);
    goto out;
  }
  h->sock = sock[0];
  sock[0] = -1;
  ret = 0;
out:
  int fds[] = {sock[0], sock[1], st[0], st[1], sy[0], sy[1]};
  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    if (fds[i] >= 0) close(fds[i]);
  if (ret != 0) holder_stop(h);
  return ret;
}

/* Sends the request; waits for the init's pidfd. */
static int holder_request(holder *h, const hold_req *rq, const char *python, const int *fds, pid_t *init_pid,
                          int *init_pidfd) {
  char buf[sizeof *rq + SQ__JAIL_PATH_MAX];
  size_t plen = strlen(python);
  if (plen >= SQ__JAIL_PATH_MAX) return -1;
  memcpy(buf, rq, sizeof *rq);
  memcpy(buf + sizeof *rq, python, plen);
  if (sq__jail_send_fds(h->sock, buf, sizeof *rq + plen, fds, HOLDER_FDS) != 0) return -1;

  struct pollfd p = {.fd = h->sock, .events = POLLIN};
  if (poll(&p, 1, HOLDER_REPLY_TIMEOUT_MS) != 1) return -1;
  char reply[1 + sizeof(pid_t)];
  union {
    char b[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } v;
  struct iovec riov = {.iov_base = reply, .iov_len = sizeof reply};
  struct msghdr rmsg = {.msg_iov = &riov, .msg_iovlen = 1, .msg_control = v.b, .msg_controllen = sizeof v.b};
  ssize_t n = recvmsg(h->sock, &rmsg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  int fd = -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&rmsg); c; c = CMSG_NXTHDR(&rmsg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(c), sizeof fd);
  if (n != (ssize_t)sizeof reply || reply[0] != 'p' || fd < 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  memcpy(init_pid, reply + 1, sizeof *init_pid);
  *init_pidfd = fd;
  return 0;
}

/* What the end check needs. */
typedef struct {
  int result_fd;   /* the init's report of the payload's wait status */
  int init_pidfd;
  bool broken;     /* the holder died: replace it */
  int64_t reaped_ms; /* from the report: when the init reaped the payload (0: no report) */
} slot_run;

/* The result pipe is readable: the init's report, or EOF when the init
 * died without one (the holder died, and the init with it). */
static bool slot_end(void *arg, const sq__zygote_msg *msg, int *status, struct rusage *ru) {
  slot_run *r = arg;
  if (msg) return false; /* nothing but NEXT is expected on ctl */
  sq__jail_init_report rep;
  ssize_t n;
  while ((n = read(r->result_fd, &rep, sizeof rep)) < 0 && errno == EINTR) {
  }
  if (n < 0 && errno == EAGAIN) return false;
  if (n != (ssize_t)sizeof rep) {
    r->broken = true;
    *status = SIGKILL; /* as if killed */
    return true;
  }
  *status = rep.status;
  *ru = rep.ru;
  r->reaped_ms = rep.reaped_ms;
  return true;
}

static void slot_kill(void *arg) {
  slot_run *r = arg;
  if (r->init_pidfd >= 0) syscall(SYS_pidfd_send_signal, r->init_pidfd, SIGKILL, NULL, 0);
}

/* A run's descriptors: pipes for stdout, stderr, setup status and the
 * init's report, the ctl socket (seccomp listener), the program's memfd,
 * its input's (/dev/null when it has none). */
typedef struct {
  int out[2], err[2], st[2], res[2], ctl[2], prog, in;
} run_fds;

static void run_fds_close(run_fds *f) {
  int *all[] = {&f->out[0], &f->out[1], &f->err[0], &f->err[1], &f->st[0], &f->st[1],
                &f->res[0], &f->res[1], &f->ctl[0], &f->ctl[1], &f->prog, &f->in};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    if (*all[i] >= 0) close(*all[i]);
    *all[i] = -1;
  }
}

static int run_fds_open(run_fds *f, const char *program, size_t len, const char *input, size_t input_len) {
  *f = (run_fds){{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, -1, -1};
  if (pipe2(f->out, O_CLOEXEC) != 0 || pipe2(f->err, O_CLOEXEC) != 0 || pipe2(f->st, O_CLOEXEC) != 0 ||
      pipe2(f->res, O_CLOEXEC) != 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->ctl) != 0 ||
      (f->prog = sq__jail_program_memfd(program, len)) < 0 || (f->in = sq__jail_input_memfd(input, input_len)) < 0)
    return -1;
  int one = 1;
  setsockopt(f->ctl[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  return 0;
}

int sq__jail_slot_run(const sq__jail_common *c, int slot, sq__jail_cgroup *cg, uint32_t layers, const char *program,
                      size_t len, const char *input, size_t input_len, const sq__jail_plan *plan,
                      const sq_jail_run_opts *opts, sq_jail_outcome *o) {
  holder *h = &holders[slot];
  int ret = SQ_EJAIL;
  run_fds f;
  slot_run r = {.result_fd = -1, .init_pidfd = -1};
  hold_req rq = {.layers = layers, .uid = sq__jail_slot_uid(slot), .plan = *plan};
  int64_t start_ms = 0;
  /* A holder that died just now (its pidfd not yet readable) fails the
   * request: replace it and try once more, with fresh descriptors. */
  for (int attempt = 0;; attempt++) {
    if (!holder_alive(h) || h->owner != c->id) { /* a slot's holder serves one runner's root */
      if (h->pid > 0) holder_stop(h);
      if (holder_start(h, c, cg, o->error, sizeof o->error) != 0) return SQ_EJAIL;
      h->owner = c->id;
    }
    if (run_fds_open(&f, program, len, input, input_len) != 0) {
      snprintf(o->error, sizeof o->error, "pipe2/socketpair/memfd: %s", strerror(errno));
      run_fds_close(&f);
      return SQ_EJAIL;
    }
    int fds[HOLDER_FDS] = {f.out[1], f.err[1], f.st[1], f.res[1], f.ctl[1], f.prog, f.in};
    start_ms = sq_now_mono_ms();
    pid_t init_pid;
    if (holder_request(h, &rq, c->python_path, fds, &init_pid, &r.init_pidfd) == 0) break;
    holder_stop(h);
    run_fds_close(&f);
    if (attempt == 1) {
      snprintf(o->error, sizeof o->error, "slot holder did not start the run");
      return SQ_EJAIL;
    }
  }
  int *child_ends[] = {&f.out[1], &f.err[1], &f.st[1], &f.res[1], &f.ctl[1], &f.prog, &f.in};
  for (size_t i = 0; i < sizeof child_ends / sizeof *child_ends; i++) {
    close(*child_ends[i]);
    *child_ends[i] = -1;
  }
  char setup_msg[sizeof o->error];
  size_t setup_len = sq__jail_read_status(f.st[0], setup_msg, sizeof setup_msg);
  r.result_fd = f.res[0];
  sq__jail_watch w = {.out_fd = f.out[0], .err_fd = f.err[0], .ctl_fd = f.ctl[0], .done_fd = f.res[0], .notify_fd = -1,
                      .kill_pid = -1, .end_check = slot_end, .kill_fallback = slot_kill, .arg = &r,
                      .start_ms = start_ms, .cg = cg, .lim = &plan->lim, .widenings = plan->widenings,
                      .stop = opts->stop};
  f.out[0] = f.err[0] = -1; /* sq__jail_supervise closes them */
  sq_jail_end killed_for;
  int status;
  ret = sq__jail_supervise(&w, o, &killed_for, &status);
  if (ret == SQ_EJAIL) r.broken = true;
  else sq__jail_judge_by_reap(&w, r.reaped_ms, o, &killed_for); /* the init's report: root's, none of the task's */
  if (cg->mem[0]) {
    int64_t peak = sq__jail_cgroup_peak_kib(cg);
    if (peak > 0) o->memory_kib = peak;
    o->oom_killed = sq__jail_cgroup_oom_fired(cg);
  }
  if (ret == SQ_ENOMEM) snprintf(o->error, sizeof o->error, "out of memory while capturing output");
  else if (ret == SQ_EJAIL) snprintf(o->error, sizeof o->error, "the run's init did not report its end");
  else if (setup_len > 0) {
    snprintf(o->error, sizeof o->error, "%s", setup_msg);
    ret = SQ_EJAIL;
  } else o->end = sq__jail_map_end(o, status, killed_for, plan, o->oom_killed);
  if (r.broken) holder_stop(h);
  run_fds_close(&f);
  if (r.init_pidfd >= 0) close(r.init_pidfd);
  return ret;
}

void sq__jail_slot_stop(int slot) {
  if (holders[slot].pid > 0) holder_stop(&holders[slot]);
}
