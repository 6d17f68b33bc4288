/* queue_stream.c: capped Redis streams under the queue's prefix
 * (sq:{Q}:<name>, same hash tag, same cluster slot): appending entries
 * with XADD MAXLEN ~ (alone, or pipelined behind a batch of completions by
 * sq_queue_complete_many_log, queue_claim.c) and reading them back page by
 * page with XRANGE. A stream lives under the home tag {Q}, also for a
 * sharded queue; in a cluster, on the node serving that slot. The entries'
 * meaning lives with their writer (the audit trail, common/fleet/audit.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "queue.h"
#include "queue_internal.h"

/* The XADD of entry e onto key into v (6 + 2 * e->n slots). */
static void xadd_argv(const char *key, const char *maxlen, const sq_queue_stream_entry *e, const char **v) {
  v[0] = "XADD", v[1] = key, v[2] = "MAXLEN", v[3] = "~", v[4] = maxlen, v[5] = "*";
  for (size_t k = 0; k < e->n; k++) v[6 + 2 * k] = e->fields[k], v[7 + 2 * k] = e->values[k];
}

static int stream_key(sq_queue *q, const sq_queue_stream_batch *b, char key[SQ__KEY_MAX], char maxlen[24]) {
  snprintf(maxlen, 24, "%lld", (long long)(b->max_len > 0 ? b->max_len : 1));
  return sq__queue_key(q, key, b->name, NULL);
}

int sq__queue_stream_conn(sq_queue *q, const sq_queue_stream_batch *b) {
  char key[SQ__KEY_MAX], maxlen[24];
  int rc = stream_key(q, b, key, maxlen);
  return rc ? rc : sq__queue_conn(q, key);
}

int sq__queue_stream_append(sq_queue *q, const sq_queue_stream_batch *b, size_t *n_cmds) {
  char key[SQ__KEY_MAX], maxlen[24];
  int rc;
  *n_cmds = 0;
  if (!b || b->n == 0) return 0;
  if ((rc = stream_key(q, b, key, maxlen))) return rc;
  for (size_t i = 0; i < b->n; i++) {
    const sq_queue_stream_entry *e = &b->entries[i];
    size_t argc = 6 + 2 * e->n;
    const char **v = malloc(argc * sizeof *v);
    if (!v) return SQ_ENOMEM;
    xadd_argv(key, maxlen, e, v);
    int ok = redisAppendCommandArgv(q->ctx, (int)argc, v, NULL);
    free(v);
    if (ok != REDIS_OK) {
      sq__queue_err(q, "XADD: %s", q->ctx->errstr);
      return SQ_EREDIS_CONN;
    }
    (*n_cmds)++;
  }
  return 0;
}

int sq__queue_stream_replies(sq_queue *q, size_t n, bool *redo) {
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    int one;
    redisReply *r = sq__queue_read(q, &one);
    if (!r) return one; /* the connection broke: nothing more will come */
    if (redo && sq__queue_reroute(r)) {
      redo[i] = true; /* the stream's slot moved (a cluster): it did not land; sent again alone */
      if (q->url.mode == SQ__MODE_CLUSTER) q->slots_stale = true;
      freeReplyObject(r);
      continue;
    }
    if (!one) one = sq__queue_check(q, r, REDIS_REPLY_STRING, 0, "XADD");
    freeReplyObject(r);
    if (one && !rc) rc = one;
  }
  return rc;
}

int sq__queue_stream_resend(sq_queue *q, const sq_queue_stream_batch *b, const bool *redo) {
  char key[SQ__KEY_MAX], maxlen[24];
  int rc = 0;
  if (!b || b->n == 0) return 0;
  if ((rc = stream_key(q, b, key, maxlen))) return rc;
  for (size_t i = 0; i < b->n && !rc; i++) {
    if (!redo[i]) continue;
    const sq_queue_stream_entry *e = &b->entries[i];
    size_t argc = 6 + 2 * e->n;
    const char **v = malloc(argc * sizeof *v);
    if (!v) return SQ_ENOMEM;
    xadd_argv(key, maxlen, e, v);
    redisReply *r = sq__queue_cmdv(q, &rc, key, (int)argc, v, NULL);
    free(v);
    if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_STRING, 0, "XADD");
    freeReplyObject(r);
  }
  return rc;
}

int sq_queue_stream_add(sq_queue *q, const sq_queue_stream_batch *b) {
  size_t n = 0;
  int rc;
  if (!b || b->n == 0) return 0;
  bool *redo = calloc(b->n, sizeof *redo);
  if (!redo) return SQ_ENOMEM;
  if ((rc = sq__queue_stream_conn(q, b))) goto out;
  rc = sq__queue_stream_append(q, b, &n);
  int rrc = sq__queue_stream_replies(q, n, redo); /* read what went out, even after a failure to append more */
  if (!rc) rc = rrc;
  if (!rc) rc = sq__queue_stream_resend(q, b, redo);
out:
  free(redo);
  return rc;
}

#define PAGE 500

int sq_queue_stream_range(sq_queue *q, const char *name, const char *start_id, sq_queue_stream_fn fn, void *ud) {
  char key[SQ__KEY_MAX], from[64], count[16];
  int rc;
  if ((rc = sq__queue_key(q, key, name, NULL))) return rc;
  snprintf(from, sizeof from, "%s", start_id && *start_id ? start_id : "-");
  snprintf(count, sizeof count, "%d", PAGE);
  for (;;) {
    const char *argv[] = {"XRANGE", key, from, "+", "COUNT", count};
    redisReply *r = sq__queue_cmdv(q, &rc, key, 6, argv, NULL);
    if (rc || (rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "XRANGE"))) {
      freeReplyObject(r);
      return rc;
    }
    size_t got = r->elements;
    const char *fields[64], *values[64];
    for (size_t i = 0; i < got && rc == 0; i++) {
      const redisReply *e = r->element[i];
      if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 || e->element[0]->type != REDIS_REPLY_STRING ||
          e->element[1]->type != REDIS_REPLY_ARRAY)
        continue;
      const redisReply *kv = e->element[1];
      size_t n = 0;
      for (size_t k = 0; k + 1 < kv->elements && n < 64; k += 2)
        if (kv->element[k]->type == REDIS_REPLY_STRING && kv->element[k + 1]->type == REDIS_REPLY_STRING)
          fields[n] = kv->element[k]->str, values[n++] = kv->element[k + 1]->str;
      rc = fn(e->element[0]->str, fields, values, n, ud);
      /* the next page starts after this id: "(" is XRANGE's exclusive bound */
      snprintf(from, sizeof from, "(%s", e->element[0]->str);
    }
    freeReplyObject(r);
    if (rc || got < PAGE) return rc;
  }
}
