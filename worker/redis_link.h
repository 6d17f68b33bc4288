/* redis_link.h: the worker's words to the queue, in one place, so a new
 * queue protocol (leases, fencing tokens, heartbeats) changes redis_link.c
 * and not the loop. A link is one connection and its backoff (one per
 * thread: the event loop's and the heartbeat thread's, the same code); on
 * it, the heartbeat thread's words (heartbeat, reaper, hand back) and the
 * event loop's (claim, store + acknowledge, retry, stall, hand back).
 *
 * A failed call backs off (backoff.h), whatever failed: a lost connection
 * or a command Redis refuses every time (a key of the wrong type). */
#ifndef SQ_WORKER_REDIS_LINK_H
#define SQ_WORKER_REDIS_LINK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "backoff.h"
#include "config.h"
#include "queue.h"

typedef struct sq__link sq__link;

/* A link that connects on first use. cfg (redis_url, queue, queue_opts,
 * worker_id are read) must outlive it; who ("worker", "heartbeat") names
 * it in log lines; stop (may be NULL) makes a blocking claim give up once
 * set. Returns 0 or SQ_ENOMEM; sq__link_free (NULL: no-op) disconnects. */
int sq__link_new(const sq_config *cfg, const char *who, volatile sig_atomic_t *stop, sq__link **out);
void sq__link_free(sq__link *l);
/* The link's queue handle in *q (owned by the link), connecting first when
 * there is none (a failure to connect is returned, not counted). Ignores
 * the backoff: callers check sq__backoff_due(sq__link_backoff(l), ...). */
int sq__link_get(sq__link *l, sq_queue **q);
/* The handle when connected once (it reconnects itself), else NULL. */
sq_queue *sq__link_queue(const sq__link *l);
/* The link's backoff (owned by the link). */
sq__backoff *sq__link_backoff(const sq__link *l);
/* A call on the link failed with rc: counts it and logs it when the
 * backoff steps ("<who>: <what> failed ..."; task_id may be NULL). */
void sq__link_failed(sq__link *l, int rc, const char *what, const char *task_id);
/* A call on the link worked: resets the backoff, noting a recovery. */
void sq__link_ok(sq__link *l, const char *what);
/* The last error's text on the link (never NULL). */
const char *sq__link_errstr(const sq__link *l);

/* The heartbeat thread's words, on its own link. Each connects when needed
 * and returns 0 or the queue's error (not counted: the caller decides). */
/* The heartbeat of the claims the worker holds (sq_queue_heartbeat_held). */
int sq__link_heartbeat_held(sq__link *l, const int64_t *seen, int n_seen, const sq_held_claim *held, size_t n,
                            sq_heartbeat_report *report);
int sq__link_reap(sq__link *l);
/* Hands back every claim cfg->worker_id holds; *n (may be NULL) how many. */
int sq__link_release_all(sq__link *l, size_t *n);

/* The event loop's words, on w->link (worker.h). */
typedef struct worker worker;
typedef struct job job;
/* Makes w->link, connects (waiting out Redis with backoff), checks the
 * server's settings and recovers what an earlier run of this worker id
 * left. Returns 0, SQ_ENOMEM, SQ_EREDIS_AUTH (refused credentials: a
 * configuration error), or SQ_EINTERRUPTED when asked to stop first. */
int sq__redis_open(worker *w);
/* Frees w->link (NULL: no-op). */
void sq__redis_close(worker *w);
/* Whether the connection is up (so a last flush is worth trying). */
bool sq__redis_up(const worker *w);
/* Claims up to max tasks in one round trip into out[0..*n) (waiting up to
 * timeout_ms for a first; 0: just look), after handing back the tasks of a
 * claim whose reply was lost. Waits out the backoff first. Returns 0,
 * SQ_EEMPTY, SQ_EINTERRUPTED or a Redis error (counted in the backoff). */
int sq__redis_claim(worker *w, int timeout_ms, sq_claim *out, size_t max, size_t *n);
/* Settles j: a transient failure is scheduled for another attempt when
 * attempts remain; otherwise the result is stored and the claim
 * acknowledged in one fenced step (a late result after a lost lease is
 * refused: its new owner stores it). Until then the claim stays ours (the
 * heartbeat keeps its lease): every Redis failure, lost connection or
 * refused command, backs off and tries again, until done or asked to stop
 * (SQ_EINTERRUPTED; the claim is still held and is handed back), except a
 * refusal for a damaged key (SQ_ECONFLICT: at once, the claim still held). */
int sq__redis_store(worker *w, job *j);
/* Settles js[0..n) like sq__redis_store, storing the results in one
 * pipelined round trip where it can, the audit log's waiting entries
 * riding along; logs what could not be stored. The caller still owns (and
 * frees) the jobs, but for those it parks (job->parked): a result whose
 * batch's key is damaged (SQ_ECONFLICT from sq__redis_store) waits in
 * w->parked, its claim held, so the others are stored meanwhile. */
void sq__redis_store_many(worker *w, job **js, size_t n);
/* Stores the parked jobs again when their wait is over (it doubles from
 * 1 s to 30 s while the key stays damaged); frees the stored ones.
 * Returns how many left the list. */
int sq__redis_store_parked(worker *w);
/* Frees the parked jobs (stopping: their claims are handed back). */
void sq__redis_drop_parked(worker *w);
/* Hands j's claim back as a stall (a jail failure during its run): it goes
 * to the dead letter after max_stalls; the caller still owns j. */
void sq__redis_stall(worker *w, job *j, const char *why);
/* Hands every task this worker holds back to the queue (one try). */
void sq__redis_hand_back(worker *w);

#endif
