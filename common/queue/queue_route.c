/* queue_route.c: which server a command goes to, and what to do when it
 * answers "not here" or "not now". One server for redis:// and unix://;
 * the master the sentinels name for redis-sentinel:// (asked again on
 * every reconnection, so a failover is followed); for redis-cluster://
 * the node serving the key's slot, with MOVED, ASK and a moving slot
 * handled here. Also the WAIT that makes a write survive a failover. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errors.h"
#include "queue_internal.h"

#define MAX_HOPS 16          /* redirects of one command before giving up */
#define BUSY_WAIT_MAX_MS 5000 /* how long a command waits for a moving slot */
#define BUSY_STEP_MS 10      /* first wait; doubles up to BUSY_STEP_MAX_MS */
#define BUSY_STEP_MAX_MS 250

static void sleep_ms(int64_t ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static bool up(const sq__node *n) { return n->ctx && !n->ctx->err; }

/* Connects n when it has no working connection, telling the notice hook
 * about a reconnection. */
static int node_ready(sq_queue *q, sq__node *n) {
  if (up(n)) {
    q->ctx = n->ctx;
    q->cur = n;
    return 0;
  }
  if (n->was_up) sq__queue_notice("reconnecting to redis after: %s", n->ctx ? n->ctx->errstr : "no connection");
  int rc = sq__queue_connect_node(q, n);
  if (rc && q->url.mode == SQ__MODE_CLUSTER) q->slots_stale = true; /* maybe a failover: ask again */
  return rc;
}

/* The node serving key. */
static int node_for(sq_queue *q, const char *key, sq__node **out) {
  if (q->url.mode != SQ__MODE_CLUSTER) {
    *out = &q->nodes[0];
    return 0;
  }
  int rc;
  if (q->slots_stale && (rc = sq__cluster_refresh(q)) != 0) {
    /* With a map from before, try it: the node will redirect us. */
    bool any = false;
    for (int i = 0; i < SQ__SLOTS && !any; i++) any = q->slots[i] != 0;
    if (!any) return rc;
  }
  int idx = q->slots[sq__key_slot(key, strlen(key))];
  if (idx == 0) { /* an uncovered slot: any node, which will redirect */
    for (int i = 0; i < q->n_nodes && !idx; i++)
      if (up(&q->nodes[i])) idx = i + 1;
    if (!idx && q->n_nodes) idx = 1;
  }
  if (!idx) {
    sq__queue_err(q, "no cluster node is known for key %.64s", key);
    return SQ_EREDIS_CONN;
  }
  *out = &q->nodes[idx - 1];
  return 0;
}

int sq__queue_conn(sq_queue *q, const char *key) {
  sq__node *n;
  int rc = node_for(q, key, &n);
  return rc ? rc : node_ready(q, n);
}

bool sq__queue_reroute(const redisReply *r) {
  int slot;
  sq__addr to;
  return r && r->type == REDIS_REPLY_ERROR && sq__reply_classify(r->str, r->len, &slot, &to) != SQ__REPLY_OTHER;
}

/* Marks n's connection broken: the next command reconnects (and, with
 * Sentinel, asks the sentinels again). */
static void node_broken(sq_queue *q, sq__node *n) {
  if (n->ctx && !n->ctx->err) {
    n->ctx->err = REDIS_ERR_EOF;
    snprintf(n->ctx->errstr, sizeof n->ctx->errstr, "the server became a replica (READONLY)");
  }
  if (q->url.mode == SQ__MODE_CLUSTER) q->slots_stale = true;
}

void sq__queue_wait_append(sq_queue *q) {
  redisAppendCommand(q->ctx, "WAIT %lld %lld", (long long)q->opts.wait_replicas, (long long)q->opts.wait_timeout_ms);
}

int sq__queue_wait_read(sq_queue *q) {
  redisReply *r = NULL;
  if (redisGetReply(q->ctx, (void **)&r) != REDIS_OK) r = NULL;
  int rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, "WAIT");
  if (!rc && r->integer < q->opts.wait_replicas) {
    sq__queue_err(q, "WAIT: %lld of %lld replica(s) acknowledged the write within %lld ms; it would not survive "
                  "a failover, so it counts as not done", r->integer, (long long)q->opts.wait_replicas,
                  (long long)q->opts.wait_timeout_ms);
    rc = SQ_EREDIS_CONN;
  } else if (rc == SQ_EREDIS) {
    rc = SQ_EREDIS_CONN; /* e.g. WAIT refused by a replica: the write is not known to be safe */
  }
  freeReplyObject(r);
  return rc;
}

