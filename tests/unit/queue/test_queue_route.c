/* test_queue_route.c: the routing pieces that need no server: the key slot
 * (CRC16 of the hash tag), what an error reply asks of the client (MOVED,
 * ASK, a moving slot, READONLY), the slot map built from a CLUSTER SLOTS
 * reply, the sentinel and cluster URLs, and the shard keys. The redirect
 * loop itself runs against a real cluster: tests/integration/cluster.sh. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "queue_internal.h"

static void test_slots(void) {
  /* the specification's check value for CRC16-XMODEM is 0x31C3 */
  CHECK_EQ(sq__key_slot("123456789", 9), 0x31C3 & (SQ__SLOTS - 1));
  /* CLUSTER KEYSLOT answers (redis 7.0) */
  CHECK_EQ(sq__key_slot("sq:{default}:tasks", 18), 5718);
  CHECK_EQ(sq__key_slot("foo", 3), 12182);
  /* the tag alone decides; an empty tag {} does not count */
  CHECK_EQ(sq__key_slot("sq:{default}:results:b1", 23), 5718);
  CHECK_EQ(sq__key_slot("{default}", 9), sq__key_slot("default", 7));
  CHECK_EQ(sq__key_slot("a{}b", 4), sq__key_slot("a{}b", 4));
  CHECK(sq__key_slot("a{}b{x}", 7) != sq__key_slot("x", 1)); /* the first { } pair is empty: whole key */
  CHECK_EQ(sq__key_slot("{user1000}.following", 20), sq__key_slot("{user1000}.followers", 20));
}

static void test_classify(void) {
  int slot = -1;
  sq__addr to;
  const char *e = "MOVED 5718 127.0.0.1:7002";
  CHECK_EQ(sq__reply_classify(e, strlen(e), &slot, &to), SQ__REPLY_MOVED);
  CHECK_EQ(slot, 5718);
  CHECK_STR(to.host, "127.0.0.1");
  CHECK_EQ(to.port, 7002);
  e = "ASK 12 [::1]:7003";
  CHECK_EQ(sq__reply_classify(e, strlen(e), &slot, &to), SQ__REPLY_ASK);
  CHECK_EQ(slot, 12);
  CHECK_STR(to.host, "::1");
  CHECK_EQ(to.port, 7003);
  e = "TRYAGAIN Multiple keys request during rehashing of slot";
  CHECK_EQ(sq__reply_classify(e, strlen(e), &slot, &to), SQ__REPLY_BUSY);
  e = "CLUSTERDOWN The cluster is down";
  CHECK_EQ(sq__reply_classify(e, strlen(e), &slot, &to), SQ__REPLY_BUSY);
  e = "ERR Script attempted to access a non local key in a cluster node script: sq1_claim, on @user_function:5.";
  CHECK_EQ(sq__reply_classify(e, strlen(e), &slot, &to), SQ__REPLY_BUSY);
  e = "READONLY You can't write against a read only replica.";
  CHECK_EQ(sq__reply_classify(e, strlen(e), &slot, &to), SQ__REPLY_READONLY);
  /* anything else is the command's own error, and so are malformed redirects */
  const char *other[] = {"ERR unknown command", "MOVED", "MOVED x 1.2.3.4:5", "MOVED 99999 h:1", "ASK 1 host",
                         "ASK 1 host:0", "WRONGTYPE Operation against a key", "QUEUEFULL 3 2"};
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
    CHECK_EQ(sq__reply_classify(other[i], strlen(other[i]), &slot, &to), SQ__REPLY_OTHER);
}

