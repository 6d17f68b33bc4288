/* budget_cache.c: the cache of batch spend and budgets (budget_cache.h);
 * it reaches the batch counters only through its store. */
#include "budget_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "task.h"

/* One batch's spend as this worker knows it. */
typedef struct {
  char batch[SQ_TASK_ID_MAX + 1]; /* "" : a free entry */
  double cost_usd;     /* the batch's counter when read, plus what we flushed since */
  double budget_usd;   /* -1: none */
  double pending_usd;  /* spent here, not yet added to the counter */
  int64_t read_ms, used_ms; /* monotonic; read_ms 0: never read */
} entry;

struct sq__budget_cache {
  const sq__budget_store *store;
  void *ud;
  entry e[SQ__BUDGET_BATCHES];
  int64_t next_flush_ms; /* monotonic */
};

int sq__budget_cache_new(const sq__budget_store *store, void *ud, sq__budget_cache **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return SQ_ENOMEM;
  (*out)->store = store;
  (*out)->ud = ud;
  return 0;
}

void sq__budget_cache_free(sq__budget_cache *c) { free(c); }

/* Whether a is a better entry to give up than b: a free one first, then
 * one with nothing pending, then the least recently used. */
static bool evict_before(const entry *a, const entry *b) {
  if (!a->batch[0] || !b->batch[0]) return !a->batch[0] && b->batch[0];
  if ((a->pending_usd > 0) != (b->pending_usd > 0)) return a->pending_usd <= 0;
  return a->used_ms < b->used_ms;
}

static entry *find(const sq__budget_cache *c, const char *batch) {
  for (int i = 0; i < SQ__BUDGET_BATCHES; i++)
    if (c->e[i].batch[0] && strcmp(c->e[i].batch, batch) == 0) return (entry *)&c->e[i];
  return NULL;
}

/* The entry for batch, or a new one in place of the best one to give up
 * (its pending cost flushed first, which needs the store), or NULL when
 * none can be had. */
static entry *entry_for(sq__budget_cache *c, const char *batch) {
  entry *out = find(c, batch);
  if (out) return out;
  for (int i = 0; i < SQ__BUDGET_BATCHES; i++)
    if (!out || evict_before(&c->e[i], out)) out = &c->e[i];
  if (strlen(batch) >= sizeof out->batch) return NULL;
  if (out->pending_usd > 0 && c->store->add_cost(c->ud, out->batch, out->pending_usd) != 0)
    return NULL; /* keep it: its spend must not be lost */
  *out = (entry){.budget_usd = -1};
  snprintf(out->batch, sizeof out->batch, "%s", batch);
  return out;
}

/* Adds e's pending spend to its counter; on failure (logged by the store)
 * it is kept for the next try. */
static int flush_one(sq__budget_cache *c, entry *e) {
  if (e->pending_usd <= 0) return 0;
  int rc = c->store->add_cost(c->ud, e->batch, e->pending_usd);
  if (rc) return rc;
  e->cost_usd += e->pending_usd;
  e->pending_usd = 0;
  return 0;
}

void sq__budget_cache_add(sq__budget_cache *c, const char *batch, double usd) {
  if (usd <= 0) return;
  entry *e = entry_for(c, batch); /* also while the store is away: counted once it is back */
  if (!e) { /* no room: straight to the store */
    if (c->store->add_cost(c->ud, batch, usd) != 0)
      SQ_WARN("batch %s: $%.6f of spend not counted (no room, no redis)", batch, usd);
    return;
  }
  e->pending_usd += usd;
  e->used_ms = c->store->now_ms(c->ud);
}

bool sq__budget_cache_exhausted(sq__budget_cache *c, const char *batch) {
  int64_t now = c->store->now_ms(c->ud);
  entry *e = entry_for(c, batch);
  if (!e) {
    double cost = 0, budget = -1;
    return c->store->read_spend(c->ud, batch, &cost, &budget) == 0 && budget >= 0 && cost >= budget;
  }
  e->used_ms = now;
  /* Without the store: what was read last (a batch never read: no budget known). */
  if (!e->read_ms || now - e->read_ms >= SQ__BUDGET_REFRESH_MS) {
    double cost = 0, budget = -1;
    if (flush_one(c, e) == 0 && c->store->read_spend(c->ud, batch, &cost, &budget) == 0) {
      e->cost_usd = cost;
      e->budget_usd = budget;
      e->read_ms = now;
    }
  }
  return e->budget_usd >= 0 && e->cost_usd + e->pending_usd >= e->budget_usd;
}

void sq__budget_cache_flush(sq__budget_cache *c, bool now) {
  int64_t t = c->store->now_ms(c->ud);
  if (!c->store->up(c->ud) || (!now && t < c->next_flush_ms)) return;
  c->next_flush_ms = t + SQ__BUDGET_FLUSH_MS;
  for (int i = 0; i < SQ__BUDGET_BATCHES; i++)
    if (c->e[i].batch[0] && flush_one(c, &c->e[i]) != 0) break; /* the rest wait with it */
}

double sq__budget_cache_pending_usd(const sq__budget_cache *c, const char *batch) {
  const entry *e = find(c, batch);
  return e ? e->pending_usd : 0;
}
