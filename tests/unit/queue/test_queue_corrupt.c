/* test_queue_corrupt.c: every queue Function against damaged keys (real
 * redis-server, started by tests/lib/with_redis.sh). Redis
 * Functions do not roll back, so a Function that wrote before meeting a
 * damaged key lost tasks (a non-integer sq:{Q}:seq made each
 * claim pop a task and then fail at INCR). Each row of the table sets up a
 * task somewhere, damages one key the Function touches, calls it and
 * checks: the call fails, the error names the key, and not one key of the
 * queue changed (a DUMP of every key before and after), so the task is
 * where it was. Then the damage is repaired and the call must succeed.
 * Also: the dead letter's damaged records, duplicate ids, a batch pushed
 * into twice. */
#include <bson/bson.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "log.h"
#include "queue.h"
#include "queue_claim_one.h"

static const char *g_url;
static redisContext *g_raw;
static int g_row;

static redisReply *cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static redisReply *cmd(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(g_raw, fmt, ap);
  va_end(ap);
  if (!r) {
    fprintf(stderr, "raw redis connection lost\n");
    exit(1);
  }
  return r;
}

/* An integer reply's value (freed); -1 for anything else. */
static long long num(redisReply *r) {
  long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  freeReplyObject(r);
  return v;
}

/* Every key of queue qn with its DUMP, sorted: a picture of the queue. */
static char *snapshot(const char *qn) {
  char pat[128];
  snprintf(pat, sizeof pat, "sq:{%s}:*", qn);
  redisReply *ks = cmd("KEYS %s", pat);
  size_t n = ks->elements;
  char **names = calloc(n + 1, sizeof *names);
  for (size_t i = 0; i < n; i++) names[i] = ks->element[i]->str;
  for (size_t i = 1; i < n; i++) /* insertion sort: few keys */
    for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  size_t cap = 1024, len = 0;
  char *out = malloc(cap);
  out[0] = 0;
  for (size_t i = 0; i < n; i++) {
    if (strstr(names[i], ":reaper")) continue; /* the reaper's lock is taken before the checks, by design */
    redisReply *d = cmd("DUMP %s", names[i]);
    size_t need = len + strlen(names[i]) + d->len * 2 + 4;
    if (need > cap) out = realloc(out, cap = need * 2);
    len += (size_t)sprintf(out + len, "%s=", names[i]);
    for (size_t k = 0; k < d->len; k++) len += (size_t)sprintf(out + len, "%02x", (unsigned char)d->str[k]);
    out[len++] = ';';
    out[len] = 0;
    freeReplyObject(d);
  }
  free(names);
  freeReplyObject(ks);
  return out;
}

static bson_t *doc_for(const char *id) {
  bson_t *b = bson_new();
  BSON_APPEND_UTF8(b, "_id", id);
  BSON_APPEND_UTF8(b, "status", "passed");
  return b;
}

/* ---- the table ---- */

typedef enum { F_PUSH, F_CLAIM, F_CLAIM_UNDO, F_HEARTBEAT, F_COMPLETE, F_RETRY, F_RELEASE, F_RELEASE_ALL,
               F_RECOVER, F_REAP, F_DEAD_REQUEUE, F_HASH_CAS } fn;
static const char *fn_names[] = {"push",    "claim",       "claim_undo", "heartbeat", "complete", "retry",
                                 "release", "release_all", "recover",    "reap",      "dead_requeue", "hash_cas"};

/* How a key is damaged: WRONG_TYPE makes it a type the Function does not
 * expect; NOT_INT puts text where a counter is; GARBAGE a member that is
 * not <token>|<prio><payload> into the delayed set; NO_PAYLOAD removes a
 * claim's payload but keeps its owner. */
typedef enum { WRONG_TYPE, NOT_INT, GARBAGE, NO_PAYLOAD } damage;

typedef struct {
  fn f;
  const char *key;   /* after sq:{Q}: ; "$SHA" is the task payload's sha1 */
  const char *field; /* hash field for NOT_INT; NULL for a string key */
  damage how;
} row;

