/* best_effort.h: the worker's Redis calls that may fail without harm
 * (batch spend, the verdict cache, audit entries no result pipeline took,
 * and housekeeping's metrics, health and rollout). They use the event
 * loop's connection, behind a backoff of their own (w->best_effort), so a
 * broken counter or hash never stalls claiming and storing, and a broken
 * link never turns them into a hot loop: a call while that backoff waits
 * is not tried and fails with SQ_EREDIS_CONN (SQ_ENOTFOUND for a cache
 * read). Their log lines call them "chores", the only meaning of the word. */
#ifndef SQ_WORKER_BEST_EFFORT_H
#define SQ_WORKER_BEST_EFFORT_H

#include <stddef.h>
#include <stdint.h>

#include "budget_cache.h"
#include "queue.h"

typedef struct worker worker;

/* The connection when a best-effort call may try now, else NULL. */
sq_queue *sq__best_effort_queue(worker *w);
/* Counts rc (0: a success) against the best-effort backoff, logging a
 * failure once per step ("<what> failed ..."). Returns rc. */
int sq__best_effort_done(worker *w, int rc, const char *what);
/* Forgets the backoff: the next call tries whatever came before (a last
 * flush at exit). */
void sq__best_effort_retry_now(worker *w);

/* A cached verdict (ns, key) into *out (malloc'd, the caller frees) and
 * *len: 0, or SQ_ENOTFOUND (absent, or Redis unavailable). */
int sq__best_effort_cache_get(worker *w, const char *ns, const char *key, char **out, size_t *len);
/* Caches val under (ns, key) for ttl_s seconds; a failure is logged only. */
void sq__best_effort_cache_set(worker *w, const char *ns, const char *key, const char *val, int64_t ttl_s);
/* Appends audit entries (sq:{Q}:audit) on their own round trip. */
int sq__best_effort_audit_add(worker *w, const sq_queue_stream_batch *b);
/* The batch counters on Redis, as the budget cache's store (ud: the worker). */
extern const sq__budget_store sq__best_effort_budget_store;

#endif
