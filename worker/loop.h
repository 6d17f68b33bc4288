/* loop.h: the worker's event loop (loop.c): claim while there is room,
 * drive LLM transfers and jail runs, store finished results. */
#ifndef SQ_WORKER_LOOP_H
#define SQ_WORKER_LOOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

typedef struct worker worker;

/* Set by SIGTERM/SIGINT: once, finish what is in flight; twice, now. */
extern volatile sig_atomic_t sq__worker_stop;

/* What a worker holds when it sizes a claim. */
typedef struct {
  int64_t in_flight;   /* tasks claimed and not yet stored */
  int64_t llm_jobs;    /* of those, tasks that went to the LLM at all */
  int64_t llm_waiting; /* of those, tasks waiting on an LLM reply now */
  int64_t jail_queued; /* tasks handed to the jail pool that no thread has started */
  bool has_llm;        /* a provider is configured */
} sq__claim_load;

/* How many tasks a worker configured by c and holding load may claim now
 * (0: none): free jail threads plus claim_prefetch for tasks that came with
 * their code, LLM waits counted apart against the providers' slots, never
 * beyond max_tasks_in_flight or claim_batch (loop.c says why). */
int64_t sq__loop_claim_room(const sq_config *c, const sq__claim_load *load);
/* Runs w until asked to stop or the host fails the jail. Returns the exit
 * code: 0, or 1 (the jail failed: w->fatal). */
int sq__worker_loop(worker *w);
/* Moves the tasks in hand for up to timeout_ms without the queue: LLM
 * transfers, finished jail runs (their jobs end on the done list, or go on
 * to a repair). Also what a wait for Redis does (redis_link.c), so an
 * outage stalls only claiming and storing. */
void sq__loop_service(worker *w, int timeout_ms);

#endif
