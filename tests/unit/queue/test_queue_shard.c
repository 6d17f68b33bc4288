/* test_queue_shard.c: a sharded queue (shards: 3, tags {Q#0}..{Q#2}) on
 * one real redis-server (tests/lib/with_redis.sh): pushes spread over
 * the shards, claims take from every shard in turn, a batch's counters are
 * the sum of its parts and it finishes when every part has, results and
 * the dead letter span the shards; plus the failover pieces every queue
 * has: a push chunk sent twice lands once, the token floor, a write the
 * replicas did not acknowledge (WAIT) counts as not done, and a server
 * demoted to a replica (READONLY) is left for another; sq1_enqueue into a
 * shard's key, completions with their audit entries across shards, and the
 * key checks of the Functions sharding added. */
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "queue_claim_one.h"
#include "queue_fixture.h"

#define N_TASKS 30

static sq_queue *open_sharded(const char *name, int shards) {
  sq_queue_options o;
  sq_queue_options_default(&o);
  o.shards = shards;
  o.max_stalls = 1;
  return open_opts(name, &o);
}

static void payload(char *buf, size_t n, int i, const char *batch) {
  snprintf(buf, n, "{\"id\":\"t%02d\",\"batch\":\"%s\"}", i, batch);
}

/* Pushes n tasks t00.. of batch (payload above) through q. */
static int push_tasks(sq_queue *q, const char *batch, int n) {
  char bufs[N_TASKS][64];
  const char *p[N_TASKS];
  size_t l[N_TASKS];
  if (n > N_TASKS) return SQ_EINVAL;
  for (int i = 0; i < n; i++) {
    payload(bufs[i], sizeof bufs[i], i, batch);
    p[i] = bufs[i];
    l[i] = strlen(bufs[i]);
  }
  return sq_queue_push(q, batch, p, l, (size_t)n);
}

static int complete_one(sq_queue *q, const sq_claim *c, const char *batch) {
  char id[8];
  snprintf(id, sizeof id, "t%c%c", c->payload[8], c->payload[9]); /* {"id":"tNN" */
  sq_completion k = {.claim = c, .batch = batch, .id = id, .status = "passed", .bson = (const uint8_t *)c->payload,
                     .bson_len = c->len};
  return sq_queue_complete(q, &k);
}

static int count_result(const char *id, const uint8_t *b, size_t len, void *ud) {
  (void)id, (void)b, (void)len;
  (*(int *)ud)++;
  return 0;
}

static void test_spread_and_batch(void) {
  sq_queue *q = open_sharded("sh", 3);
  redisContext *c = raw();
  CHECK_EQ(push_tasks(q, "sb", N_TASKS), 0);
  /* every shard got its share, and nothing went to the home tag */
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{sh#0}:tasks"), 10);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{sh#1}:tasks"), 10);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{sh#2}:tasks"), 10);
  CHECK_EQ(raw_int(c, "EXISTS %s", "sq:{sh}:tasks"), 0);
  int64_t n = 0;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, N_TASKS);

  /* one at a time, claims take from each shard in turn: none starves */
  int per_shard[3] = {0, 0, 0};
  sq_claim cl[N_TASKS];
  for (int i = 0; i < 6; i++) {
    CHECK_EQ(claim_one(q, "w1", 100, &cl[i]), 0);
    per_shard[cl[i].shard]++;
  }
  CHECK_EQ(per_shard[0], 2);
  CHECK_EQ(per_shard[1], 2);
  CHECK_EQ(per_shard[2], 2);
  int64_t leases = 0;
  CHECK_EQ(sq_queue_heartbeat(q, "w1", &leases), 0);
  CHECK_EQ(leases, 6);
  /* a claim of many fills from the next shards when one runs dry */
  size_t got = 0;
  CHECK_EQ(sq_queue_claim_many(q, "w1", 100, cl + 6, N_TASKS - 6, &got), 0);
  CHECK_EQ(got, N_TASKS - 6);

  /* complete all but one: not finished; the last one finishes every part */
  for (int i = 0; i < N_TASKS - 1; i++) CHECK_EQ(complete_one(q, &cl[i], "sb"), 0);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "sb", &st), 0);
  CHECK_EQ(st.total, N_TASKS);
  CHECK_EQ(st.done, N_TASKS - 1);
  CHECK_EQ(st.finished_at_ms, 0);
  CHECK_EQ(sq_queue_batch_wait(q, "sb", 150), SQ_ETIMEOUT);
  CHECK_EQ(complete_one(q, &cl[N_TASKS - 1], "sb"), 0);
  CHECK_EQ(sq_queue_batch_stats(q, "sb", &st), 0);
  CHECK_EQ(st.done, N_TASKS);
  CHECK(st.finished_at_ms > 0);
  CHECK_EQ(st.n_statuses, 1);
  CHECK_STR(st.statuses[0].name, "passed");
  CHECK_EQ(st.statuses[0].count, N_TASKS);
  CHECK_EQ(sq_queue_batch_wait(q, "sb", 1000), 0);
  int results = 0;
  CHECK_EQ(sq_queue_batch_results(q, "sb", count_result, &results), 0);
  CHECK_EQ(results, N_TASKS);
  /* a result sent again is refused (exactly one per task), on its shard */
  CHECK_EQ(complete_one(q, &cl[0], "sb"), SQ_EEXISTS);
  /* the spend lives under the home tag and shows in the stats */
  CHECK_EQ(sq_queue_batch_set_budget(q, "sb", 2.5), 0);
  CHECK_EQ(sq_queue_batch_add_cost(q, "sb", 0.25), 0);
  CHECK_EQ(sq_queue_batch_stats(q, "sb", &st), 0);
  CHECK(st.budget_usd > 2.49 && st.budget_usd < 2.51);
  CHECK(st.cost_usd > 0.24 && st.cost_usd < 0.26);
  for (int i = 0; i < N_TASKS; i++) sq_claim_clear(&cl[i]);
  redisFree(c);
  sq_queue_free(q);
}