static const row rows[] = {
    {F_PUSH, "tasks", NULL, WRONG_TYPE},
    {F_PUSH, "tasks:low", NULL, WRONG_TYPE},
    {F_PUSH, "batch:b", NULL, WRONG_TYPE},
    {F_PUSH, "batch:b", "total", NOT_INT},
    {F_PUSH, "batches", NULL, WRONG_TYPE},
    {F_PUSH, "stats", "deduplicated", NOT_INT},
    {F_CLAIM, "seq", NULL, NOT_INT},
    {F_CLAIM, "seq", NULL, WRONG_TYPE},
    {F_CLAIM, "claims", NULL, WRONG_TYPE},
    {F_CLAIM, "owners", NULL, WRONG_TYPE},
    {F_CLAIM, "leases", NULL, WRONG_TYPE},
    {F_CLAIM, "processing:w1", NULL, WRONG_TYPE},
    {F_CLAIM, "workers", NULL, WRONG_TYPE},
    {F_CLAIM, "stalls", NULL, WRONG_TYPE},
    {F_CLAIM, "delayed", NULL, WRONG_TYPE},
    {F_CLAIM, "delayed", NULL, GARBAGE},
    {F_CLAIM, "tasks:high", NULL, WRONG_TYPE},
    {F_CLAIM, "lastclaim:w1", NULL, WRONG_TYPE},
    {F_CLAIM_UNDO, "lastclaim:w1", NULL, WRONG_TYPE},
    {F_CLAIM_UNDO, "owners", NULL, WRONG_TYPE},
    {F_CLAIM_UNDO, "processing:w1", NULL, WRONG_TYPE},
    {F_CLAIM_UNDO, "tasks", NULL, WRONG_TYPE},
    {F_HEARTBEAT, "leases", NULL, WRONG_TYPE},
    {F_HEARTBEAT, "workers", NULL, WRONG_TYPE},
    {F_HEARTBEAT, "processing:w1", NULL, WRONG_TYPE},
    {F_COMPLETE, "results:b", NULL, WRONG_TYPE},
    {F_COMPLETE, "batch:b", "done", NOT_INT},
    {F_COMPLETE, "batch:b", "status:passed", NOT_INT},
    {F_COMPLETE, "batch:b", "total", NOT_INT},
    {F_COMPLETE, "batch:b", NULL, WRONG_TYPE},
    {F_COMPLETE, "done:b", NULL, WRONG_TYPE},
    {F_COMPLETE, "stats", "duplicate", NOT_INT},
    {F_COMPLETE, "claims", NULL, WRONG_TYPE},
    {F_COMPLETE, "leases", NULL, WRONG_TYPE},
    {F_COMPLETE, "processing:w1", NULL, WRONG_TYPE},
    {F_COMPLETE, "attempts", NULL, WRONG_TYPE},
    {F_COMPLETE, "stalls", NULL, WRONG_TYPE},
    {F_COMPLETE, "owners", NULL, WRONG_TYPE},
    {F_COMPLETE, "stats", "fenced", NOT_INT},
    {F_RETRY, "attempts", "$SHA", NOT_INT},
    {F_RETRY, "attempts", NULL, WRONG_TYPE},
    {F_RETRY, "delayed", NULL, WRONG_TYPE},
    {F_RETRY, "hist:$SHA", NULL, WRONG_TYPE},
    {F_RETRY, "stats", "retried", NOT_INT},
    {F_RETRY, "claims", NULL, NO_PAYLOAD},
    {F_RELEASE, "tasks", NULL, WRONG_TYPE},
    {F_RELEASE, "leases", NULL, WRONG_TYPE},
    {F_RELEASE, "claims", NULL, NO_PAYLOAD},
    {F_RELEASE_ALL, "tasks", NULL, WRONG_TYPE},
    {F_RELEASE_ALL, "owners", NULL, WRONG_TYPE},
    {F_RECOVER, "stalls", "$SHA", NOT_INT},
    {F_RECOVER, "dead:seq", NULL, NOT_INT},
    {F_RECOVER, "dead", NULL, WRONG_TYPE},
    {F_RECOVER, "dead:index", NULL, WRONG_TYPE},
    {F_RECOVER, "batch:b", "dead", NOT_INT},
    {F_RECOVER, "hist:$SHA", NULL, WRONG_TYPE},
    {F_RECOVER, "stats", "stalled", NOT_INT},
    {F_RECOVER, "stats", "dead", NOT_INT},
    {F_RECOVER, "done:b", NULL, WRONG_TYPE},
    {F_REAP, "reaper", NULL, WRONG_TYPE},
    {F_REAP, "leases", NULL, WRONG_TYPE},
    {F_REAP, "stalls", "$SHA", NOT_INT},
    {F_REAP, "dead:seq", NULL, NOT_INT},
    {F_REAP, "batch:b", "dead", NOT_INT},
    {F_REAP, "delayed", NULL, GARBAGE},
    {F_REAP, "batches", NULL, WRONG_TYPE},
    {F_REAP, "tasks", NULL, WRONG_TYPE},
    {F_DEAD_REQUEUE, "dead:index", NULL, WRONG_TYPE},
    {F_DEAD_REQUEUE, "tasks", NULL, WRONG_TYPE},
    {F_DEAD_REQUEUE, "batch:b", "dead", NOT_INT},
    {F_DEAD_REQUEUE, "batch:b", NULL, WRONG_TYPE},
    {F_HASH_CAS, "rollout", "version", NOT_INT},
    {F_HASH_CAS, "rollout", NULL, WRONG_TYPE},
    {F_HASH_CAS, "rollout:lock", NULL, WRONG_TYPE},
};

