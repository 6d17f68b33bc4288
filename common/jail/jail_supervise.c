/* jail_supervise.c: the supervising side of one run, shared by spawn and
 * warm mode: the wall clock kills the whole tree, stdout and stderr are
 * kept up to their cap (then output_limit), a seccomp notification names
 * the blocked call and kills the tree, and the tree's CPU time is measured
 * in its cgroup and limited (cpu_limit). A warm run's clock starts when its
 * child takes the task; a warm run whose output closed may end early, as
 * the kernel shows its exit. */
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

/* A pid learned from an 'n' is killed by its pidfd only: by the time the
 * message is read the process may be reaped, and its number another's. */
static void kill_run(sq__jail_watch *w, int kill_pidfd) {
  if (w->pid_learned) {
    if (kill_pidfd >= 0) syscall(SYS_pidfd_send_signal, kill_pidfd, SIGKILL, NULL, 0);
  } else if (w->kill_pid > 0) {
    if (w->kill_group) kill(-w->kill_pid, SIGKILL);
    kill(w->kill_pid, SIGKILL);
  } else if (w->kill_fallback) {
    w->kill_fallback(w->arg);
  }
  if (w->cont_pid > 0) kill(w->cont_pid, SIGCONT); /* a stopped zygote reports the end */
}

/* Receives one control message (zygote_proto.h). Returns 1 with an end, 0
 * otherwise, -1 when the socket is closed. NEXT starts the run's clock and
 * names its process; the listener a spawn payload's brings replaces
 * *notify_fd. Anything else goes to end_check, decoded. */
static int ctl_read(sq__jail_watch *w, int *notify_fd, int *kill_pidfd, int *status, struct rusage *ru) {
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
      if (*notify_fd >= 0 && *notify_fd != w->notify_fd) close(*notify_fd);
      *notify_fd = fds[0];
    }
    if (w->start_ms == 0) { /* the child takes the task now, or did when it said so */
      int64_t now = sq_now_mono_ms(), said = m.u.next.said_ms;
      w->start_ms = said > 0 && said <= now ? (said > w->sent_ms ? said : w->sent_ms) : now;
    }
    if (w->kill_pid == 0 && sender > 0) { /* no pidfd: it is reaped already, nothing to kill */
      w->kill_pid = sender;
      w->pid_learned = true;
      *kill_pidfd = (int)syscall(SYS_pidfd_open, sender, 0);
    }
    return 0;
  }
  for (int i = 0; i < nfds; i++) close(fds[i]);
  return w->end_check(w->arg, &m, status, ru) ? 1 : 0;
}

/* The tree's CPU time since the run started, in ms (-1: not measured). */
static int64_t tree_cpu_ms(const sq__jail_watch *w, int64_t cpu0_us) {
  if (!w->cg || cpu0_us < 0) return -1;
  int64_t now_us = sq__jail_cgroup_cpu_us(w->cg);
  return now_us < cpu0_us ? -1 : (now_us - cpu0_us) / 1000;
}

