/* loop.c: the worker's event loop. One thread claims tasks while there is
 * room (claim_room: what it can start soon, claim_batch per round trip),
 * drives every LLM request through the client's curl multi loop, collects
 * jail runs from the pool, and stores finished results (claim_batch per
 * pipeline, several per round trip: store_due). */
#include <poll.h>
#include <stdlib.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "budget_cache.h"
#include "compile_cache.h"
#include "endpoint.h"
#include "housekeeping.h"
#include "job.h"
#include "llm.h"
#include "loop.h"
#include "pool.h"
#include "redis_link.h"
#include "worker.h"

#define EMPTY_BACKOFF_MS 20 /* with work in flight, how long an empty queue is believed */
#define IDLE_WAIT_MS 200
#define STORE_WAIT_MS 2 /* how long a finished job may wait for others to share its round trip */

volatile sig_atomic_t sq__worker_stop;

/* How many tasks a worker may claim now: only what it can start soon,
 * so that a fleet shares a queue fairly (a worker holding tasks it cannot
 * start while another idles is what this prevents). A claimed task turns
 * out to need the jail at once (it came with its code) or the LLM first, so
 * both budgets must have room:
 *   the jail's: jail_threads + claim_prefetch, less the tasks held that came
 *     with their code (waiting for a jail thread, running, done). Tasks whose
 *     code the LLM wrote are not counted: a new prompt starts at once on the
 *     LLM, and its run comes a reply later, so a burst of replies in the jail
 *     must not stop the LLM side from being fed;
 *   the LLM's:  the providers' max_in_flight + claim_prefetch, less the
 *     tasks waiting on a reply (only with a provider);
 * and never beyond max_tasks_in_flight or claim_batch. The jail's room is
 * claimed a prefetch at a time: while a task still waits for a jail
 * thread, a smaller room waits to grow, so a worker busy with short tasks
 * claims several per round trip instead of one per finished task (each
 * round trip costs redis-server and the worker more than the task's share
 * of the claim; docs/benchmarks.md). No thread idles for it: once none has
 * a task waiting, any room is claimed. */
/* The jail's budget left: jail_threads + claim_prefetch, less the tasks
 * held that came with their code (finished ones not yet stored included). */
static int64_t jail_room(const sq_config *c, int64_t in_flight, int64_t llm_jobs) {
  return c->jail_threads + c->claim_prefetch - (in_flight - llm_jobs);
}

int64_t sq__loop_claim_room(const sq_config *c, const sq__claim_load *load) {
  int64_t room = c->max_tasks_in_flight - load->in_flight;
  int64_t jail = jail_room(c, load->in_flight, load->llm_jobs);
  if (jail > 0 && jail < c->claim_prefetch && load->jail_queued > 0) jail = 0;
  if (jail < room) room = jail;
  if (load->has_llm) {
    int64_t cap = c->claim_prefetch;
    for (int i = 0; i < c->n_providers; i++) cap += c->providers[i].max_in_flight;
    if (cap - load->llm_waiting < room) room = cap - load->llm_waiting;
  }
  if (c->claim_batch < room) room = c->claim_batch;
  return room > 0 ? room : 0;
}

#define PARKED_MAX 1024 /* results held aside for a damaged key, at most */

/* How many jobs are parked (w->parked). */
static int parked_count(const worker *w) {
  int n = 0;
  for (const job *j = w->parked; j; j = j->next) n++;
  return n;
}

/* sq__loop_claim_room for w as it stands. */
static int64_t claim_room(const worker *w) {
  /* Parked results (w->parked) take no room of the jail's or the LLM's,
   * up to PARKED_MAX of them (each holds its result in memory): past that
   * this worker claims no more until their key is repaired. */
  int parked = parked_count(w);
  if (parked >= PARKED_MAX) return 0;
  sq__claim_load load = {.in_flight = w->in_flight - parked, .llm_jobs = w->llm_jobs, .llm_waiting = w->llm_waiting,
                         .jail_queued = w->pool ? sq__pool_waiting(w->pool) : 0, .has_llm = w->llm != NULL};
  return sq__loop_claim_room(&w->cfg, &load);
}

/* Claims while there is room, into c (cfg.claim_batch slots); *idle set
 * when, with nothing in flight, a claim waited claim_timeout_ms for the
 * queue in vain. Returns the ms the loop may wait for events. */
static int claim_more(worker *w, sq_claim *c, int64_t *empty_until, bool *idle) {
  int64_t room;
  while (!sq__worker_stop && !w->fatal && (room = claim_room(w)) > 0) {
    /* The queue was empty a moment ago: with work in flight, wait for it
     * (or for the backoff to pass) before looking again. With nothing in
     * flight there is nothing else to wait for: block on the queue below
     * (the loop would otherwise come straight back here, spinning until
     * the backoff passed). */
    int64_t now = sq_now_mono_ms();
    if (w->in_flight > 0 && now < *empty_until) return (int)(*empty_until - now);
    size_t n = 0, max = (size_t)room;
    /* Nothing in flight: block on the queue; else just look. */
    int rc = sq__redis_claim(w, w->in_flight == 0 ? (int)w->cfg.claim_timeout_ms : 0, c, max, &n);
    if (rc == SQ_EEMPTY) {
      if (w->in_flight == 0) {
        *idle = true;
        return 0;
      }
      *empty_until = sq_now_mono_ms() + EMPTY_BACKOFF_MS;
      return EMPTY_BACKOFF_MS;
    }
    if (rc == SQ_EINTERRUPTED) return IDLE_WAIT_MS;
    if (rc) return w->in_flight ? 0 : 100;
    for (size_t i = 0; i < n; i++)
      sq__job_begin(w, &c[i]);
  }
  return IDLE_WAIT_MS;
}