static void test_idempotency_keys(void) {
  sq_queue *q = open_sharded("shi", 4);
  char bufs[8][64], keys[8][16];
  sq_push_item it[8];
  for (int i = 0; i < 8; i++) {
    payload(bufs[i], sizeof bufs[i], i, "ib");
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    it[i] = (sq_push_item){.payload = bufs[i], .len = strlen(bufs[i]), .idempotency_key = keys[i]};
  }
  size_t pushed = 0, dups = 0;
  CHECK_EQ(sq_queue_push_items(q, "ib", it, 8, &pushed, &dups), 0);
  CHECK_EQ(pushed, 8);
  CHECK_EQ(dups, 0);
  /* the same keys again, in another order: each lands on its shard and is skipped */
  sq_push_item rev[8];
  for (int i = 0; i < 8; i++) rev[i] = it[7 - i];
  CHECK_EQ(sq_queue_push_items(q, "ib", rev, 8, &pushed, &dups), 0);
  CHECK_EQ(pushed, 0);
  CHECK_EQ(dups, 8);
  int64_t n = 0;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 8);
  sq_queue_free(q);
}

static int first_dead(int64_t id, const char *rec, size_t len, void *ud) {
  (void)rec, (void)len;
  *(int64_t *)ud = id;
  return 1;
}

static void test_dead_letter(void) {
  sq_queue *q = open_sharded("shd", 3);
  CHECK_EQ(push_tasks(q, "db", 3), 0);
  sq_claim c[3];
  size_t got = 0;
  CHECK_EQ(sq_queue_claim_many(q, "w", 100, c, 3, &got), 0);
  CHECK_EQ(got, 3);
  /* the one on shard 2 stalls into the dead letter (max_stalls 1) */
  int k = c[0].shard == 2 ? 0 : c[1].shard == 2 ? 1 : 2;
  CHECK_EQ(c[k].shard, 2);
  bool dead = false;
  CHECK_EQ(sq_queue_stall(q, &c[k], "test", &dead), 0);
  CHECK(dead);
  int64_t id = -1;
  CHECK_EQ(sq_queue_dead_list(q, first_dead, &id), 1);
  CHECK_EQ(id % 3, 2); /* the id names its shard */
  char *rec = NULL;
  CHECK_EQ(sq_queue_dead_show(q, id, &rec), 0);
  CHECK_CONTAINS(rec, "\"task_id\":\"t0");
  free(rec);
  CHECK_EQ(sq_queue_dead_show(q, id + 1, &rec), SQ_ENOTFOUND);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "db", &st), 0);
  CHECK_EQ(st.dead, 1);
  size_t n = 0;
  CHECK_EQ(sq_queue_dead_requeue(q, id, &n), 0);
  CHECK_EQ(n, 1);
  /* release_all and recover reach every shard */
  CHECK_EQ(sq_queue_release_all(q, "w", &n), 0);
  CHECK_EQ(n, 2);
  int64_t len = 0;
  CHECK_EQ(sq_queue_length(q, &len), 0);
  CHECK_EQ(len, 3);
  for (int i = 0; i < 3; i++) sq_claim_clear(&c[i]);
  sq_queue_free(q);
}

