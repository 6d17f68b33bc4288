/* queue_sentinel.c: Redis Sentinel for the queue handle:
 * asking the sentinels for the master's address
 * (SENTINEL get-master-addr-by-name) and checking that the server they
 * name is a master (ROLE). Following a failover is the ordinary reconnect
 * (queue_route.c): every new connection asks the sentinels again, all of
 * them, and takes the address of the newest configuration (the highest
 * config-epoch), so one sentinel stuck on an old master (one that missed
 * the failover, or sat in TILT mode on a loaded host) cannot hold a
 * client on it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "errors.h"
#include "queue_internal.h"
#include "util.h"

#define SENTINEL_TIMEOUT_MS 1000 /* one sentinel's time to answer before the next is asked */

/* The config-epoch field of a SENTINEL MASTER reply, or -1 when it has
 * none (a sentinel whose ACL refuses the command). */
static int64_t config_epoch(const redisReply *r) {
  if (!r || r->type != REDIS_REPLY_ARRAY) return -1;
  for (size_t i = 0; i + 1 < r->elements; i += 2) {
    const redisReply *k = r->element[i], *v = r->element[i + 1];
    int64_t e;
    if (k->type == REDIS_REPLY_STRING && v->type == REDIS_REPLY_STRING && strcmp(k->str, "config-epoch") == 0 &&
        sq_parse_i64(v->str, 0, INT64_MAX, &e) == 0)
      return e;
  }
  return -1;
}

/* Asks the sentinel at a for the master's address and the epoch of the
 * configuration it holds (one round trip). Returns 0 with *out and *epoch
 * (-1: not told), or -1 with why (whylen bytes). */
static int ask_one(sq_queue *q, const sq__addr *a, sq__addr *out, int64_t *epoch, char *why, size_t whylen) {
  struct timeval tv = {.tv_sec = SENTINEL_TIMEOUT_MS / 1000, .tv_usec = (SENTINEL_TIMEOUT_MS % 1000) * 1000};
  redisContext *c = redisConnectWithTimeout(a->host, a->port, tv);
  redisReply *r = NULL, *m = NULL;
  int rc = -1;
  if (!c || c->err) {
    snprintf(why, whylen, "%s", c ? c->errstr : "out of memory");
    goto out;
  }
  redisSetTimeout(c, tv);
  sq__queue_bound_replies(c);
  if (q->url.sentinel_password[0]) {
    r = redisCommand(c, "AUTH %s", q->url.sentinel_password);
    /* A sentinel without a password refuses AUTH: go on without it, unless
     * the password was meant for the sentinels alone. */
    bool unneeded = r && r->type == REDIS_REPLY_ERROR && strstr(r->str, "without any password configured") &&
                    !getenv("SANDQ_SENTINEL_PASSWORD");
    if (!r || (r->type != REDIS_REPLY_STATUS && !unneeded)) {
      snprintf(why, whylen, "AUTH: %s", r && r->type == REDIS_REPLY_ERROR ? r->str : sq__queue_ctx_errstr(c));
      goto out;
    }
    freeReplyObject(r);
    r = NULL;
  }
  redisAppendCommand(c, "SENTINEL get-master-addr-by-name %s", q->url.master);
  redisAppendCommand(c, "SENTINEL master %s", q->url.master);
  if (redisGetReply(c, (void **)&r) != REDIS_OK || !r) {
    r = NULL;
    snprintf(why, whylen, "%s", sq__queue_ctx_errstr(c));
    goto out;
  }
  if (redisGetReply(c, (void **)&m) != REDIS_OK) m = NULL;
  if (r->type == REDIS_REPLY_NIL) {
    snprintf(why, whylen, "it knows no master named '%s'", q->url.master);
    goto out;
  }
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING ||
      r->element[1]->type != REDIS_REPLY_STRING || r->element[0]->len >= sizeof out->host) {
    snprintf(why, whylen, "%s", r->type == REDIS_REPLY_ERROR ? r->str : "malformed reply");
    goto out;
  }
  int64_t port;
  if (sq_parse_i64(r->element[1]->str, 1, 65535, &port) != 0) {
    snprintf(why, whylen, "port '%.16s' is not a number", r->element[1]->str);
    goto out;
  }
  snprintf(out->host, sizeof out->host, "%s", r->element[0]->str);
  out->port = (int)port;
  *epoch = config_epoch(m);
  rc = 0;
out:
  freeReplyObject(r);
  freeReplyObject(m);
  redisFree(c);
  return rc;
}

int sq__sentinel_master(sq_queue *q, sq__addr *out) {
  char why[200] = "", all[256] = "";
  int64_t best = -2;
  for (int i = 0; i < q->url.n_seeds; i++) {
    sq__addr a;
    int64_t epoch;
    if (ask_one(q, &q->url.seeds[i], &a, &epoch, why, sizeof why) == 0) {
      /* Every sentinel is asked: a failover raises the epoch, and a
       * sentinel that missed it still names the old master under an older
       * one. Ties go to the first in the URL's order. */
      if (epoch > best) {
        best = epoch;
        *out = a;
      }
    } else if (!all[0]) {
      snprintf(all, sizeof all, "%s:%d: %s", q->url.seeds[i].host, q->url.seeds[i].port, why);
    }
  }
  if (best > -2) return 0;
  sq__queue_err(q, "no sentinel of %d named master '%s' (first: %s)", q->url.n_seeds, q->url.master, all);
  return SQ_EREDIS_CONN;
}

int sq__sentinel_check_role(sq_queue *q) {
  redisReply *r = redisCommand(q->ctx, "ROLE");
  int rc = 0;
  if (!r) {
    sq__queue_err(q, "ROLE: %s", sq__queue_ctx_errstr(q->ctx));
    rc = SQ_EREDIS_CONN;
  } else if (r->type == REDIS_REPLY_ARRAY && r->elements > 0 && r->element[0]->type == REDIS_REPLY_STRING &&
             strcmp(r->element[0]->str, "master") != 0) {
    sq__queue_err(q, "the sentinels name %s:%d as master '%s' but it is a %s (a failover is under way)",
                  q->cur->addr.host, q->cur->addr.port, q->url.master, r->element[0]->str);
    rc = SQ_EREDIS_CONN;
  }
  /* a server refusing ROLE (ACL) is taken at the sentinels' word */
  freeReplyObject(r);
  return rc;
}
