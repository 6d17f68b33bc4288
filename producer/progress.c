/* progress.c: `push --wait` and `wait`: poll a batch's counters until the
 * server marks it finished, with a progress bar (done/total, rate, ETA,
 * statuses) on a terminal and plain lines otherwise, riding out Redis
 * outages; Ctrl-C leaves the batch running and says how to come back. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "producer.h"
#include "util.h"

#define POLL_MS 200    /* between two looks at the counters, at most */
#define POLL_MIN_MS 2  /* and at least: near the end, and the first wait (below) */
#define PLAIN_PROGRESS_MS 2000
#define OUTAGE_GIVE_UP_MS (5 * 60 * 1000) /* redis unreachable this long while waiting: give up */
#define BAR_WIDTH 24

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
  (void)sig;
  interrupted = 1;
}

/* Sleeps ms, cut short by Ctrl-C. */
static void sleep_ms(int64_t ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
  while (!interrupted && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* "passed 12 failed 3 dead 1" into buf. */
static void status_text(const sq_batch_stats *st, char *buf, size_t n) {
  size_t o = 0;
  buf[0] = 0;
  for (int i = 0; i < st->n_statuses && o < n; i++)
    o += (size_t)snprintf(buf + o, n - o, "%s%s %lld", o ? " " : "", st->statuses[i].name,
                          (long long)st->statuses[i].count);
  if (st->dead && o < n) o += (size_t)snprintf(buf + o, n - o, "%sdead %lld", o ? " " : "", (long long)st->dead);
  if (st->duplicate && o < n)
    o += (size_t)snprintf(buf + o, n - o, "%sduplicate %lld", o ? " " : "", (long long)st->duplicate);
  const char *push = sq__push_state_text(st->push);
  if (push && o < n) snprintf(buf + o, n - o, "%s(%s)", o ? " " : "", push);
}

const char *sq__push_state_text(sq_push_state p) {
  return p == SQ_PUSH_PUSHING ? "pushing" : p == SQ_PUSH_INCOMPLETE ? "incomplete push" : NULL;
}

/* What the counters say of a batch known before (had is the largest total
 * seen, settled_max the most settled): 0 when it goes on, else
 * SQ_EXIT_LOST with the reason on stderr. A batch no key of which is
 * left vanished; a total that fell went back (the tasks pushed since are
 * lost); results that went back are said once (their claims come back
 * and run again: docs/operations.md, "What happens when"). */
static int check_lost(const char *batch, const sq_batch_stats *st, int64_t had, int64_t settled_max, bool *told,
                      bool tty) {
  int64_t settled = st->done + st->dead + st->duplicate;
  bool gone = st->total == 0 && st->done == 0 && st->n_statuses == 0 && st->push == SQ_PUSH_NONE;
  if (had > 0 && gone) {
    fprintf(stderr, "%ssandq-producer: batch %s vanished: Redis no longer holds it (restarted without its data, or "
            "evicted it: maxmemory-policy must be noeviction, docs/operations.md); push it again\n", tty ? "\n" : "",
            batch);
    return SQ_EXIT_LOST;
  }
  if (st->total < had) {
    fprintf(stderr, "%ssandq-producer: batch %s went back: its total fell from %lld to %lld (Redis restarted from "
            "older data and lost the tasks pushed since); run the same push again to add them (tasks already in the "
            "batch are skipped)\n", tty ? "\n" : "", batch, (long long)had, (long long)st->total);
    return SQ_EXIT_LOST;
  }
  if (settled < settled_max && !*told) {
    fprintf(stderr, "%ssandq-producer: batch %s: Redis lost %lld result(s) (it restarted from older data); their "
            "tasks run again, still waiting\n", tty ? "\n" : "", batch, (long long)(settled_max - settled));
    *told = true;
  }
  return 0;
}

static void eta_text(double secs, char *buf, size_t n) {
  if (secs < 0 || secs > 99 * 3600) {
    snprintf(buf, n, "--:--");
    return;
  }
  long s = (long)(secs + 0.5);
  if (s >= 3600)
    snprintf(buf, n, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    snprintf(buf, n, "%ld:%02ld", s / 60, s % 60);
}

static void show(const char *batch, const sq_batch_stats *st, double rate, bool tty, bool finished) {
  int64_t settled = st->done + st->dead + st->duplicate;
  double frac = st->total > 0 ? (double)settled / (double)st->total : 0;
  char statuses[512], eta[32];
  status_text(st, statuses, sizeof statuses);
  eta_text(rate > 0 ? (double)(st->total - settled) / rate : -1, eta, sizeof eta);
  if (tty) {
    char bar[BAR_WIDTH + 1];
    int fill = (int)(frac * BAR_WIDTH);
    for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < fill ? '#' : '-';
    bar[BAR_WIDTH] = 0;
    fprintf(stderr, "\r\033[K[%s] %lld/%lld %3.0f%%  %.1f/s  ETA %s  %s", bar, (long long)settled,
            (long long)st->total, frac * 100, rate, eta, statuses);
    if (finished) fputc('\n', stderr);
  } else {
    fprintf(stderr, "batch %s: %lld/%lld  %.1f/s  ETA %s  %s\n", batch, (long long)settled, (long long)st->total,
            rate, eta, statuses);
  }
  fflush(stderr);
}

/* How long to sleep before the next look: at most backoff_ms (POLL_MIN_MS
 * at first, doubling with each look up to POLL_MS, so a batch that ends
 * within its first moments, before any rate is known, is seen within a few
 * ms of its end, not up to POLL_MS late), and, once the batch's rate says
 * it ends sooner, half the time it should take, so its end is seen within
 * POLL_MIN_MS or so (a few more looks in a batch's first and last
 * moments, none while it is far from done). */
static int64_t next_poll_ms(int64_t remaining, double rate, int64_t backoff_ms) {
  int64_t ms = backoff_ms < POLL_MS ? backoff_ms : POLL_MS;
  if (remaining > 0 && rate > 0) {
    double half_eta_ms = (double)remaining / rate * 1000.0 / 2;
    if (half_eta_ms < (double)ms) ms = (int64_t)half_eta_ms;
  }
  return ms < POLL_MIN_MS ? POLL_MIN_MS : ms;
}

static int wait_loop(sq_queue *q, const char *batch, int64_t timeout_s, sq_batch_stats *st, const sq_wait_hooks *h);

int sq__wait_batch_hooked(sq_queue *q, const char *batch, int64_t timeout_s, sq_batch_stats *st,
                          const sq_wait_hooks *h) {
  struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term;
  sigemptyset(&sa.sa_mask);
  interrupted = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  int code = wait_loop(q, batch, timeout_s, st, h);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (code == SQ_EXIT_INTERRUPTED && h && h->private_fleet) {
    if (isatty(STDERR_FILENO)) fputc('\n', stderr);
  } else if (code == SQ_EXIT_INTERRUPTED) {
    if (isatty(STDERR_FILENO)) fputc('\n', stderr);
    fprintf(stderr, "sandq-producer: batch %s keeps running; `sandq-producer wait %s` to re-attach\n", batch, batch);
  }
  return code;
}

/* The poll itself: returns as sq__wait_batch_hooked does, SQ_EXIT_INTERRUPTED
 * once Ctrl-C (or SIGTERM) came. */
static int wait_loop(sq_queue *q, const char *batch, int64_t timeout_s, sq_batch_stats *st, const sq_wait_hooks *h) {
  bool tty = isatty(STDERR_FILENO);
  int64_t t0 = sq_now_mono_ms(), last_plain = t0 - PLAIN_PROGRESS_MS, outage_since = 0;
  int64_t settled0 = -1, backoff_ms = POLL_MIN_MS;
  int64_t had = h ? h->expect_total : 0, settled_max = 0; /* what the batch reached before (check_lost) */
  bool told_lost = false;
  for (;;) {
    int64_t sleep_for = POLL_MS;
    if (interrupted) return SQ_EXIT_INTERRUPTED;
    int stop = h && h->check ? h->check(h->ud) : 0;
    if (stop) {
      if (tty) fputc('\n', stderr);
      return stop;
    }
    int rc = sq_queue_batch_stats(q, batch, st);
    int64_t now = sq_now_mono_ms();
    if (rc == SQ_EPARSE) { /* damaged counters do not mend themselves: say so at once */
      if (tty) fputc('\n', stderr);
      fprintf(stderr, "sandq-producer: batch %s: %s\n", batch, sq_queue_errstr(q));
      return SQ_EXIT_ERROR;
    }
    if (rc) {
      if (!outage_since) {
        outage_since = now;
        fprintf(stderr, "%ssandq-producer: redis unreachable (%s); still waiting\n", tty ? "\n" : "",
                sq_queue_errstr(q));
      }
      if (now - outage_since >= OUTAGE_GIVE_UP_MS) {
        fprintf(stderr, "sandq-producer: giving up on batch %s: %s\n", batch, sq_queue_errstr(q));
        return SQ_EXIT_ERROR;
      }
    } else {
      outage_since = 0;
      int64_t settled = st->done + st->dead + st->duplicate;
      int lost = check_lost(batch, st, had, settled_max, &told_lost, tty);
      if (lost) return lost;
      if (st->total > had) had = st->total;
      if (settled > settled_max) settled_max = settled;
      if (settled0 < 0) settled0 = settled;
      double secs = (double)(now - t0) / 1000.0;
      double rate = secs > 0 ? (double)(settled - settled0) / secs : 0;
      /* the server's decision (sq1_batch_get), once no push is still adding to it */
      bool finished = st->finished_at_ms != 0 && st->push != SQ_PUSH_PUSHING;
      if (tty || finished || now - last_plain >= PLAIN_PROGRESS_MS) {
        show(batch, st, rate, tty, finished);
        last_plain = now;
      }
      if (finished) return SQ_EXIT_OK;
      sleep_for = next_poll_ms(st->total - settled, rate, backoff_ms);
      if (backoff_ms < POLL_MS) backoff_ms *= 2;
    }
    if (timeout_s > 0 && now - t0 >= timeout_s * 1000) {
      if (tty) fputc('\n', stderr);
      fprintf(stderr, "sandq-producer: timed out after %lld s: %lld of %lld tasks of batch %s have no result\n",
              (long long)timeout_s, (long long)(st->total - st->done - st->dead - st->duplicate), (long long)st->total,
              batch);
      return SQ_EXIT_TIMEOUT;
    }
    sleep_ms(sleep_for);
    if (interrupted) return SQ_EXIT_INTERRUPTED;
  }
}