/* A push chunk whose reply was lost is sent again under its id: once. */
static void test_push_once(void) {
  sq_queue *q = open_queue("po");
  redisContext *c = raw();
  for (int i = 0; i < 2; i++) {
    redisReply *r = redisCommand(c, "FCALL sq1_push_once 1 sq:{po}:tasks chunk-1 pb 0 3600 n %s %s", "", "{\"id\":\"x\"}");
    CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    if (r && r->type == REDIS_REPLY_ARRAY) CHECK_EQ(r->element[0]->integer, 1);
    freeReplyObject(r);
  }
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{po}:tasks"), 1);
  redisReply *r = redisCommand(c, "HGET sq:{po}:batch:pb total");
  CHECK(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, "1") == 0);
  freeReplyObject(r);
  redisFree(c);
  sq_queue_free(q);
}

/* After a reconnection, the handle raises the token counter above the
 * tokens it was given: a promoted replica that lost those claims never
 * hands the same tokens out again. */
static void test_token_floor(void) {
  sq_queue *q = open_queue("fl");
  redisContext *c = raw();
  const char *p[] = {"{\"id\":\"a\"}", "{\"id\":\"b\"}"};
  size_t l[] = {strlen(p[0]), strlen(p[1])};
  CHECK_EQ(sq_queue_push(q, "fb", p, l, 2), 0);
  sq_claim a, b;
  CHECK_EQ(claim_one(q, "w", 100, &a), 0);
  /* a failover to a replica that never saw the claim: the counter goes back */
  raw_cmd(c, "SET %s 0", "sq:{fl}:seq");
  raw_cmd(c, "CLIENT KILL TYPE %s", "normal"); /* drops q's connection (and this one) */
  redisFree(c);
  memset(&b, 0, sizeof b);
  /* the first call finds the connection gone (the caller retries) */
  int rc = claim_one(q, "w", 100, &b);
  if (rc == SQ_EREDIS_CONN) rc = claim_one(q, "w", 100, &b);
  CHECK_EQ(rc, 0);
  CHECK(b.token > a.token);
  sq_claim_clear(&a);
  sq_claim_clear(&b);
  sq_queue_free(q);
}

/* wait_replicas on a server without replicas: the result is written but
 * not acknowledged, so the call fails (the worker keeps the result and
 * sends it again); without the option the same server is fine. */
static void test_wait_unacknowledged(void) {
  sq_queue_options o;
  sq_queue_options_default(&o);
  o.wait_replicas = 1;
  o.wait_timeout_ms = 50;
  sq_queue *plain = open_queue("wt");
  sq_queue *q = open_opts("wt", &o);
  const char *p[] = {"{\"id\":\"w1\"}"};
  size_t l[] = {strlen(p[0])};
  CHECK_EQ(sq_queue_push(plain, "wb", p, l, 1), 0);
  sq_claim c;
  CHECK_EQ(claim_one(q, "w", 100, &c), 0);
  sq_completion k = {.claim = &c, .batch = "wb", .id = "w1", .status = "passed", .bson = (const uint8_t *)"doc",
                     .bson_len = 3};
  CHECK_EQ(sq_queue_complete(q, &k), SQ_EREDIS_CONN);
  CHECK_CONTAINS(sq_queue_errstr(q), "0 of 1 replica(s) acknowledged");
  char text[1024];
  CHECK(sq_queue_check_server(q, text, sizeof text) >= 1);
  CHECK_CONTAINS(text, "0 replica(s) connected and wait_replicas is 1");
  int rcs[1] = {0};
  CHECK_EQ(sq_queue_complete_many(q, &k, 1, rcs), SQ_EREDIS_CONN);
  CHECK_EQ(rcs[0], SQ_EREDIS_CONN);
  /* sent again where no wait is asked: it is our own result, kept once */
  CHECK_EQ(sq_queue_complete(plain, &k), SQ_EEXISTS);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(plain, "wb", &st), 0);
  CHECK_EQ(st.done, 1);
  sq_claim_clear(&c);
  sq_queue_free(q);
  sq_queue_free(plain);
}

