/* queue.h: the Redis side of sandq: push tasks, claim them, acknowledge
 * them, store results and count batches (hiredis).
 *
 * Knows nothing of the jail or the LLM. Key layout (docs/formats.md); every
 * key of a queue shares the hash tag {<queue>}:
 *   sq:{Q}:tasks                 list, producers LPUSH task JSON here
 *   sq:{Q}:processing:<worker>   list, a worker's claimed tasks (BLMOVE)
 *   sq:{Q}:batch:<B>             hash: total, done, and one count per status
 *   sq:{Q}:results:<B>           hash: task id -> result BSON
 *   sq:{Q}:batches               set of known batch ids
 */
#ifndef SQ_QUEUE_H
#define SQ_QUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sq_queue sq_queue;

/* Connects to redis_url (redis://[:password@]host[:port][/db] or
 * unix:///path). queue is the queue name. Returns 0 and a handle, or
 * SQ_EINVAL (bad URL), SQ_EREDIS_CONN (with a logged reason), SQ_ENOMEM. */
int sq_queue_new(const char *redis_url, const char *queue, sq_queue **out);
/* Disconnects and frees; NULL is a no-op. */
void sq_queue_free(sq_queue *q);
/* The last error's text for this handle (never NULL). */
const char *sq_queue_errstr(const sq_queue *q);

/* Pushes n payloads (borrowed) in one pipeline and adds n to the batch's
 * total. Returns 0 or SQ_EREDIS. */
int sq_queue_push(sq_queue *q, const char *batch, const char *const *payloads, const size_t *lens,
                  size_t n);

/* Moves one task from the queue to worker's processing list (BLMOVE),
 * waiting up to timeout_ms. Returns 0 with a malloc'd payload in *out (the
 * caller frees), SQ_EEMPTY when nothing came, or SQ_EREDIS. */
int sq_queue_claim(sq_queue *q, const char *worker_id, int timeout_ms, char **out, size_t *len);

/* Removes a claimed payload from worker's processing list. */
int sq_queue_ack(sq_queue *q, const char *worker_id, const char *payload, size_t len);

/* Moves everything left in worker's processing list back onto the queue
 * (a restart of the same worker id). Sets *n_moved. */
int sq_queue_requeue_processing(sq_queue *q, const char *worker_id, size_t *n_moved);

/* Stores a result, exactly once per (batch, id): the first result wins and
 * bumps the batch's done and per-status counters; a later one is refused
 * with SQ_EEXISTS. Atomic (a server-side script). */
int sq_queue_put_result(sq_queue *q, const char *batch, const char *id, const char *status,
                        const uint8_t *bson, size_t bson_len);

#define SQ_QUEUE_MAX_STATUSES 16
typedef struct {
  int64_t total;
  int64_t done;
  double cost_usd;   /* LLM spend so far (issue 5) */
  double budget_usd; /* -1 when the batch has no budget */
  int n_statuses;
  struct {
    char name[32];
    int64_t count;
  } statuses[SQ_QUEUE_MAX_STATUSES];
} sq_batch_stats;

/* Reads a batch's counters. A batch nobody knows gives zeros. */
int sq_queue_batch_stats(sq_queue *q, const char *batch, sq_batch_stats *out);

/* Calls fn once per stored result of batch (id and BSON bytes are borrowed
 * for the call only). Iterates with HSCAN so large batches stream. A
 * non-zero return from fn stops and is returned. */
typedef int (*sq_queue_result_fn)(const char *id, const uint8_t *bson, size_t len, void *ud);
int sq_queue_batch_results(sq_queue *q, const char *batch, sq_queue_result_fn fn, void *ud);

/* Number of tasks waiting in the queue. */
int sq_queue_length(sq_queue *q, int64_t *out);

#endif

/* ---- LLM-side state (issue 5): batch spend and budget, cached verdicts ----
 * Kept apart so the queue's core can change without touching them. */

/* Adds usd to the batch's cost_usd (HINCRBYFLOAT on sq:{Q}:batch:<B>). */
int sq_queue_batch_add_cost(sq_queue *q, const char *batch, double usd);
/* Sets the batch's budget_usd (the producer's --budget-usd). */
int sq_queue_batch_set_budget(sq_queue *q, const char *batch, double usd);
/* Reads cost_usd (0 when unset) and budget_usd (-1 when unset). */
int sq_queue_batch_spend(sq_queue *q, const char *batch, double *cost_usd, double *budget_usd);
/* A cache entry sq:{Q}:cache:<ns>:<key>: get gives a malloc'd value (the
 * caller frees) or SQ_ENOTFOUND; set stores with a TTL (ttl_s 0: none). */
int sq_queue_cache_get(sq_queue *q, const char *ns, const char *key, char **out, size_t *len);
int sq_queue_cache_set(sq_queue *q, const char *ns, const char *key, const char *val, size_t len, int64_t ttl_s);
