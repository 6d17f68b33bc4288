/* heartbeat.h: a thread with its own Redis connection that keeps this
 * worker's leases alive, runs the fleet's reaper when its turn comes, and
 * enforces the shutdown grace period. Any worker loop can use it. */
#ifndef SQ_WORKER_HEARTBEAT_H
#define SQ_WORKER_HEARTBEAT_H

#include <signal.h>

#include "config.h"

typedef struct sq_heartbeat sq_heartbeat;

/* Starts the thread. cfg is copied. stop is the worker's stop flag (set by
 * SIGTERM/SIGINT): once it is set, the thread gives the worker
 * cfg->shutdown_grace_ms to finish; after that it hands every claim back
 * and ends the process. Returns 0, SQ_ENOMEM or SQ_ESYS. Redis being down
 * is not an error: the thread reconnects with backoff. */
int sq_heartbeat_start(const sq_config *cfg, volatile sig_atomic_t *stop, sq_heartbeat **out);

/* Stops and joins the thread; NULL is a no-op. */
void sq_heartbeat_stop(sq_heartbeat *hb);

#endif
