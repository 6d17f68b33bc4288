/* test_queue.c: the queue's work against a real redis-server (started by
 * tests/lib/with_redis.sh): push, claim, lease and fencing, heartbeat,
 * reaping, dead letter, retry, release, results and batches. The handle
 * itself (URLs, connecting, reconnecting, errors) is test_queue_conn.c. */
#include <bson/bson.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "log.h"
#include "queue.h"
#include "queue_claim_one.h"
#include "queue_fixture.h"
#include "util.h"

/* Pushes one payload (NUL-terminated) with a priority and idempotency key. */
static int push1(sq_queue *q, const char *batch, const char *p, sq_priority prio, const char *idem) {
  sq_push_item it = {.payload = p, .len = strlen(p), .priority = prio, .idempotency_key = idem};
  return sq_queue_push_items(q, batch, &it, 1, NULL, NULL);
}

/* Completes c with a small result document for id. */
static int complete(sq_queue *q, const sq_claim *c, const char *batch, const char *id, const char *status);


/* A small BSON result document; the int32 0 puts NUL bytes in the value. */
static bson_t *result_doc(const char *id, const char *status) {
  bson_t *b = bson_new();
  BSON_APPEND_UTF8(b, "_id", id);
  BSON_APPEND_UTF8(b, "status", status);
  BSON_APPEND_INT32(b, "zero", 0);
  return b;
}

static int find_status(const sq_batch_stats *st, const char *name) {
  for (int i = 0; i < st->n_statuses; i++)
    if (strcmp(st->statuses[i].name, name) == 0) return (int)st->statuses[i].count;
  return -1;
}

typedef struct {
  int seen;
  int matched;
  int stop_after;
} scan_state;

static int on_result(const char *id, const uint8_t *data, size_t len, void *ud) {
  scan_state *s = ud;
  s->seen++;
  bson_t doc;
  if (bson_init_static(&doc, data, len)) {
    bson_iter_t it;
    if (bson_iter_init_find(&it, &doc, "_id") && BSON_ITER_HOLDS_UTF8(&it) &&
        strcmp(bson_iter_utf8(&it, NULL), id) == 0 && bson_iter_init_find(&it, &doc, "zero") &&
        BSON_ITER_HOLDS_INT32(&it) && bson_iter_int32(&it) == 0)
      s->matched++;
  }
  return s->stop_after && s->seen >= s->stop_after ? 42 : 0;
}


static int complete(sq_queue *q, const sq_claim *c, const char *batch, const char *id, const char *status) {
  bson_t *d = result_doc(id, status);
  sq_completion k = {.claim = c, .batch = batch, .id = id, .status = status, .bson = bson_get_data(d),
                     .bson_len = d->len};
  int rc = sq_queue_complete(q, &k);
  bson_destroy(d);
  return rc;
}

static void test_fifo(void) {
  sq_queue *q = open_queue("fifo");
  const char *p[] = {"task-a", "task-b", "task-c"};
  size_t l[] = {6, 6, 6};
  CHECK_EQ(sq_queue_push(q, "b1", p, l, 3), 0);
  int64_t n = -1;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 3);
  int64_t last = 0;
  for (int i = 0; i < 3; i++) {
    sq_claim c;
    CHECK_EQ(claim_one(q, "w1", 1000, &c), 0);
    CHECK_STR(c.payload, p[i]);
    CHECK_EQ(c.len, 6);
    CHECK(c.token > last); /* fencing tokens only grow */
    last = c.token;
    CHECK_STR(c.worker_id, "w1");
    sq_claim_clear(&c);
  }
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 0);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "b1", &st), 0);
  CHECK_EQ(st.total, 3);
  CHECK_EQ(st.done, 0);
  redisContext *c = raw();
  CHECK_EQ(raw_int(c, "ZSCORE sq:{fifo}:batches %s", "b1") != 0, 1);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{fifo}:processing:w1"), 3);
  CHECK_EQ(raw_int(c, "ZCARD %s", "sq:{fifo}:leases"), 3);
  redisFree(c);
  sq_queue_free(q);
}

/* Many payloads: several push chunks and claims of many at a time. */
static void test_big_push(void) {
  sq_queue *q = open_queue("big");
  enum { N = 2500, M = 64 };
  static char bufs[N][16];
  const char *p[N];
  size_t l[N];
  for (int i = 0; i < N; i++) {
    l[i] = (size_t)snprintf(bufs[i], sizeof bufs[i], "t%05d", i);
    p[i] = bufs[i];
  }
  CHECK_EQ(sq_queue_push(q, "big", p, l, N), 0);
  int64_t n = 0;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, N);
  int in_order = 1, got = 0;
  static sq_claim cl[M];
  while (got < N) {
    size_t k = 0;
    if (sq_queue_claim_many(q, "w", 1000, cl, M, &k) != 0) break;
    for (size_t i = 0; i < k; i++, got++) {
      if (strcmp(cl[i].payload, p[got]) != 0) in_order = 0;
      sq_claim_clear(&cl[i]);
    }
  }
  CHECK_EQ(got, N);
  CHECK(in_order);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "big", &st), 0);
  CHECK_EQ(st.total, N);
  sq_queue_free(q);
}

static void test_empty_claim(void) {
  sq_queue *q = open_queue("empty");
  sq_claim c = {.token = 99};
  int64_t t0 = sq_now_mono_ms();
  CHECK_EQ(claim_one(q, "w1", 300, &c), SQ_EEMPTY);
  int64_t dt = sq_now_mono_ms() - t0;
  CHECK(dt >= 250);
  CHECK(dt < 2000);
  t0 = sq_now_mono_ms();
  CHECK_EQ(claim_one(q, "w1", 0, &c), SQ_EEMPTY);
  CHECK(sq_now_mono_ms() - t0 < 200);
  /* a push during a blocking claim wakes it */
  sq_queue *q2 = open_queue("empty");
  pid_t pid = fork();
  if (pid == 0) {
    sleep_ms(200);
    _exit(push1(q2, "b", "late", SQ_PRIORITY_NORMAL, NULL) == 0 ? 0 : 1);
  }
  t0 = sq_now_mono_ms();
  CHECK_EQ(claim_one(q, "w1", 5000, &c), 0);
  CHECK(sq_now_mono_ms() - t0 < 1500);
  CHECK_STR(c.payload, "late");
  sq_claim_clear(&c);
  waitpid(pid, NULL, 0);
  sq_queue_free(q2);
  sq_queue_free(q);
}

