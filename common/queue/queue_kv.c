/* queue_kv.c: generic hashes under the queue's prefix for the metrics,
 * health and rollout modules: pipelined increments with TTLs, reads and
 * sums, a compare-and-set through the functions library, a lock, and the
 * fleet's worker list. The meaning of the fields lives in those modules.
 * All of it lives under the home tag {Q}, so one node serves a pipeline. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "queue.h"
#include "queue_internal.h"

/* Reads n pipelined replies, keeping the first error; frees them all. */
static int drain(sq_queue *q, size_t n, const char *what) {
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    redisReply *r = NULL;
    if (redisGetReply(q->ctx, (void **)&r) != REDIS_OK) r = NULL;
    /* any reply type but an error will do */
    int one = !r || r->type == REDIS_REPLY_ERROR ? sq__queue_check(q, r, REDIS_REPLY_STRING, 0, what) : 0;
    freeReplyObject(r);
    if (one && !rc) rc = one;
    if (one == SQ_EREDIS_CONN) return rc; /* nothing more will come */
  }
  return rc;
}

int sq_queue_hash_incr(sq_queue *q, const char *const *names, const int64_t *ttl_s, size_t n_names,
                       const sq_queue_incr *items, size_t n) {
  int rc;
  if (n == 0) return 0;
  if ((rc = sq__queue_ensure(q))) return rc;
  size_t sent = 0; /* pipelined on the home node: every key shares the home tag */
  for (size_t k = 0; k < n_names; k++) {
    char key[SQ__KEY_MAX];
    if ((rc = sq__queue_key(q, key, names[k], NULL))) return rc;
    for (size_t i = 0; i < n; i++, sent++) {
      char val[64];
      if (items[i].is_float) {
        snprintf(val, sizeof val, "%.17g", items[i].delta);
        redisAppendCommand(q->ctx, "HINCRBYFLOAT %s %s %s", key, items[i].field, val);
      } else {
        redisAppendCommand(q->ctx, "HINCRBY %s %s %lld", key, items[i].field, (long long)(items[i].delta < 0 ? items[i].delta - 0.5 : items[i].delta + 0.5));
      }
    }
    if (ttl_s[k] > 0) {
      redisAppendCommand(q->ctx, "EXPIRE %s %lld", key, (long long)ttl_s[k]);
      sent++;
    }
  }
  return drain(q, sent, "HINCRBY (metrics)");
}

int sq_queue_hash_get_all(sq_queue *q, const char *name, sq_queue_field_fn fn, void *ud) {
  char key[SQ__KEY_MAX];
  int rc;
  if ((rc = sq__queue_key(q, key, name, NULL))) return rc;
  redisReply *r = sq__queue_cmdf(q, &rc, key, "HGETALL %s", key);
  if (rc || (rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "HGETALL"))) {
    freeReplyObject(r);
    return rc;
  }
  for (size_t i = 0; i + 1 < r->elements && rc == 0; i += 2)
    if (r->element[i]->type == REDIS_REPLY_STRING && r->element[i + 1]->type == REDIS_REPLY_STRING)
      rc = fn(r->element[i]->str, r->element[i + 1]->str, ud);
  freeReplyObject(r);
  return rc;
}

int sq_queue_hash_sum(sq_queue *q, const char *const *names, size_t n_names, const char *const *fields, size_t n,
                      double *sums) {
  int rc;
  for (size_t i = 0; i < n; i++) sums[i] = 0;
  if (n == 0 || n_names == 0) return 0;
  if ((rc = sq__queue_ensure(q))) return rc;
  const char **argv = calloc(n + 2, sizeof *argv);
  if (!argv) return SQ_ENOMEM;
  char key[SQ__KEY_MAX];
  for (size_t k = 0; k < n_names && rc == 0; k++) rc = sq__queue_key(q, key, names[k], NULL);
  argv[0] = "HMGET";
  for (size_t i = 0; i < n; i++) argv[i + 2] = fields[i];
  for (size_t k = 0; k < n_names && rc == 0; k++) {
    sq__queue_key(q, key, names[k], NULL);
    argv[1] = key;
    redisAppendCommandArgv(q->ctx, (int)(n + 2), argv, NULL);
  }
  free(argv);
  if (rc) return rc; /* a name too long: nothing was sent */
  for (size_t k = 0; k < n_names; k++) {
    redisReply *r = NULL;
    if (redisGetReply(q->ctx, (void **)&r) != REDIS_OK) r = NULL;
    int one = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "HMGET (metrics)");
    if (!one)
      for (size_t i = 0; i < n && i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING) sums[i] += strtod(r->element[i]->str, NULL);
    freeReplyObject(r);
    if (one && !rc) rc = one;
    if (one == SQ_EREDIS_CONN) break;
  }
  return rc;
}