int sq__jail_supervise(sq__jail_watch *w, sq_jail_outcome *o, sq_jail_end *killed_for_out, int *status_out) {
  const sq_jail_limits *lim = w->lim;
  stream s[2] = {{.fd = w->out_fd, .cap = (size_t)lim->output_kib * 1024},
                 {.fd = w->err_fd, .cap = (size_t)lim->output_kib * 1024}};
  /* The listener: the caller's (kept), or ours once an 'n' brings one. */
  int notify_fd = w->notify_fd, kill_pidfd = -1, status = 0, ret = 0;
  struct rusage ru = {0};
  int64_t take_deadline_ms = sq_now_mono_ms() + w->take_timeout_ms;
  int64_t cpu0_us = -1, next_cpu_ms = 0, tree_ms = -1;
  sq_jail_end killed_for = SQ_JAIL_EXITED_OK; /* EXITED_OK: we did not kill it */
  int64_t killed_at_ms = 0, drain_until_ms = 0;
  bool ended = false, oom = false, ctl_open = w->ctl_fd >= 0, early_tried = false, reported = false,
       continued = false;
  int64_t early_next_ms = 0, early_retry_ms = EARLY_RETRY_MS;
  w->never_started = false;

  for (;;) {
    int64_t now = sq_now_mono_ms();
    bool started = w->start_ms > 0;
    if (started && w->cg && cpu0_us < 0 && !ended) {
      cpu0_us = sq__jail_cgroup_cpu_us(w->cg);
      next_cpu_ms = now + CPU_CHECK_MS;
    }
    int64_t deadline_ms = started ? w->start_ms + lim->wall_ms : take_deadline_ms;
    if (ended && ((s[0].fd < 0 && s[1].fd < 0) || now >= drain_until_ms)) break;
    if (!ended && killed_for != SQ_JAIL_EXITED_OK && now - killed_at_ms > END_GRACE_MS) {
      ret = SQ_EJAIL; /* killed, but the end never came: the caller replaces what it can */
      break;
    }
    if (!ended && !started && now >= deadline_ms) {
      w->never_started = true; /* nothing of the task ran: the caller replaces the zygote */
      ret = SQ_EJAIL;
      break;
    }
    if (!ended && started && killed_for == SQ_JAIL_EXITED_OK && now >= deadline_ms) {
      killed_for = SQ_JAIL_TIMEOUT;
      killed_at_ms = now;
      kill_run(w, kill_pidfd);
    }
    if (!ended && cpu0_us >= 0 && killed_for == SQ_JAIL_EXITED_OK && now >= next_cpu_ms) {
      next_cpu_ms = now + CPU_CHECK_MS;
      if ((tree_ms = tree_cpu_ms(w, cpu0_us)) >= lim->cpu_ms) {
        killed_for = SQ_JAIL_CPU_LIMIT; /* the whole tree's, however many processes share it */
        killed_at_ms = now;
        kill_run(w, kill_pidfd);
      }
    }
    int64_t wait_ms = ended ? drain_until_ms - now : killed_for != SQ_JAIL_EXITED_OK ? TICK_MS : deadline_ms - now;
    if (!ended && cpu0_us >= 0 && killed_for == SQ_JAIL_EXITED_OK && wait_ms > next_cpu_ms - now)
      wait_ms = next_cpu_ms - now;
    if (!ended && w->done_fd < 0 && wait_ms > TICK_MS) wait_ms = TICK_MS;
    if (!ended && early_tried && wait_ms > early_next_ms - now) wait_ms = early_next_ms - now;
    if (wait_ms < 0) wait_ms = 0;

    struct pollfd pfd[5];
    int map[5], n = 0;
    for (int i = 0; i < 2; i++)
      if (s[i].fd >= 0) {
        pfd[n] = (struct pollfd){.fd = s[i].fd, .events = POLLIN};
        map[n++] = i;
      }
    if (!ended && w->done_fd >= 0) {
      pfd[n] = (struct pollfd){.fd = w->done_fd, .events = POLLIN};
      map[n++] = 2;
    }
    if (!ended && ctl_open) {
      pfd[n] = (struct pollfd){.fd = w->ctl_fd, .events = POLLIN};
      map[n++] = 3;
    }
    if (!ended && notify_fd >= 0) {
      pfd[n] = (struct pollfd){.fd = notify_fd, .events = POLLIN};
      map[n++] = 4;
    }
    int pr = poll(pfd, (nfds_t)n, (int)wait_ms);
    if (pr < 0 && errno != EINTR) {
      SQ_PERROR("poll");
      kill_run(w, kill_pidfd);
    }
    bool check = !ended && w->done_fd < 0;
    for (int k = 0; pr > 0 && k < n; k++) {
      if (!pfd[k].revents) continue;
      if (map[k] == 2) check = true;
      else if (map[k] == 3) {
        int r = ctl_read(w, &notify_fd, &kill_pidfd, &status, &ru);
        if (r < 0) ctl_open = false;
        if (r > 0) ended = reported = true;
      } else if (map[k] == 4) {
        if (sq__jail_seccomp_read(notify_fd, o->blocked_syscall, sizeof o->blocked_syscall) == 0 &&
            killed_for == SQ_JAIL_EXITED_OK) {
          killed_for = SQ_JAIL_POLICY;
          killed_at_ms = sq_now_mono_ms();
          kill_run(w, kill_pidfd);
        }
        if (pfd[k].revents & (POLLHUP | POLLERR)) { /* every process holding the filter is gone */
          if (notify_fd != w->notify_fd) close(notify_fd);
          notify_fd = -1;
        }
      } else {
        stream *st = &s[map[k]];
        bool was_truncated = st->truncated;
        if (stream_read(st) == SQ_ENOMEM) oom = true;
        if ((oom || (!was_truncated && st->truncated)) && killed_for == SQ_JAIL_EXITED_OK && !ended) {
          killed_for = oom ? SQ_JAIL_SIGNALED : SQ_JAIL_OUTPUT_LIMIT;
          killed_at_ms = sq_now_mono_ms();
          kill_run(w, kill_pidfd);
        }
      }
    }
    if (check && !ended && w->end_check(w->arg, NULL, &status, &ru)) ended = true;
    if (!ended && w->early_check && s[0].fd < 0 && s[1].fd < 0 && kill_pidfd >= 0 &&
        sq_now_mono_ms() >= early_next_ms) {
      /* The task closed its output: it may be exiting. Looked for again
       * after EARLY_RETRY_MS, doubling, since on a loaded machine it may close its
       * output well before it exits, and the end report may never come: a
       * task that stopped its zygote (SIGSTOP) is woken once, at the first
       * look again (the report of a task that did not is in by then), so the
       * zygote reports, whatever the task did to it. */
      if (w->early_check(w->arg, w->kill_pid, kill_pidfd, &status, &ru, early_tried)) {
        ended = true;
      } else {
        if (early_tried && !continued && w->cont_pid > 0) kill(w->cont_pid, SIGCONT);
        continued = early_tried;
        early_tried = true;
        early_next_ms = sq_now_mono_ms() + early_retry_ms;
        if (early_retry_ms < EARLY_RETRY_MAX_MS) early_retry_ms *= 2;
      }
    }
    if (ended && !drain_until_ms) {
      o->wall_ms = w->start_ms ? sq_now_mono_ms() - w->start_ms : 0;
      int64_t t = tree_cpu_ms(w, cpu0_us);
      if (t > tree_ms) tree_ms = t;
      /* What the program left behind; a warm task's zygote, which has
       * reported its end, is killing that itself (nothing to wake). */
      if (!(reported && w->pid_learned)) kill_run(w, kill_pidfd);
      drain_until_ms = sq_now_mono_ms() + DRAIN_AFTER_EXIT_MS;
    }
  }
  if (notify_fd >= 0 && notify_fd != w->notify_fd) close(notify_fd);
  if (kill_pidfd >= 0) close(kill_pidfd);

  o->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  o->cpu_ms = (int64_t)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 +
              (int64_t)ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
  if (tree_ms > o->cpu_ms) o->cpu_ms = tree_ms; /* processes nobody waited for count too */
  o->memory_kib = ru.ru_maxrss;
  if (sq_buf_append(&s[0].buf, "", 0) != 0 || sq_buf_append(&s[1].buf, "", 0) != 0) oom = true;
  o->stdout_buf = s[0].buf.data;
  o->stdout_len = s[0].buf.len;
  o->stdout_truncated = s[0].truncated;
  o->stderr_buf = s[1].buf.data;
  o->stderr_len = s[1].buf.len;
  o->stderr_truncated = s[1].truncated;
  for (int i = 0; i < 2; i++)
    if (s[i].fd >= 0) close(s[i].fd);
  *killed_for_out = killed_for;
  *status_out = status;
  if (oom) return SQ_ENOMEM;
  return ret;
}

void sq__jail_judge_by_reap(const sq__jail_watch *w, int64_t reaped_ms, sq_jail_outcome *o, sq_jail_end *killed_for) {
  if (reaped_ms <= 0 || w->start_ms <= 0 || reaped_ms < w->start_ms) return;
  int64_t wall = reaped_ms - w->start_ms;
  if (wall < o->wall_ms) o->wall_ms = wall;
  bool overran = wall >= w->lim->wall_ms;
  if (*killed_for == SQ_JAIL_TIMEOUT && !overran) *killed_for = SQ_JAIL_EXITED_OK;
  else if (*killed_for == SQ_JAIL_EXITED_OK && overran) *killed_for = SQ_JAIL_TIMEOUT;
}
