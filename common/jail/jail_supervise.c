/* jail_supervise.c: the supervising side of one run, shared by spawn and
 * warm mode: the wall clock kills the whole tree, stdout and stderr are
 * kept up to their cap (then output_limit), a seccomp notification names
 * the blocked call and kills the tree, and the tree's CPU time is measured
 * in its cgroup and limited (cpu_limit). A warm run's clock starts when its
 * child takes the task; a warm run whose output closed may end early, as
 * the kernel shows its exit.
 *
 * The wall clock is a backstop for waiting (sleep, a blocked read), not
 * for a busy host: the time the tree was runnable but waited for a CPU is
 * credited to it (its deadline moves by that much), up to
 * SQ_JAIL_WALL_BACKSTOP x wall_ms of real time. A CPU-bound program meets
 * its CPU limit, not the wall, however busy the host. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors.h"
#include "jail_internal.h"
#include "log.h"
#include "util.h"

#define DRAIN_AFTER_EXIT_MS 1000 /* reading what the killed tree left in the pipes */
#define END_GRACE_MS 3000        /* after a kill, how long the end report may take */
#define TICK_MS 10               /* poll period when nothing else wakes us */
#define EARLY_RETRY_MS 10        /* a task whose output closed: its exit looked for again after this, */
#define EARLY_RETRY_MAX_MS 320   /* doubling up to this (a look spins up to 2 ms) */
#define CPU_CHECK_MS 20          /* how often the tree's CPU time is read while it runs */
#define STOP_CHECK_MS 100        /* how often the caller's stop flag (w->stop) is read */
#define WIDEN_ANSWERS_MAX 4096   /* a run's widening calls answered; past that, killed for the call
                                    (each costs us a round trip; Ruby makes 2 per process) */
#define WAIT_CHECK_MS 100        /* how often its wait for a CPU is read (and at each deadline); the
                                    first read, the baseline, comes this long after the start: a
                                    short run reads nothing, and its first 100 ms earn no credit */

/* One captured stream: read end of a pipe and what was kept of it. */
typedef struct {
  int fd;
  sq_buf buf;
  size_t cap;
  bool truncated;
} stream;

/* Reads once from s. Returns 1 on data, 0 at EOF (fd closed), or SQ_ENOMEM.
 * Bytes past the cap are dropped and mark the stream truncated. */