/* A server that became a replica (a failover demoted it) answers writes
 * with READONLY: nothing ran, the connection is dropped so the next call
 * reconnects (with Sentinel: asks the sentinels again), and the call fails
 * as an outage would. */
static void test_readonly(void) {
  sq_queue *q = open_queue("ro");
  redisContext *c = raw();
  const char *p[] = {"{\"id\":\"r\"}"};
  size_t l[] = {strlen(p[0])};
  raw_cmd(c, "REPLICAOF 127.0.0.1 %s", "1"); /* a master that is not there: read-only, keeps its data */
  CHECK_EQ(sq_queue_push(q, "rb", p, l, 1), SQ_EREDIS_CONN);
  CHECK_CONTAINS(sq_queue_errstr(q), "is now a replica");
  raw_cmd(c, "REPLICAOF NO %s", "ONE");
  CHECK_EQ(sq_queue_push(q, "rb", p, l, 1), 0);
  int64_t n = 0;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 1);
  redisFree(c);
  sq_queue_free(q);
}

/* sq1_enqueue (the enqueue for any language) into one shard's key of a
 * sharded queue: the workers claim it and the batch adds the part up. */
static void test_enqueue_sharded(void) {
  sq_queue *q = open_sharded("she", 3);
  redisContext *c = raw();
  redisReply *r = redisCommand(c, "FCALL sq1_enqueue 1 %s eb 3600 0 %s %s", "sq:{she#1}:tasks",
                               "{\"id\":\"t01\",\"batch\":\"eb\"}", "{\"id\":\"t02\",\"batch\":\"eb\"}");
  CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
  if (r && r->type == REDIS_REPLY_ARRAY) CHECK_EQ(r->element[0]->integer, 2);
  freeReplyObject(r);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "eb", &st), 0);
  CHECK_EQ(st.total, 2);
  CHECK_EQ(st.finished_at_ms, 0);
  sq_claim cl[2];
  size_t got = 0;
  CHECK_EQ(sq_queue_claim_many(q, "w", 100, cl, 2, &got), 0);
  CHECK_EQ(got, 2);
  for (size_t i = 0; i < got; i++) {
    CHECK_EQ(cl[i].shard, 1);
    CHECK_EQ(complete_one(q, &cl[i], "eb"), 0);
    sq_claim_clear(&cl[i]);
  }
  CHECK_EQ(sq_queue_batch_stats(q, "eb", &st), 0);
  CHECK_EQ(st.done, 2);
  CHECK(st.finished_at_ms > 0);
  CHECK_EQ(sq_queue_batch_wait(q, "eb", 1000), 0);
  redisFree(c);
  sq_queue_free(q);
}

static char g_notice[512];
static void on_notice(const char *text, void *ud) {
  (void)ud;
  snprintf(g_notice, sizeof g_notice, "%s", text);
}

static redisReply *raw_get(redisContext *c, const char *key) { return redisCommand(c, "GET %s", key); }

/* The shard count is the queue's: the first handle records it, a handle
 * configured otherwise uses the record (and says so), a push into the home
 * tag of a sharded queue is refused, a damaged record stops a handle from
 * opening, and deleting the record of a drained queue lets the next handle
 * record its own (the change docs/operations.md describes). */
