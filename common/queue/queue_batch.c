/* queue_batch.c: the producer side of the queue: push (priorities,
 * idempotency keys, the length cap), batch counters, the completion event,
 * streaming a batch's results, and queue-wide counters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "queue_internal.h"
#include "util.h"

#define PUSH_CHUNK 500 /* tasks per atomic push step */
#define SCAN_COUNT "256"

static const char *prio_letter(sq_priority p) {
  return p == SQ_PRIORITY_HIGH ? "h" : p == SQ_PRIORITY_LOW ? "l" : "n";
}

/* One sq1_push of items[0..n). */
static int push_chunk(sq_queue *q, const char *batch, const sq_push_item *items, size_t n, size_t *pushed,
                      size_t *dups) {
  char maxl[24], ret[24];
  int rc = SQ_ENOMEM;
  size_t argc = 3 + 3 * n;
  const char **argv = malloc(argc * sizeof *argv);
  size_t *lens = malloc(argc * sizeof *lens);
  redisReply *r = NULL;
  if (!argv || !lens) goto out;
  snprintf(maxl, sizeof maxl, "%lld", (long long)q->opts.max_queue_len);
  snprintf(ret, sizeof ret, "%lld", (long long)q->opts.retention_s);
  argv[0] = batch, argv[1] = maxl, argv[2] = ret;
  for (size_t i = 0; i < 3; i++) lens[i] = strlen(argv[i]);
  for (size_t i = 0; i < n; i++) {
    const char *idem = items[i].idempotency_key ? items[i].idempotency_key : "";
    argv[3 + 3 * i] = prio_letter(items[i].priority), lens[3 + 3 * i] = 1;
    argv[4 + 3 * i] = idem, lens[4 + 3 * i] = strlen(idem);
    argv[5 + 3 * i] = items[i].payload, lens[5 + 3 * i] = items[i].len;
  }
  r = sq__queue_fcall(q, "sq1_push", (int)argc, argv, lens, &rc);
  if (rc) goto out;
  if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "QUEUEFULL", 9) == 0) {
    long long len = 0, max = 0;
    sscanf(r->str, "QUEUEFULL %lld %lld", &len, &max);
    snprintf(q->errstr, sizeof q->errstr, "queue %s is full: %lld task(s) waiting, max_queue_len %lld", q->queue,
             len, max);
    rc = SQ_EFULL;
    goto out;
  }
  if ((rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_push"))) goto out;
  if (r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER || r->element[1]->type != REDIS_REPLY_INTEGER) {
    sq__queue_err(q, "sq1_push: malformed reply");
    rc = SQ_EREDIS;
    goto out;
  }
  *pushed += (size_t)r->element[0]->integer;
  *dups += (size_t)r->element[1]->integer;
out:
  freeReplyObject(r);
  free(argv);
  free(lens);
  return rc;
}

int sq_queue_push_items(sq_queue *q, const char *batch, const sq_push_item *items, size_t n, size_t *pushed,
                        size_t *duplicates) {
  size_t p = 0, d = 0;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i += PUSH_CHUNK)
    rc = push_chunk(q, batch, items + i, n - i < PUSH_CHUNK ? n - i : PUSH_CHUNK, &p, &d);
  if (pushed) *pushed = p;
  if (duplicates) *duplicates = d;
  return rc;
}

int sq_queue_push(sq_queue *q, const char *batch, const char *const *payloads, const size_t *lens,
                  size_t n) {
  sq_push_item *items = calloc(n ? n : 1, sizeof *items);
  if (!items) return SQ_ENOMEM;
  for (size_t i = 0; i < n; i++) items[i] = (sq_push_item){.payload = payloads[i], .len = lens[i]};
  int rc = sq_queue_push_items(q, batch, items, n, NULL, NULL);
  free(items);
  return rc;
}

/* Parses one value of the batch hash bkey: an integer counter, or (money)
 * a finite number; names the field and the key when it is neither. */
static int counter_value(sq_queue *q, const char *bkey, const redisReply *k, const redisReply *v, bool money,
                         int64_t *out, double *usd) {
  char buf[32];
  if (v->type != REDIS_REPLY_STRING || v->len == 0 || v->len >= sizeof buf) goto bad;
  memcpy(buf, v->str, v->len);
  buf[v->len] = 0;
  if (money) {
    char *end = NULL;
    *usd = strtod(buf, &end);
    if (*end || !(*usd >= -1e15 && *usd <= 1e15)) goto bad; /* also NaN and inf */
    return 0;
  }
  if (sq_parse_i64(buf, INT64_MIN, INT64_MAX, out) != 0) goto bad;
  return 0;
bad:
  sq__queue_err(q, "%s: field '%.40s' is not %s; repair it with HSET or HDEL (docs/operations.md, \"Damaged keys\")",
                bkey, k->str, money ? "a number of dollars" : "an integer");
  return SQ_EPARSE;
}