#define PAYLOAD "{\"id\":\"t1\",\"batch\":\"b\",\"code\":\"print(1)\"}"

typedef struct {
  char qn[32];
  sq_queue *q;
  sq_claim c;
  char claim_id[24];
  char sha[48];
} scene;

static void key_of(const scene *s, const char *k, char *out, size_t n) {
  const char *at = strstr(k, "$SHA");
  if (at)
    snprintf(out, n, "sq:{%s}:%.*s%s%s", s->qn, (int)(at - k), k, s->sha, at + 4);
  else
    snprintf(out, n, "sq:{%s}:%s", s->qn, k);
}

/* Puts the task where the Function will look for it. */
static void setup(scene *s, fn f) {
  sq_queue_options o;
  sq_queue_options_default(&o);
  o.max_stalls = 1; /* recover and reap send it to the dead letter, the longest path */
  o.lease_ms = f == F_REAP ? 50 : 60000;
  o.reap_interval_ms = 10;
  snprintf(s->qn, sizeof s->qn, "c%d", g_row);
  CHECK_EQ(sq_queue_new_opts(g_url, s->qn, &o, &s->q, NULL, 0), 0);
  if (!s->q) exit(sq_check_done("test_queue_corrupt"));
  redisReply *h = cmd("EVAL %s 0 %s", "return redis.sha1hex(ARGV[1])", PAYLOAD);
  snprintf(s->sha, sizeof s->sha, "%s", h->type == REDIS_REPLY_STRING ? h->str : "?");
  freeReplyObject(h);
  const char *p = PAYLOAD;
  size_t len = strlen(p);
  if (f == F_PUSH) return; /* pushes it itself */
  CHECK_EQ(sq_queue_push(s->q, "b", &p, &len, 1), 0);
  if (f == F_CLAIM) return;
  if (f == F_DEAD_REQUEUE) {
    sq_queue_options_default(&o);
    CHECK_EQ(claim_one(s->q, "w1", 0, &s->c), 0);
    size_t rq = 0, dead = 0;
    CHECK_EQ(sq_queue_recover(s->q, "w1", &rq, &dead), 0); /* max_stalls 1: to the dead letter */
    CHECK_EQ(dead, 1);
    return;
  }
  CHECK_EQ(claim_one(s->q, "w1", 0, &s->c), 0);
  redisReply *lc = cmd("GET sq:{%s}:lastclaim:w1", s->qn);
  if (lc->type == REDIS_REPLY_STRING) sscanf(lc->str, "%23s", s->claim_id);
  freeReplyObject(lc);
  if (f == F_REAP) usleep(120 * 1000); /* let the lease expire */
}

