/* heartbeat.h: a thread with its own Redis connection that keeps this
 * worker's leases alive, runs the fleet's reaper when its turn comes, and
 * enforces the shutdown grace period. Any worker loop can use it. */
#ifndef SQ_WORKER_HEARTBEAT_H
#define SQ_WORKER_HEARTBEAT_H

#include <signal.h>

#include "config.h"
#include "queue.h"

typedef struct sq_heartbeat sq_heartbeat;

/* Starts the thread. cfg is copied. stop is the worker's stop flag (set by
 * SIGTERM/SIGINT): once it is set, the thread gives the worker
 * cfg->shutdown_grace_ms to finish; after that it hands every claim back
 * and ends the process. Returns 0, SQ_ENOMEM or SQ_ESYS. Redis being down
 * is not an error: the thread reconnects with backoff. */
int sq_heartbeat_start(const sq_config *cfg, volatile sig_atomic_t *stop, sq_heartbeat **out);

/* Stops and joins the thread; NULL is a no-op. */
void sq_heartbeat_stop(sq_heartbeat *hb);

/* The claims the worker holds in memory, which are the only ones the
 * heartbeat renews (sq_queue_heartbeat_held): the event loop calls hold
 * for each claim as soon as its reply is read, and let_go once the claim is
 * settled (stored, retried, handed back, refused). A claim Redis lists for
 * this worker that it does not hold goes back to the queue within a
 * heartbeat. Thread-safe; hb NULL is a no-op. hold returns SQ_ENOMEM when
 * the claim could not be noted (its lease is then not renewed). */
int sq_heartbeat_hold(sq_heartbeat *hb, const sq_claim *c);
void sq_heartbeat_let_go(sq_heartbeat *hb, const sq_claim *c);

#endif
