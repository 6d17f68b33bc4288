/* queue_claim_one.h: the queue's tests take and hand back one claim at a
 * time; the library has only the worker's own calls (sq_queue_claim_many,
 * sq_queue_stall, sq_queue_release_all), so these two live here.
 * Header-only: each test binary is one source file. */
#ifndef SQ_QUEUE_CLAIM_ONE_H
#define SQ_QUEUE_CLAIM_ONE_H

#include <hiredis/hiredis.h>
#include <stdio.h>

#include "errors.h"
#include "queue.h"
#include "queue_internal.h"

/* Claims one task (sq_queue_claim_many with max 1): returns as it does,
 * with the claim in *out (the caller clears it). */
static inline int claim_one(sq_queue *q, const char *worker_id, int timeout_ms, sq_claim *out) {
  size_t n = 0;
  return sq_queue_claim_many(q, worker_id, timeout_ms, out, 1, &n);
}

/* Hands claim c back untouched to the front of its list through the
 * sq1_release Function (no stall counted). Returns 0, SQ_EFENCED (c is no
 * longer its worker's) or SQ_EREDIS*. */
static inline int release_one(sq_queue *q, const sq_claim *c) {
  char tok[24];
  int rc;
  snprintf(tok, sizeof tok, "%lld", (long long)c->token);
  const char *argv[] = {c->worker_id, tok};
  redisReply *r = sq__queue_fcall_at(q, c->shard, "sq1_release", 2, argv, NULL, true, &rc);
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, "sq1_release");
  if (!rc && r->integer < 0) rc = SQ_EFENCED;
  freeReplyObject(r);
  return rc;
}

#endif