static void test_shard_record(void) {
  redisContext *c = raw();
  sq_queue *q3 = open_sharded("rec", 3);
  redisReply *r = raw_get(c, "sq:{rec}:shards");
  CHECK(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, "3") == 0);
  freeReplyObject(r);
  /* a handle configured with one shard pushes over the three */
  g_notice[0] = '\0';
  sq_queue_set_notice(on_notice, NULL);
  sq_queue *q1 = open_sharded("rec", 1);
  sq_queue_set_notice(NULL, NULL);
  CHECK(strstr(g_notice, "queue rec has 3 shard(s)") != NULL);
  CHECK(strstr(g_notice, "shards: 1") != NULL);
  CHECK_EQ(push_tasks(q1, "rb", 6), 0);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{rec}:tasks"), 0);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{rec#0}:tasks") + raw_int(c, "LLEN %s", "sq:{rec#1}:tasks") +
               raw_int(c, "LLEN %s", "sq:{rec#2}:tasks"),
           6);
  /* and the three-shard handle claims all six */
  sq_claim cl[6];
  size_t got = 0;
  CHECK_EQ(sq_queue_claim_many(q3, "w", 100, cl, 6, &got), 0);
  CHECK_EQ(got, 6);
  for (size_t i = 0; i < got; i++) {
    CHECK_EQ(complete_one(q3, &cl[i], "rb"), 0);
    sq_claim_clear(&cl[i]);
  }
  /* any language's enqueue into the home tag: refused, nothing pushed */
  r = redisCommand(c, "FCALL sq1_enqueue 1 %s hb 3600 0 %s", "sq:{rec}:tasks", "{\"id\":\"h1\",\"batch\":\"hb\"}");
  CHECK(r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "SHARDED 3: queue rec has 3 shards", 33) == 0 &&
        strstr(r->str, "sq:{rec#k}:tasks with k in 0..2") != NULL);
  if (r && r->type == REDIS_REPLY_ERROR) fprintf(stderr, "(expected) %s\n", r->str);
  freeReplyObject(r);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{rec}:tasks"), 0);
  CHECK_EQ(raw_int(c, "EXISTS %s", "sq:{rec}:batch:hb"), 0);
  sq_queue_free(q1);
  sq_queue_free(q3);
  /* the change: drained, every handle closed, the record deleted */
  raw_cmd(c, "DEL %s", "sq:{rec}:shards");
  sq_queue *q2 = open_sharded("rec", 2);
  r = raw_get(c, "sq:{rec}:shards");
  CHECK(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, "2") == 0);
  freeReplyObject(r);
  sq_queue_free(q2);
  /* a queue of one shard records 1, and its home tag takes pushes */
  sq_queue *qa = open_sharded("rec1", 1);
  r = raw_get(c, "sq:{rec1}:shards");
  CHECK(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, "1") == 0);
  freeReplyObject(r);
  CHECK_EQ(push_tasks(qa, "ab", 2), 0);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{rec1}:tasks"), 2);
  sq_queue_free(qa);
  /* a damaged record: the handle does not open, and says which key */
  raw_cmd(c, "SET sq:{recd}:shards %s", "three");
  sq_queue_options o;
  sq_queue_options_default(&o);
  sq_queue *qd = NULL;
  char err[300];
  CHECK_EQ(sq_queue_new_opts(g_url, "recd", &o, &qd, err, sizeof err), SQ_EPARSE);
  CHECK(qd == NULL);
  CHECK(strstr(err, "CORRUPT sq:{recd}:shards: value 'three' is not a shard count") != NULL);
  sq_queue_free(qd);
  qd = NULL;
  raw_cmd(c, "HSET sq:{recw}:shards %s 1", "n");
  CHECK_EQ(sq_queue_new_opts(g_url, "recw", &o, &qd, err, sizeof err), SQ_EREDIS);
  CHECK(qd == NULL);
  CHECK(strstr(err, "sq:{recw}:shards") != NULL && strstr(err, "WRONGTYPE") != NULL);
  sq_queue_free(qd);
  redisFree(c);
}

static int count_entry(const char *id, const char *const *f, const char *const *v, size_t n, void *ud) {
  (void)id, (void)f, (void)v, (void)n;
  (*(int *)ud)++;
  return 0;
}

/* Completions on several shards with the audit entries in the same round
 * trip: the results land on their shards, the entries in sq:{Q}:audit. */
