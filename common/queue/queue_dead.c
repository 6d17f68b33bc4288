/* queue_dead.c: the dead letter: tasks that stalled max_stalls times, kept
 * with their history in sq:{Q}:dead (id -> JSON record) and
 * sq:{Q}:dead:index (id by time); listed, shown and requeued. A sharded
 * queue has a dead letter per shard; the id callers see is the shard's id
 * times the number of shards plus the shard (the same id with one shard). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "queue_internal.h"

#define LIST_PAGE 100

/* HGET of shard s's entry id; *r is the caller's to free. */
static int get_record(sq_queue *q, int s, const char *id, redisReply **r) {
  char key[SQ__KEY_MAX];
  int rc;
  *r = NULL;
  if ((rc = sq__queue_shard_key(q, s, key, "dead", NULL))) return rc;
  *r = sq__queue_cmdf(q, &rc, key, "HGET %s %s", key, id);
  if (rc || (rc = sq__queue_check(q, *r, REDIS_REPLY_STRING, 1, "HGET dead"))) {
    freeReplyObject(*r);
    *r = NULL;
  }
  return rc;
}

/* Lists shard s's dead letter. */
static int list_shard(sq_queue *q, int s, sq_queue_dead_fn fn, void *ud) {
  char idx[SQ__KEY_MAX];
  int rc, shards = sq__queue_nshards(q);
  if ((rc = sq__queue_shard_key(q, s, idx, "dead:index", NULL))) return rc;
  for (long long start = 0;; start += LIST_PAGE) {
    redisReply *ids = sq__queue_cmdf(q, &rc, idx, "ZRANGE %s %lld %lld", idx, start, start + LIST_PAGE - 1);
    if (rc || (rc = sq__queue_check(q, ids, REDIS_REPLY_ARRAY, 0, "ZRANGE dead:index"))) {
      freeReplyObject(ids);
      return rc;
    }
    size_t n = ids->elements;
    for (size_t i = 0; i < n && !rc; i++) {
      redisReply *r = NULL;
      if (ids->element[i]->type != REDIS_REPLY_STRING) continue;
      if ((rc = get_record(q, s, ids->element[i]->str, &r))) break;
      if (r->type == REDIS_REPLY_STRING)
        rc = fn(strtoll(ids->element[i]->str, NULL, 10) * shards + s, r->str, r->len, ud);
      freeReplyObject(r);
    }
    freeReplyObject(ids);
    if (rc || n < LIST_PAGE) return rc;
  }
}

int sq_queue_dead_list(sq_queue *q, sq_queue_dead_fn fn, void *ud) {
  int rc = 0;
  for (int s = 0; s < sq__queue_nshards(q) && !rc; s++) rc = list_shard(q, s, fn, ud);
  return rc;
}

int sq_queue_dead_show(sq_queue *q, int64_t id, char **out) {
  char ids[24];
  redisReply *r = NULL;
  *out = NULL;
  int shards = sq__queue_nshards(q);
  if (id < 0) return SQ_ENOTFOUND;
  snprintf(ids, sizeof ids, "%lld", (long long)(id / shards));
  int rc = get_record(q, (int)(id % shards), ids, &r);
  if (rc) return rc;
  if (r->type != REDIS_REPLY_STRING) {
    rc = SQ_ENOTFOUND;
  } else if (!(*out = malloc(r->len + 1))) {
    rc = SQ_ENOMEM;
  } else {
    memcpy(*out, r->str, r->len);
    (*out)[r->len] = 0;
  }
  freeReplyObject(r);
  return rc;
}

int sq_queue_dead_requeue_each(sq_queue *q, int64_t id, size_t *n, sq_queue_dead_skip_fn fn, void *ud) {
  char ids[24];
  int rc = 0, shards = sq__queue_nshards(q);
  *n = 0;
  if (id >= 0)
    snprintf(ids, sizeof ids, "%lld", (long long)(id / shards));
  else
    ids[0] = 0;
  const char *argv[] = {ids};
  size_t kept = 0;
  for (int s = 0; s < shards && !rc; s++) {
    if (id >= 0 && s != id % shards) continue;
    redisReply *r = sq__queue_fcall_at(q, s, "sq1_dead_requeue", 1, argv, NULL, true, &rc);
    if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_dead_requeue");
    /* {requeued, id, why, id, why, ...}; ids are the shard's */
    if (!rc && (r->elements < 1 || r->elements % 2 != 1 || r->element[0]->type != REDIS_REPLY_INTEGER)) {
      sq__queue_err(q, "sq1_dead_requeue: malformed reply");
      rc = SQ_EREDIS;
    }
    if (!rc) *n += (size_t)r->element[0]->integer;
    for (size_t i = 1; !rc && i + 1 < r->elements; i += 2) {
      const redisReply *k = r->element[i], *why = r->element[i + 1];
      char ks[48] = "?";
      if (k->type == REDIS_REPLY_STRING && shards == 1)
        snprintf(ks, sizeof ks, "%.40s", k->str);
      else if (k->type == REDIS_REPLY_STRING) /* the id callers see */
        snprintf(ks, sizeof ks, "%lld", strtoll(k->str, NULL, 10) * shards + s);
      const char *ws = why->type == REDIS_REPLY_STRING ? why->str : "?";
      if (fn && (rc = fn(ks, ws, ud))) break;
      if (!kept++)
        snprintf(q->errstr, sizeof q->errstr, "dead-letter entry %.40s cannot be requeued (%s); kept as it is "
                 "(sandq-producer dead show %.40s)", ks, ws, ks);
    }
    freeReplyObject(r);
  }
  if (rc) return rc;
  if (kept) {
    /* the first kept entry's message, not a later shard's error */
    rc = SQ_EPARSE;
  } else if (id >= 0 && *n == 0) {
    rc = SQ_ENOTFOUND;
  }
  return rc;
}

int sq_queue_dead_requeue(sq_queue *q, int64_t id, size_t *n) { return sq_queue_dead_requeue_each(q, id, n, NULL, NULL); }