/* Waits for network activity, a finished jail run, or the timeout. */
static void wait_events(worker *w, int timeout_ms) {
  int fd = sq__pool_fd(w->pool);
  if (w->llm && sq_llm_outstanding(w->llm) > 0) {
    if (sq_llm_poll(w->llm, timeout_ms, fd) != 0) SQ_ERROR("llm: %s", sq_llm_errstr(w->llm));
    return;
  }
  if (timeout_ms > 0) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    poll(&p, 1, timeout_ms);
  }
  if (w->llm && sq_llm_poll(w->llm, 0, -1) != 0) SQ_ERROR("llm: %s", sq_llm_errstr(w->llm));
}

void sq__loop_service(worker *w, int timeout_ms) {
  sq__endpoint_publish(w); /* also while a wait for Redis keeps the loop here */
  if (!w->pool) {
    if (timeout_ms > 0) poll(NULL, 0, timeout_ms);
    return;
  }
  wait_events(w, timeout_ms);
  for (job *j = sq__pool_take_all(w->pool), *next; j; j = next) {
    next = j->next;
    j->next = NULL;
    sq__job_executed(j);
  }
}

/* When the finished jobs are stored: results share round trips to Redis
 * (each costs redis-server and the worker more than the results it
 * carries: docs/benchmarks.md), so one waits, at most STORE_WAIT_MS, while
 * jail runs are out that may add theirs. Never longer: at once when
 * stopping, when no run is out (a slow task's result never waits), when a
 * round of the jail threads' results is in, or when storing them opens a
 * claim's worth of room for the jail (claims and stores keep step). */
static bool store_due(const worker *w) {
  if (!w->done_head) return false;
  if (sq__worker_stop || w->fatal || w->in_jail == 0 || w->done_n >= w->cfg.jail_threads) return true;
  int64_t jail = jail_room(&w->cfg, w->in_flight, w->llm_jobs);
  if (jail < w->cfg.claim_prefetch && jail + w->done_n >= w->cfg.claim_prefetch) return true;
  return sq_now_mono_ms() - w->done_since_ms >= STORE_WAIT_MS;
}

/* The ms the loop may wait before the finished jobs are due. */
static int store_wait_ms(const worker *w, int timeout_ms) {
  if (w->parked) { /* their next try */
    int64_t due = w->parked_retry_ms - sq_now_mono_ms();
    if (due < timeout_ms) timeout_ms = due > 0 ? (int)due : 0;
  }
  if (!w->done_head) return timeout_ms;
  if (store_due(w)) return 0;
  int64_t left = w->done_since_ms + STORE_WAIT_MS - sq_now_mono_ms();
  if (left < 0) left = 0;
  return left < timeout_ms ? (int)left : timeout_ms;
}


/* Stores the finished jobs, cfg.claim_batch at a time through js, once
 * they are due (store_due). */
static void store_done(worker *w, job **js) {
  if (!store_due(w)) return;
  /* A batch's cost counter holds every call of a result before the result
   * is stored (a reader who sees the batch done sees its whole cost). */
  sq__budget_cache_flush(w->budget, true);
  w->done_n = 0;
  while (w->done_head) {
    size_t n = 0;
    while (w->done_head && n < (size_t)w->cfg.claim_batch) {
      js[n++] = w->done_head;
      w->done_head = w->done_head->next;
    }
    if (!w->done_head) w->done_tail = NULL;
    sq__redis_store_many(w, js, n);
    for (size_t i = 0; i < n; i++) {
      if (js[i]->parked) continue; /* w->parked's now */
      sq__job_free(js[i]);
      w->in_flight--;
    }
  }
}

int sq__worker_loop(worker *w) {
  int64_t empty_until = 0;
  /* The compilers' version commands, for the compile cache's keys (tsc's
   * node and javac's JVM take about 0.3 s of CPU), start once the worker
   * first idles (claim_more), or with its first task of a compiled
   * language (compile_cache.h): not beside its start-up and a batch of
   * other tasks it starts with, whose tasks and results they delayed. */
  bool toolchains = w->cfg.compile_cache_mib <= 0; /* started, or none to start */
  sq_claim *claims = calloc((size_t)w->cfg.claim_batch, sizeof *claims);
  job **js = calloc((size_t)w->cfg.claim_batch, sizeof *js);
  if (!claims || !js) {
    free(claims);
    free(js);
    SQ_ERROR("out of memory for %lld claim slots", (long long)w->cfg.claim_batch);
    return 1;
  }
  while (sq__worker_stop < 2 && !w->fatal) {
    if (sq__worker_stop && w->parked && w->in_flight == parked_count(w)) sq__redis_drop_parked(w);
    if (sq__worker_stop && w->in_flight == 0) break;
    sq__redis_store_parked(w);
    bool idle = false;
    int timeout = sq__worker_stop ? IDLE_WAIT_MS : claim_more(w, claims, &empty_until, &idle);
    if (!toolchains && idle) {
      sq__compile_toolchains_start();
      toolchains = true;
    }
    store_done(w, js);
    sq__housekeeping_run(w);
    if (w->in_flight == 0) continue;
    sq__loop_service(w, store_wait_ms(w, timeout));
    store_done(w, js);
  }
  free(claims);
  free(js);
  if (w->fatal) {
    SQ_ERROR("the jail cannot run on this host: handing every claimed task back and stopping");
    return 1;
  }
  return 0;
}
