/* budget_cache.h: each batch's LLM spend and budget as this worker sees
 * them, without a Redis round trip per LLM call. A batch's cost grows here
 * first (pending) and reaches its counter with the next flush: before this
 * worker stores any result (loop.c), and at most SQ__BUDGET_FLUSH_MS later
 * anyway (housekeeping.c). A budget check reads the batch's counter (its
 * own pending flushed first) at most every SQ__BUDGET_REFRESH_MS and
 * otherwise answers from what it read plus what this worker spent since.
 * Other workers' spend is seen within SQ__BUDGET_REFRESH_MS: a batch can
 * overshoot its budget by that much of the fleet's spend, on top of what is
 * already in flight (docs/llm.md). The cache holds SQ__BUDGET_BATCHES
 * batches; a new one takes the place of a free entry, else of one with
 * nothing pending, else of the least recently used (its pending spend
 * flushed first: spend is never dropped to make room). */
#ifndef SQ_WORKER_BUDGET_CACHE_H
#define SQ_WORKER_BUDGET_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#define SQ__BUDGET_BATCHES 32
#define SQ__BUDGET_REFRESH_MS 250
#define SQ__BUDGET_FLUSH_MS 250

/* Where the batch counters live (the worker's: best_effort.c, on Redis).
 * Each call gets the ud given to sq__budget_cache_new. */
typedef struct {
  /* Adds usd to batch's cost counter: 0, or an error (nothing was added). */
  int (*add_cost)(void *ud, const char *batch, double usd);
  /* Reads batch's cost (0 unset) and budget (-1 unset): 0 or an error. */
  int (*read_spend)(void *ud, const char *batch, double *cost_usd, double *budget_usd);
  /* Whether a flush is worth trying now. */
  bool (*up)(void *ud);
  /* The monotonic clock, in ms. */
  int64_t (*now_ms)(void *ud);
} sq__budget_store;

typedef struct sq__budget_cache sq__budget_cache;

/* An empty cache on store (borrowed; it and ud must outlive the cache).
 * Returns 0 or SQ_ENOMEM. sq__budget_cache_free (NULL: no-op) drops what
 * is pending: flush first. */
int sq__budget_cache_new(const sq__budget_store *store, void *ud, sq__budget_cache **out);
void sq__budget_cache_free(sq__budget_cache *c);
/* Counts usd against batch (reaches the store with the next flush; with
 * no room in the cache, at once). */
void sq__budget_cache_add(sq__budget_cache *c, const char *batch, double usd);
/* Whether batch has spent its budget (false when unknown or none). */
bool sq__budget_cache_exhausted(sq__budget_cache *c, const char *batch);
/* Adds every batch's pending spend to its counter: when due (now false:
 * every SQ__BUDGET_FLUSH_MS), or at once. Stops at the first failure (the
 * rest wait with it). */
void sq__budget_cache_flush(sq__budget_cache *c, bool now);
/* The spend counted here and not yet in the store, for batch (0: none, or
 * not cached). */
double sq__budget_cache_pending_usd(const sq__budget_cache *c, const char *batch);

#endif
