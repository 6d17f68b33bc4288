/* test_budget_cache.c: the cache of batch spend and budgets
 * (budget_cache.h) on a store in memory with a clock the test moves: spend
 * waits until a flush, a budget is read at most every
 * SQ__BUDGET_REFRESH_MS, a failing store keeps spend pending, and a new
 * batch takes the place of a free entry, else one with nothing pending,
 * else the least recently used, whose pending spend reaches the store
 * first (or the new batch goes straight to the store). */
#include "budget_cache.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "log.h"

#define MAX_BATCHES 64

/* The batch counters, as Redis would hold them. */
typedef struct {
  char name[MAX_BATCHES][32];
  double cost_usd[MAX_BATCHES], budget_usd[MAX_BATCHES];
  int n;
  int adds, reads; /* calls */
  char last_added[32];
  bool down;       /* every call fails */
  int64_t now_ms;
} fake_store;

static int slot(fake_store *s, const char *batch) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->name[i], batch) == 0) return i;
  snprintf(s->name[s->n], sizeof s->name[0], "%s", batch);
  s->budget_usd[s->n] = -1;
  return s->n++;
}

static int add_cost(void *ud, const char *batch, double usd) {
  fake_store *s = ud;
  s->adds++;
  if (s->down) return SQ_EREDIS_CONN;
  s->cost_usd[slot(s, batch)] += usd;
  snprintf(s->last_added, sizeof s->last_added, "%s", batch);
  return 0;
}

static int read_spend(void *ud, const char *batch, double *cost_usd, double *budget_usd) {
  fake_store *s = ud;
  s->reads++;
  if (s->down) return SQ_EREDIS_CONN;
  int i = slot(s, batch);
  *cost_usd = s->cost_usd[i];
  *budget_usd = s->budget_usd[i];
  return 0;
}

static bool up(void *ud) { return !((fake_store *)ud)->down; }

static int64_t now_ms(void *ud) { return ((fake_store *)ud)->now_ms; }

static const sq__budget_store store = {.add_cost = add_cost, .read_spend = read_spend, .up = up, .now_ms = now_ms};

/* The store's counter for batch, in micro-dollars (exact to compare). */
static long long counter_uusd(fake_store *s, const char *batch) {
  return (long long)(s->cost_usd[slot(s, batch)] * 1e6 + 0.5);
}

static sq__budget_cache *new_cache(fake_store *s) {
  memset(s, 0, sizeof *s);
  s->now_ms = 1000;
  sq__budget_cache *c = NULL;
  CHECK_EQ(sq__budget_cache_new(&store, s, &c), 0);
  return c;
}

static void test_spend_waits_for_a_flush(void) {
  fake_store s;
  sq__budget_cache *c = new_cache(&s);
  if (!c) return;
  sq__budget_cache_add(c, "b1", 0.25);
  sq__budget_cache_add(c, "b1", 0.5);
  sq__budget_cache_add(c, "b1", 0);    /* nothing */
  sq__budget_cache_add(c, "b1", -1.0); /* nothing */
  CHECK_EQ(s.adds, 0);
  CHECK_EQ((long long)(sq__budget_cache_pending_usd(c, "b1") * 1e6 + 0.5), 750000);
  sq__budget_cache_flush(c, true);
  CHECK_EQ(s.adds, 1); /* one call for the batch's whole pending spend */
  CHECK_EQ(counter_uusd(&s, "b1"), 750000);
  CHECK_EQ((long long)(sq__budget_cache_pending_usd(c, "b1") * 1e6), 0);
  /* a flush that is not due does nothing; one SQ__BUDGET_FLUSH_MS later does */
  sq__budget_cache_add(c, "b1", 0.25);
  sq__budget_cache_flush(c, false);
  CHECK_EQ(s.adds, 1);
  s.now_ms += SQ__BUDGET_FLUSH_MS;
  sq__budget_cache_flush(c, false);
  CHECK_EQ(s.adds, 2);
  CHECK_EQ(counter_uusd(&s, "b1"), 1000000);
  sq__budget_cache_free(c);
}

static void test_budget_read_and_refreshed(void) {
  fake_store s;
  sq__budget_cache *c = new_cache(&s);
  if (!c) return;
  CHECK(!sq__budget_cache_exhausted(c, "b1")); /* no budget: never exhausted */
  s.budget_usd[slot(&s, "b1")] = 1.0;
  CHECK(!sq__budget_cache_exhausted(c, "b1")); /* read a moment ago: not read again */
  CHECK_EQ(s.reads, 1);
  s.now_ms += SQ__BUDGET_REFRESH_MS;
  CHECK(!sq__budget_cache_exhausted(c, "b1"));
  CHECK_EQ(s.reads, 2);
  /* this worker's own spend counts at once, before any flush */
  sq__budget_cache_add(c, "b1", 1.0);
  CHECK(sq__budget_cache_exhausted(c, "b1"));
  CHECK_EQ(s.reads, 2);
  CHECK_EQ(s.adds, 0);
  /* another worker's spend shows at the next read, after ours is flushed */
  sq__budget_cache_add(c, "b2", 0.1);
  s.budget_usd[slot(&s, "b2")] = 1.0;
  s.cost_usd[slot(&s, "b2")] = 0.95;
  CHECK(sq__budget_cache_exhausted(c, "b2"));
  CHECK_EQ(counter_uusd(&s, "b2"), 1050000);
  sq__budget_cache_free(c);
}