static void do_damage(const scene *s, const row *r) {
  char k[256];
  key_of(s, r->key, k, sizeof k);
  char field[128] = "";
  if (r->field && strcmp(r->field, "$SHA") == 0) snprintf(field, sizeof field, "%s", s->sha);
  else if (r->field) snprintf(field, sizeof field, "%s", r->field);
  switch (r->how) {
  case WRONG_TYPE: {
    redisReply *t = cmd("TYPE %s", k);
    bool is_string = strcmp(t->str, "string") == 0 || strstr(k, ":seq") || strstr(k, "lastclaim") ||
                     strstr(k, "reaper") || strstr(k, ":lock");
    freeReplyObject(t);
    freeReplyObject(cmd("DEL %s", k));
    freeReplyObject(is_string ? cmd("LPUSH %s damaged", k) : cmd("SET %s damaged", k));
    break;
  }
  case NOT_INT:
    if (r->field) freeReplyObject(cmd("HSET %s %s ten", k, field));
    else freeReplyObject(cmd("SET %s ten", k));
    break;
  case GARBAGE: freeReplyObject(cmd("ZADD %s 0 no-bar-here", k)); break;
  case NO_PAYLOAD: freeReplyObject(cmd("HDEL %s %lld", k, (long long)s->c.token)); break;
  }
}

/* Calls the Function; returns its code. */
static int call(scene *s, fn f) {
  const char *p = PAYLOAD;
  size_t len = strlen(p), n = 0;
  bool ran = false;
  int64_t v = 0;
  switch (f) {
  case F_PUSH: return sq_queue_push(s->q, "b", &p, &len, 1);
  case F_CLAIM: {
    sq_claim c = {0};
    int rc = claim_one(s->q, "w1", 0, &c);
    sq_claim_clear(&c);
    return rc;
  }
  case F_CLAIM_UNDO: return sq_queue_claim_undo(s->q, "w1", s->claim_id, &n);
  case F_HEARTBEAT: return sq_queue_heartbeat(s->q, "w1", &v);
  case F_COMPLETE: {
    bson_t *d = doc_for("t1");
    sq_completion cp = {.claim = &s->c, .batch = "b", .id = "t1", .status = "passed", .bson = bson_get_data(d),
                        .bson_len = d->len};
    int rc = sq_queue_complete(s->q, &cp);
    bson_destroy(d);
    return rc;
  }
  case F_RETRY: return sq_queue_retry(s->q, &s->c, 10, "flaky", NULL);
  case F_RELEASE: return release_one(s->q, &s->c);
  case F_RELEASE_ALL: return sq_queue_release_all(s->q, "w1", &n);
  case F_RECOVER: return sq_queue_recover(s->q, "w1", &n, &n);
  case F_REAP: {
    size_t a = 0, b = 0;
    int rc = sq_queue_reap(s->q, "w1", &ran, &a, &b);
    freeReplyObject(cmd("DEL sq:{%s}:reaper", s->qn)); /* the next call may run at once */
    return rc;
  }
  case F_DEAD_REQUEUE: return sq_queue_dead_requeue(s->q, -1, &n);
  case F_HASH_CAS: {
    const char *fields[] = {"state"}, *values[] = {"running"};
    return sq_queue_hash_cas(s->q, "rollout", -1, "rollout:lock", "me", fields, values, 1, NULL);
  }
  }
  return SQ_EINVAL;
}