static void test_complete_many_log(void) {
  sq_queue *q = open_sharded("shl", 3);
  redisContext *c = raw();
  CHECK_EQ(push_tasks(q, "lb", 3), 0);
  sq_claim cl[3];
  size_t got = 0;
  CHECK_EQ(sq_queue_claim_many(q, "w", 100, cl, 3, &got), 0);
  CHECK_EQ(got, 3);
  sq_completion k[3];
  char ids[3][8];
  for (size_t i = 0; i < got; i++) {
    snprintf(ids[i], sizeof ids[i], "t%c%c", cl[i].payload[8], cl[i].payload[9]);
    k[i] = (sq_completion){.claim = &cl[i], .batch = "lb", .id = ids[i], .status = "passed",
                           .bson = (const uint8_t *)cl[i].payload, .bson_len = cl[i].len};
  }
  const char *f[] = {"task"}, *v1[] = {"a"}, *v2[] = {"b"};
  sq_queue_stream_entry e[] = {{f, v1, 1}, {f, v2, 1}};
  sq_queue_stream_batch log = {.name = "audit", .max_len = 100, .entries = e, .n = 2};
  int rcs[3] = {-1, -1, -1}, log_rc = -1;
  CHECK_EQ(sq_queue_complete_many_log(q, k, got, rcs, &log, &log_rc), 0);
  for (size_t i = 0; i < got; i++) CHECK_EQ(rcs[i], 0);
  CHECK_EQ(log_rc, 0);
  CHECK_EQ(raw_int(c, "XLEN %s", "sq:{shl}:audit"), 2);
  int n = 0;
  CHECK_EQ(sq_queue_stream_range(q, "audit", NULL, count_entry, &n), 0);
  CHECK_EQ(n, 2);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "lb", &st), 0);
  CHECK_EQ(st.done, 3);
  for (size_t i = 0; i < got; i++) sq_claim_clear(&cl[i]);
  redisFree(c);
  sq_queue_free(q);
}

/* The Functions sharding and failover added check their keys before any
 * write, as every other one does (common/queue/lua/10-checks.lua). */
static void test_corrupt_keys(void) {
  sq_queue *q = open_queue("pc");
  redisContext *c = raw();
  raw_cmd(c, "LPUSH %s x", "sq:{pc}:pushed:chunk-9");
  redisReply *r = redisCommand(c, "FCALL sq1_push_once 1 sq:{pc}:tasks chunk-9 pb 0 3600 n %s %s", "", "{\"id\":\"x\"}");
  CHECK(r && r->type == REDIS_REPLY_ERROR && strstr(r->str, "CORRUPT sq:{pc}:pushed:chunk-9"));
  freeReplyObject(r);
  CHECK_EQ(raw_int(c, "EXISTS %s", "sq:{pc}:tasks"), 0);
  raw_cmd(c, "SET %s ten", "sq:{pc}:seq");
  r = redisCommand(c, "FCALL sq1_seq_floor 1 sq:{pc}:tasks 5");
  CHECK(r && r->type == REDIS_REPLY_ERROR && strstr(r->str, "CORRUPT sq:{pc}:seq"));
  freeReplyObject(r);
  r = redisCommand(c, "GET sq:{pc}:seq");
  CHECK(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, "ten") == 0);
  freeReplyObject(r);
  redisFree(c);
  sq_queue_free(q);
}

/* A dead-letter entry that cannot be requeued is named by the id callers
 * see (the shard's id times the shards plus the shard). */
static void test_dead_requeue_damaged(void) {
  sq_queue *q = open_sharded("shr", 3);
  redisContext *c = raw();
  raw_cmd(c, "HSET sq:{shr#1}:dead 5 %s", "not-json");
  raw_cmd(c, "ZADD sq:{shr#1}:dead:index 1 %s", "5");
  size_t n = 9;
  CHECK_EQ(sq_queue_dead_requeue(q, -1, &n), SQ_EPARSE);
  CHECK_EQ(n, 0);
  CHECK_CONTAINS(sq_queue_errstr(q), "entry 16 cannot be requeued");
  CHECK_EQ(sq_queue_dead_requeue(q, 16, &n), SQ_EPARSE);
  redisFree(c);
  sq_queue_free(q);
}

int main(void) {
  int rc = fixture_init("test_queue_shard");
  if (rc) return rc;
  test_spread_and_batch();
  test_idempotency_keys();
  test_dead_letter();
  test_push_once();
  test_token_floor();
  test_wait_unacknowledged();
  test_readonly();
  test_enqueue_sharded();
  test_shard_record();
  test_complete_many_log();
  test_corrupt_keys();
  test_dead_requeue_damaged();
  return sq_check_done("test_queue_shard");
}