static void test_store_down_keeps_spend(void) {
  fake_store s;
  sq__budget_cache *c = new_cache(&s);
  if (!c) return;
  sq__budget_cache_add(c, "b1", 0.5);
  s.down = true;
  sq__budget_cache_flush(c, true); /* not even tried: the store is not up */
  CHECK_EQ(s.adds, 0);
  s.down = false;
  sq__budget_cache_flush(c, true);
  CHECK_EQ(counter_uusd(&s, "b1"), 500000);
  /* a budget check while the store fails answers from what it read */
  s.budget_usd[slot(&s, "b1")] = 0.6;
  s.now_ms += SQ__BUDGET_REFRESH_MS;
  CHECK(!sq__budget_cache_exhausted(c, "b1"));
  sq__budget_cache_add(c, "b1", 0.2);
  s.down = true;
  s.now_ms += SQ__BUDGET_REFRESH_MS;
  CHECK(sq__budget_cache_exhausted(c, "b1")); /* 0.5 read + 0.2 pending >= 0.6 */
  CHECK_EQ((long long)(sq__budget_cache_pending_usd(c, "b1") * 1e6 + 0.5), 200000);
  sq__budget_cache_free(c);
}

/* Fills every entry: batch "f<i>" with spend i + 1 at time 1000 + i. */
static void fill(sq__budget_cache *c, fake_store *s) {
  char name[32];
  for (int i = 0; i < SQ__BUDGET_BATCHES; i++) {
    snprintf(name, sizeof name, "f%d", i);
    s->now_ms = 1000 + i;
    sq__budget_cache_add(c, name, i + 1.0);
  }
}

static void test_eviction_flushes_the_least_recently_used(void) {
  fake_store s;
  sq__budget_cache *c = new_cache(&s);
  if (!c) return;
  fill(c, &s);
  CHECK_EQ(s.adds, 0);
  /* f0 is the oldest; touch it, so f1 becomes the least recently used */
  s.now_ms = 2000;
  sq__budget_cache_add(c, "f0", 1.0);
  sq__budget_cache_add(c, "new", 0.5);
  CHECK_EQ(s.adds, 1);
  CHECK_STR(s.last_added, "f1");
  CHECK_EQ(counter_uusd(&s, "f1"), 2000000); /* its spend reached the store, whole */
  CHECK_EQ((long long)(sq__budget_cache_pending_usd(c, "f1") * 1e6), 0); /* and it left the cache */
  CHECK_EQ((long long)(sq__budget_cache_pending_usd(c, "new") * 1e6 + 0.5), 500000);
  CHECK_EQ((long long)(sq__budget_cache_pending_usd(c, "f0") * 1e6 + 0.5), 2000000);
  sq__budget_cache_free(c);
}

static void test_eviction_prefers_an_entry_with_nothing_pending(void) {
  fake_store s;
  sq__budget_cache *c = new_cache(&s);
  if (!c) return;
  fill(c, &s);
  /* f20's spend is flushed as a budget check reads it (the newest entry
   * now, but the only one with nothing pending) */
  s.now_ms = 3000;
  CHECK(!sq__budget_cache_exhausted(c, "f20"));
  int adds = s.adds;
  sq__budget_cache_add(c, "new", 0.5);
  CHECK_EQ(s.adds, adds); /* nothing had to be flushed to make room */
  CHECK_EQ((long long)(sq__budget_cache_pending_usd(c, "f0") * 1e6 + 0.5), 1000000); /* the oldest stays */
  /* f20 is gone: a check reads it again at once */
  int reads = s.reads;
  CHECK(!sq__budget_cache_exhausted(c, "f20"));
  CHECK(s.reads > reads);
  sq__budget_cache_free(c);
}

static void test_no_room_without_the_store(void) {
  fake_store s;
  sq__budget_cache *c = new_cache(&s);
  if (!c) return;
  fill(c, &s);
  s.down = true;
  /* every entry holds pending spend the store cannot take: none is given
   * up, and the new batch's spend is tried straight at the store */
  sq__budget_cache_add(c, "new", 0.5);
  CHECK_EQ(s.adds, 2); /* the eviction's flush, then the batch's own */
  for (int i = 0; i < SQ__BUDGET_BATCHES; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%d", i);
    CHECK_EQ((long long)(sq__budget_cache_pending_usd(c, name) * 1e6 + 0.5), (i + 1) * 1000000LL);
  }
  CHECK_EQ((long long)(sq__budget_cache_pending_usd(c, "new") * 1e6), 0);
  /* back up: the straight path counts it */
  s.down = false;
  sq__budget_cache_add(c, "new2", 0.5);
  CHECK_STR(s.last_added, "f0"); /* room made by flushing the oldest */
  sq__budget_cache_free(c);
}

static void test_batch_name_too_long(void) {
  fake_store s;
  sq__budget_cache *c = new_cache(&s);
  if (!c) return;
  char name[300];
  memset(name, 'x', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  sq__budget_cache_add(c, name, 0.5); /* no entry can hold it: straight to the store */
  CHECK_EQ(s.adds, 1);
  sq__budget_cache_free(c);
  sq__budget_cache_free(NULL);
}

int main(void) {
  sq_log_init("test_budget_cache", SQ_LOG_ERROR);
  test_spend_waits_for_a_flush();
  test_budget_read_and_refreshed();
  test_store_down_keeps_spend();
  test_eviction_flushes_the_least_recently_used();
  test_eviction_prefers_an_entry_with_nothing_pending();
  test_no_room_without_the_store();
  test_batch_name_too_long();
  return sq_check_done("test_budget_cache");
}