int sq_queue_batch_stats(sq_queue *q, const char *batch, sq_batch_stats *out) {
  char bkey[SQ__KEY_MAX];
  int rc;
  memset(out, 0, sizeof *out);
  out->budget_usd = -1;
  if ((rc = sq__queue_key(q, bkey, "batch", batch))) return rc;
  if ((rc = sq__queue_ensure(q))) return rc;
  redisReply *r = redisCommand(q->ctx, "HGETALL %s", bkey);
  if ((rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "HGETALL"))) goto out;
  if (r->elements % 2) {
    sq__queue_err(q, "HGETALL: odd number of elements");
    rc = SQ_EREDIS;
    goto out;
  }
  for (size_t i = 0; i < r->elements; i += 2) {
    const redisReply *k = r->element[i], *v = r->element[i + 1];
    int64_t n;
    if (k->type != REDIS_REPLY_STRING) {
      sq__queue_err(q, "HGETALL: field is not a string");
      rc = SQ_EREDIS;
      goto out;
    }
    bool money = strcmp(k->str, "cost_usd") == 0 || strcmp(k->str, "budget_usd") == 0;
    double usd = 0;
    if ((rc = counter_value(q, bkey, k, v, money, &n, &usd))) goto out;
    if (money) {
      if (k->str[0] == 'c') out->cost_usd = usd;
      else out->budget_usd = usd;
      continue;
    }
    if (strcmp(k->str, "total") == 0) {
      out->total = n;
    } else if (strcmp(k->str, "done") == 0) {
      out->done = n;
    } else if (strcmp(k->str, "dead") == 0) {
      out->dead = n;
    } else if (strcmp(k->str, "duplicate") == 0) {
      out->duplicate = n;
    } else if (strcmp(k->str, "finished_at_ms") == 0) {
      out->finished_at_ms = n;
    } else if (strncmp(k->str, "status:", 7) == 0) {
      const char *name = k->str + 7;
      if (out->n_statuses >= SQ_QUEUE_MAX_STATUSES || strlen(name) >= sizeof out->statuses[0].name) {
        out->n_statuses_dropped++;
        continue;
      }
      strcpy(out->statuses[out->n_statuses].name, name);
      out->statuses[out->n_statuses++].count = n;
    }
  }
  /* Counts that cannot be, whoever wrote them. */
  if (out->total < 0 || out->done < 0 || out->dead < 0 || out->duplicate < 0) {
    sq__queue_err(q, "%s: a negative count (total %lld, done %lld, dead %lld, duplicate %lld); repair it with HSET "
                  "(docs/operations.md, \"Damaged keys\")", bkey, (long long)out->total, (long long)out->done,
                  (long long)out->dead, (long long)out->duplicate);
    rc = SQ_EPARSE;
    goto out;
  }
  /* A stamp left from before more tasks were counted in (a raw HINCRBY). */
  if (out->done + out->dead + out->duplicate < out->total) out->finished_at_ms = 0;
out:
  freeReplyObject(r);
  return rc;
}

/* One HSCAN step: *reply holds [cursor, [k, v, ...]] after a 0 return. */
static int hscan_step(sq_queue *q, const char *rkey, const char *cursor, redisReply **reply) {
  redisReply *r = redisCommand(q->ctx, "HSCAN %s %s COUNT " SCAN_COUNT, rkey, cursor);
  int rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "HSCAN");
  if (!rc && (r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING ||
              r->element[1]->type != REDIS_REPLY_ARRAY || r->element[1]->elements % 2 ||
              r->element[0]->len >= 32)) {
    sq__queue_err(q, "HSCAN: malformed reply");
    rc = SQ_EREDIS;
  }
  if (rc) {
    freeReplyObject(r);
    return rc;
  }
  *reply = r;
  return 0;
}