/* A reply tree for tests (hiredis frees it with freeReplyObject). */
static redisReply *rep_int(long long v) {
  redisReply *r = calloc(1, sizeof *r);
  r->type = REDIS_REPLY_INTEGER;
  r->integer = v;
  return r;
}
static redisReply *rep_str(const char *s) {
  redisReply *r = calloc(1, sizeof *r);
  r->type = REDIS_REPLY_STRING;
  r->str = strdup(s);
  r->len = strlen(s);
  return r;
}
static redisReply *rep_arr(size_t n) {
  redisReply *r = calloc(1, sizeof *r);
  r->type = REDIS_REPLY_ARRAY;
  r->elements = n;
  r->element = calloc(n, sizeof *r->element);
  return r;
}
static redisReply *range(long long lo, long long hi, const char *host, int port) {
  redisReply *e = rep_arr(3), *m = rep_arr(3);
  e->element[0] = rep_int(lo);
  e->element[1] = rep_int(hi);
  m->element[0] = rep_str(host);
  m->element[1] = rep_int(port);
  m->element[2] = rep_str("0123456789abcdef");
  e->element[2] = m;
  return e;
}

static void test_slot_map(void) {
  sq_queue *q = calloc(1, sizeof *q);
  q->slots = calloc(SQ__SLOTS, 1);
  q->slots_stale = true;
  redisReply *r = rep_arr(3);
  r->element[0] = range(0, 5460, "127.0.0.1", 7001);
  r->element[1] = range(5461, 10922, "", 7002); /* empty host: the one asked */
  r->element[2] = range(10923, 16383, "127.0.0.1", 7003);
  sq__addr from = {"10.0.0.9", 7001};
  CHECK_EQ(sq__cluster_apply_slots(q, r, &from), 0);
  CHECK(!q->slots_stale);
  CHECK_EQ(q->n_nodes, 3);
  CHECK_EQ(q->nodes[q->slots[0] - 1].addr.port, 7001);
  CHECK_EQ(q->nodes[q->slots[5718] - 1].addr.port, 7002);
  CHECK_STR(q->nodes[q->slots[5718] - 1].addr.host, "10.0.0.9");
  CHECK_EQ(q->nodes[q->slots[16383] - 1].addr.port, 7003);
  /* a node already known keeps its index */
  sq__addr a = {"127.0.0.1", 7003};
  CHECK_EQ(sq__node_find_or_add(q, &a), q->slots[16383] - 1);
  sq__addr b = {"127.0.0.1", 7004};
  CHECK_EQ(sq__node_find_or_add(q, &b), 3);
  CHECK_EQ(q->n_nodes, 4);
  /* a malformed reply leaves the map as it was */
  redisReply *bad = rep_arr(1);
  bad->element[0] = range(10, 5, "127.0.0.1", 7001);
  CHECK_EQ(sq__cluster_apply_slots(q, bad, &from), SQ_EREDIS);
  CHECK_EQ(q->nodes[q->slots[5718] - 1].addr.port, 7002);
  freeReplyObject(r);
  freeReplyObject(bad);
  free(q->slots);
  free(q);
}