redisReply *sq__queue_send(sq_queue *q, const char *key, const char *cmd, size_t len, bool wait, int *rc) {
  int ask = -1, hops = 0;
  int64_t waited_ms = 0, step_ms = BUSY_STEP_MS;
  wait = wait && q->opts.wait_replicas > 0;
  for (;;) {
    sq__node *n;
    if (ask >= 0) {
      n = &q->nodes[ask];
      if ((*rc = node_ready(q, n))) return NULL;
    } else if ((*rc = node_for(q, key, &n)) || (*rc = node_ready(q, n))) {
      return NULL;
    }
    if (ask >= 0) redisAppendCommand(n->ctx, "ASKING");
    redisAppendFormattedCommand(n->ctx, cmd, len);
    if (wait) sq__queue_wait_append(q);
    redisReply *r = NULL;
    if (ask >= 0) {
      if (redisGetReply(n->ctx, (void **)&r) != REDIS_OK) r = NULL;
      freeReplyObject(r);
      r = NULL;
    }
    if (redisGetReply(n->ctx, (void **)&r) != REDIS_OK || !r) {
      *rc = sq__queue_check(q, NULL, 0, 0, "reply");
      if (q->url.mode == SQ__MODE_CLUSTER) q->slots_stale = true;
      return NULL;
    }
    int slot = 0;
    sq__addr to;
    sq__reply_kind kind =
        r->type == REDIS_REPLY_ERROR ? sq__reply_classify(r->str, r->len, &slot, &to) : SQ__REPLY_OTHER;
    if (wait) {
      /* The WAIT's verdict matters only for a command that ran. */
      int w = sq__queue_wait_read(q);
      if (w && kind == SQ__REPLY_OTHER && r->type != REDIS_REPLY_ERROR) {
        freeReplyObject(r);
        *rc = w;
        return NULL;
      }
      if (w && !up(n)) { /* the connection broke after the command's reply */
        freeReplyObject(r);
        *rc = w;
        return NULL;
      }
    }
    if (kind == SQ__REPLY_OTHER) {
      *rc = 0;
      return r;
    }
    if (kind == SQ__REPLY_READONLY) {
      if (q->url.mode != SQ__MODE_CLUSTER) {
        /* A failover demoted the server: nothing ran; the next call asks
         * the sentinels again. */
        sq__queue_err(q, "redis at %s:%d is now a replica (%.*s); following the failover", n->addr.host,
                      n->addr.port, (int)(r->len > 80 ? 80 : r->len), r->str);
        freeReplyObject(r);
        node_broken(q, n);
        *rc = SQ_EREDIS_CONN;
        return NULL;
      }
      node_broken(q, n);
      ask = -1;
    } else if (q->url.mode != SQ__MODE_CLUSTER) {
      *rc = 0; /* MOVED and friends from a server that is not a cluster: its error */
      return r;
    } else if (kind == SQ__REPLY_MOVED) {
      int idx = sq__node_find_or_add(q, &to);
      if (idx < 0) {
        *rc = 0;
        return r;
      }
      q->slots[slot] = (uint8_t)(idx + 1);
      q->slots_stale = true; /* one slot moved: others may have too */
      ask = -1;
    } else if (kind == SQ__REPLY_ASK) {
      if ((ask = sq__node_find_or_add(q, &to)) < 0) {
        *rc = 0;
        return r;
      }
    } else { /* BUSY: the slot is moving or the cluster is electing */
      if (waited_ms >= BUSY_WAIT_MAX_MS) {
        *rc = 0;
        return r;
      }
      sleep_ms(step_ms);
      waited_ms += step_ms;
      step_ms = step_ms * 2 > BUSY_STEP_MAX_MS ? BUSY_STEP_MAX_MS : step_ms * 2;
      q->slots_stale = true;
      ask = -1;
      hops--; /* waiting is not a redirect */
    }
    freeReplyObject(r);
    if (++hops > MAX_HOPS) {
      sq__queue_err(q, "more than %d cluster redirects for key %.64s", MAX_HOPS, key);
      *rc = SQ_EREDIS_CONN;
      return NULL;
    }
  }
}

redisReply *sq__queue_cmdf(sq_queue *q, int *rc, const char *key, const char *fmt, ...) {
  char *cmd = NULL;
  va_list ap;
  va_start(ap, fmt);
  int len = redisvFormatCommand(&cmd, fmt, ap);
  va_end(ap);
  if (len < 0) {
    sq__queue_err(q, "out of memory formatting a command");
    *rc = SQ_ENOMEM;
    return NULL;
  }
  redisReply *r = sq__queue_send(q, key, cmd, (size_t)len, false, rc);
  redisFreeCommand(cmd);
  return r;
}

redisReply *sq__queue_cmdv(sq_queue *q, int *rc, const char *key, int argc, const char **argv, const size_t *lens) {
  char *cmd = NULL;
  int len = redisFormatCommandArgv(&cmd, argc, argv, lens);
  if (len < 0) {
    sq__queue_err(q, "out of memory formatting a command");
    *rc = SQ_ENOMEM;
    return NULL;
  }
  redisReply *r = sq__queue_send(q, key, cmd, (size_t)len, false, rc);
  redisFreeCommand(cmd);
  return r;
}

void sq__queue_disconnect(sq_queue *q) {
  for (int i = 0; i < q->n_nodes; i++) {
    redisFree(q->nodes[i].ctx);
    q->nodes[i].ctx = NULL;
  }
  q->ctx = NULL;
  q->cur = NULL;
}
