/* queue_dead.c: the dead letter: tasks that stalled max_stalls times, kept
 * with their history in sq:{Q}:dead (id -> JSON record) and
 * sq:{Q}:dead:index (id by time); listed, shown and requeued. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "queue_internal.h"

#define LIST_PAGE 100

/* HGET of entry id; *r is the caller's to free. */
static int get_record(sq_queue *q, const char *id, redisReply **r) {
  char key[SQ__KEY_MAX];
  int rc;
  if ((rc = sq__queue_key(q, key, "dead", NULL)) || (rc = sq__queue_ensure(q))) return rc;
  *r = redisCommand(q->ctx, "HGET %s %s", key, id);
  if ((rc = sq__queue_check(q, *r, REDIS_REPLY_STRING, 1, "HGET dead"))) {
    freeReplyObject(*r);
    *r = NULL;
  }
  return rc;
}

int sq_queue_dead_list(sq_queue *q, sq_queue_dead_fn fn, void *ud) {
  char idx[SQ__KEY_MAX];
  int rc;
  if ((rc = sq__queue_key(q, idx, "dead:index", NULL)) || (rc = sq__queue_ensure(q))) return rc;
  for (long long start = 0;; start += LIST_PAGE) {
    redisReply *ids = redisCommand(q->ctx, "ZRANGE %s %lld %lld", idx, start, start + LIST_PAGE - 1);
    if ((rc = sq__queue_check(q, ids, REDIS_REPLY_ARRAY, 0, "ZRANGE dead:index"))) {
      freeReplyObject(ids);
      return rc;
    }
    size_t n = ids->elements;
    for (size_t i = 0; i < n && !rc; i++) {
      redisReply *r = NULL;
      if (ids->element[i]->type != REDIS_REPLY_STRING) continue;
      if ((rc = get_record(q, ids->element[i]->str, &r))) break;
      if (r->type == REDIS_REPLY_STRING) rc = fn(strtoll(ids->element[i]->str, NULL, 10), r->str, r->len, ud);
      freeReplyObject(r);
    }
    freeReplyObject(ids);
    if (rc || n < LIST_PAGE) return rc;
  }
}

int sq_queue_dead_show(sq_queue *q, int64_t id, char **out) {
  char ids[24];
  redisReply *r = NULL;
  *out = NULL;
  snprintf(ids, sizeof ids, "%lld", (long long)id);
  int rc = get_record(q, ids, &r);
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
  int rc;
  *n = 0;
  if (id >= 0)
    snprintf(ids, sizeof ids, "%lld", (long long)id);
  else
    ids[0] = 0;
  const char *argv[] = {ids};
  redisReply *r = sq__queue_fcall(q, "sq1_dead_requeue", 1, argv, NULL, &rc);
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_dead_requeue");
  if (rc) goto out;
  /* {requeued, id, why, id, why, ...} */
  if (r->elements < 1 || r->elements % 2 != 1 || r->element[0]->type != REDIS_REPLY_INTEGER) {
    sq__queue_err(q, "sq1_dead_requeue: malformed reply");
    rc = SQ_EREDIS;
    goto out;
  }
  *n = (size_t)r->element[0]->integer;
  size_t kept = (r->elements - 1) / 2;
  for (size_t i = 1; i + 1 < r->elements; i += 2) {
    const redisReply *k = r->element[i], *why = r->element[i + 1];
    const char *ks = k->type == REDIS_REPLY_STRING ? k->str : "?";
    const char *ws = why->type == REDIS_REPLY_STRING ? why->str : "?";
    if (fn && (rc = fn(ks, ws, ud))) goto out;
    if (i == 1)
      snprintf(q->errstr, sizeof q->errstr, "dead-letter entry %.40s cannot be requeued (%s); kept as it is "
               "(sandq-producer dead show %.40s)", ks, ws, ks);
  }
  if (kept) rc = SQ_EPARSE;
  else if (id >= 0 && *n == 0) rc = SQ_ENOTFOUND;
out:
  freeReplyObject(r);
  return rc;
}

int sq_queue_dead_requeue(sq_queue *q, int64_t id, size_t *n) { return sq_queue_dead_requeue_each(q, id, n, NULL, NULL); }
