/* jail_zygote.c: the warm pool. Each zygote is a Python interpreter started
 * by execve (so it holds nothing of the worker's memory) inside the jail's
 * namespaces, root, uid and cgroups, prepared once, with the usual modules
 * imported (zygote.py, embedded). It loads the seccomp filter once, before
 * its first task, and hands its listener over with "ready". It forks the
 * child for the next task ahead; the child, under the filter, waits for its
 * task, sets every rlimit from the worker's values and the task's, and runs
 * the program; each child is a fresh copy, so nothing one task changes in
 * the interpreter reaches the next. After each task the zygote, its
 * subreaper, kills whatever the task left in its namespace, and its init
 * mounts a fresh scratch before the next child.
 *
 * Only a host failure fails a run. No task can signal its zygote (its
 * real and saved uid are not the task's: sq__jail_zygote_uid). A zygote
 * that died, was killed, or stopped answering is replaced, and so is one
 * whose cgroup refuses the next task's memory limit; if a zygote cannot
 * take a task (its child reports "e" or dies before the task's code ran),
 * the task goes to a fresh zygote once. A task's wall clock starts when its
 * child takes it. A task ends when the kernel shows its child exiting
 * (warm_early), before the zygote has reaped it; its next task waits for
 * that reaping. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "jail_internal.h"
#include "log.h"
#include "util.h"

#define READY_TIMEOUT_MS 30000 /* a profile's preload (pandas) takes seconds on a cold page cache */
#define FULL_RETRY_MS 30000 /* a full zygote that could not start: not tried again for this long */
#define TAKE_TIMEOUT_MS 10000 /* from sending a task to a child taking it (the zygote's cleanup included) */
#define CTL_SNDBUF_BYTES (4 << 20)
#define REAP_TIMEOUT_MS 5000 /* a task that ended early: its reaping, before the next */
#define EARLY_LOOKS 2        /* warm_early: looks at a task that closed its output, ... */
#define EARLY_AGAIN_US 50    /* ... this far apart: from its last line to its exit */

typedef struct {
  int slot;           /* uid and cgroup name; -1 when none */
  pid_t init;         /* host pid of the namespace's init; 0 when not running */
  int pidfd;          /* of init */
  int ctl;            /* our end of the control socket */
  int result_fd;      /* init's report (unused; kept open so init never blocks) */
  int notify;         /* the seccomp listener of the zygote's filter (every task runs under it), or -1 */
  sq__jail_cgroup cg;
  uint32_t layers;
  pid_t zpid;         /* host pid of the interpreter (continued after each kill) */
  bool busy;
  bool reap_pending; /* the last task ended early: its "r" report is still to come */
  bool look_early;   /* this run: the pool's runs fit the cores, so its early end is looked for (warm_early) */
  bool lean;         /* without the common modules imported (zygote.py) */
  uint64_t taken;    /* when a run last took it (the pool's count of takes) */
  /* The standby request of the last run sent (empty: none): the child for
   * the next run has that runtime started (docs/jail-performance.md,
   * "Standby runtimes"). */
  char standby[SQ__ZYGOTE_STANDBY_MAX + 1];
} zygote;

/* Two kinds of zygote: size with the common modules imported, for programs
 * that import, and the rest without, for those that do not: a lean
 * interpreter has half the memory to copy at each fork and to tear down at
 * each exit (docs/benchmarks.md). A run takes its own kind when one is
 * free, else the other (an import in a lean zygote works, only slower).
 * The lean ones start with the pool; the full ones, twice the start-up CPU
 * each, when the first run asks for one (acquire), and that run takes a
 * lean one meanwhile: a batch that never imports never pays for them. */
typedef struct starter starter;

struct sq__jail_pool {
  sq_jail *jail;
  pthread_mutex_t lock;
  pthread_cond_t freed;
  int size, total; /* z[0, size): full; z[size, total): lean */
  starter *starters; /* one per zygote: its first start (joined by sq__jail_pool_free) */
  int starting, up;  /* first starts not finished yet; and succeeded */
  int phase_n, phase_up; /* the starts begun together (the lean ones, later the full ones); up of them */
  int64_t phase_ms;  /* when they began */
  bool full_started; /* the full zygotes' start has begun (until then they stay busy, never taken) */
  bool one_run;      /* one run only: the full ones never start (runs of any kind take a lean one) */
  int running, cores; /* zygotes taken by runs now; the CPUs online */
  int start_rc;      /* the last first start's failure */
  int64_t full_down_until_ms; /* a full zygote failed to start: runs that import take lean ones until then */
  uint64_t takes;    /* runs that took a zygote so far (acquire) */
  zygote z[];
};

