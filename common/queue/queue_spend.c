/* queue_spend.c: the LLM side's state in Redis: a batch's spend and budget
 * (fields of sq:{Q}:batch:<B>) and cached verdicts and the shared expected
 * values of worker/expected.h (sq:{Q}:cache:<ns>:<key>).
 * Kept apart from the queue's core (claims, leases, results). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "queue.h"
#include "queue_internal.h"

/* Runs one command on key's server expecting type want (or NIL when
 * nil_ok); *out keeps the reply for the caller to free. */
static int run_cmd(sq_queue *q, const char *key, redisReply **out, int want, int nil_ok, const char *what,
                   const char *fmt, ...) {
  int rc;
  *out = NULL;
  char *cmd = NULL;
  va_list ap;
  va_start(ap, fmt);
  int len = redisvFormatCommand(&cmd, fmt, ap);
  va_end(ap);
  if (len < 0) return SQ_ENOMEM;
  redisReply *r = sq__queue_send(q, key, cmd, (size_t)len, false, &rc);
  redisFreeCommand(cmd);
  if (rc || (rc = sq__queue_check(q, r, want, nil_ok, what))) {
    freeReplyObject(r);
    return rc;
  }
  *out = r;
  return 0;
}

/* HINCRBYFLOAT or HSET of one dollar field of the batch hash. */
static int batch_money(sq_queue *q, const char *batch, const char *cmd, const char *field, double usd, int want) {
  char bkey[SQ__KEY_MAX], val[64];
  int rc;
  redisReply *r;
  if ((rc = sq__queue_key(q, bkey, "batch", batch))) return rc;
  snprintf(val, sizeof val, "%.12f", usd);
  rc = run_cmd(q, bkey, &r, want, 0, cmd, "%s %s %s %s", cmd, bkey, field, val);
  freeReplyObject(r);
  return rc;
}

int sq_queue_batch_add_cost(sq_queue *q, const char *batch, double usd) {
  return batch_money(q, batch, "HINCRBYFLOAT", "cost_usd", usd, REDIS_REPLY_STRING);
}

int sq_queue_batch_set_budget(sq_queue *q, const char *batch, double usd) {
  return batch_money(q, batch, "HSET", "budget_usd", usd, REDIS_REPLY_INTEGER);
}

int sq_queue_batch_spend(sq_queue *q, const char *batch, double *cost_usd, double *budget_usd) {
  char bkey[SQ__KEY_MAX];
  int rc;
  redisReply *r;
  *cost_usd = 0;
  *budget_usd = -1;
  if ((rc = sq__queue_key(q, bkey, "batch", batch))) return rc;
  if ((rc = run_cmd(q, bkey, &r, REDIS_REPLY_ARRAY, 0, "HMGET", "HMGET %s cost_usd budget_usd", bkey))) return rc;
  if (r->elements == 2) {
    if (r->element[0]->type == REDIS_REPLY_STRING) *cost_usd = strtod(r->element[0]->str, NULL);
    if (r->element[1]->type == REDIS_REPLY_STRING) *budget_usd = strtod(r->element[1]->str, NULL);
  }
  freeReplyObject(r);
  return 0;
}

/* sq:{Q}:cache:<ns>:<key> into ckey. */
static int cache_key(sq_queue *q, const char *ns, const char *key, char ckey[SQ__KEY_MAX]) {
  char name[SQ__KEY_MAX / 2];
  snprintf(name, sizeof name, "%s:%s", ns, key);
  return sq__queue_key(q, ckey, "cache", name);
}

/* A string reply's bytes into *out (malloc'd, NUL-terminated) and *len. */
static int reply_copy(const redisReply *r, char **out, size_t *len) {
  if (!(*out = malloc(r->len + 1))) return SQ_ENOMEM;
  memcpy(*out, r->str, r->len);
  (*out)[r->len] = '\0';
  if (len) *len = r->len;
  return 0;
}

int sq_queue_cache_get(sq_queue *q, const char *ns, const char *key, char **out, size_t *len) {
  char ckey[SQ__KEY_MAX];
  int rc;
  redisReply *r;
  *out = NULL;
  if ((rc = cache_key(q, ns, key, ckey))) return rc;
  if ((rc = run_cmd(q, ckey, &r, REDIS_REPLY_STRING, 1, "GET", "GET %s", ckey))) return rc;
  rc = r->type == REDIS_REPLY_NIL ? SQ_ENOTFOUND : reply_copy(r, out, len);
  freeReplyObject(r);
  return rc;
}

int sq_queue_cache_set(sq_queue *q, const char *ns, const char *key, const char *val, size_t len, int64_t ttl_s) {
  char ckey[SQ__KEY_MAX];
  int rc;
  redisReply *r;
  if ((rc = cache_key(q, ns, key, ckey))) return rc;
  if (ttl_s > 0)
    rc = run_cmd(q, ckey, &r, REDIS_REPLY_STATUS, 0, "SET", "SET %s %b EX %lld", ckey, val, len, (long long)ttl_s);
  else
    rc = run_cmd(q, ckey, &r, REDIS_REPLY_STATUS, 0, "SET", "SET %s %b", ckey, val, len);
  freeReplyObject(r);
  return rc;
}

int sq_queue_cache_add(sq_queue *q, const char *ns, const char *key, const char *val, size_t len, int64_t ttl_s,
                       char **stored, size_t *stored_len) {
  char ckey[SQ__KEY_MAX];
  int rc;
  redisReply *r;
  *stored = NULL;
  if ((rc = cache_key(q, ns, key, ckey))) return rc;
  /* NX with GET (Redis 7): nil when this call wrote the key, else what it holds (unchanged) */
  if (ttl_s > 0)
    rc = run_cmd(q, ckey, &r, REDIS_REPLY_STRING, 1, "SET NX GET", "SET %s %b NX GET EX %lld", ckey, val, len,
                 (long long)ttl_s);
  else
    rc = run_cmd(q, ckey, &r, REDIS_REPLY_STRING, 1, "SET NX GET", "SET %s %b NX GET", ckey, val, len);
  if (rc) return rc;
  if (r->type == REDIS_REPLY_STRING) rc = reply_copy(r, stored, stored_len);
  freeReplyObject(r);
  return rc;
}