static void test_table(void) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const row *r = &rows[i];
    scene s = {0};
    g_row = (int)i;
    setup(&s, r->f);
    char k[256];
    key_of(&s, r->key, k, sizeof k);
    if (r->f == F_HASH_CAS && r->how == WRONG_TYPE && strstr(r->key, "lock"))
      freeReplyObject(cmd("SET sq:{%s}:rollout:lock me", s.qn));
    do_damage(&s, r);
    char *before = snapshot(s.qn);
    int rc = call(&s, r->f);
    char *after = snapshot(s.qn);
    const char *err = sq_queue_errstr(s.q);
    bool ok = rc == SQ_EREDIS && strstr(err, k) && strstr(err, "CORRUPT") && strcmp(before, after) == 0;
    if (!ok) {
      fprintf(stderr, "row %zu: %s with %s%s%s damaged (%d): rc %d (%s), queue %s\n", i, fn_names[r->f], k,
              r->field ? " field " : "", r->field ? r->field : "", (int)r->how, rc, err,
              strcmp(before, after) == 0 ? "unchanged" : "CHANGED");
      sq_check_fail(__FILE__, __LINE__, "damaged key: error naming it and nothing changed");
    }
    free(before);
    free(after);
    sq_claim_clear(&s.c);
    sq_queue_free(s.q);
  }
}

/* ---- beyond the table ---- */

/* The case end to end: five tasks and a non-integer seq; five
 * claims fail and all five tasks still wait; repaired, all five run. */
static void test_seq_loses_nothing(void) {
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new(g_url, "seq5", &q), 0);
  const char *p[5];
  size_t len[5];
  char buf[5][64];
  for (int i = 0; i < 5; i++) {
    snprintf(buf[i], sizeof buf[i], "{\"id\":\"t%d\",\"code\":\"1\"}", i);
    p[i] = buf[i], len[i] = strlen(buf[i]);
  }
  CHECK_EQ(sq_queue_push(q, "b5", p, len, 5), 0);
  freeReplyObject(cmd("SET sq:{seq5}:seq %s", "abc"));
  sq_claim c = {0};
  for (int i = 0; i < 5; i++) CHECK_EQ(claim_one(q, "w", 0, &c), SQ_EREDIS);
  CHECK_CONTAINS(sq_queue_errstr(q), "sq:{seq5}:seq");
  int64_t n = 0;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 5);
  freeReplyObject(cmd("SET sq:{seq5}:seq %s", "7"));
  for (int i = 0; i < 5; i++) {
    CHECK_EQ(claim_one(q, "w", 0, &c), 0);
    sq_claim_clear(&c);
  }
  sq_queue_free(q);
}

/* Dead letter: a non-JSON entry and one without a payload are kept and
 * named; the sound one is requeued; the batch's dead count stays sane. */
static void test_dead_damaged(void) {
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new(g_url, "dd", &q), 0);
  freeReplyObject(cmd("HSET sq:{dd}:batch:b total 3 dead %s", "3"));
  freeReplyObject(cmd("HSET sq:{dd}:dead 1 %s", "{not json"));
  freeReplyObject(cmd("HSET sq:{dd}:dead 2 %s", "{\"id\":2,\"batch\":\"b\",\"reason\":\"x\"}"));
  freeReplyObject(cmd("HSET sq:{dd}:dead 3 %s", "{\"id\":3,\"batch\":\"b\",\"priority\":\"n\",\"payload\":\"{\\\"id\\\":\\\"t3\\\"}\"}"));
  freeReplyObject(cmd("ZADD sq:{dd}:dead:index 1 1 2 2 3 %s", "3"));
  size_t n = 0;
  CHECK_EQ(sq_queue_dead_requeue(q, -1, &n), SQ_EPARSE);
  CHECK_EQ(n, 1);
  CHECK_CONTAINS(sq_queue_errstr(q), "cannot be requeued");
  CHECK_EQ(num(cmd("HLEN %s", "sq:{dd}:dead")), 2);
  CHECK_EQ(num(cmd("LLEN %s", "sq:{dd}:tasks")), 1);
  redisReply *d = cmd("HGET sq:{dd}:batch:b %s", "dead");
  CHECK_STR(d->str, "2");
  freeReplyObject(d);
  /* one at a time: the entry without a payload is refused and kept */
  CHECK_EQ(sq_queue_dead_requeue(q, 2, &n), SQ_EPARSE);
  CHECK_CONTAINS(sq_queue_errstr(q), "no payload");
  CHECK_EQ(num(cmd("HEXISTS sq:{dd}:dead %s", "2")), 1);
  /* a dead count already at 0 is not taken below it */
  freeReplyObject(cmd("HSET sq:{dd}:dead 4 %s", "{\"batch\":\"b\",\"payload\":\"x\"}"));
  freeReplyObject(cmd("HSET sq:{dd}:batch:b dead %s", "0"));
  CHECK_EQ(sq_queue_dead_requeue(q, 4, &n), 0);
  d = cmd("HGET sq:{dd}:batch:b %s", "dead");
  CHECK_STR(d->str, "0");
  freeReplyObject(d);
  sq_queue_free(q);
}