/* High before normal before low; FIFO within a priority. */
static void test_priorities(void) {
  sq_queue *q = open_queue("prio");
  CHECK_EQ(push1(q, "b", "low1", SQ_PRIORITY_LOW, NULL), 0);
  CHECK_EQ(push1(q, "b", "norm1", SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(push1(q, "b", "high1", SQ_PRIORITY_HIGH, NULL), 0);
  CHECK_EQ(push1(q, "b", "norm2", SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(push1(q, "b", "high2", SQ_PRIORITY_HIGH, NULL), 0);
  const char *want[] = {"high1", "high2", "norm1", "norm2", "low1"};
  for (int i = 0; i < 5; i++) {
    sq_claim c = {0};
    CHECK_EQ(claim_one(q, "w", 100, &c), 0);
    CHECK_STR(c.payload, want[i]);
    sq_claim_clear(&c);
  }
  sq_queue_free(q);
}

/* Dedup on idempotency_key and the length cap. */
static void test_idempotency_cap(void) {
  sq_queue_options o;
  sq_queue_options_default(&o);
  o.max_queue_len = 3;
  sq_queue *q = open_opts("idem", &o);
  sq_push_item it[3] = {{"a", 1, SQ_PRIORITY_NORMAL, "k1"}, {"b", 1, SQ_PRIORITY_NORMAL, "k1"},
                        {"c", 1, SQ_PRIORITY_NORMAL, NULL}};
  size_t pushed = 0, dups = 0;
  CHECK_EQ(sq_queue_push_items(q, "b", it, 3, &pushed, &dups), 0);
  CHECK_EQ(pushed, 2);
  CHECK_EQ(dups, 1);
  CHECK_EQ(sq_queue_push_items(q, "b2", it, 1, &pushed, &dups), 0); /* k1 again, another batch */
  CHECK_EQ(pushed, 0);
  CHECK_EQ(dups, 1);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "b", &st), 0);
  CHECK_EQ(st.total, 2);
  CHECK_EQ(push1(q, "b", "d", SQ_PRIORITY_LOW, NULL), 0); /* 3 waiting: at the cap */
  CHECK_EQ(push1(q, "b", "e", SQ_PRIORITY_HIGH, NULL), SQ_EFULL);
  CHECK_CONTAINS(sq_queue_errstr(q), "max_queue_len 3");
  int64_t n = 0;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 3);
  sq_queue_counters k;
  CHECK_EQ(sq_queue_counters_get(q, &k), 0);
  CHECK_EQ(k.deduplicated, 2);
  sq_queue_free(q);
}

/* A lease that runs out is reaped; the late result of the old holder is
 * refused and counted; the new holder's result is the one kept. */
static void test_lease_fencing(void) {
  sq_queue_options o;
  sq_queue_options_default(&o);
  o.lease_ms = 200;
  o.reap_interval_ms = 10;
  sq_queue *q = open_opts("fence", &o);
  CHECK_EQ(push1(q, "fb", "{\"id\":\"t1\",\"batch\":\"fb\"}", SQ_PRIORITY_NORMAL, NULL), 0);
  sq_claim a = {0}, b = {0};
  CHECK_EQ(claim_one(q, "wa", 100, &a), 0);
  bool ran = false;
  size_t requeued = 9, dead = 9;
  CHECK_EQ(sq_queue_reap(q, "wr", &ran, &requeued, &dead), 0);
  CHECK_EQ(requeued, 0); /* lease still valid */
  sleep_ms(300);
  CHECK_EQ(sq_queue_reap(q, "wr", &ran, &requeued, &dead), 0);
  CHECK(ran);
  CHECK_EQ(requeued, 1);
  CHECK_EQ(dead, 0);
  CHECK_EQ(sq_queue_heartbeat(q, "wa", NULL), 0); /* too late: extends nothing */
  CHECK_EQ(claim_one(q, "wb", 100, &b), 0);
  CHECK(b.token > a.token);
  CHECK_EQ(complete(q, &a, "fb", "t1", "failed"), SQ_EFENCED);
  CHECK_EQ(complete(q, &b, "fb", "t1", "passed"), 0);
  /* b's reply was lost (a Redis restart) and it sends the same result
   * again: its own, already stored, not a fenced one. */
  CHECK_EQ(complete(q, &b, "fb", "t1", "passed"), SQ_EEXISTS);
  CHECK_EQ(complete(q, &a, "fb", "t1", "failed"), SQ_EFENCED);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "fb", &st), 0);
  CHECK_EQ(st.done, 1);
  CHECK_EQ(find_status(&st, "passed"), 1);
  CHECK_EQ(find_status(&st, "failed"), -1);
  CHECK(st.finished_at_ms > 0);
  sq_queue_counters k;
  CHECK_EQ(sq_queue_counters_get(q, &k), 0);
  CHECK_EQ(k.fenced, 2);
  CHECK_EQ(k.stalled, 1);
  CHECK_EQ(k.in_flight, 0);
  redisContext *c = raw();
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{fence}:processing:wa"), 0);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{fence}:processing:wb"), 0);
  CHECK_EQ(raw_int(c, "HLEN %s", "sq:{fence}:stalls"), 0); /* forgotten once settled */
  redisFree(c);
  /* the completion event is there for a blocking reader */
  CHECK_EQ(sq_queue_batch_wait(q, "fb", 1000), 0);
  CHECK_EQ(sq_queue_batch_wait(q, "fb", 100), SQ_ETIMEOUT);
  sq_claim_clear(&a);
  sq_claim_clear(&b);
  sq_queue_free(q);
}