static void zygote_stop(zygote *z) {
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

/* Starts z (its slot is already held): clone into namespaces, contain,
 * exec the zygote loop, send the filter, wait for "ready". */
static int zygote_start(sq__jail_pool *p, zygote *z) {
  const sq__jail_common *c = sq__jail_common_of(p->jail);
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
  if (ret != 0) zygote_stop(z);
  return ret;
}

/* One zygote's first start, on a thread of its own (sq__jail_pool_new):
 * the zygote stays busy until it is done, then is free to take runs (one
 * that failed is started again by the run that takes it). */
struct starter {
  sq__jail_pool *p;
  zygote *z;
  pthread_t thread;
  bool started;
};

/* A full zygote could not start (its imports failed, say): for the next
 * FULL_RETRY_MS runs that import take lean zygotes, where an import works,
 * only slower, instead of failing as a host failure. Under p->lock. */
static void full_down(sq__jail_pool *p) {
  if (p->size >= p->total) return; /* no lean zygote to fall back on */
  int64_t now = sq_now_mono_ms();
  if (now >= p->full_down_until_ms)
    SQ_WARN("warm pool: a zygote with the common modules imported could not start (see above); programs that "
            "import run on lean zygotes for %d s, then it is tried again", FULL_RETRY_MS / 1000);
  p->full_down_until_ms = now + FULL_RETRY_MS;
}

static void pool_start_done(sq__jail_pool *p, zygote *z, int rc) {
  pthread_mutex_lock(&p->lock);
  z->busy = false;
  p->starting--;
  if (rc == 0) p->up++, p->phase_up++;
  else p->start_rc = rc;
  if (rc != 0 && !z->lean) full_down(p);
  if (p->starting == 0) {
    long long ms = (long long)(sq_now_mono_ms() - p->phase_ms);
    if (p->phase_n == p->total)
      SQ_INFO("warm pool: %d of %d zygotes up in %lld ms", p->phase_up, p->phase_n, ms);
    else if (!p->full_started)
      SQ_INFO("warm pool: %d of %d lean zygotes up in %lld ms (the %d full ones start with the first task that "
              "imports)", p->phase_up, p->phase_n, ms, p->size);
    else
      SQ_INFO("warm pool: %d of %d full zygotes up in %lld ms (a task that imports started them)", p->phase_up,
              p->phase_n, ms);
  }
  pthread_cond_broadcast(&p->freed);
  pthread_mutex_unlock(&p->lock);
}

static void *start_one(void *arg) {
  starter *s = arg;
  pool_start_done(s->p, s->z, zygote_start(s->p, s->z));
  return NULL;
}

/* Starts z[from, to) side by side, each on a thread of its own; each is
 * busy until it is up (or failed). */
static void start_range(sq__jail_pool *p, int from, int to) {
  pthread_mutex_lock(&p->lock);
  if (p->starting == 0) { /* else these join the starts still going */
    p->phase_n = p->phase_up = 0;
    p->phase_ms = sq_now_mono_ms();
  }
  p->phase_n += to - from;
  for (int i = from; i < to; i++) {
    p->z[i].busy = true;
    p->starting++;
  }
  pthread_mutex_unlock(&p->lock);
  for (int i = from; i < to; i++) {
    starter *s = &p->starters[i];
    *s = (starter){.p = p, .z = &p->z[i]};
    s->started = pthread_create(&s->thread, NULL, start_one, s) == 0;
    if (!s->started) pool_start_done(p, s->z, zygote_start(p, s->z)); /* no thread: start it here */
  }
}

int sq__jail_pool_new(sq_jail *j, int size, bool one_run, sq__jail_pool **out) {
  *out = NULL;
  const sq__jail_common *c = sq__jail_common_of(j);
  if (!(c->layers & SQ_JAIL_LAYER_PID_NS) || !(c->layers & SQ_JAIL_LAYER_NEW_ROOT)) {
    SQ_ERROR("warm pool: needs pid and mount namespaces (run as root; see `sandq-worker check`)");
    return SQ_EJAIL;
  }
  /* As many lean zygotes as full ones, within half the slots (the rest
   * stay for spawn runs). */
  int n_lean = SQ__JAIL_MAX_SLOTS / 2 - size;
  if (n_lean > size) n_lean = size;
  if (n_lean < 0) n_lean = 0;
  int total = size + n_lean;
  sq__jail_pool *p = calloc(1, sizeof *p + (size_t)total * sizeof(zygote));
  if (!p) return SQ_ENOMEM;
  p->jail = j;
  p->one_run = one_run && n_lean > 0;
  p->size = size;
  p->total = total;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  p->cores = cores > 0 ? (int)cores : 1;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->freed, NULL);
  for (int i = 0; i < total; i++) {
    p->z[i] = (zygote){.slot = -1, .pidfd = -1, .ctl = -1, .result_fd = -1, .notify = -1, .lean = i >= size};
  }
  /* The zygotes start side by side (each its own thread: its imports are
   * most of a worker's start-up), and the pool is ready as soon as the
   * first one is up: runs take the others as they come up, so tasks
   * waiting at start do not wait for the whole pool (docs/benchmarks.md).
   * The pool fails only when no zygote could start. */
  int rc = 0;
  p->starters = calloc((size_t)total, sizeof *p->starters);
  if (!p->starters) rc = SQ_ENOMEM;
  for (int i = 0; i < total && rc == 0; i++) {
    p->z[i].slot = sq__jail_slot_take();
    if (p->z[i].slot < 0) rc = SQ_EJAIL;
  }
  /* The lean ones now; the full ones, dormant (busy, never taken) until
   * the first run that asks for one (acquire). A pool of full ones only
   * starts them now. */
  int from = n_lean > 0 ? size : 0;
  for (int i = 0; rc == 0 && i < from; i++) p->z[i].busy = true;
  p->full_started = from == 0;
  if (rc == 0) start_range(p, from, total);
  pthread_mutex_lock(&p->lock);
  while (rc == 0 && p->up == 0 && p->starting > 0) pthread_cond_wait(&p->freed, &p->lock);
  if (rc == 0 && p->up == 0) rc = p->start_rc ? p->start_rc : SQ_EJAIL;
  pthread_mutex_unlock(&p->lock);
  if (rc != 0) {
    sq__jail_pool_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

void sq__jail_pool_free(sq__jail_pool *p) {
  if (!p) return;
  for (int i = 0; p->starters && i < p->total; i++)
    if (p->starters[i].started) pthread_join(p->starters[i].thread, NULL);
  free(p->starters);
  for (int i = 0; i < p->total; i++) {
    zygote_stop(&p->z[i]);
    sq__jail_slot_give(p->z[i].slot);
  }
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->freed);
  free(p);
}

/* A zygote whose init is gone (or that a task damaged) must be replaced. */
static bool zygote_alive(const zygote *z) {
  if (z->init <= 0 || z->pidfd < 0) return false;
  struct pollfd pf = {.fd = z->pidfd, .events = POLLIN};
  return poll(&pf, 1, 0) == 0;
}

/* A free zygote, of the kind asked for when one is free, else of the other;
 * waits while none is. Of those, the one idle longest: after each task a
 * zygote reaps it, checks its scratch and forks the next task's child,
 * which on a busy machine may still be under way when the next task comes
 * one round trip later; one task at a time then alternates between the
 * zygotes of its kind and finds a child ready (docs/jail-performance.md). */
static zygote *acquire(sq__jail_pool *p, bool lean) {
  pthread_mutex_lock(&p->lock);
  zygote *z = NULL;
  /* The first run that asks for a full one starts them (unless no run is to come). */
  bool start_full = !lean && !p->full_started && !p->one_run;
  if (start_full) p->full_started = true;
  /* While the full kind cannot start (full_down), none that is down is
   * taken: its start would fail again. */
  bool down = sq_now_mono_ms() < p->full_down_until_ms;
  if (down) lean = true;
  while (!z) {
    for (int pass = 0; pass < 2 && !z; pass++)
      for (int i = 0; i < p->total; i++)
        if (!p->z[i].busy && (pass == 1 || p->z[i].lean == lean) && !(down && !p->z[i].lean && p->z[i].init <= 0) &&
            (!z || p->z[i].taken < z->taken))
          z = &p->z[i];
    if (!z) pthread_cond_wait(&p->freed, &p->lock);
  }
  z->busy = true;
  z->taken = ++p->takes;
  z->look_early = ++p->running <= p->cores;
  pthread_mutex_unlock(&p->lock);
  if (start_full) start_range(p, 0, p->size);
  return z;
}

static void release(sq__jail_pool *p, zygote *z) {
  pthread_mutex_lock(&p->lock);
  z->busy = false;
  p->running--;
  pthread_cond_signal(&p->freed);
  pthread_mutex_unlock(&p->lock);
}

typedef struct {
  zygote *z;
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

/* Whether the process behind pidfd is still there to read about (running,
 * or exited but not reaped): signal 0 reaches it until it is reaped (ESRCH
 * after), so a pid read before this check named it. */
static bool pidfd_unreaped(int pidfd) { return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0; }

/* Reads the flags, virtual size, CPU ticks (with waited-for children) and
 * exit status of pid from /proc/PID/stat, checking afterwards that pidfd (of
 * the same process) shows it not yet reaped (a zombie will do), so the pid
 * named it. */
static bool proc_stat(pid_t pid, int pidfd, unsigned long *flags, long long *vsize, long long *ticks,
                      int *exit_code) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0 || !pidfd_unreaped(pidfd)) return false; /* reaped: the pid may name another process */
  buf[n] = '\0';
  char *p = strrchr(buf, ')');
  if (!p) return false;
  /* Fields from 3 (state): 9 flags, 14-17 utime stime cutime cstime, 23 vsize, 52 exit_code. */
  long long v[53] = {0};
  int field = 3;
  char *save = NULL;
  for (char *tok = strtok_r(p + 1, " \n", &save); tok && field <= 52; tok = strtok_r(NULL, " \n", &save), field++)
    if (field > 3) v[field] = strtoll(tok, NULL, 10);
  if (field <= 52) return false;
  *flags = (unsigned long)v[9];
  *vsize = v[23];
  *ticks = v[14] + v[15] + v[16] + v[17];
  *exit_code = (int)v[52];
  return true;
}