static int stream_read(stream *s) {
  char chunk[65536];
  ssize_t n = read(s->fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 1;
  if (n <= 0) {
    close(s->fd);
    s->fd = -1;
    return 0;
  }
  size_t room = s->cap - s->buf.len;
  size_t keep = (size_t)n < room ? (size_t)n : room;
  if ((size_t)n > room) s->truncated = true;
  if (keep && sq_buf_append(&s->buf, chunk, keep) != 0) return SQ_ENOMEM;
  return 1;
}

/* One supervision's state: what sq__jail_supervise's steps share. */
typedef struct {
  sq__jail_watch *w;
  sq_jail_outcome *o;
  stream s[2];        /* stdout, stderr */
  int notify_fd;      /* the listener: the caller's (kept), or ours once a NEXT brings one */
  int widen_answers;  /* widening calls answered (on_notify) */
  int kill_pidfd;     /* of the process a NEXT named, or -1 */
  int status;         /* the run's wait status, once ended */
  struct rusage ru;
  int ret;            /* 0, or SQ_EJAIL: the end never came (or the run never started) */
  int64_t take_deadline_ms;      /* not started: the first NEXT is due by then */
  int64_t cpu0_us, next_cpu_ms;  /* the tree's CPU time when the run started (-1: not yet); next look */
  int64_t tree_ms;               /* the tree's CPU time last read (-1: never) */
  int64_t wait0_us, next_wait_ms; /* the tree's wait for a CPU at the baseline (-1: not yet); next look */
  bool wait_on;                  /* a cgroup, and its wait readable so far */
  sq_jail_end killed_for;        /* SQ_JAIL_EXITED_OK: not killed by us */
  int64_t killed_at_ms;
  bool ended;                    /* the run's end is known (status, ru) */
  int64_t drain_until_ms;        /* ended: the pipes are read until then (0: not ended yet) */
  bool oom;                      /* out of memory keeping the output */
  bool ctl_open;
  bool reported;                 /* the end came as a message on ctl (a zygote's REAPED) */
  struct {                       /* the output closed before the end: its exit looked for */
    bool tried, continued;       /* looked once; the zygote woken (SIGCONT) once */
    int64_t next_ms, retry_ms;
  } early;
} sv;

/* The poll set, by name; an entry not polled has fd -1. */
enum { P_OUT, P_ERR, P_DONE, P_CTL, P_NOTIFY, P_COUNT };

/* A pid learned from a NEXT is killed by its pidfd only: by the time the
 * message is read the process may be reaped, and its number another's. */
static void kill_run(const sv *v) {
  sq__jail_watch *w = v->w;
  if (w->pid_learned) {
    if (v->kill_pidfd >= 0) syscall(SYS_pidfd_send_signal, v->kill_pidfd, SIGKILL, NULL, 0);
  } else if (w->kill_pid > 0) {
    if (w->kill_group) kill(-w->kill_pid, SIGKILL);
    kill(w->kill_pid, SIGKILL);
  } else if (w->kill_fallback) {
    w->kill_fallback(w->arg);
  }
  if (w->cont_pid > 0) kill(w->cont_pid, SIGCONT); /* a stopped zygote reports the end */
}

/* Kills the run for why, unless it was killed already. */
static void kill_for(sv *v, sq_jail_end why, int64_t now) {
  if (v->killed_for != SQ_JAIL_EXITED_OK) return;
  v->killed_for = why;
  v->killed_at_ms = now;
  kill_run(v);
}

/* Receives one control message (zygote_proto.h). Returns 1 with an end, 0
 * otherwise, -1 when the socket is closed. NEXT starts the run's clock and
 * names its process; the listener a spawn payload's brings replaces
 * v->notify_fd. Anything else goes to end_check, decoded. */
static int ctl_read(sv *v) {
  sq__jail_watch *w = v->w;
  char buf[512];
  int fds[SQ__ZYGOTE_MAX_FDS], nfds = 0;
  pid_t sender = 0;
  ssize_t n = sq__jail_recv_fds(w->ctl_fd, buf, sizeof buf, MSG_DONTWAIT, fds, SQ__ZYGOTE_MAX_FDS, &nfds, &sender);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  if (n == 0 || (n < 0 && errno != EMSGSIZE)) return -1;
  sq__zygote_msg m;
  sq__zygote_decode(SQ__ZYGOTE_AT_SUPERVISOR, buf, n < 0 ? 0 : (size_t)n, nfds, &m); /* EMSGSIZE: BAD */
  if (m.kind == SQ__ZYGOTE_NEXT) {
    if (nfds == 1) {
      if (v->notify_fd >= 0 && v->notify_fd != w->notify_fd) close(v->notify_fd);
      v->notify_fd = fds[0];
    }
    if (w->start_ms == 0) { /* the child takes the task now, or did when it said so */
      int64_t now = sq_now_mono_ms(), said = m.u.next.said_ms;
      w->start_ms = said > 0 && said <= now ? (said > w->sent_ms ? said : w->sent_ms) : now;
    }
    if (w->kill_pid == 0 && sender > 0) { /* no pidfd: it is reaped already, nothing to kill */
      w->kill_pid = sender;
      w->pid_learned = true;
      v->kill_pidfd = (int)syscall(SYS_pidfd_open, sender, 0);
    }
    return 0;
  }
  for (int i = 0; i < nfds; i++) close(fds[i]);
  return w->end_check(w->arg, &m, &v->status, &v->ru) ? 1 : 0;
}

/* The tree's CPU time since the run started, in ms (-1: not measured). */
static int64_t tree_cpu_ms(const sq__jail_watch *w, int64_t cpu0_us) {
  if (!w->cg || cpu0_us < 0) return -1;
  int64_t now_us = sq__jail_cgroup_cpu_us(w->cg);
  return now_us < cpu0_us ? -1 : (now_us - cpu0_us) / 1000;
}

/* The wall deadline's credit for waiting: what the tree waited for a CPU,
 * up to the backstop's (SQ_JAIL_WALL_BACKSTOP - 1) x wall_ms. */
static int64_t wait_credit_ms(const sq__jail_watch *w) {
  int64_t cap = (SQ_JAIL_WALL_BACKSTOP - 1) * w->lim->wall_ms;
  return w->cpu_wait_ms < cap ? w->cpu_wait_ms : cap;
}

/* The run's deadline: its wall clock (plus its credit) once started, else the take's. */
static int64_t deadline_ms(const sv *v) {
  return v->w->start_ms > 0 ? v->w->start_ms + v->w->lim->wall_ms + wait_credit_ms(v->w) : v->take_deadline_ms;
}

/* Reads the tree's wait for a CPU every WAIT_CHECK_MS and at the deadline:
 * the first read is the baseline, later ones set w->cpu_wait_ms (kept when
 * unreadable: its threads are gone). */
static void wait_look(sv *v, int64_t now) {
  sq__jail_watch *w = v->w;
  if (!v->wait_on || v->killed_for != SQ_JAIL_EXITED_OK) return;
  if (v->next_wait_ms == 0) v->next_wait_ms = w->start_ms + WAIT_CHECK_MS;
  if (now < v->next_wait_ms && now < deadline_ms(v)) return;
  v->next_wait_ms = now + WAIT_CHECK_MS;
  if (v->wait0_us < 0) {
    v->wait_on = (v->wait0_us = sq__jail_cgroup_wait_us(w->cg)) >= 0;
    return;
  }
  int64_t now_us = sq__jail_cgroup_wait_us(w->cg), ms = (now_us - v->wait0_us) / 1000;
  if (now_us >= v->wait0_us && ms > w->cpu_wait_ms) w->cpu_wait_ms = ms;
}

/* Whether the loop is over: the run ended and its output drained (or the
 * drain's time is up); killed and its end never came within END_GRACE_MS;
 * or never started by its deadline (nothing of the task ran: the caller
 * replaces the zygote). The last two set v->ret. */
static bool over(sv *v, int64_t now) {
  if (v->ended) return (v->s[0].fd < 0 && v->s[1].fd < 0) || now >= v->drain_until_ms;
  if (v->killed_for != SQ_JAIL_EXITED_OK && now - v->killed_at_ms > END_GRACE_MS) {
    v->ret = SQ_EJAIL; /* the caller replaces what it can */
    return true;
  }
  if (v->w->start_ms == 0 && now >= deadline_ms(v)) {
    v->w->never_started = true;
    v->ret = SQ_EJAIL;
    return true;
  }
  return false;
}

/* The limits checked by time: the wall clock and the tree's CPU time
 * (read every CPU_CHECK_MS from the run's start, whatever the number of
 * processes sharing it). */
static void enforce_limits(sv *v, int64_t now) {
  sq__jail_watch *w = v->w;
  if (v->ended || w->start_ms == 0) return;
  if (w->cg && v->cpu0_us < 0) {
    v->cpu0_us = sq__jail_cgroup_cpu_us(w->cg);
    v->next_cpu_ms = now + CPU_CHECK_MS;
  }
  wait_look(v, now);
  if (w->stop && atomic_load(w->stop)) kill_for(v, SQ_JAIL_TIMEOUT, now); /* the caller's stop */
  if (now >= deadline_ms(v) && v->killed_for == SQ_JAIL_EXITED_OK) {
    kill_for(v, SQ_JAIL_TIMEOUT, now);
    w->starved = w->cpu_wait_ms > wait_credit_ms(w); /* the backstop, not the program's own wall */
  }
  if (v->cpu0_us >= 0 && v->killed_for == SQ_JAIL_EXITED_OK && now >= v->next_cpu_ms) {
    v->next_cpu_ms = now + CPU_CHECK_MS;
    if ((v->tree_ms = tree_cpu_ms(w, v->cpu0_us)) >= w->lim->cpu_ms) kill_for(v, SQ_JAIL_CPU_LIMIT, now);
  }
}

/* How long poll may sleep: until the drain's end, the next deadline or
 * CPU look, the next look at an early end; TICK_MS while killed (its end
 * is awaited) or without done_fd (end_check is asked every tick). */
static int wait_ms(const sv *v, int64_t now) {
  int64_t ms;
  if (v->ended) {
    ms = v->drain_until_ms - now;
  } else {
    bool killed = v->killed_for != SQ_JAIL_EXITED_OK;
    ms = killed ? TICK_MS : deadline_ms(v) - now;
    if (v->cpu0_us >= 0 && !killed && ms > v->next_cpu_ms - now) ms = v->next_cpu_ms - now;
    if (v->wait_on && v->next_wait_ms > 0 && !killed && ms > v->next_wait_ms - now) ms = v->next_wait_ms - now;
    if (v->w->done_fd < 0 && ms > TICK_MS) ms = TICK_MS;
    if (v->w->stop && !killed && ms > STOP_CHECK_MS) ms = STOP_CHECK_MS;
    if (v->early.tried && ms > v->early.next_ms - now) ms = v->early.next_ms - now;
  }
  return ms < 0 ? 0 : ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* The poll set: the output while open; the end, control and listener
 * descriptors until the run has ended. */
static void poll_set(const sv *v, struct pollfd pfd[P_COUNT]) {
  bool live = !v->ended;
  int fd[P_COUNT] = {[P_OUT] = v->s[0].fd,
                     [P_ERR] = v->s[1].fd,
                     [P_DONE] = live ? v->w->done_fd : -1,
                     [P_CTL] = live && v->ctl_open ? v->w->ctl_fd : -1,
                     [P_NOTIFY] = live ? v->notify_fd : -1};
  for (int i = 0; i < P_COUNT; i++) pfd[i] = (struct pollfd){.fd = fd[i] >= 0 ? fd[i] : -1, .events = POLLIN};
}

/* A call on the listener: a widening's runs when the run keeps it, else
 * fails with EPERM (jail_seccomp.c), up to WIDEN_ANSWERS_MAX; any other
 * (or one past that) is named and the run killed for it. The listener's
 * hang-up: every process holding the filter is gone. */
static void on_notify(sv *v, short revents) {
  char name[sizeof v->o->blocked_syscall];
  uint64_t id;
  uint32_t widening;
  if (sq__jail_seccomp_read(v->notify_fd, name, sizeof name, &id, &widening) == 0 &&
      (!widening || v->widen_answers++ >= WIDEN_ANSWERS_MAX ||
       (sq__jail_seccomp_answer(v->notify_fd, id, v->w->widenings & widening) != 0 && errno != ENOENT))) {
    memcpy(v->o->blocked_syscall, name, sizeof name);
    kill_for(v, SQ_JAIL_POLICY, sq_now_mono_ms());
  }
  if (revents & (POLLHUP | POLLERR)) {
    if (v->notify_fd != v->w->notify_fd) close(v->notify_fd);
    v->notify_fd = -1;
  }
}

/* Output on stream i: kept up to its cap; past it (or out of memory) the
 * run is killed. */
static void on_output(sv *v, int i) {
  stream *st = &v->s[i];
  bool was_truncated = st->truncated;
  if (stream_read(st) == SQ_ENOMEM) v->oom = true;
  if ((v->oom || (!was_truncated && st->truncated)) && !v->ended)
    kill_for(v, v->oom ? SQ_JAIL_SIGNALED : SQ_JAIL_OUTPUT_LIMIT, sq_now_mono_ms());
}

/* What poll found, in the set's order; then end_check when done_fd was
 * readable (or there is none: every tick). */
static void dispatch(sv *v, const struct pollfd pfd[P_COUNT]) {
  bool check = !v->ended && v->w->done_fd < 0;
  for (int k = 0; k < P_COUNT; k++) {
    if (!pfd[k].revents) continue;
    switch (k) {
    case P_OUT:
    case P_ERR: on_output(v, k - P_OUT); break;
    case P_DONE: check = true; break;
    case P_CTL: {
      int r = ctl_read(v);
      if (r < 0) v->ctl_open = false;
      if (r > 0) v->ended = v->reported = true;
      break;
    }
    case P_NOTIFY: on_notify(v, pfd[k].revents); break;
    }
  }
  if (check && !v->ended && v->w->end_check(v->w->arg, NULL, &v->status, &v->ru)) v->ended = true;
}

/* The task closed its output: it may be exiting (early_check asks the
 * kernel). Looked for again after EARLY_RETRY_MS, doubling, since on a
 * loaded machine it may close its output well before it exits, and the
 * end report may never come: a task that stopped its zygote (SIGSTOP) is
 * woken once, at the first look again (the report of a task that did not
 * is in by then), so the zygote reports, whatever the task did to it. */
static void early_end(sv *v) {
  sq__jail_watch *w = v->w;
  if (v->ended || !w->early_check || v->s[0].fd >= 0 || v->s[1].fd >= 0 || v->kill_pidfd < 0 ||
      sq_now_mono_ms() < v->early.next_ms)
    return;
  if (w->early_check(w->arg, w->kill_pid, v->kill_pidfd, &v->status, &v->ru, v->early.tried)) {
    v->ended = true;
    return;
  }
  if (v->early.tried && !v->early.continued && w->cont_pid > 0) kill(w->cont_pid, SIGCONT);
  v->early.continued = v->early.tried;
  v->early.tried = true;
  v->early.next_ms = sq_now_mono_ms() + v->early.retry_ms;
  if (v->early.retry_ms < EARLY_RETRY_MAX_MS) v->early.retry_ms *= 2;
}

/* The run has just ended: its wall and CPU time taken now, what it left
 * behind killed (a warm task's zygote, which has reported its end, is
 * killing that itself: nothing to wake), the output drained from here. */
static void run_ended(sv *v) {
  sq__jail_watch *w = v->w;
  v->o->wall_ms = w->start_ms ? sq_now_mono_ms() - w->start_ms : 0;
  int64_t t = tree_cpu_ms(w, v->cpu0_us);
  if (t > v->tree_ms) v->tree_ms = t;
  if (!(v->reported && w->pid_learned)) kill_run(v);
  v->drain_until_ms = sq_now_mono_ms() + DRAIN_AFTER_EXIT_MS;
}

/* The outcome from the state; the descriptors ours closed. */
static int finish(sv *v, sq_jail_end *killed_for_out, int *status_out) {
  sq_jail_outcome *o = v->o;
  if (v->notify_fd >= 0 && v->notify_fd != v->w->notify_fd) close(v->notify_fd);
  if (v->kill_pidfd >= 0) close(v->kill_pidfd);
  o->exit_code = WIFEXITED(v->status) ? WEXITSTATUS(v->status) : -1;
  o->signal = WIFSIGNALED(v->status) ? WTERMSIG(v->status) : 0;
  o->cpu_ms = (int64_t)v->ru.ru_utime.tv_sec * 1000 + v->ru.ru_utime.tv_usec / 1000 +
              (int64_t)v->ru.ru_stime.tv_sec * 1000 + v->ru.ru_stime.tv_usec / 1000;
  if (v->tree_ms > o->cpu_ms) o->cpu_ms = v->tree_ms; /* processes nobody waited for count too */
  o->memory_kib = v->ru.ru_maxrss;
  o->cpu_wait_ms = v->w->cpu_wait_ms;
  o->starved = v->w->starved;
  if (sq_buf_append(&v->s[0].buf, "", 0) != 0 || sq_buf_append(&v->s[1].buf, "", 0) != 0) v->oom = true;
  o->stdout_buf = v->s[0].buf.data;
  o->stdout_len = v->s[0].buf.len;
  o->stdout_truncated = v->s[0].truncated;
  o->stderr_buf = v->s[1].buf.data;
  o->stderr_len = v->s[1].buf.len;
  o->stderr_truncated = v->s[1].truncated;
  for (int i = 0; i < 2; i++)
    if (v->s[i].fd >= 0) close(v->s[i].fd);
  *killed_for_out = v->killed_for;
  *status_out = v->status;
  return v->oom ? SQ_ENOMEM : v->ret;
}

int sq__jail_supervise(sq__jail_watch *w, sq_jail_outcome *o, sq_jail_end *killed_for_out, int *status_out) {
  size_t cap = (size_t)w->lim->output_kib * 1024;
  sv v = {.w = w, .o = o, .s = {{.fd = w->out_fd, .cap = cap}, {.fd = w->err_fd, .cap = cap}},
          .notify_fd = w->notify_fd, .kill_pidfd = -1, .take_deadline_ms = sq_now_mono_ms() + w->take_timeout_ms,
          .cpu0_us = -1, .tree_ms = -1, .wait0_us = -1, .wait_on = w->cg != NULL, .killed_for = SQ_JAIL_EXITED_OK, .ctl_open = w->ctl_fd >= 0,
          .early = {.retry_ms = EARLY_RETRY_MS}};
  w->never_started = false;
  w->cpu_wait_ms = 0;
  w->starved = false;
  for (;;) {
    int64_t now = sq_now_mono_ms();
    if (over(&v, now)) break;
    enforce_limits(&v, now);
    struct pollfd pfd[P_COUNT];
    poll_set(&v, pfd);
    int pr = poll(pfd, P_COUNT, wait_ms(&v, now));
    if (pr < 0 && errno != EINTR) {
      SQ_PERROR("poll");
      kill_run(&v);
    }
    if (pr > 0) dispatch(&v, pfd);
    else if (!v.ended && w->done_fd < 0 && w->end_check(w->arg, NULL, &v.status, &v.ru)) v.ended = true;
    early_end(&v);
    if (v.ended && !v.drain_until_ms) run_ended(&v);
  }
  return finish(&v, killed_for_out, status_out);
}

void sq__jail_judge_by_reap(const sq__jail_watch *w, int64_t reaped_ms, sq_jail_outcome *o, sq_jail_end *killed_for) {
  if (reaped_ms <= 0 || w->start_ms <= 0 || reaped_ms < w->start_ms) return;
  int64_t wall = reaped_ms - w->start_ms;
  if (wall < o->wall_ms) o->wall_ms = wall;
  bool overran = wall >= w->lim->wall_ms + wait_credit_ms(w);
  if (*killed_for == SQ_JAIL_TIMEOUT && !overran) {
    *killed_for = SQ_JAIL_EXITED_OK;
    o->starved = false;
  } else if (*killed_for == SQ_JAIL_EXITED_OK && overran) {
    *killed_for = SQ_JAIL_TIMEOUT;
    o->starved = w->cpu_wait_ms > wait_credit_ms(w);
  }
}