static int complete_one(sq_queue *q, const char *batch, const char *id) {
  sq_claim c = {0};
  int rc = claim_one(q, "w", 0, &c);
  if (rc) return rc;
  bson_t *d = doc_for(id);
  sq_completion cp = {.claim = &c, .batch = batch, .id = id, .status = "passed", .bson = bson_get_data(d),
                      .bson_len = d->len};
  rc = sq_queue_complete(q, &cp);
  bson_destroy(d);
  sq_claim_clear(&c);
  return rc;
}

/* Duplicate ids: every copy settles (the first result kept, the others
 * counted as duplicate), so the batch finishes; a batch pushed into twice
 * with the same task finishes twice. */
static void test_duplicates(void) {
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new(g_url, "dup", &q), 0);
  const char *p[3] = {"{\"id\":\"same\"}", "{\"id\":\"same\"}", "{\"id\":\"same\"}"};
  size_t len[3] = {strlen(p[0]), strlen(p[1]), strlen(p[2])};
  CHECK_EQ(sq_queue_push(q, "bd", p, len, 3), 0);
  CHECK_EQ(complete_one(q, "bd", "same"), 0);
  CHECK_EQ(complete_one(q, "bd", "same"), SQ_EEXISTS);
  CHECK_EQ(complete_one(q, "bd", "same"), SQ_EEXISTS);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "bd", &st), 0);
  CHECK_EQ(st.total, 3);
  CHECK_EQ(st.done, 1);
  CHECK_EQ(st.duplicate, 2);
  CHECK(st.finished_at_ms > 0);
  CHECK_EQ(sq_queue_batch_wait(q, "bd", 100), 0);
  /* the same task into the same batch again */
  CHECK_EQ(sq_queue_push(q, "bd", p, len, 1), 0);
  CHECK_EQ(sq_queue_batch_stats(q, "bd", &st), 0);
  CHECK_EQ(st.finished_at_ms, 0);
  CHECK_EQ(complete_one(q, "bd", "same"), SQ_EEXISTS);
  CHECK_EQ(sq_queue_batch_stats(q, "bd", &st), 0);
  CHECK_EQ(st.total, 4);
  CHECK(st.finished_at_ms > 0);
  CHECK_EQ(sq_queue_batch_wait(q, "bd", 100), 0);
  sq_queue_free(q);
}

/* A task retried once has counters to forget when its result is stored,
 * 'first' among them: damaged, the completion names it and changes
 * nothing; repaired, it stores the result and counts it as the integer
 * strings every reader parses. */