/* The task closed its stdout and stderr, as its last act does: if the
 * kernel shows it exiting (PF_EXITING) and past setting its exit status (its
 * memory already detached: do_exit sets exit_code before exit_mm), the run
 * has ended with that status, without waiting for the teardown and the
 * zygote's report. Otherwise the zygote's report ends it, as before. Only
 * the status and CPU time come from here; the memory peak is the cgroup's.
 * At the output's EOF, looked at twice, EARLY_AGAIN_US apart (its last
 * line to its exit), and only while the pool's runs fit the cores: the
 * early end saves a run the teardown's latency (about 0.2 ms) when a core
 * is there to look, and costs the tasks CPU when every core is busy with
 * them (docs/benchmarks.md). Again (no report 10 ms later, say from a
 * zygote its task stopped): looked at once, however busy the pool. */
static bool warm_early(void *arg, pid_t pid, int pidfd, int *status, struct rusage *ru, bool again) {
  warm_run *r = arg;
  if (pid <= 0 || !r->z->cg.mem[0] || (!again && !r->z->look_early)) return false;
  unsigned long flags;
  long long vsize, ticks;
  int exit_code;
  for (int look = 0;; look++) {
    if (!proc_stat(pid, pidfd, &flags, &vsize, &ticks, &exit_code)) return false;
    if ((flags & 0x4 /* PF_EXITING */) && vsize == 0) break;
    if (again || look == EARLY_LOOKS - 1) return false;
    struct timespec t = {0, EARLY_AGAIN_US * 1000};
    nanosleep(&t, NULL);
  }
  long tck = sysconf(_SC_CLK_TCK);
  long long us = ticks * 1000000 / (tck > 0 ? tck : 100);
  *status = exit_code;
  memset(ru, 0, sizeof *ru);
  ru->ru_utime.tv_sec = (time_t)(us / 1000000);
  ru->ru_utime.tv_usec = (suseconds_t)(us % 1000000);
  return true;
}

