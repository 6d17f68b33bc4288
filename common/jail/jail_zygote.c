/* jail_zygote.c: one warm zygote: its start, its stop, and one task on
 * it. Each zygote is a Python interpreter started by execve (so it holds
 * nothing of the worker's memory) inside the jail's namespaces, root, uid
 * and cgroups, prepared once, with the usual modules imported (zygote.py,
 * embedded). It loads the seccomp filter once, before its first task, and
 * hands its listener over with "ready". It forks the child for the next
 * task ahead; the child, under the filter, waits for its task, sets every
 * rlimit from the worker's values and the task's, and runs the program;
 * each child is a fresh copy, so nothing one task changes in the
 * interpreter reaches the next. After each task the zygote, its subreaper,
 * kills whatever the task left in its namespace, and its init mounts a
 * fresh scratch before the next child.
 *
 * No task can signal its zygote (its real and saved uid are not the
 * task's: sq__jail_zygote_uid). A zygote that died, was killed, or stopped
 * answering is replaced, and so is one whose cgroup refuses the next
 * task's memory limit or whose child cannot take a task (it reports "e" or
 * dies before the task's code ran: the pool tries the task once more,
 * jail_pool.c). A task's wall clock starts when its child takes it. A task
 * ends when the kernel shows its child exiting (jail_warm_end.c), before
 * the zygote has reaped it; its next task waits for that reaping. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors.h"
#include "jail_zygote.h"
#include "log.h"
#include "util.h"

#define READY_TIMEOUT_MS 30000 /* a profile's preload (pandas) takes seconds on a cold page cache */
#define TAKE_TIMEOUT_MS 10000 /* from sending a task to a child taking it (the zygote's cleanup included) */
#define CTL_SNDBUF_BYTES (4 << 20)
#define REAP_TIMEOUT_MS 5000 /* a task that ended early: its reaping, before the next */

void sq__jail_zygote_stop(sq__jail_zygote *z) {
  if (z->init > 0) {
    kill(z->init, SIGKILL);
    while (waitpid(z->init, NULL, __WALL) < 0 && errno == EINTR) {
    }
  }
  z->init = 0;
  z->zpid = 0;
  z->reap_pending = false;
  z->standby[0] = '\0';
  int fds[] = {z->pidfd, z->ctl, z->result_fd, z->notify};
  for (size_t i = 0; i < 4; i++)
    if (fds[i] >= 0) close(fds[i]);
  z->pidfd = z->ctl = z->result_fd = z->notify = -1;
  sq__jail_cgroup_destroy(&z->cg);
}

/* Waits up to timeout_ms for one message on fd and decodes it as the
 * supervisor's (zygote_proto.h); returns its kind (SQ__ZYGOTE_BAD on
 * timeout too). *sender (may be NULL) gets the sender's pid (SO_PASSCRED),
 * 0 if none; *passed (may be NULL: closed) a descriptor passed with it, -1
 * if none. buf (cap bytes) holds the message m points into. */
static sq__zygote_kind recv_timed(int fd, char *buf, size_t cap, int timeout_ms, sq__zygote_msg *m, pid_t *sender,
                                  int *passed) {
  if (sender) *sender = 0;
  if (passed) *passed = -1;
  m->kind = SQ__ZYGOTE_BAD;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, timeout_ms) != 1) return SQ__ZYGOTE_BAD;
  int fds[SQ__ZYGOTE_MAX_FDS], nfds;
  ssize_t n = sq__jail_recv_fds(fd, buf, cap, MSG_DONTWAIT, fds, SQ__ZYGOTE_MAX_FDS, &nfds, sender);
  if (n < 0) return SQ__ZYGOTE_BAD;
  sq__zygote_decode(SQ__ZYGOTE_AT_SUPERVISOR, buf, (size_t)n, nfds, m);
  for (int i = 0; i < nfds; i++) {
    if (passed && i == 0) *passed = fds[0];
    else close(fds[i]);
  }
  return m->kind;
}

/* The LIMITS message into out (cap bytes; its length, 0 if it does not
 * fit): every resource's rlimit, the worker's own values with the jail's
 * fixed ones in place (jail_plan.h; CPU and AS come with each task). */
