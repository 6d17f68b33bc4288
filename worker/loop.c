/* loop.c: the worker's event loop. One thread claims tasks while there is
 * room (max_tasks_in_flight), drives every LLM request through the client's
 * curl multi loop, collects jail runs from the pool, and stores finished
 * results. */
#include <poll.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "worker.h"

#define EMPTY_BACKOFF_MS 20 /* with work in flight, how long an empty queue is believed */
#define IDLE_WAIT_MS 200

volatile sig_atomic_t sq__worker_stop;

/* Claims while there is room. Returns the ms the loop may wait for events. */
static int claim_more(worker *w, int64_t *empty_until) {
  while (!sq__worker_stop && !w->fatal && w->in_flight < w->cfg.max_tasks_in_flight) {
    int64_t now = sq_now_mono_ms();
    if (now < *empty_until) return (int)(*empty_until - now);
    sq_claim c = {0};
    /* Nothing in flight: block on the queue; else just look. */
    int rc = sq__wq_claim(w, w->in_flight == 0 ? (int)w->cfg.claim_timeout_ms : 0, &c);
    if (rc == SQ_EEMPTY) {
      if (w->in_flight == 0) return 0;
      *empty_until = sq_now_mono_ms() + EMPTY_BACKOFF_MS;
      return EMPTY_BACKOFF_MS;
    }
    if (rc == SQ_EINTERRUPTED) return IDLE_WAIT_MS;
    if (rc) return w->in_flight ? 0 : 100;
    sq__job_begin(w, &c);
  }
  return IDLE_WAIT_MS;
}

/* Waits for network activity, a finished jail run, or the timeout. */
static void wait_events(worker *w, int timeout_ms) {
  int fd = sq__pool_fd(w->pool);
  if (w->llm && sq_llm_outstanding(w->llm) > 0) {
    sq_llm_poll(w->llm, timeout_ms, fd);
    return;
  }
  if (timeout_ms > 0) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    poll(&p, 1, timeout_ms);
  }
  if (w->llm) sq_llm_poll(w->llm, 0, -1);
}

static void store_done(worker *w) {
  while (w->done_head) {
    job *j = w->done_head;
    w->done_head = j->next;
    if (!w->done_head) w->done_tail = NULL;
    if (sq__wq_store(w, j) != 0)
      SQ_LOGT(SQ_LOG_ERROR, j->r.id, "result not stored; the lease will expire and the task be requeued");
    sq__job_free(j);
    w->in_flight--;
  }
}

int sq__worker_loop(worker *w) {
  int64_t empty_until = 0;
  while (sq__worker_stop < 2 && !w->fatal) {
    if (sq__worker_stop && w->in_flight == 0) break;
    int timeout = sq__worker_stop ? IDLE_WAIT_MS : claim_more(w, &empty_until);
    store_done(w);
    if (w->in_flight == 0) continue;
    wait_events(w, w->done_head ? 0 : timeout);
    job *j;
    while ((j = sq__pool_take(w->pool)) != NULL)
      sq__job_executed(j);
    store_done(w);
  }
  if (w->fatal) {
    SQ_ERROR("the jail cannot run here: handing every claimed task back and stopping");
    return 1;
  }
  return 0;
}
