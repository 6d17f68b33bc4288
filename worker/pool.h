/* pool.h: the jail on a bounded thread pool (pool.c): jobs go in, run
 * their program, and come back to the event loop through a pipe. */
#ifndef SQ_WORKER_POOL_H
#define SQ_WORKER_POOL_H

typedef struct sq_jail sq_jail;
typedef struct jail_pool jail_pool;
typedef struct job job;

/* Starts n_threads threads running programs in jail (borrowed). Returns 0,
 * SQ_ENOMEM or SQ_ESYS. */
int sq__pool_new(sq_jail *jail, int n_threads, jail_pool **out);
/* Compiles judge.py and workspace.py once, in the jail (compiled.h); on
 * failure logs a warning and tasks compile them each (the same verdicts). */
void sq__pool_precompile(sq_jail *jail);
/* Readable when finished jobs wait in sq__pool_take_all. */
int sq__pool_fd(const jail_pool *p);
void sq__pool_submit(jail_pool *p, job *j);
/* Jobs submitted that no thread has started yet. */
int sq__pool_waiting(jail_pool *p);
/* Calls fn on every job submitted and not yet finished (waiting for a
 * thread or running), under the pool's lock: fn must be quick, must not
 * call into the pool, and may only read the job or set its kill flag. */
void sq__pool_each(jail_pool *p, void (*fn)(job *j, void *ud), void *ud);
/* Every finished job, oldest first, linked by ->next (the caller's now), or NULL. */
job *sq__pool_take_all(jail_pool *p);
/* Stops the threads after their current run; queued jobs are not run. NULL: no-op. */
void sq__pool_free(jail_pool *p);

#endif