static size_t limits_msg(char *out, size_t cap) {
  size_t at = sq__zygote_encode_limit(out, cap, true, NULL);
  for (int r = 0; at && r < RLIM_NLIMITS; r++) {
    struct rlimit rl;
    sq__zygote_rlimit l = {.res = r, .soft = -1, .hard = -1};
    if (getrlimit(r, &rl) == 0) {
      l.soft = rl.rlim_cur == RLIM_INFINITY ? -1 : (int64_t)rl.rlim_cur;
      l.hard = rl.rlim_max == RLIM_INFINITY ? -1 : (int64_t)rl.rlim_max;
    }
    for (int i = 0; i < SQ__JAIL_FIXED_RLIMITS; i++)
      if (sq__jail_fixed_rlimits[i].res == r) l = sq__jail_fixed_rlimits[i];
    size_t n = sq__zygote_encode_limit(out + at, cap - at, false, &l);
    at = n ? at + n : 0;
  }
  return at;
}

/* Clone into namespaces, contain, exec the zygote loop, send the
 * rlimits and the filter, wait for "ready" (jail_zygote.h). */
int sq__jail_zygote_start(const sq__jail_common *c, sq__jail_zygote *z) {
  int ret = SQ_EJAIL;
  int st_p[2] = {-1, -1}, res_p[2] = {-1, -1}, sync_p[2] = {-1, -1}, ctl[2] = {-1, -1};
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  int err = fcntl(2, F_DUPFD_CLOEXEC, 3);
  z->pidfd = z->ctl = z->result_fd = -1;
  z->init = 0;
  if (devnull < 0 || err < 0 || pipe2(st_p, O_CLOEXEC) != 0 || pipe2(res_p, O_CLOEXEC) != 0 ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync_p) != 0 ||
      socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) != 0) {
    SQ_PERROR("warm pool: pipes");
    goto out;
  }
  int one = 1, sndbuf = CTL_SNDBUF_BYTES;
  setsockopt(ctl[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  setsockopt(ctl[0], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf);
  setsockopt(ctl[1], SOL_SOCKET, SO_RCVBUFFORCE, &sndbuf, sizeof sndbuf);
  char name[64];
  snprintf(name, sizeof name, "z%d-%d", (int)getpid(), z->slot); /* z: warm pool, s: spawn */
  z->layers = (c->layers & ~SQ__JAIL_CGROUP_LAYERS) |
              (sq__jail_cgroup_create(&z->cg, name, 512, SQ__JAIL_NPROC_MAX + 4) & c->layers);
  char slot[24];
  snprintf(slot, sizeof slot, "slot=%d", z->slot);
  const char *base[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" SQ__JAIL_SCRATCH, "PYTHONDONTWRITEBYTECODE=1",
                        "PYTHONIOENCODING=utf-8", "LD_BIND_NOW=1" /* zygote.py: removed there, and SANDQ_PRELOAD */,
                        NULL};
  char *envp[sizeof c->spawn_envp / sizeof *c->spawn_envp + 3];
  sq__jail_envp(c, base, c->preload, envp, sizeof envp / sizeof *envp - 1); /* fits: one more than spawn_envp */
  if (c->prelude) { /* SANDQ_PRELUDE last (zygote.py removes it too) */
    size_t n = 0;
    while (envp[n]) n++;
    envp[n] = c->prelude;
    envp[n + 1] = NULL;
  }
  /* A short command line that names the zygote and its slot (zygote_proto.h). */
  char *argv[8];
  sq__jail_argv(c, argv, SQ__ZYGOTE_PY, slot, z->lean ? "lean" : "full");
  sq__jail_child child = {.python_path = c->python_path, .root_dir = c->root_dir, .program_fd = -1, .argv = argv, .envp = envp,
                          .stdout_fd = devnull, .stderr_fd = err, .status_fd = st_p[1],
                          .sync_fd = sync_p[0], .result_fd = res_p[1], .notify_sock = ctl[1], .plan = NULL,
                          .layers = z->layers, .uid = sq__jail_slot_uid(z->slot),
                          .zygote_uid = sq__jail_zygote_uid(z->slot),
                          .drop_uid = true, .warm = true, .seccomp = &c->seccomp, .interp = &c->interp, .binds = &c->binds,
                          .self_cg = sq__jail_cgroup_self_enterable(&z->cg) ? &z->cg : NULL};
  unsigned long flags = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS |
                        (z->layers & SQ_JAIL_LAYER_CGROUP_NS ? CLONE_NEWCGROUP : 0);
  pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
  if (pid < 0) {
    SQ_PERROR("warm pool: clone");
    goto out;
  }
  if (pid == 0) sq__jail_contain(&child);
  z->init = pid;
  close(st_p[1]);
  close(res_p[1]);
  close(sync_p[0]);
  close(ctl[1]);
  st_p[1] = res_p[1] = sync_p[0] = ctl[1] = -1;
  if (!child.self_cg && sq__jail_cgroup_attach(&z->cg, pid) != 0)
    SQ_PERROR("warm pool: moving the zygote into its cgroups");
  /* A socket, not a pipe: an init already dead (killed in its new cgroup,
   * say) makes this fail with EPIPE, not a SIGPIPE that would end the
   * caller (the jail library does not ask its caller to ignore SIGPIPE). */
  if (send(sync_p[1], "g", 1, MSG_NOSIGNAL) != 1) goto out;
  char msg[256];
  if (sq__jail_read_status(st_p[0], msg, sizeof msg) > 0) {
    SQ_ERROR("warm pool: zygote setup failed: %s", msg);
    goto out;
  }
  /* LIMITS, FILTER; READY back. */
  char limits[RLIM_NLIMITS * SQ__ZYGOTE_LIMIT_MAX + 8], f[SQ__ZYGOTE_SHORT_MAX];
  size_t limits_len = limits_msg(limits, sizeof limits);
  struct iovec filter[2] = {{.iov_base = f, .iov_len = sq__zygote_encode_short(SQ__ZYGOTE_FILTER, f, sizeof f)},
                            {.iov_base = c->seccomp.filter,
                             .iov_len = (size_t)c->seccomp.len * sizeof(struct sock_filter)}};
  if (limits_len == 0 || sq__jail_send_fds(ctl[0], limits, limits_len, NULL, 0) != 0 ||
      sq__jail_send_fdsv(ctl[0], filter, 2, NULL, 0) != 0) {
    SQ_PERROR("warm pool: sending the zygote its rlimits and filter");
    goto out;
  }
  sq__zygote_msg m;
  if (recv_timed(ctl[0], msg, sizeof msg, READY_TIMEOUT_MS, &m, &z->zpid, &z->notify) != SQ__ZYGOTE_READY) {
    SQ_ERROR("warm pool: the zygote did not start (see its stderr above)");
    goto out;
  }
  z->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (z->pidfd < 0) {
    SQ_PERROR("warm pool: pidfd_open");
    goto out;
  }
  z->ctl = ctl[0];
  z->result_fd = res_p[0];
  ctl[0] = res_p[0] = -1;
  ret = 0;
out:
  int fds[] = {devnull, err, st_p[0], st_p[1], res_p[0], res_p[1], sync_p[0], sync_p[1], ctl[0], ctl[1]};
  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    if (fds[i] >= 0) close(fds[i]);
  if (ret != 0) sq__jail_zygote_stop(z);
  return ret;
}

/* A zygote whose init is gone (or that a task damaged) must be replaced. */
static bool zygote_alive(const sq__jail_zygote *z) {
  if (z->init <= 0 || z->pidfd < 0) return false;
  struct pollfd pf = {.fd = z->pidfd, .events = POLLIN};
  return poll(&pf, 1, 0) == 0;
}

typedef struct {
  sq__jail_zygote *z;
  const sq__jail_watch *w;
  bool broken;      /* the zygote died or misbehaved: replace it */
  bool reported;    /* the zygote's "r" report was read */
  int64_t reaped_ms; /* when, by its report, the zygote reaped the task's child (CLOCK_MONOTONIC; 0: unknown) */
  bool not_taken;   /* none of the task's code ran ("e", "x", or the zygote died first): try again */
  char why[160];    /* what the zygote said, for not_taken */
} warm_run;

static bool warm_end(void *arg, const sq__zygote_msg *msg, int *status, struct rusage *ru) {
  warm_run *r = arg;
  if (!msg) { /* init's pidfd: the zygote (and the namespace) died */
    r->broken = true;
    if (r->w->start_ms == 0) {
      r->not_taken = true;
      snprintf(r->why, sizeof r->why, "the zygote died before a child took the task");
    }
    *status = SIGKILL; /* as if killed: the task took its zygote down */
    return true;
  }
  switch (msg->kind) {
  case SQ__ZYGOTE_ERROR: /* the task's code never ran */
    r->broken = r->not_taken = true;
    snprintf(r->why, sizeof r->why, "%.*s", (int)msg->u.error.len, msg->u.error.text);
    return true;
  case SQ__ZYGOTE_EXITED:
    r->broken = r->not_taken = true;
    snprintf(r->why, sizeof r->why, "the child died before it took the task");
    return true;
  case SQ__ZYGOTE_REAPED:
    r->reported = true;
    r->reaped_ms = msg->u.reaped.reaped_ms;
    *status = msg->u.reaped.status;
    ru->ru_utime.tv_sec = (time_t)(msg->u.reaped.utime_us / 1000000);
    ru->ru_utime.tv_usec = (suseconds_t)(msg->u.reaped.utime_us % 1000000);
    ru->ru_stime.tv_sec = (time_t)(msg->u.reaped.stime_us / 1000000);
    ru->ru_stime.tv_usec = (suseconds_t)(msg->u.reaped.stime_us % 1000000);
    ru->ru_maxrss = (long)msg->u.reaped.maxrss_kib;
    return true;
  default: /* malformed, or not the zygote's to send now */
    r->broken = true;
    return false;
  }
}

/* At the output's EOF, the kernel's view of the task's exit
 * (sq__jail_warm_end_early), where the memory cgroup keeps the peak, and
 * only while this run looks for it (look_early: the pool's runs fit the
 * cores) but when asked again. */
static bool warm_early(void *arg, pid_t pid, int pidfd, int *status, struct rusage *ru, bool again) {
  warm_run *r = arg;
  if (pid <= 0 || !r->z->cg.mem[0] || (!again && !r->z->look_early)) return false;
  return sq__jail_warm_end_early(pid, pidfd, again, status, ru);
}

static void warm_kill_zygote(void *arg) {
  warm_run *r = arg;
  r->broken = true;
  if (r->z->init > 0) kill(r->z->init, SIGKILL);
}

/* Sends the TASK: its header, then the program inline, or in prog_fd
 * (>= 0) passed after the two pipe ends; in_fd (>= 0), the task's stdin,
 * after those. 0 or -1 with errno. */
static int send_task(sq__jail_zygote *z, bool prelude_loaded, const char *program, size_t len, int prog_fd,
                     int in_fd, const sq__jail_plan *plan, const sq_jail_run_opts *opts, int out_w, int err_w) {
  char head[SQ__ZYGOTE_TASK_HEAD_MAX];
  /* Only where workspace.py, which starts a standby, is loaded. */
  const char *sb = opts->standby && !z->lean && prelude_loaded ? opts->standby : "";
  size_t sb_len = strlen(sb);
  if (sb_len > SQ__ZYGOTE_STANDBY_MAX) sb = "", sb_len = 0; /* none rather than a cut one */
  size_t hl = sq__zygote_encode_task_head(head, sizeof head, plan->cpu_s, plan->as_bytes, prog_fd >= 0,
                                          in_fd >= 0, sb_len);
  struct iovec iov[3] = {{.iov_base = head, .iov_len = hl},
                         {.iov_base = (void *)sb, .iov_len = sb_len},
                         {.iov_base = (void *)program, .iov_len = prog_fd >= 0 ? 0 : len}};
  int fds[4] = {out_w, err_w}, nfds = 2;
  if (prog_fd >= 0) fds[nfds++] = prog_fd;
  if (in_fd >= 0) fds[nfds++] = in_fd;
  if (sq__jail_send_fdsv(z->ctl, iov, 3, fds, nfds) != 0) return -1;
  memcpy(z->standby, sb, sb_len + 1);
  return 0;
}

int sq__jail_zygote_ready(const sq__jail_common *c, sq__jail_zygote *z, const char *task_id, sq_jail_outcome *o) {
  if (z->init > 0 && !zygote_alive(z)) {
    SQ_LOGT(SQ_LOG_WARN, task_id, "warm pool: zygote of slot %d (init %d) is gone; starting a new one", z->slot,
            (int)z->init);
    sq__jail_zygote_stop(z);
  }
  if (z->init > 0 && z->reap_pending) { /* the last task's process must be gone first */
    char msg[SQ__ZYGOTE_REAPED_MAX];
    sq__zygote_msg m;
    z->reap_pending = false;
    if (recv_timed(z->ctl, msg, sizeof msg, REAP_TIMEOUT_MS, &m, NULL, NULL) != SQ__ZYGOTE_REAPED) {
      SQ_LOGT(SQ_LOG_WARN, task_id, "warm pool: zygote of slot %d did not report the last task's end; replacing it",
              z->slot);
      sq__jail_zygote_stop(z);
    }
  }
  if (z->init > 0) return 0;
  int rc = sq__jail_zygote_start(c, z);
  if (rc != 0) snprintf(o->error, sizeof o->error, "warm pool: cannot start a zygote (see the log above)");
  return rc;
}

/* Waits up to TAKE_TIMEOUT_MS for a message from z's child for the next
 * task (its NEXT, or what the supervision makes of anything else), without
 * reading it; false when none came or the zygote died. */
static bool next_ready(sq__jail_zygote *z) {
  struct pollfd p[2] = {{.fd = z->ctl, .events = POLLIN}, {.fd = z->pidfd, .events = POLLIN}};
  int n;
  while ((n = poll(p, 2, TAKE_TIMEOUT_MS)) < 0 && errno == EINTR) {
  }
  return n > 0 && (p[0].revents & POLLIN) && !p[1].revents;
}

/* z's child for the next run started a standby runtime for another kind of
 * run: child and standby are replaced before the cgroup's limit and peak
 * are set for this one (nothing of a runtime this run never uses may count
 * as its memory or CPU). Reads the child's NEXT, sends DROP: the child
 * exits, the zygote kills and reaps the standby and forks a fresh child,
 * whose NEXT is left for sq__jail_supervise. false when that did not
 * happen in time. */
static bool drop_standby(sq__jail_zygote *z) {
  char msg[SQ__ZYGOTE_NEXT_MAX], d[SQ__ZYGOTE_SHORT_MAX];
  sq__zygote_msg m;
  z->standby[0] = '\0';
  if (recv_timed(z->ctl, msg, sizeof msg, TAKE_TIMEOUT_MS, &m, NULL, NULL) != SQ__ZYGOTE_NEXT) return false;
  size_t n = sq__zygote_encode_short(SQ__ZYGOTE_DROP, d, sizeof d);
  return sq__jail_send_fds(z->ctl, d, n, NULL, 0) == 0 && next_ready(z);
}

int sq__jail_zygote_run(sq__jail_zygote *z, bool prelude_loaded, const char *program, size_t len, int prog_fd,
                        int in_fd, const sq__jail_plan *plan, const sq_jail_run_opts *opts, sq_jail_outcome *o,
                        char *why, size_t why_len) {
  const sq_jail_limits *lim = &plan->lim;
  int ret = 0;
  int out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
  o->layers = z->layers;
  /* The child for this task says it is there (its NEXT, left on the socket
   * for sq__jail_supervise) only once the zygote has killed and reaped
   * every process of the last task and replaced or checked its scratch: the
   * last task's memory is uncharged then, and only then are the cgroup's
   * limit and peak set for this one. Usually it is there already. */
  if (!next_ready(z)) {
    snprintf(why, why_len, "no child was ready for the task");
    sq__jail_zygote_stop(z);
    return SQ__JAIL_ZYGOTE_TRY_AGAIN;
  }
  if (z->standby[0] && !(opts->standby && strcmp(z->standby, opts->standby) == 0) && !drop_standby(z)) {
    snprintf(why, why_len, "its child did not drop the standby runtime");
    sq__jail_zygote_stop(z);
    return SQ__JAIL_ZYGOTE_TRY_AGAIN;
  }
  if (sq__jail_cgroup_reset(&z->cg, plan->cgroup_mib) != 0) {
    snprintf(why, why_len, "its cgroup refused the memory limit of %lld MiB: %s", (long long)plan->cgroup_mib,
             strerror(errno));
    sq__jail_zygote_stop(z);
    return SQ__JAIL_ZYGOTE_TRY_AGAIN;
  }
  if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0) {
    snprintf(o->error, sizeof o->error, "pipe2: %s", strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  warm_run r = {.z = z};
  int64_t sent_ms = sq_now_mono_ms();
  if (send_task(z, prelude_loaded, program, len, prog_fd, in_fd, plan, opts, out_p[1], err_p[1]) != 0) {
    int err = errno;
    sq__jail_zygote_stop(z);
    if (err == EPIPE || err == ECONNRESET || err == ENOTCONN) { /* it died meanwhile */
      snprintf(why, why_len, "sending the task: %s", strerror(err));
      ret = SQ__JAIL_ZYGOTE_TRY_AGAIN;
    } else {
      snprintf(o->error, sizeof o->error, "warm pool: sending the task: %s", strerror(err));
      ret = SQ_EJAIL;
    }
    goto out;
  }
  close(out_p[1]);
  close(err_p[1]);
  out_p[1] = err_p[1] = -1;
  sq__jail_watch w = {.out_fd = out_p[0], .err_fd = err_p[0], .ctl_fd = z->ctl, .done_fd = z->pidfd,
                      .notify_fd = z->notify, .kill_pid = 0, .end_check = warm_end,
                      .kill_fallback = warm_kill_zygote, .early_check = warm_early, .arg = &r,
                      .start_ms = 0, .take_timeout_ms = TAKE_TIMEOUT_MS, .sent_ms = sent_ms, .cont_pid = z->zpid,
                      .cg = &z->cg, .lim = lim, .widenings = plan->widenings, .stop = opts->stop};
  r.w = &w;
  out_p[0] = err_p[0] = -1;
  sq_jail_end killed_for;
  int status;
  ret = sq__jail_supervise(&w, o, &killed_for, &status);
  if (w.never_started || r.not_taken) {
    snprintf(why, why_len, "%s", w.never_started ? "no child took the task in time" : r.why);
    sq__jail_zygote_stop(z);
    ret = SQ__JAIL_ZYGOTE_TRY_AGAIN;
    goto out;
  }
  /* The zygote's report says when it reaped the task: judged by that, not
   * by when this thread looked. The report is the zygote's, which runs none
   * of the task's code (the task's own process cannot write to the control
   * socket: take() closed it). */
  sq__jail_judge_by_reap(&w, r.reported ? r.reaped_ms : 0, o, &killed_for);
  if (z->cg.mem[0]) {
    o->oom_killed = sq__jail_cgroup_oom_fired(&z->cg);
    int64_t peak = sq__jail_cgroup_peak_kib(&z->cg);
    if (peak > 0) o->memory_kib = peak;
  }
  if (ret == SQ_ENOMEM) {
    snprintf(o->error, sizeof o->error, "out of memory while capturing output");
  } else {
    if (ret == SQ_EJAIL) { /* killed, and the zygote never reported: the task broke it */
      r.broken = true;
      status = SIGKILL;
      o->exit_code = -1;
      o->signal = SIGKILL;
      ret = 0;
    }
    o->end = sq__jail_map_end(o, status, killed_for, plan, o->oom_killed);
  }
  if (r.broken) sq__jail_zygote_stop(z); /* replaced at its next use */
  else if (!r.reported) z->reap_pending = true;
out:
  {
    int fds[] = {out_p[0], out_p[1], err_p[0], err_p[1]};
    for (size_t i = 0; i < 4; i++)
      if (fds[i] >= 0) close(fds[i]);
  }
  return ret;
}