int sq_queue_batch_results(sq_queue *q, const char *batch, sq_queue_result_fn fn, void *ud) {
  char rkey[SQ__KEY_MAX], cursor[32] = "0";
  int rc;
  if ((rc = sq__queue_key(q, rkey, "results", batch))) return rc;
  if ((rc = sq__queue_ensure(q))) return rc;
  do {
    redisReply *r;
    if ((rc = hscan_step(q, rkey, cursor, &r))) return rc;
    memcpy(cursor, r->element[0]->str, r->element[0]->len + 1);
    const redisReply *kv = r->element[1];
    for (size_t i = 0; i < kv->elements && !rc; i += 2) {
      const redisReply *k = kv->element[i], *v = kv->element[i + 1];
      if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) {
        sq__queue_err(q, "HSCAN: result entry is not a string pair");
          rc = SQ_EREDIS;
        break;
      }
      rc = fn(k->str, (const uint8_t *)v->str, v->len, ud);
    }
    freeReplyObject(r);
    if (rc) return rc;
  } while (strcmp(cursor, "0") != 0);
  return 0;
}


int sq_queue_batch_wait(sq_queue *q, const char *batch, int timeout_ms) {
  char key[SQ__KEY_MAX];
  int rc;
  if ((rc = sq__queue_key(q, key, "done", batch)) || (rc = sq__queue_ensure(q))) return rc;
  /* The socket must wait longer than the server blocks. */
  redisSetTimeout(q->ctx, (struct timeval){.tv_sec = (timeout_ms + SQ__COMMAND_TIMEOUT_MS) / 1000 + 1});
  redisReply *r = redisCommand(q->ctx, "BLPOP %s %d.%03d", key, timeout_ms / 1000, timeout_ms % 1000);
  if (!q->ctx->err) redisSetTimeout(q->ctx, (struct timeval){.tv_sec = SQ__COMMAND_TIMEOUT_MS / 1000});
  rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 1, "BLPOP");
  if (!rc && r->type == REDIS_REPLY_NIL) rc = SQ_ETIMEOUT;
  freeReplyObject(r);
  return rc;
}

/* LLEN/ZCARD/HLEN of sq:{Q}:<kind> added to *out. */
static int add_size(sq_queue *q, const char *cmd, const char *kind, int64_t *out) {
  char key[SQ__KEY_MAX];
  int rc;
  if ((rc = sq__queue_key(q, key, kind, NULL)) || (rc = sq__queue_ensure(q))) return rc;
  redisReply *r = redisCommand(q->ctx, "%s %s", cmd, key);
  rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, cmd);
  if (!rc) *out += r->integer;
  freeReplyObject(r);
  return rc;
}

int sq_queue_length(sq_queue *q, int64_t *out) {
  int rc;
  *out = 0;
  if ((rc = add_size(q, "LLEN", "tasks", out)) || (rc = add_size(q, "LLEN", "tasks:high", out)) ||
      (rc = add_size(q, "LLEN", "tasks:low", out)))
    return rc;
  return 0;
}

int sq_queue_counters_get(sq_queue *q, sq_queue_counters *out) {
  char key[SQ__KEY_MAX];
  int rc;
  memset(out, 0, sizeof *out);
  if ((rc = sq_queue_length(q, &out->waiting)) || (rc = add_size(q, "ZCARD", "delayed", &out->delayed)) ||
      (rc = add_size(q, "ZCARD", "leases", &out->in_flight)) || (rc = add_size(q, "HLEN", "dead", &out->dead_letter)))
    return rc;
  if ((rc = sq__queue_key(q, key, "stats", NULL))) return rc;
  redisReply *r = redisCommand(q->ctx, "HMGET %s fenced duplicate stalled retried dead deduplicated", key);
  rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "HMGET stats");
  if (!rc && r->elements == 6) {
    int64_t *f[] = {&out->fenced, &out->duplicate, &out->stalled,
                    &out->retried, &out->dead, &out->deduplicated};
    static const char *const names[] = {"fenced", "duplicate", "stalled", "retried", "dead", "deduplicated"};
    for (size_t i = 0; i < 6 && !rc; i++)
      if (r->element[i]->type == REDIS_REPLY_STRING && sq_parse_i64(r->element[i]->str, 0, INT64_MAX, f[i]) != 0) {
        sq__queue_err(q, "%s: field '%s' is not a count; repair it with HSET or HDEL (docs/operations.md, "
                      "\"Damaged keys\")", key, names[i]);
        rc = SQ_EPARSE;
      }
  }
  freeReplyObject(r);
  return rc;
}