/* Heartbeats keep a lease alive past its length; the reaper runs once per
 * interval across handles. */
static void test_heartbeat(void) {
  sq_queue_options o;
  sq_queue_options_default(&o);
  o.lease_ms = 300;
  o.reap_interval_ms = 10;
  sq_queue *q = open_opts("hb", &o);
  CHECK_EQ(push1(q, "b", "x", SQ_PRIORITY_NORMAL, NULL), 0);
  sq_claim a = {0};
  CHECK_EQ(claim_one(q, "w", 100, &a), 0);
  for (int i = 0; i < 8; i++) {
    int64_t n = 0;
    sleep_ms(100);
    CHECK_EQ(sq_queue_heartbeat(q, "w", &n), 0);
    CHECK_EQ(n, 1);
    size_t requeued = 9;
    CHECK_EQ(sq_queue_reap(q, "r", NULL, &requeued, NULL), 0);
    CHECK_EQ(requeued, 0);
  }
  CHECK_EQ(complete(q, &a, "b", "x", "ok"), 0);
  o.reap_interval_ms = 60000;
  sq_queue *q2 = open_opts("hb", &o), *q3 = open_opts("hb", &o);
  sleep_ms(50); /* the loop's last reap (interval 10 ms) has expired */
  bool r2 = false, r3 = true;
  CHECK_EQ(sq_queue_reap(q2, "a", &r2, NULL, NULL), 0);
  CHECK_EQ(sq_queue_reap(q3, "b", &r3, NULL, NULL), 0);
  CHECK(r2);  /* the first handle within the interval runs it... */
  CHECK(!r3); /* ...and the other does not */
  sq_claim_clear(&a);
  sq_queue_free(q3);
  sq_queue_free(q2);
  sq_queue_free(q);
}

typedef struct {
  int n;
  char first[2048];
} dead_seen;

static int on_dead(int64_t id, const char *rec, size_t len, void *ud) {
  dead_seen *d = ud;
  if (d->n++ == 0) snprintf(d->first, sizeof d->first, "%lld %.*s", (long long)id, (int)len, rec);
  return 0;
}

/* A task that stalls max_stalls times lands in the dead letter with its
 * history; its batch finishes; requeue brings it back with fresh counters. */
static void test_dead_letter(void) {
  sq_queue_options o;
  sq_queue_options_default(&o);
  o.max_stalls = 2;
  sq_queue *q = open_opts("dead", &o);
  const char *poison = "{\"id\":\"p1\",\"batch\":\"db\",\"code\":\"1\"}";
  CHECK_EQ(push1(q, "db", poison, SQ_PRIORITY_HIGH, NULL), 0);
  for (int i = 0; i < 2; i++) {
    sq_claim c = {0};
    CHECK_EQ(claim_one(q, "wd", 100, &c), 0);
    sq_claim_clear(&c);
    size_t requeued = 0, dead = 0;
    CHECK_EQ(sq_queue_recover(q, "wd", &requeued, &dead), 0); /* the worker "restarted" */
    CHECK_EQ(requeued, i == 0 ? 1 : 0);
    CHECK_EQ(dead, i == 0 ? 0 : 1);
  }
  int64_t n = 9;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 0);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "db", &st), 0);
  CHECK_EQ(st.dead, 1);
  CHECK_EQ(st.done, 0);
  CHECK(st.finished_at_ms > 0);
  dead_seen d = {0};
  CHECK_EQ(sq_queue_dead_list(q, on_dead, &d), 0);
  CHECK_EQ(d.n, 1);
  CHECK_CONTAINS(d.first, "\"task_id\":\"p1\"");
  CHECK_CONTAINS(d.first, "stalled 2 times");
  CHECK_CONTAINS(d.first, "worker restarted");
  CHECK_CONTAINS(d.first, "\"history\":[");
  int64_t id = strtoll(d.first, NULL, 10);
  char *rec = NULL;
  CHECK_EQ(sq_queue_dead_show(q, id, &rec), 0);
  CHECK_CONTAINS(rec, "\"priority\":\"h\"");
  free(rec);
  CHECK_EQ(sq_queue_dead_show(q, id + 100, &rec), SQ_ENOTFOUND);
  size_t moved = 0;
  CHECK_EQ(sq_queue_dead_requeue(q, id, &moved), 0);
  CHECK_EQ(moved, 1);
  CHECK_EQ(sq_queue_dead_requeue(q, id, &moved), SQ_ENOTFOUND);
  CHECK_EQ(sq_queue_batch_stats(q, "db", &st), 0);
  CHECK_EQ(st.dead, 0);
  CHECK_EQ(st.finished_at_ms, 0);
  sq_claim c = {0};
  CHECK_EQ(claim_one(q, "wd", 100, &c), 0);
  CHECK_STR(c.payload, poison);
  CHECK_EQ(complete(q, &c, "db", "p1", "ok"), 0);
  CHECK_EQ(sq_queue_batch_stats(q, "db", &st), 0);
  CHECK_EQ(st.done, 1);
  CHECK(st.finished_at_ms > 0);
  sq_claim_clear(&c);
  /* requeue --all */
  CHECK_EQ(push1(q, "db2", "garbage-1", SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(push1(q, "db2", "garbage-2", SQ_PRIORITY_NORMAL, NULL), 0);
  sq_queue_counters k = {0};
  /* Both stall twice; once stalled, each is claimed alone. */
  for (int i = 0; i < 8 && k.dead_letter < 2; i++) {
    size_t got = 0;
    sq_claim two[2];
    CHECK_EQ(sq_queue_claim_many(q, "wd", 100, two, 2, &got), 0);
    for (size_t j = 0; j < got; j++) sq_claim_clear(&two[j]);
    CHECK_EQ(sq_queue_recover(q, "wd", NULL, NULL), 0);
    CHECK_EQ(sq_queue_counters_get(q, &k), 0);
  }
  CHECK_EQ(k.dead_letter, 2);
  CHECK_EQ(sq_queue_dead_requeue(q, -1, &moved), 0);
  CHECK_EQ(moved, 2);
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 2);
  sq_queue_free(q);

  /* Dead letters older than dead_retention_s are dropped by the reaper. */
  o.dead_retention_s = 1;
  o.reap_interval_ms = 10;
  q = open_opts("dead-old", &o);
  CHECK_EQ(push1(q, "db3", "garbage-3", SQ_PRIORITY_NORMAL, NULL), 0);
  for (int i = 0; i < 2; i++) {
    sq_claim c3 = {0};
    CHECK_EQ(claim_one(q, "wd", 100, &c3), 0);
    sq_claim_clear(&c3);
    CHECK_EQ(sq_queue_recover(q, "wd", NULL, NULL), 0);
  }
  bool ran = false;
  CHECK_EQ(sq_queue_reap(q, "wr", &ran, NULL, NULL), 0);
  d = (dead_seen){0};
  CHECK_EQ(sq_queue_dead_list(q, on_dead, &d), 0);
  CHECK_EQ(d.n, 1); /* not old yet */
  sleep_ms(1200);
  CHECK_EQ(sq_queue_reap(q, "wr", &ran, NULL, NULL), 0);
  CHECK(ran);
  d = (dead_seen){0};
  CHECK_EQ(sq_queue_dead_list(q, on_dead, &d), 0);
  CHECK_EQ(d.n, 0);
  sq_queue_free(q);
}