static void test_complete_forgets(void) {
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new(g_url, "fg", &q), 0);
  const char *p = PAYLOAD;
  size_t len = strlen(p);
  CHECK_EQ(sq_queue_push(q, "b", &p, &len, 1), 0);
  sq_claim c = {0};
  CHECK_EQ(claim_one(q, "w1", 0, &c), 0);
  CHECK_EQ(sq_queue_retry(q, &c, 0, "flaky", NULL), 0);
  sq_claim_clear(&c);
  usleep(20 * 1000);
  CHECK_EQ(claim_one(q, "w1", 0, &c), 0);
  CHECK(c.token > 0);
  freeReplyObject(cmd("DEL sq:{fg}:first"));
  freeReplyObject(cmd("SET sq:{fg}:first %s", "damaged"));
  bson_t *d = doc_for("t1");
  sq_completion cp = {.claim = &c, .batch = "b", .id = "t1", .status = "passed", .bson = bson_get_data(d),
                      .bson_len = d->len};
  char *before = snapshot("fg");
  CHECK_EQ(sq_queue_complete(q, &cp), SQ_EREDIS);
  char *after = snapshot("fg");
  CHECK_CONTAINS(sq_queue_errstr(q), "CORRUPT sq:{fg}:first");
  CHECK_STR(before, after);
  free(before);
  free(after);
  freeReplyObject(cmd("DEL sq:{fg}:first"));
  CHECK_EQ(sq_queue_complete(q, &cp), 0);
  CHECK_EQ(num(cmd("HLEN %s", "sq:{fg}:attempts")), 0);
  redisReply *v = cmd("HMGET sq:{fg}:batch:b done status:passed %s", "finished_total");
  CHECK_EQ((long long)v->elements, 3);
  CHECK_STR(v->element[0]->str, "1");
  CHECK_STR(v->element[1]->str, "1");
  CHECK_STR(v->element[2]->str, "1");
  freeReplyObject(v);
  bson_destroy(d);
  sq_claim_clear(&c);
  sq_queue_free(q);
}

/* A raw LPUSH then HINCRBY total: the result came first. The
 * counters read back say finished, and a total raised after a finish does
 * not leave the old stamp standing. */
static void test_total_after_result(void) {
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new(g_url, "late", &q), 0);
  freeReplyObject(cmd("LPUSH sq:{late}:tasks %s", "{\"id\":\"t1\",\"batch\":\"bl\"}"));
  CHECK_EQ(complete_one(q, "bl", "t1"), 0);
  freeReplyObject(cmd("HINCRBY sq:{late}:batch:bl total %s", "1"));
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "bl", &st), 0);
  CHECK_EQ(st.total, 1);
  CHECK_EQ(st.done, 1);
  freeReplyObject(cmd("HINCRBY sq:{late}:batch:bl total %s", "1")); /* one more, not yet run */
  freeReplyObject(cmd("HSET sq:{late}:batch:bl finished_at_ms %s", "1"));
  CHECK_EQ(sq_queue_batch_stats(q, "bl", &st), 0);
  CHECK_EQ(st.finished_at_ms, 0);
  sq_queue_free(q);
}

/* The 'finished' field of sq:{ff}:batch:<batch>, "(nil)" when absent. */
static void check_flag(const char *batch, const char *want) {
  redisReply *v = cmd("HGET sq:{ff}:batch:%s finished", batch);
  CHECK_STR(v->type == REDIS_REPLY_STRING ? v->str : "(nil)", want);
  freeReplyObject(v);
}

/* The batch's finished_at_ms as sq_queue_batch_stats reads it (-1: failed). */
static long long stamp_of(sq_queue *q, const char *batch) {
  sq_batch_stats st;
  return sq_queue_batch_stats(q, batch, &st) == 0 ? (long long)st.finished_at_ms : -1;
}

/* The server's 'finished' flag: 0 after a push, 1 when the last result
 * lands, and what every reader reports. A batch hash written before the
 * flag existed (none): its finish stamp for its current total decides,
 * and the next result writes the flag, with no second event. */
