/* heartbeat.c: the lease-keeping thread (see heartbeat.h): heartbeat every
 * heartbeat_ms, reaper every reap_interval_ms, and the shutdown grace clock.
 * Its connection is a link of its own (redis_link.h: the same reconnect and
 * backoff as the event loop's); the reaper backs off apart, so its trouble
 * never delays a heartbeat. */
#include "heartbeat.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "jail.h"
#include "log.h"
#include "util.h"
#include "redis_link.h"

#define GRACE_TICK_MS 100
#define SQ_HEARTBEAT_MAX_SHARDS 64 /* the config's bound on shards */

struct sq_heartbeat {
  sq_config cfg;
  volatile sig_atomic_t *stop;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool quit;
  sq__link *link;      /* heartbeats, and the connection the reaper shares */
  sq__backoff *reaper; /* the reaper's failures in a row */
  /* The claims the event loop holds, under mu (sq_heartbeat_hold). */
  sq_held_claim *held;
  size_t n_held, cap_held;
  int64_t seen[SQ_HEARTBEAT_MAX_SHARDS]; /* per shard, the highest token held so far */
  sq_held_claim *snap;                   /* the heartbeat's copy, outside mu */
  size_t cap_snap;
};

int sq_heartbeat_hold(sq_heartbeat *hb, const sq_claim *c) {
  if (!hb) return 0;
  int rc = 0;
  pthread_mutex_lock(&hb->mu);
  if (hb->n_held == hb->cap_held) {
    size_t cap = hb->cap_held ? hb->cap_held * 2 : 64;
    sq_held_claim *p = realloc(hb->held, cap * sizeof *p);
    if (p) hb->held = p, hb->cap_held = cap;
  }
  if (hb->n_held < hb->cap_held) hb->held[hb->n_held++] = (sq_held_claim){.shard = c->shard, .token = c->token};
  else rc = SQ_ENOMEM;
  if (c->shard >= 0 && c->shard < SQ_HEARTBEAT_MAX_SHARDS && c->token > hb->seen[c->shard])
    hb->seen[c->shard] = c->token;
  pthread_mutex_unlock(&hb->mu);
  return rc;
}

void sq_heartbeat_let_go(sq_heartbeat *hb, const sq_claim *c) {
  if (!hb) return;
  pthread_mutex_lock(&hb->mu);
  for (size_t i = hb->n_held; i-- > 0;)
    if (hb->held[i].token == c->token && hb->held[i].shard == c->shard) {
      hb->held[i] = hb->held[--hb->n_held];
      break;
    }
  pthread_mutex_unlock(&hb->mu);
}

/* One heartbeat for the claims held now (a copy taken under mu, so the
 * event loop never waits on Redis). A claim the event loop takes after the
 * copy has a token above the copy's seen and keeps its fresh lease. */
static int beat(sq_heartbeat *hb) {
  int64_t seen[SQ_HEARTBEAT_MAX_SHARDS];
  size_t n;
  pthread_mutex_lock(&hb->mu);
  if (hb->cap_snap < hb->n_held) {
    sq_held_claim *p = realloc(hb->snap, hb->n_held * sizeof *p);
    if (!p) {
      pthread_mutex_unlock(&hb->mu);
      return SQ_ENOMEM;
    }
    hb->snap = p, hb->cap_snap = hb->n_held;
  }
  n = hb->n_held;
  if (n) memcpy(hb->snap, hb->held, n * sizeof *hb->snap);
  memcpy(seen, hb->seen, sizeof seen);
  pthread_mutex_unlock(&hb->mu);
  sq_heartbeat_report rep;
  int rc = sq__link_heartbeat_held(hb->link, seen, SQ_HEARTBEAT_MAX_SHARDS, hb->snap, n, &rep);
  if (rc == 0 && rep.handed_back)
    SQ_WARN("heartbeat: redis listed %lld claim(s) of worker %s that it does not hold (their results were "
            "acknowledged and then lost, e.g. by a redis restart that went back): handed back to run again",
            (long long)rep.handed_back, hb->cfg.worker_id);
  if (rc == 0 && rep.unknown)
    SQ_WARN("heartbeat: redis does not know %lld claim(s) worker %s holds (it restarted empty or went back): "
            "their results will be refused; the tasks run again from the queue if redis still has them",
            (long long)rep.unknown, hb->cfg.worker_id);
  return rc;
}

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

/* The grace period ran out with a task still in hand: hand everything back
 * so another worker starts it now rather than after a lease, and end. */
static void give_up(sq_heartbeat *hb) {
  size_t n = 0;
  const char *id = hb->cfg.worker_id;
  sq__link_release_all(hb->link, &n);
  SQ_WARN("worker %s: shutdown grace of %lld ms ran out; handed %zu task(s) back", id,
          (long long)hb->cfg.shutdown_grace_ms, n);
  sq_jail_cgroups_remove(); /* _exit runs no cleanup: the runs' cgroups go now, with what runs in them */
  _exit(0);
}

static void *run(void *arg) {
  sq_heartbeat *hb = arg;
  const sq_config *c = &hb->cfg;
  int64_t next_beat = 0, next_reap = 0, stop_at = 0;
  for (;;) {
    int64_t now = sq_now_mono_ms();
    if (*hb->stop && !stop_at) stop_at = now;
    if (stop_at && now - stop_at >= c->shutdown_grace_ms) give_up(hb);
    if (now >= next_beat) {
      int rc = beat(hb);
      if (rc) {
        sq__link_failed(hb->link, rc, "heartbeat", NULL);
        next_beat = sq__backoff_next_try_ms(sq__link_backoff(hb->link));
      } else {
        sq__link_ok(hb->link, "heartbeat");
        next_beat = now + c->heartbeat_ms;
      }
    }
    if (sq__link_queue(hb->link) && !stop_at && now >= next_reap && sq__backoff_due(sq__link_backoff(hb->link), now)) {
      int rc = sq__link_reap(hb->link);
      next_reap = now + c->queue_opts.reap_interval_ms;
      if (rc && sq__backoff_fail(hb->reaper, now)) {
        int64_t delay_ms = sq__backoff_delay_ms(hb->reaper);
        SQ_WARN("heartbeat: reaper failed (%s); next run in %lld ms (failure %lld in a row)",
                sq__link_errstr(hb->link),
                (long long)(c->queue_opts.reap_interval_ms > delay_ms ? c->queue_opts.reap_interval_ms : delay_ms),
                (long long)sq__backoff_failures(hb->reaper));
      }
      if (rc && sq__backoff_next_try_ms(hb->reaper) > next_reap) next_reap = sq__backoff_next_try_ms(hb->reaper);
      if (!rc && sq__backoff_ok(hb->reaper)) SQ_INFO("heartbeat: the reaper works again");
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
  if (sq__link_new(&hb->cfg, "heartbeat", NULL, &hb->link) != 0 || sq__backoff_new(&hb->reaper) != 0) {
    sq__link_free(hb->link);
    free(hb);
    return SQ_ENOMEM;
  }
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
    sq__link_free(hb->link);
    sq__backoff_free(hb->reaper);
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
  sq__link_free(hb->link);
  sq__backoff_free(hb->reaper);
  pthread_cond_destroy(&hb->cv);
  pthread_mutex_destroy(&hb->mu);
  free(hb->held);
  free(hb->snap);
  free(hb);
}