/* Retries go through the delayed set with backoff and are bounded. */
/* Claims with room for max and checks exactly one task, payload, came. */
static void claim_alone(sq_queue *q, const char *worker, size_t max, sq_claim *c, const char *payload) {
  sq_claim more[4];
  size_t got = 0;
  CHECK(max <= 4);
  CHECK_EQ(sq_queue_claim_many(q, worker, 100, more, max, &got), 0);
  CHECK_EQ(got, 1);
  if (got >= 1) CHECK_STR(more[0].payload, payload);
  for (size_t i = 1; i < got; i++) sq_claim_clear(&more[i]);
  if (got) *c = more[0];
  else memset(c, 0, sizeof *c);
}

/* A task whose worker died holding it is claimed alone: a poison pill that
 * kills the worker again takes no innocent task of a batched claim with it. */
static void test_suspect_alone(void) {
  sq_queue *q = open_queue("suspect");
  const char *p[] = {"s-a", "s-b", "s-c"};
  for (int i = 0; i < 3; i++) CHECK_EQ(push1(q, "sb", p[i], SQ_PRIORITY_NORMAL, NULL), 0);
  sq_claim c[3];
  size_t got = 0, requeued = 0;
  CHECK_EQ(sq_queue_claim_many(q, "ws", 100, c, 2, &got), 0); /* s-a, s-b */
  CHECK_EQ(got, 2);
  for (size_t j = 0; j < got; j++) sq_claim_clear(&c[j]);
  CHECK_EQ(sq_queue_recover(q, "ws", &requeued, NULL), 0); /* both stalled once */
  CHECK_EQ(requeued, 2);
  CHECK_EQ(sq_queue_claim_many(q, "ws", 100, c, 3, &got), 0);
  CHECK_EQ(got, 1); /* a suspect first: alone */
  CHECK_EQ(sq_queue_claim_many(q, "ws", 100, c + 1, 2, &got), 0);
  CHECK_EQ(got, 1); /* the other suspect: alone too */
  CHECK_EQ(sq_queue_claim_many(q, "ws", 100, c + 2, 2, &got), 0);
  CHECK_EQ(got, 1);
  CHECK_STR(c[2].payload, "s-c"); /* never stalled; the list is empty after it */
  for (int j = 0; j < 3; j++) sq_claim_clear(&c[j]);
  /* A batched claim stops before a suspect rather than take it along: the
   * list (claim end first) is s-b (innocent, handed back), then s-a (a
   * suspect, handed back without a stall). */
  for (int j = 0; j < 2; j++) CHECK_EQ(push1(q, "sb", p[j], SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(sq_queue_claim_many(q, "ws1", 100, c, 1, &got), 0);
  CHECK_EQ(sq_queue_recover(q, "ws1", &requeued, NULL), 0); /* s-a stalled */
  sq_claim_clear(&c[0]);
  claim_alone(q, "ws2", 2, &c[0], "s-a");
  claim_alone(q, "ws2", 2, &c[1], "s-b");
  CHECK_EQ(release_one(q, &c[0]), 0);
  CHECK_EQ(release_one(q, &c[1]), 0);
  sq_claim_clear(&c[0]);
  sq_claim_clear(&c[1]);
  claim_alone(q, "ws3", 3, &c[0], "s-b");
  claim_alone(q, "ws3", 3, &c[1], "s-a");
  sq_claim_clear(&c[0]);
  sq_claim_clear(&c[1]);
  sq_queue_free(q);
}

/* A claim Redis ran but whose reply was lost: the worker undoes it by its
 * id; the tasks go back in order, a second undo or another id does nothing,
 * and a claim on a broken connection is remembered as possibly lost. */
static void test_claim_undo(void) {
  sq_queue *q = open_queue("undo");
  const char *p[] = {"u-1", "u-2", "u-3"};
  for (int i = 0; i < 3; i++) CHECK_EQ(push1(q, "ub", p[i], SQ_PRIORITY_NORMAL, NULL), 0);
  redisContext *c = raw();
  /* The "lost" claim: run by hand, its reply thrown away. */
  freeReplyObject(redisCommand(c, "FCALL sq1_claim 1 sq:{undo}:tasks wu 30000 2 lost-1"));
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{undo}:processing:wu"), 2);
  size_t n = 9;
  CHECK_EQ(sq_queue_claim_undo(q, "wu", "other", &n), 0);
  CHECK_EQ(n, 0);
  CHECK_EQ(sq_queue_claim_undo(q, "wu", "lost-1", &n), 0);
  CHECK_EQ(n, 2);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{undo}:processing:wu"), 0);
  CHECK_EQ(sq_queue_claim_undo(q, "wu", "lost-1", &n), 0);
  CHECK_EQ(n, 0);
  sq_claim got[3];
  size_t k = 0;
  CHECK_EQ(sq_queue_claim_many(q, "wv", 100, got, 3, &k), 0);
  CHECK_EQ(k, 3);
  for (size_t i = 0; i < k; i++) {
    CHECK_STR(got[i].payload, p[i]); /* the undone ones first, in their order */
    sq_claim_clear(&got[i]);
  }
  /* A broken connection during a claim: remembered. */
  char id[24] = "";
  CHECK(!sq_queue_lost_claim(q, id, sizeof id));
  raw_cmd(c, "CLIENT KILL TYPE %s", "normal"); /* every client but this one */
  CHECK_EQ(sq_queue_claim_many(q, "wv", 0, got, 3, &k), SQ_EREDIS_CONN);
  CHECK(sq_queue_lost_claim(q, id, sizeof id));
  CHECK_EQ(sq_queue_claim_undo(q, "wv", id, &n), 0); /* reconnects; that claim never ran */
  CHECK_EQ(n, 0);
  CHECK(!sq_queue_lost_claim(q, id, sizeof id));
  redisFree(c);
  sq_queue_free(q);
}

static void test_retry(void) {
  sq_queue_options o;
  sq_queue_options_default(&o);
  o.max_attempts = 3;
  o.backoff_base_ms = 200;
  o.backoff_max_ms = 400;
  sq_queue *q = open_opts("retry", &o);
  CHECK_EQ(push1(q, "rb", "{\"id\":\"r1\"}", SQ_PRIORITY_LOW, NULL), 0);
  sq_claim c = {0};
  CHECK_EQ(claim_one(q, "w", 100, &c), 0);
  int64_t delay = -1;
  CHECK_EQ(sq_queue_retry(q, &c, -1, "llm: HTTP 503", &delay), 0);
  CHECK(delay >= 100 && delay <= 200); /* equal jitter on 200 ms */
  CHECK_EQ(sq_queue_retry(q, &c, -1, "again", &delay), SQ_EFENCED); /* not ours any more */
  sq_claim_clear(&c);
  CHECK_EQ(claim_one(q, "w", 0, &c), SQ_EEMPTY); /* not due yet */
  sq_queue_counters k;
  CHECK_EQ(sq_queue_counters_get(q, &k), 0);
  CHECK_EQ(k.delayed, 1);
  CHECK_EQ(claim_one(q, "w", 1000, &c), 0);
  CHECK_STR(c.payload, "{\"id\":\"r1\"}");
  CHECK_EQ(sq_queue_retry(q, &c, 0, "explicit delay", &delay), 0);
  CHECK_EQ(delay, 0);
  sq_claim_clear(&c);
  CHECK_EQ(claim_one(q, "w", 1000, &c), 0);
  CHECK_EQ(sq_queue_retry(q, &c, -1, "third", &delay), SQ_EEXHAUSTED);
  CHECK_EQ(complete(q, &c, "rb", "r1", "llm_error"), 0); /* still ours */
  redisContext *r = raw();
  CHECK_EQ(raw_int(r, "HLEN %s", "sq:{retry}:attempts"), 0);
  redisReply *keys = redisCommand(r, "KEYS %s", "sq:{retry}:hist:*");
  CHECK(keys && keys->type == REDIS_REPLY_ARRAY && keys->elements == 0); /* history dropped once settled */
  freeReplyObject(keys);
  redisFree(r);
  sq_claim_clear(&c);
  sq_queue_free(q);
}

/* defer waits without charging an attempt: however often a task is
 * deferred (its provider is down), max_attempts still counts only its
 * retries, and its next claim keeps its first attempt's claim time. */
static void test_defer(void) {
  sq_queue_options o;
  sq_queue_options_default(&o);
  o.max_attempts = 2;
  sq_queue *q = open_opts("defer", &o);
  CHECK_EQ(push1(q, "fb", "{\"id\":\"f1\"}", SQ_PRIORITY_NORMAL, NULL), 0);
  sq_claim c = {0};
  CHECK_EQ(claim_one(q, "w", 100, &c), 0);
  int64_t first = c.first_claimed_at_ms - 5000; /* as if the first attempt was 5 s ago */
  for (int i = 0; i < 4; i++) {
    sq_claim d = c;
    d.first_claimed_at_ms = first;
    CHECK_EQ(sq_queue_defer(q, &d, 0, "llm: every provider's circuit breaker is open"), 0);
    sq_claim_clear(&c);
    CHECK_EQ(claim_one(q, "w", 1000, &c), 0);
    CHECK_EQ(c.attempt, 1);                      /* no attempt charged */
    CHECK_EQ(c.first_claimed_at_ms, first);      /* the wait is measured from the first attempt */
  }
  CHECK_EQ(sq_queue_defer(q, &(sq_claim){.token = c.token + 100, .shard = 0, .worker_id = "w"}, 0, "x"),
           SQ_EFENCED);
  int64_t delay = 0;
  CHECK_EQ(sq_queue_retry(q, &c, 0, "a real retry", &delay), 0); /* attempt 1 of 2 */
  sq_claim_clear(&c);
  CHECK_EQ(claim_one(q, "w", 1000, &c), 0);
  CHECK_EQ(c.attempt, 2);
  CHECK_EQ(sq_queue_retry(q, &c, 0, "again", &delay), SQ_EEXHAUSTED);
  redisContext *r = raw();
  redisReply *v = redisCommand(r, "HGET %s %s", "sq:{defer}:stats", "deferred");
  CHECK(v && v->type == REDIS_REPLY_STRING && strcmp(v->str, "4") == 0);
  freeReplyObject(v);
  v = redisCommand(r, "HGET %s %s", "sq:{defer}:stats", "retried");
  CHECK(v && v->type == REDIS_REPLY_STRING && strcmp(v->str, "1") == 0);
  freeReplyObject(v);
  redisFree(r);
  sq_claim_clear(&c);
  sq_queue_free(q);
}

/* release hands back without a stall; release_all hands back everything. */
static void test_release(void) {
  sq_queue *q = open_queue("rel");
  CHECK_EQ(push1(q, "b", "one", SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(push1(q, "b", "two", SQ_PRIORITY_NORMAL, NULL), 0);
  sq_claim a = {0}, b = {0};
  CHECK_EQ(claim_one(q, "w", 100, &a), 0);
  CHECK_EQ(release_one(q, &a), 0);
  CHECK_EQ(release_one(q, &a), SQ_EFENCED);
  CHECK_EQ(claim_one(q, "w", 100, &b), 0);
  CHECK_STR(b.payload, "one"); /* back at the front */
  sq_claim_clear(&a);
  CHECK_EQ(claim_one(q, "w", 100, &a), 0);
  size_t n = 0;
  CHECK_EQ(sq_queue_release_all(q, "w", &n), 0);
  CHECK_EQ(n, 2);
  sq_queue_counters k;
  CHECK_EQ(sq_queue_counters_get(q, &k), 0);
  CHECK_EQ(k.stalled, 0);
  CHECK_EQ(k.waiting, 2);
  CHECK_EQ(k.in_flight, 0);
  sq_claim_clear(&a);
  sq_claim_clear(&b);
  sq_queue_free(q);
}

/* A cancel with kill marks the batch's claims taken before it (kill_seq:
 * the shard's last token); a plain cancel marks nothing; a damaged mark
 * is named, not read as a token. */
static void test_kill_mark(void) {
  sq_queue *q = open_queue("kill");
  int64_t seq = -1;
  CHECK_EQ(sq_queue_batch_kill_seq(q, "kb", 0, &seq), 0);
  CHECK_EQ(seq, 0);
  CHECK_EQ(push1(q, "kb", "{\"id\":\"k1\",\"batch\":\"kb\"}", SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(push1(q, "kb", "{\"id\":\"k2\",\"batch\":\"kb\"}", SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(push1(q, "pb", "{\"id\":\"p1\",\"batch\":\"pb\"}", SQ_PRIORITY_NORMAL, NULL), 0);
  sq_claim a = {0}, b = {0};
  CHECK_EQ(claim_one(q, "w", 100, &a), 0); /* k1 */
  sq_cancel_counts cc;
  CHECK_EQ(sq_queue_batch_cancel(q, "kb", "why", true, &cc), 0);
  CHECK_EQ(cc.cancelled, 1);
  CHECK_EQ(cc.running, 1);
  CHECK_EQ(sq_queue_batch_kill_seq(q, "kb", 0, &seq), 0);
  CHECK(seq >= a.token && a.token > 0);
  CHECK_EQ(claim_one(q, "w", 100, &b), 0); /* p1: a later claim, a larger token */
  CHECK(b.token > seq);
  CHECK_EQ(sq_queue_batch_cancel(q, "pb", "why", false, &cc), 0);
  CHECK_EQ(cc.running, 1);
  CHECK_EQ(sq_queue_batch_kill_seq(q, "pb", 0, &seq), 0);
  CHECK_EQ(seq, 0);
  redisContext *r = raw();
  raw_cmd(r, "HSET sq:{kill}:batch:kb kill_seq %s", "lots");
  CHECK_EQ(sq_queue_batch_kill_seq(q, "kb", 0, &seq), SQ_EPARSE);
  CHECK_EQ(seq, 0);
  CHECK(strstr(sq_queue_errstr(q), "kill_seq 'lots'") != NULL);
  redisFree(r);
  sq_claim_clear(&a);
  sq_claim_clear(&b);
  sq_queue_free(q);
}

/* Each completion's code is the one wanted. */
static void codes_are(const int *rcs, const int *want, int n) {
  for (int i = 0; i < n; i++) CHECK_EQ(rcs[i], want[i]);
}

/* Exactly one result per id; several completions in one round trip; the
 * functions library flushed behind our back is reloaded. */
static void test_results(void) {
  sq_queue *q = open_queue("res");
  const char *p[] = {"x", "y", "z"};
  size_t l[] = {1, 1, 1};
  CHECK_EQ(sq_queue_push(q, "rb", p, l, 3), 0);
  sq_claim c[3];
  size_t n = 0;
  CHECK_EQ(sq_queue_claim_many(q, "w", 100, c, 3, &n), 0);
  CHECK_EQ(n, 3);
  bson_t *d1 = result_doc("t1", "passed");
  CHECK(memchr(bson_get_data(d1), 0, d1->len) != NULL);
  sq_completion k[3];
  for (int i = 0; i < 3; i++)
    k[i] = (sq_completion){.claim = &c[i], .batch = "rb", .id = i == 2 ? "t2" : "t1", .status = "passed",
                           .bson = bson_get_data(d1), .bson_len = d1->len};
  int rcs[3] = {9, 9, 9};
  CHECK_EQ(sq_queue_complete_many(q, k, 3, rcs), 0);
  codes_are(rcs, (const int[]){0, SQ_EEXISTS, 0}, 3);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "rb", &st), 0);
  CHECK_EQ(st.total, 3);
  CHECK_EQ(st.done, 2);
  CHECK_EQ(find_status(&st, "passed"), 2);
  sq_queue_counters qc;
  CHECK_EQ(sq_queue_counters_get(q, &qc), 0);
  CHECK_EQ(qc.duplicate, 1);
  CHECK_EQ(qc.in_flight, 0);
  for (int i = 0; i < 3; i++) sq_claim_clear(&c[i]);

  redisContext *r = raw();
  raw_cmd(r, "FUNCTION FLUSH%s", "");
  CHECK_EQ(push1(q, "rb", "w", SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(claim_one(q, "w", 100, &c[0]), 0);
  raw_cmd(r, "FUNCTION FLUSH%s", "");
  CHECK_EQ(complete(q, &c[0], "rb", "t3", "timeout"), 0);
  sq_claim_clear(&c[0]);
  CHECK_EQ(sq_queue_batch_stats(q, "rb", &st), 0);
  CHECK_EQ(st.done, 3);
  CHECK_EQ(find_status(&st, "timeout"), 1);
  /* the stored bytes come back whole, NULs included */
  redisReply *rr = redisCommand(r, "HGET sq:{res}:results:rb %s", "t1");
  CHECK(rr && rr->type == REDIS_REPLY_STRING && rr->len == d1->len && memcmp(rr->str, bson_get_data(d1), d1->len) == 0);
  freeReplyObject(rr);
  CHECK(raw_int(r, "TTL %s", "sq:{res}:results:rb") > 0); /* retention */
  scan_state s = {0};
  CHECK_EQ(sq_queue_batch_results(q, "rb", on_result, &s), 0);
  CHECK_EQ(s.seen, 3);
  /* dropped only at the count exported: one more result than that keeps them all */
  int64_t dropped = -1;
  CHECK_EQ(sq_queue_batch_results_drop(q, "rb", 2, &dropped), SQ_ECONFLICT);
  CHECK_EQ(dropped, 0);
  CHECK_EQ(raw_int(r, "HLEN %s", "sq:{res}:results:rb"), 3);
  CHECK_EQ(sq_queue_batch_results_drop(q, "rb", 3, &dropped), 0);
  CHECK_EQ(dropped, 3);
  CHECK_EQ(raw_int(r, "EXISTS %s", "sq:{res}:results:rb"), 0);
  CHECK_EQ(sq_queue_batch_results_drop(q, "rb", 0, &dropped), 0); /* nothing left: nothing to do */
  CHECK_EQ(dropped, 0);
  CHECK_EQ(sq_queue_batch_stats(q, "nobody", &st), 0);
  CHECK_EQ(st.total, 0);
  bson_destroy(d1);
  redisFree(r);
  sq_queue_free(q);
}

/* How many FCALLs the server has run (INFO commandstats). */
static long long fcalls(redisContext *r) {
  redisReply *rr = redisCommand(r, "INFO commandstats");
  long long n = -1;
  const char *at = rr && rr->type == REDIS_REPLY_STRING ? rr->str : NULL;
  if (at && (at = strstr(at, "cmdstat_fcall:calls="))) n = atoll(at + strlen("cmdstat_fcall:calls="));
  freeReplyObject(rr);
  return n;
}

/* Several results in one round trip go as one sq1_complete_n, with the
 * same effect as one sq1_complete each, in order: a fenced one in the
 * middle refused alone, a second batch, an id repeated within the call
 * counted as a duplicate, the batch finished by the last one with the
 * counts at that point (one event). A library without sq1_complete_n (a
 * FUNCTION FLUSH) is reloaded and every result stored. */
static void test_results_grouped(void) {
  sq_queue *q = open_queue("grp");
  const char *gb[] = {"{\"id\":\"g1\"}", "{\"id\":\"g1\"}", "{\"id\":\"g2\"}"};
  size_t gl[] = {strlen(gb[0]), strlen(gb[1]), strlen(gb[2])};
  CHECK_EQ(sq_queue_push(q, "gb", gb, gl, 3), 0);
  CHECK_EQ(push1(q, "gf", "{\"id\":\"f1\"}", SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(push1(q, "gb2", "{\"id\":\"h1\"}", SQ_PRIORITY_NORMAL, NULL), 0);
  sq_claim c[5];
  size_t n = 0;
  CHECK_EQ(sq_queue_claim_many(q, "w", 100, c, 5, &n), 0);
  CHECK_EQ(n, 5);
  if (n != 5) return;
  redisContext *r = raw();
  /* f1's claim passed to another worker meanwhile (its lease lost) */
  char tok[24];
  snprintf(tok, sizeof tok, "%lld", (long long)c[3].token);
  redisReply *rr = redisCommand(r, "HSET sq:{grp}:owners %s nother", tok);
  freeReplyObject(rr);
  bson_t *d = result_doc("x", "passed");
  const char *batch[] = {"gb", "gf", "gb2", "gb", "gb"}, *id[] = {"g1", "f1", "h1", "g1", "g2"};
  int order[] = {0, 3, 4, 1, 2}; /* g1, f1 (fenced), h1, g1 again, g2 */
  sq_completion k[5];
  for (int i = 0; i < 5; i++)
    k[i] = (sq_completion){.claim = &c[order[i]], .batch = batch[i], .id = id[i], .status = i == 4 ? "failed" : "passed",
                           .bson = bson_get_data(d), .bson_len = d->len};
  int rcs[5] = {9, 9, 9, 9, 9};
  long long before = fcalls(r);
  CHECK_EQ(sq_queue_complete_many(q, k, 5, rcs), 0);
  CHECK_EQ(fcalls(r) - before, 1); /* one call for the five */
  codes_are(rcs, (const int[]){0, SQ_EFENCED, 0, SQ_EEXISTS, 0}, 5);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "gb", &st), 0);
  CHECK_EQ(st.total, 3);
  CHECK_EQ(st.done, 2);
  CHECK_EQ(st.duplicate, 1);
  CHECK_EQ(find_status(&st, "passed"), 1);
  CHECK_EQ(find_status(&st, "failed"), 1);
  CHECK(st.finished_at_ms > 0);
  CHECK_EQ(sq_queue_batch_wait(q, "gb", 1000), 0); /* one event */
  CHECK_EQ(sq_queue_batch_wait(q, "gb", 100), SQ_ETIMEOUT);
  rr = redisCommand(r, "LINDEX sq:{grp}:done:gb 0");
  CHECK(rr && rr->type == REDIS_REPLY_NIL); /* read by the wait */
  freeReplyObject(rr);
  CHECK_EQ(sq_queue_batch_stats(q, "gb2", &st), 0);
  CHECK_EQ(st.done, 1);
  CHECK(st.finished_at_ms > 0);
  CHECK_EQ(sq_queue_batch_stats(q, "gf", &st), 0);
  CHECK_EQ(st.done, 0);
  CHECK_EQ(raw_int(r, "HLEN %s", "sq:{grp}:results:gb"), 2);
  CHECK_EQ(raw_int(r, "LLEN %s", "sq:{grp}:processing:w"), 1); /* f1's token: not ours to drop */
  CHECK_EQ(raw_int(r, "HLEN %s", "sq:{grp}:claims"), 1);
  CHECK_EQ(raw_int(r, "ZCARD %s", "sq:{grp}:leases"), 1);
  CHECK(raw_int(r, "TTL %s", "sq:{grp}:results:gb2") > 0);
  CHECK(raw_int(r, "TTL %s", "sq:{grp}:batch:gb") > 0);
  sq_queue_counters qc;
  CHECK_EQ(sq_queue_counters_get(q, &qc), 0);
  CHECK_EQ(qc.duplicate, 1);
  CHECK_EQ(qc.fenced, 1);
  for (int i = 0; i < 5; i++) sq_claim_clear(&c[i]);

  /* a call of the wrong shape is refused, naming what it takes */
  rr = redisCommand(r, "FCALL sq1_complete_n 1 sq:{grp}:tasks w 60 1 gb");
  CHECK(rr && rr->type == REDIS_REPLY_ERROR && strstr(rr->str, "ARGV is worker, retention_s, then token"));
  freeReplyObject(rr);

  /* the library gone: reloaded, and the results stored */
  const char *more[] = {"{\"id\":\"m1\"}", "{\"id\":\"m2\"}"};
  size_t ml[] = {strlen(more[0]), strlen(more[1])};
  CHECK_EQ(sq_queue_push(q, "gm", more, ml, 2), 0);
  CHECK_EQ(sq_queue_claim_many(q, "w", 100, c, 2, &n), 0);
  CHECK_EQ(n, 2);
  raw_cmd(r, "FUNCTION FLUSH%s", "");
  for (int i = 0; i < 2; i++)
    k[i] = (sq_completion){.claim = &c[i], .batch = "gm", .id = i ? "m2" : "m1", .status = "passed",
                           .bson = bson_get_data(d), .bson_len = d->len};
  CHECK_EQ(sq_queue_complete_many(q, k, 2, rcs), 0);
  CHECK_EQ(rcs[0], 0);
  CHECK_EQ(rcs[1], 0);
  CHECK_EQ(sq_queue_batch_stats(q, "gm", &st), 0);
  CHECK_EQ(st.done, 2);
  for (size_t i = 0; i < n; i++) sq_claim_clear(&c[i]);
  before = fcalls(r);
  CHECK_EQ(push1(q, "gm", "{\"id\":\"m3\"}", SQ_PRIORITY_NORMAL, NULL), 0);
  CHECK_EQ(claim_one(q, "w", 100, &c[0]), 0);
  k[0].claim = &c[0], k[0].id = "m3";
  CHECK_EQ(sq_queue_complete_many(q, k, 1, rcs), 0);
  CHECK_EQ(rcs[0], 0);
  CHECK_EQ(fcalls(r) - before, 3); /* push, claim, one complete: the library is whole again */
  sq_claim_clear(&c[0]);

  /* more results than one call takes (32): two calls, every one stored */
  enum { BIG = 40 };
  const char *bp[BIG];
  size_t bl[BIG];
  char bids[BIG][16], bpay[BIG][40];
  for (int i = 0; i < BIG; i++) {
    snprintf(bids[i], sizeof bids[i], "b%02d", i);
    snprintf(bpay[i], sizeof bpay[i], "{\"id\":\"%s\"}", bids[i]);
    bp[i] = bpay[i], bl[i] = strlen(bpay[i]);
  }
  CHECK_EQ(sq_queue_push(q, "gbig", bp, bl, BIG), 0);
  sq_claim bc[BIG];
  sq_completion bk[BIG];
  int brc[BIG];
  CHECK_EQ(sq_queue_claim_many(q, "w", 100, bc, BIG, &n), 0);
  CHECK_EQ(n, BIG);
  for (size_t i = 0; i < n; i++)
    bk[i] = (sq_completion){.claim = &bc[i], .batch = "gbig", .id = bids[i], .status = "passed",
                            .bson = bson_get_data(d), .bson_len = d->len};
  before = fcalls(r);
  CHECK_EQ(sq_queue_complete_many(q, bk, n, brc), 0);
  CHECK_EQ(fcalls(r) - before, 2);
  for (size_t i = 0; i < n; i++) CHECK_EQ(brc[i], 0);
  CHECK_EQ(sq_queue_batch_stats(q, "gbig", &st), 0);
  CHECK_EQ(st.done, BIG);
  CHECK(st.finished_at_ms > 0);
  for (size_t i = 0; i < n; i++) sq_claim_clear(&bc[i]);
  bson_destroy(d);
  redisFree(r);
  sq_queue_free(q);
}

int main(void) {
  int rc = fixture_init("test_queue");
  if (rc) return rc;
  test_fifo();
  test_big_push();
  test_empty_claim();
  test_priorities();
  test_idempotency_cap();
  test_lease_fencing();
  test_heartbeat();
  test_dead_letter();
  test_suspect_alone();
  test_claim_undo();
  test_retry();
  test_defer();
  test_release();
  test_kill_mark();
  test_results();
  test_results_grouped();
  return sq_check_done("test_queue");
}