static void test_finished_flag(void) {
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new(g_url, "ff", &q), 0);
  const char *p[2] = {"{\"id\":\"a\"}", "{\"id\":\"b\"}"};
  size_t len[2] = {strlen(p[0]), strlen(p[1])};
  CHECK_EQ(sq_queue_push(q, "b", p, len, 2), 0);
  check_flag("b", "0");
  CHECK_EQ(complete_one(q, "b", "a"), 0);
  CHECK_EQ(stamp_of(q, "b"), 0);
  CHECK_EQ(complete_one(q, "b", "b"), 0);
  check_flag("b", "1");
  CHECK(stamp_of(q, "b") > 0);
  /* the flag decides, not the counts: the reader does not decide again */
  freeReplyObject(cmd("HSET sq:{ff}:batch:b finished %s", "0"));
  CHECK_EQ(stamp_of(q, "b"), 0);

  /* batches from before the flag: finished (stamped at its total) ... */
  freeReplyObject(cmd("HSET sq:{ff}:batch:old total 2 done 2 finished_at_ms 1234 finished_total %s", "2"));
  CHECK_EQ(stamp_of(q, "old"), 1234);
  /* ... not finished: no stamp, or stamped at another total ... */
  freeReplyObject(cmd("HSET sq:{ff}:batch:nostamp total 2 done %s", "2"));
  CHECK_EQ(stamp_of(q, "nostamp"), 0);
  freeReplyObject(cmd("HSET sq:{ff}:batch:grown total 3 done 3 finished_at_ms 1234 finished_total %s", "2"));
  CHECK_EQ(stamp_of(q, "grown"), 0);
  /* ... and a late copy of a result into the finished one: the flag is
   * written, and no second event pushed */
  freeReplyObject(cmd("LPUSH sq:{ff}:tasks %s", "{\"id\":\"a\",\"batch\":\"old\"}"));
  freeReplyObject(cmd("HSET sq:{ff}:results:old a %s", "x"));
  CHECK_EQ(complete_one(q, "old", "a"), SQ_EEXISTS);
  check_flag("old", "1");
  CHECK_EQ(num(cmd("LLEN %s", "sq:{ff}:done:old")), 0);
  CHECK_EQ(stamp_of(q, "old"), 1234);
  sq_queue_free(q);
}

/* Counters read back name the damaged field instead of using it. */
static void test_counters_read_back(void) {
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new(g_url, "rb", &q), 0);
  sq_batch_stats st;
  freeReplyObject(cmd("HSET sq:{rb}:batch:b total 3 done %s", "two"));
  CHECK_EQ(sq_queue_batch_stats(q, "b", &st), SQ_EPARSE);
  CHECK_CONTAINS(sq_queue_errstr(q), "sq:{rb}:batch:b: field 'done'");
  freeReplyObject(cmd("HSET sq:{rb}:batch:b done 1 cost_usd %s", "nan"));
  CHECK_EQ(sq_queue_batch_stats(q, "b", &st), SQ_EPARSE);
  CHECK_CONTAINS(sq_queue_errstr(q), "field 'cost_usd'");
  freeReplyObject(cmd("HSET sq:{rb}:batch:b cost_usd 0.5 dead %s", "-4"));
  CHECK_EQ(sq_queue_batch_stats(q, "b", &st), SQ_EPARSE);
  CHECK_CONTAINS(sq_queue_errstr(q), "negative");
  freeReplyObject(cmd("HSET sq:{rb}:batch:b dead %s", "0"));
  CHECK_EQ(sq_queue_batch_stats(q, "b", &st), 0);
  sq_queue_counters qc;
  freeReplyObject(cmd("HSET sq:{rb}:stats fenced %s", "lots"));
  CHECK_EQ(sq_queue_counters_get(q, &qc), SQ_EPARSE);
  CHECK_CONTAINS(sq_queue_errstr(q), "field 'fenced'");
  sq_queue_free(q);
}

int main(void) {
  sq_log_init("test_queue_corrupt", SQ_LOG_ERROR + 1);
  g_url = getenv("SANDQ_REDIS_URL");
  const char *port = getenv("SQ_REDIS_PORT");
  if (!g_url || !port) {
    fprintf(stderr, "SKIP: SANDQ_REDIS_URL/SQ_REDIS_PORT not set (run through tests/lib/with_redis.sh)\n");
    return 77;
  }
  g_raw = redisConnect("127.0.0.1", atoi(port));
  if (!g_raw || g_raw->err) {
    fprintf(stderr, "raw connect failed\n");
    return 1;
  }
  test_table();
  test_seq_loses_nothing();
  test_dead_damaged();
  test_duplicates();
  test_complete_forgets();
  test_total_after_result();
  test_finished_flag();
  test_counters_read_back();
  redisFree(g_raw);
  return sq_check_done("test_queue_corrupt");
}
