/* kill_watch.h: stops the runs of batches cancelled with `sandq-producer
 * cancel --kill` (kill_watch.c). */
#ifndef SQ_WORKER_KILL_WATCH_H
#define SQ_WORKER_KILL_WATCH_H

typedef struct worker worker;

/* How often housekeeping.c calls sq__kill_watch_check. */
#define SQ__KILL_CHECK_MS 500

/* When jobs wait for or run in the jail pool: reads the kill mark of each
 * of their batches (per shard, sq_queue_batch_kill_seq) and raises the
 * kill flag of each job whose claim it covers; the jail then stops the run
 * (or it never starts) and the job ends with status 'cancelled'. Through
 * the best-effort connection: a failure is logged there, and tried again
 * next time. On the event loop; nothing to do when the pool is empty. */
void sq__kill_watch_check(worker *w);

#endif
