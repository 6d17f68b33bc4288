/* heartbeat.c: the lease-keeping thread (see heartbeat.h): heartbeat every
 * heartbeat_ms, reaper every reap_interval_ms, and the shutdown grace clock. */
#include "heartbeat.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "log.h"
#include "queue.h"
#include "util.h"

#define GRACE_TICK_MS 100

struct sq_heartbeat {
  sq_config cfg;
  volatile sig_atomic_t *stop;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool quit;
  sq_queue *q;
};

/* Sleeps up to ms or until asked to quit. Returns true when asked. */
static bool nap(sq_heartbeat *hb, int64_t ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
  pthread_mutex_lock(&hb->mu);
  while (!hb->quit && pthread_cond_timedwait(&hb->cv, &hb->mu, &ts) != ETIMEDOUT) {
  }
  bool quit = hb->quit;
  pthread_mutex_unlock(&hb->mu);
  return quit;
}

/* Drops a broken connection; the next tick reopens it. */
static void drop(sq_heartbeat *hb, const char *what) {
  SQ_WARN("heartbeat: %s failed: %s; reconnecting", what, sq_queue_errstr(hb->q));
  sq_queue_free(hb->q);
  hb->q = NULL;
}

/* The grace period ran out with a task still in hand: hand everything back
 * so another worker starts it now rather than after a lease, and end. */
static void give_up(sq_heartbeat *hb) {
  size_t n = 0;
  const char *id = hb->cfg.worker_id;
  if (hb->q || sq_queue_new_opts(hb->cfg.redis_url, hb->cfg.queue, &hb->cfg.queue_opts, &hb->q, NULL, 0) == 0)
    sq_queue_release_all(hb->q, id, &n);
  SQ_WARN("worker %s: shutdown grace of %lld ms ran out; handed %zu task(s) back", id,
          (long long)hb->cfg.shutdown_grace_ms, n);
  _exit(0);
}

static void *run(void *arg) {
  sq_heartbeat *hb = arg;
  const sq_config *c = &hb->cfg;
  int64_t next_beat = 0, next_reap = 0, stop_at = 0, backoff_ms = 100;
  for (;;) {
    int64_t now = sq_now_mono_ms();
    if (*hb->stop && !stop_at) stop_at = now;
    if (stop_at && now - stop_at >= c->shutdown_grace_ms) give_up(hb);
    if (now >= next_beat) {
      char err[256];
      if (!hb->q && sq_queue_new_opts(c->redis_url, c->queue, &c->queue_opts, &hb->q, err, sizeof err) != 0) {
        if (backoff_ms == 100) SQ_WARN("heartbeat: redis: %s; retrying with backoff", err); /* once per outage */
        hb->q = NULL;
        next_beat = now + backoff_ms;
        backoff_ms = backoff_ms * 2 > 5000 ? 5000 : backoff_ms * 2;
      } else if (sq_queue_heartbeat(hb->q, c->worker_id, NULL) != 0) {
        drop(hb, "heartbeat");
        next_beat = now + backoff_ms;
      } else {
        backoff_ms = 100;
        next_beat = now + c->heartbeat_ms;
      }
    }
    if (hb->q && !stop_at && now >= next_reap) {
      size_t requeued = 0, dead = 0;
      if (sq_queue_reap(hb->q, c->worker_id, NULL, &requeued, &dead) != 0) drop(hb, "reaper");
      else if (requeued || dead)
        SQ_WARN("reaper: %zu expired lease(s) requeued, %zu task(s) to the dead letter", requeued, dead);
      next_reap = now + c->queue_opts.reap_interval_ms;
    }
    int64_t wake = next_beat < next_reap || stop_at ? next_beat : next_reap;
    int64_t ms = wake - sq_now_mono_ms();
    if (*hb->stop || ms > GRACE_TICK_MS) ms = ms > GRACE_TICK_MS ? GRACE_TICK_MS : ms;
    if (nap(hb, ms > 0 ? ms : 1)) break;
  }
  return NULL;
}

int sq_heartbeat_start(const sq_config *cfg, volatile sig_atomic_t *stop, sq_heartbeat **out) {
  *out = NULL;
  sq_heartbeat *hb = calloc(1, sizeof *hb);
  if (!hb) return SQ_ENOMEM;
  hb->cfg = *cfg;
  hb->stop = stop;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&hb->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&hb->mu, NULL);
  if (pthread_create(&hb->thread, NULL, run, hb) != 0) {
    SQ_ERROR("heartbeat: cannot start its thread");
    pthread_cond_destroy(&hb->cv);
    pthread_mutex_destroy(&hb->mu);
    free(hb);
    return SQ_ESYS;
  }
  *out = hb;
  return 0;
}

void sq_heartbeat_stop(sq_heartbeat *hb) {
  if (!hb) return;
  pthread_mutex_lock(&hb->mu);
  hb->quit = true;
  pthread_cond_signal(&hb->cv);
  pthread_mutex_unlock(&hb->mu);
  pthread_join(hb->thread, NULL);
  sq_queue_free(hb->q);
  pthread_cond_destroy(&hb->cv);
  pthread_mutex_destroy(&hb->mu);
  free(hb);
}