static void warm_kill_zygote(void *arg) {
  warm_run *r = arg;
  r->broken = true;
  if (r->z->init > 0) kill(r->z->init, SIGKILL);
}

/* Sends the TASK: its header, then the program inline, or in prog_fd
 * (>= 0) passed after the two pipe ends; in_fd (>= 0), the task's stdin,
 * after those. 0 or -1 with errno. */
static int send_task(zygote *z, bool prelude_loaded, const char *program, size_t len, int prog_fd, int in_fd,
                     const sq__jail_plan *plan, int out_w, int err_w) {
  char head[SQ__ZYGOTE_TASK_HEAD_MAX];
  const sq_jail_limits *lim = &plan->lim;
  /* Only where workspace.py, which starts a standby, is loaded. */
  const char *sb = lim->standby && !z->lean && prelude_loaded ? lim->standby : "";
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

/* Makes z ready for a task: alive (else started anew) and its last task
 * reaped (else replaced). Returns 0, or SQ_EJAIL when no zygote can start
 * (a host failure). */
static int zygote_ready(sq__jail_pool *p, zygote *z, const char *task_id, sq_jail_outcome *o) {
  if (z->init > 0 && !zygote_alive(z)) {
    SQ_LOGT(SQ_LOG_WARN, task_id, "warm pool: zygote of slot %d (init %d) is gone; starting a new one", z->slot,
            (int)z->init);
    zygote_stop(z);
  }
  if (z->init > 0 && z->reap_pending) { /* the last task's process must be gone first */
    char msg[SQ__ZYGOTE_REAPED_MAX];
    sq__zygote_msg m;
    z->reap_pending = false;
    if (recv_timed(z->ctl, msg, sizeof msg, REAP_TIMEOUT_MS, &m, NULL, NULL) != SQ__ZYGOTE_REAPED) {
      SQ_LOGT(SQ_LOG_WARN, task_id, "warm pool: zygote of slot %d did not report the last task's end; replacing it",
              z->slot);
      zygote_stop(z);
    }
  }
  if (z->init > 0) return 0;
  int rc = zygote_start(p, z);
  if (rc != 0) snprintf(o->error, sizeof o->error, "warm pool: cannot start a zygote (see the log above)");
  return rc;
}

#define TRY_AGAIN 1 /* warm_attempt: none of the task's code ran; the zygote was stopped */

/* Waits up to TAKE_TIMEOUT_MS for a message from z's child for the next
 * task (its NEXT, or what the supervision makes of anything else), without
 * reading it; false when none came or the zygote died. */
static bool next_ready(zygote *z) {
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
static bool drop_standby(zygote *z) {
  char msg[SQ__ZYGOTE_NEXT_MAX], d[SQ__ZYGOTE_SHORT_MAX];
  sq__zygote_msg m;
  z->standby[0] = '\0';
  if (recv_timed(z->ctl, msg, sizeof msg, TAKE_TIMEOUT_MS, &m, NULL, NULL) != SQ__ZYGOTE_NEXT) return false;
  size_t n = sq__zygote_encode_short(SQ__ZYGOTE_DROP, d, sizeof d);
  return sq__jail_send_fds(z->ctl, d, n, NULL, 0) == 0 && next_ready(z);
}

/* One try of the task on z. Returns 0 (it ran, whatever its end), TRY_AGAIN
 * (why says why), or SQ_ENOMEM / SQ_EJAIL (a host failure). */
static int warm_attempt(zygote *z, bool prelude_loaded, const char *program, size_t len, int prog_fd, int in_fd,
                        const sq__jail_plan *plan, sq_jail_outcome *o, char *why, size_t why_len) {
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
    zygote_stop(z);
    return TRY_AGAIN;
  }
  if (z->standby[0] && !(lim->standby && strcmp(z->standby, lim->standby) == 0) && !drop_standby(z)) {
    snprintf(why, why_len, "its child did not drop the standby runtime");
    zygote_stop(z);
    return TRY_AGAIN;
  }
  if (sq__jail_cgroup_reset(&z->cg, plan->cgroup_mib) != 0) {
    snprintf(why, why_len, "its cgroup refused the memory limit of %lld MiB: %s", (long long)plan->cgroup_mib,
             strerror(errno));
    zygote_stop(z);
    return TRY_AGAIN;
  }
  if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0) {
    snprintf(o->error, sizeof o->error, "pipe2: %s", strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  warm_run r = {.z = z};
  int64_t sent_ms = sq_now_mono_ms();
  if (send_task(z, prelude_loaded, program, len, prog_fd, in_fd, plan, out_p[1], err_p[1]) != 0) {
    int err = errno;
    zygote_stop(z);
    if (err == EPIPE || err == ECONNRESET || err == ENOTCONN) { /* it died meanwhile */
      snprintf(why, why_len, "sending the task: %s", strerror(err));
      ret = TRY_AGAIN;
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
                      .cg = &z->cg, .lim = lim};
  r.w = &w;
  out_p[0] = err_p[0] = -1;
  sq_jail_end killed_for;
  int status;
  ret = sq__jail_supervise(&w, o, &killed_for, &status);
  if (w.never_started || r.not_taken) {
    snprintf(why, why_len, "%s", w.never_started ? "no child took the task in time" : r.why);
    zygote_stop(z);
    ret = TRY_AGAIN;
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
  if (r.broken) zygote_stop(z); /* replaced at its next use */
  else if (!r.reported) z->reap_pending = true;
out:
  {
    int fds[] = {out_p[0], out_p[1], err_p[0], err_p[1]};
    for (size_t i = 0; i < 4; i++)
      if (fds[i] >= 0) close(fds[i]);
  }
  return ret;
}

int sq__jail_pool_run(sq__jail_pool *p, const char *program, size_t len, const char *input, size_t input_len,
                      bool lean, const sq__jail_plan *plan, const char *task_id, sq_jail_outcome *o) {
  zygote *z = acquire(p, lean);
  int ret = 0, prog_fd = -1, in_fd = -1;
  char why[160] = "";
  if (len > SQ__ZYGOTE_INLINE_MAX && (prog_fd = sq__jail_program_memfd(program, len)) < 0) {
    snprintf(o->error, sizeof o->error, "memfd for a program of %zu bytes: %s", len, strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  if (input && (in_fd = sq__jail_input_memfd(input, input_len)) < 0) {
    snprintf(o->error, sizeof o->error, "memfd for an input of %zu bytes: %s", input_len, strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  /* A zygote that cannot take the task (a task before broke it in a way
   * only its child could see) is replaced, and the task tried once more. */
  for (int attempt = 0;; attempt++) {
    if ((ret = zygote_ready(p, z, task_id, o)) != 0 && !z->lean && p->size < p->total) {
      /* The full kind cannot start: a lean zygote runs it (full_down). */
      pthread_mutex_lock(&p->lock);
      full_down(p);
      pthread_mutex_unlock(&p->lock);
      release(p, z);
      z = acquire(p, true);
      o->error[0] = '\0';
      ret = zygote_ready(p, z, task_id, o);
    }
    if (ret != 0) break;
    ret = warm_attempt(z, sq__jail_common_of(p->jail)->prelude != NULL, program, len, prog_fd, in_fd, plan, o, why, sizeof why);
    if (ret != TRY_AGAIN) break;
    sq_jail_mode mode = o->mode;
    sq_jail_outcome_clear(o);
    o->mode = mode;
    o->exit_code = -1;
    o->end = SQ_JAIL_SETUP_ERROR;
    if (attempt == 1) {
      snprintf(o->error, sizeof o->error, "warm pool: a fresh zygote could not take the task either: %s", why);
      ret = SQ_EJAIL;
      break;
    }
    SQ_LOGT(SQ_LOG_WARN, task_id, "warm pool: zygote of slot %d could not take the task (%s); replacing it",
            z->slot, why);
  }
out:
  if (prog_fd >= 0) close(prog_fd);
  if (in_fd >= 0) close(in_fd);
  release(p, z);
  return ret;
}
