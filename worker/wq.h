/* wq.h: the worker's one boundary to Redis. Every word the worker says to
 * the queue goes through wq.c: the connection and its backoff (one link per
 * thread: the event loop's and the heartbeat thread's, the same code), claims
 * (a claim whose reply was lost included: the queue handle keeps it), results,
 * retries, hand-backs, the heartbeat and the reaper, and, through wq_chores.c,
 * batch spend, the verdict cache, metrics, health and rollout state.
 *
 * A failed call backs off, whatever failed: a lost connection or a command
 * Redis refuses every time (a key of the wrong type). The wait doubles from
 * SQ__BACKOFF_MIN_MS to SQ__BACKOFF_MAX_MS and resets on the next success;
 * one log line per step (the first failure, each doubling, then once every
 * SQ__BACKOFF_LOG_MS at the cap), never one per attempt. */
#ifndef SQ_WORKER_WQ_H
#define SQ_WORKER_WQ_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "queue.h"

#define SQ__BACKOFF_MIN_MS 100
#define SQ__BACKOFF_MAX_MS 5000
#define SQ__BACKOFF_LOG_MS 60000

/* Failures in a row of one kind of call, and the wait they earned. Zeroed:
 * no failure, a try is due now. */
typedef struct {
  int64_t failures;    /* in a row */
  int64_t delay_ms;    /* the wait after the latest failure */
  int64_t next_try_ms; /* monotonic: no try before */
  int64_t next_log_ms; /* monotonic: at the cap, the next log line */
} sq__backoff;

/* Counts a failure at now_ms (monotonic). Returns true when it starts a new
 * step and deserves a log line. */
bool sq__backoff_fail(sq__backoff *b, int64_t now_ms);
/* A success: resets b and returns the failures in a row it ended. */
int64_t sq__backoff_ok(sq__backoff *b);
/* Whether a try is due at now_ms. */
bool sq__backoff_due(const sq__backoff *b, int64_t now_ms);

/* One connection to the queue and its backoff. Not thread-safe: one per
 * thread. */
typedef struct {
  const sq_config *cfg;         /* borrowed: redis_url, queue, queue_opts, worker_id */
  const char *who;              /* "worker" or "heartbeat", for log lines */
  volatile sig_atomic_t *stop;  /* claims give up once set; may be NULL */
  sq_queue *q;                  /* NULL until the first connection; it reconnects itself */
  sq__backoff bo;
  char err[256];                /* why the last connection attempt failed */
} sq__wq_link;

/* Sets l up without connecting. cfg must outlive l. */
void sq__wq_link_init(sq__wq_link *l, const sq_config *cfg, const char *who, volatile sig_atomic_t *stop);
/* Disconnects; the link can connect again. */
void sq__wq_link_close(sq__wq_link *l);
/* The link's queue handle in *q, connecting first when there is none (a
 * failure to connect is counted, logged per step, and returned). Ignores
 * the backoff: callers check sq__backoff_due first. */
int sq__wq_link_get(sq__wq_link *l, sq_queue **q);
/* A call on the link failed with rc: counts it and logs it when the
 * backoff steps ("<who>: <what> failed ..."; task_id may be NULL). */
void sq__wq_link_failed(sq__wq_link *l, int rc, const char *what, const char *task_id);
/* The last error's text on the link (never NULL). */
const char *sq__wq_link_errstr(const sq__wq_link *l);
/* A call on the link worked: resets the backoff, noting a recovery. */
void sq__wq_link_ok(sq__wq_link *l, const char *what);

/* The heartbeat thread's words, on its own link. Each connects when needed
 * and returns 0 or the queue's error (not counted: the caller decides). */
int sq__wq_heartbeat(sq__wq_link *l);
int sq__wq_reap(sq__wq_link *l);
/* Hands back every claim cfg->worker_id holds; *n (may be NULL) how many. */
int sq__wq_release_all(sq__wq_link *l, size_t *n);

#endif
