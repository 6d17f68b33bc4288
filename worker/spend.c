/* spend.c: each batch's LLM spend and budget as this worker sees them,
 * without a Redis round trip per LLM call. A batch's cost grows here first
 * (pending) and reaches its counter before this worker stores any result
 * (loop.c), and at most SPEND_FLUSH_MS later anyway (the tick); a budget
 * check reads the batch's counter (its own pending flushed
 * first) at most every SPEND_REFRESH_MS and otherwise answers from what it
 * read plus what this worker has spent since. Other workers' spend is seen
 * within SPEND_REFRESH_MS: a batch can overshoot its budget by that much of
 * the fleet's spend, on top of what is already in flight (docs/llm.md).
 * Redis is reached through wq_chores.c: while it backs off, the cache
 * answers alone and pending spend waits. */
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "worker.h"

#define SPEND_REFRESH_MS 250
#define SPEND_FLUSH_MS 250

/* Whether a is a better entry to give up than b: a free one first, then
 * one with nothing pending, then the least recently used. */
static bool evict_before(const sq__spend_entry *a, const sq__spend_entry *b) {
  if (!a->batch[0] || !b->batch[0]) return !a->batch[0] && b->batch[0];
  if ((a->pending_usd > 0) != (b->pending_usd > 0)) return a->pending_usd <= 0;
  return a->used_ms < b->used_ms;
}

/* The entry for batch, or a new one in place of the best one to give up
 * (its pending cost flushed first, which needs Redis), or NULL when none
 * can be had. */
static sq__spend_entry *entry_for(worker *w, const char *batch) {
  sq__spend_entry *out = NULL;
  for (int i = 0; i < SQ__SPEND_BATCHES; i++) {
    sq__spend_entry *e = &w->spend.e[i];
    if (e->batch[0] && strcmp(e->batch, batch) == 0) return e;
    if (!out || evict_before(e, out)) out = e;
  }
  if (strlen(batch) >= sizeof out->batch) return NULL;
  if (out->pending_usd > 0 && sq__wq_add_cost(w, out->batch, out->pending_usd) != 0)
    return NULL; /* keep it: its spend must not be lost */
  *out = (sq__spend_entry){.budget_usd = -1};
  snprintf(out->batch, sizeof out->batch, "%s", batch);
  return out;
}

/* Adds e's pending spend to its counter; on failure (logged by wq) it is
 * kept for the next try. */
static int flush_one(worker *w, sq__spend_entry *e) {
  if (e->pending_usd <= 0) return 0;
  int rc = sq__wq_add_cost(w, e->batch, e->pending_usd);
  if (rc) return rc;
  e->cost_usd += e->pending_usd;
  e->pending_usd = 0;
  return 0;
}

void sq__spend_add(worker *w, const char *batch, double usd) {
  if (usd <= 0) return;
  sq__spend_entry *e = entry_for(w, batch); /* also while Redis is away: counted once it is back */
  if (!e) { /* no room: straight to Redis, as before */
    if (sq__wq_add_cost(w, batch, usd) != 0) SQ_WARN("batch %s: $%.6f of spend not counted (no room, no redis)", batch, usd);
    return;
  }
  e->pending_usd += usd;
  e->used_ms = sq_now_mono_ms();
}

bool sq__spend_exhausted(worker *w, const char *batch) {
  int64_t now = sq_now_mono_ms();
  sq__spend_entry *e = entry_for(w, batch);
  if (!e) {
    double cost = 0, budget = -1;
    return sq__wq_batch_spend(w, batch, &cost, &budget) == 0 && budget >= 0 && cost >= budget;
  }
  e->used_ms = now;
  /* Without Redis: what was read last (a batch never read: no budget known). */
  if (!e->read_ms || now - e->read_ms >= SPEND_REFRESH_MS) {
    double cost = 0, budget = -1;
    if (flush_one(w, e) == 0 && sq__wq_batch_spend(w, batch, &cost, &budget) == 0) {
      e->cost_usd = cost;
      e->budget_usd = budget;
      e->read_ms = now;
    }
  }
  return e->budget_usd >= 0 && e->cost_usd + e->pending_usd >= e->budget_usd;
}

void sq__spend_flush(worker *w, bool now) {
  int64_t t = sq_now_mono_ms();
  if (!sq__wq_up(w) || (!now && t < w->spend.next_flush_ms)) return;
  w->spend.next_flush_ms = t + SPEND_FLUSH_MS;
  for (int i = 0; i < SQ__SPEND_BATCHES; i++)
    if (w->spend.e[i].batch[0] && flush_one(w, &w->spend.e[i]) != 0) break; /* the rest wait with it */
}