/* One command on sq:{Q}:<name> expecting an integer reply. */
static int key_cmd(sq_queue *q, const char *name, const char *what, int argc, const char **argv) {
  char key[SQ__KEY_MAX];
  int rc;
  if ((rc = sq__queue_key(q, key, name, NULL))) return rc;
  const char *full[8];
  full[0] = what;
  full[1] = key;
  for (int i = 0; i < argc && i < 6; i++) full[i + 2] = argv[i];
  redisReply *r = sq__queue_cmdv(q, &rc, key, argc + 2, full, NULL);
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, what);
  freeReplyObject(r);
  return rc;
}

int sq_queue_hash_set(sq_queue *q, const char *name, const char *field, const char *value) {
  const char *argv[] = {field, value};
  return key_cmd(q, name, "HSET", 2, argv);
}

int sq_queue_hash_del(sq_queue *q, const char *name, const char *field) {
  const char *argv[] = {field};
  return key_cmd(q, name, "HDEL", 1, argv);
}

int sq_queue_hash_clear(sq_queue *q, const char *name) { return key_cmd(q, name, "DEL", 0, NULL); }

int sq_queue_hash_cas(sq_queue *q, const char *name, int64_t expected_version, const char *lock, const char *owner,
                      const char *const *fields, const char *const *values, size_t n, int64_t *version) {
  const char **argv = calloc(4 + 2 * n, sizeof *argv);
  if (!argv) return SQ_ENOMEM;
  char want[32];
  if (expected_version < 0) snprintf(want, sizeof want, "*");
  else snprintf(want, sizeof want, "%lld", (long long)expected_version);
  argv[0] = name;
  argv[1] = want;
  argv[2] = lock ? lock : "";
  argv[3] = owner ? owner : "";
  for (size_t i = 0; i < n; i++) {
    argv[4 + 2 * i] = fields[i];
    argv[5 + 2 * i] = values[i];
  }
  int rc = 0;
  redisReply *r = sq__queue_fcall(q, "sq1_hash_cas", (int)(4 + 2 * n), argv, NULL, &rc);
  free(argv);
  if (!r) return rc;
  if (!(rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, "sq1_hash_cas"))) {
    if (r->integer < 0) rc = SQ_ECONFLICT;
    else if (version) *version = r->integer;
  }
  freeReplyObject(r);
  return rc;
}

int sq_queue_lock(sq_queue *q, const char *name, const char *owner, int64_t ttl_ms, bool *got) {
  char key[SQ__KEY_MAX];
  int rc;
  *got = false;
  if ((rc = sq__queue_key(q, key, name, NULL))) return rc;
  redisReply *r = sq__queue_cmdf(q, &rc, key, "SET %s %s NX PX %lld", key, owner, (long long)ttl_ms);
  if (!rc && !(rc = sq__queue_check(q, r, REDIS_REPLY_STATUS, 1, "SET NX (lock)"))) *got = r->type == REDIS_REPLY_STATUS;
  freeReplyObject(r);
  return rc;
}

int sq_queue_workers(sq_queue *q, sq_queue_worker_fn fn, void *ud, int64_t *server_now_ms) {
  char key[SQ__KEY_MAX];
  int rc;
  /* every claim and heartbeat touches each shard's list: shard 0's is whole */
  if ((rc = sq__queue_shard_key(q, 0, key, "workers", NULL))) return rc;
  redisReply *t = sq__queue_cmdf(q, &rc, key, "TIME");
  if (!rc && (rc = sq__queue_check(q, t, REDIS_REPLY_ARRAY, 0, "TIME")) == 0 && t->elements == 2)
    *server_now_ms = strtoll(t->element[0]->str, NULL, 10) * 1000 + strtoll(t->element[1]->str, NULL, 10) / 1000;
  freeReplyObject(t);
  if (rc) return rc;
  redisReply *r = sq__queue_cmdf(q, &rc, key, "ZRANGE %s 0 -1 WITHSCORES", key);
  if (rc || (rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "ZRANGE workers"))) {
    freeReplyObject(r);
    return rc;
  }
  for (size_t i = 0; i + 1 < r->elements && rc == 0; i += 2) {
    const redisReply *s = r->element[i + 1];
    /* a score is checked before its conversion: -inf, nan or 1e300 in a
     * damaged set would be undefined behaviour; such a worker reads as
     * never seen (0), as readers of a time expect 0..2^53 */
    double d = s->type == REDIS_REPLY_STRING ? strtod(s->str, NULL) : 0;
    int64_t at = isfinite(d) && d >= 0 && d <= 9007199254740992.0 ? (int64_t)d : 0;
    rc = fn(r->element[i]->str, at, ud);
  }
  freeReplyObject(r);
  return rc;
}