static void test_urls(void) {
  sq__url u;
  char err[300];
  unsetenv("SANDQ_REDIS_PASSWORD");
  unsetenv("SANDQ_SENTINEL_PASSWORD");
  CHECK_EQ(sq__url_parse("redis-sentinel://10.0.0.1:26379,10.0.0.2,[::1]:26380/mymaster?db=3", &u, err,
                                  sizeof err), 0);
  CHECK_EQ(u.mode, SQ__MODE_SENTINEL);
  CHECK_EQ(u.n_seeds, 3);
  CHECK_STR(u.seeds[1].host, "10.0.0.2");
  CHECK_EQ(u.seeds[1].port, 26379);
  CHECK_STR(u.seeds[2].host, "::1");
  CHECK_EQ(u.seeds[2].port, 26380);
  CHECK_STR(u.master, "mymaster");
  CHECK_EQ(u.db, 3);
  CHECK_STR(u.password, "");
  CHECK_EQ(sq__url_parse("redis-sentinel://:s%40cret@h:1/m", &u, err, sizeof err), 0);
  CHECK_STR(u.password, "s@cret");
  CHECK_STR(u.sentinel_password, "s@cret");
  setenv("SANDQ_REDIS_PASSWORD", "frommenv", 1);
  setenv("SANDQ_SENTINEL_PASSWORD", "sentinels", 1);
  CHECK_EQ(sq__url_parse("redis-sentinel://h:1/m", &u, err, sizeof err), 0);
  CHECK_STR(u.password, "frommenv");
  CHECK_STR(u.sentinel_password, "sentinels");
  unsetenv("SANDQ_REDIS_PASSWORD");
  unsetenv("SANDQ_SENTINEL_PASSWORD");
  CHECK_EQ(sq__url_parse("redis-sentinel://h:1", &u, err, sizeof err), SQ_EINVAL);
  CHECK_CONTAINS(err, "master's name");
  CHECK_EQ(sq__url_parse("redis-sentinel://h:1/m?dbx=2", &u, err, sizeof err), SQ_EINVAL);
  CHECK_CONTAINS(err, "?db=N");
  CHECK_EQ(sq__url_parse("redis-sentinel://h:99999/m", &u, err, sizeof err), SQ_EINVAL);
  CHECK_CONTAINS(err, "h:99999");
  CHECK_EQ(sq__url_parse("redis-sentinel://h:1,,h:2/m", &u, err, sizeof err), SQ_EINVAL);
  CHECK_EQ(sq__url_parse("redis-cluster://a:7001,b:7002", &u, err, sizeof err), 0);
  CHECK_EQ(u.mode, SQ__MODE_CLUSTER);
  CHECK_EQ(u.n_seeds, 2);
  CHECK_EQ(u.seeds[1].port, 7002);
  CHECK_EQ(sq__url_parse("redis-cluster://a", &u, err, sizeof err), 0);
  CHECK_EQ(u.seeds[0].port, 6379);
  CHECK_EQ(sq__url_parse("redis-cluster://a:7001/2", &u, err, sizeof err), SQ_EINVAL);
  CHECK_CONTAINS(err, "one database");
  char many[512] = "redis-cluster://";
  for (int i = 0; i <= SQ__MAX_SEEDS; i++) strcat(many, i ? ",h:1" : "h:1");
  CHECK_EQ(sq__url_parse(many, &u, err, sizeof err), SQ_EINVAL);
  CHECK_CONTAINS(err, "more than");
  /* the handle refuses a bad URL before connecting, naming the part */
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new_opts("redis-sentinel://h:1", "q", NULL, &q, err, sizeof err), SQ_EINVAL);
  CHECK(q == NULL);
}

static void test_shard_keys(void) {
  sq_queue *q = calloc(1, sizeof *q);
  char key[SQ__KEY_MAX];
  strcpy(q->queue, "jobs");
  q->opts.shards = 1;
  CHECK_EQ(sq__queue_shard_key(q, 0, key, "tasks", NULL), 0);
  CHECK_STR(key, "sq:{jobs}:tasks");
  q->opts.shards = 3;
  CHECK_EQ(sq__queue_shard_key(q, 2, key, "results", "b1"), 0);
  CHECK_STR(key, "sq:{jobs#2}:results:b1");
  CHECK_EQ(sq__queue_shard_key(q, -1, key, "metrics", NULL), 0);
  CHECK_STR(key, "sq:{jobs}:metrics");
  /* an idempotency key always lands on the same shard, and keys spread */
  int seen[3] = {0, 0, 0};
  for (int i = 0; i < 300; i++) {
    char k[32];
    snprintf(k, sizeof k, "key-%d", i);
    int s = sq__queue_shard_of(q, k);
    CHECK(s >= 0 && s < 3);
    CHECK_EQ(sq__queue_shard_of(q, k), s);
    seen[s]++;
  }
  for (int s = 0; s < 3; s++) CHECK(seen[s] > 50);
  free(q);
}

int main(void) {
  test_slots();
  test_classify();
  test_slot_map();
  test_urls();
  test_shard_keys();
  return sq_check_done("test_queue_route");
}
