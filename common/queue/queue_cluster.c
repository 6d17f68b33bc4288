/* queue_cluster.c: Redis Cluster for the queue handle, kept small because
 * hiredis has no cluster support and Debian packages no C cluster client:
 * the key slot (CRC16 of the hash tag), the replies that redirect (MOVED,
 * ASK) or ask to wait (TRYAGAIN, CLUSTERDOWN, a function refused while its
 * slot moves) and the slot map read from CLUSTER SLOTS. queue_route.c
 * sends the commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "errors.h"
#include "queue_internal.h"
#include "util.h"

#define PROBE_TIMEOUT_MS 2000 /* a node asked for the slot map answers within this */

/* CRC16-CCITT (XModem), as the Redis Cluster specification defines it. */
static uint16_t crc16(const char *buf, size_t len) {
  uint16_t crc = 0;
  for (size_t i = 0; i < len; i++) {
    crc ^= (uint16_t)((unsigned char)buf[i] << 8);
    for (int b = 0; b < 8; b++) crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return crc;
}

int sq__key_slot(const char *key, size_t len) {
  /* The first '{' and the first '}' after it, with something between. */
  const char *open = memchr(key, '{', len);
  if (open) {
    size_t off = (size_t)(open - key) + 1;
    const char *close = memchr(open + 1, '}', len - off);
    if (close && close > open + 1) return crc16(open + 1, (size_t)(close - open - 1)) & (SQ__SLOTS - 1);
  }
  return crc16(key, len) & (SQ__SLOTS - 1);
}

/* Parses "<slot> <host>:<port>" (the tail of MOVED and ASK). */
static int parse_redirect(const char *s, size_t len, int *slot, sq__addr *to) {
  char buf[320];
  if (len >= sizeof buf) return -1;
  memcpy(buf, s, len);
  buf[len] = 0;
  char *sp = strchr(buf, ' ');
  if (!sp) return -1;
  *sp = 0;
  int64_t v;
  if (sq_parse_i64(buf, 0, SQ__SLOTS - 1, &v) != 0) return -1;
  char *addr = sp + 1, *colon = strrchr(addr, ':');
  if (!colon || colon == addr) return -1;
  *colon = 0;
  int64_t port;
  if (sq_parse_i64(colon + 1, 1, 65535, &port) != 0) return -1;
  if (addr[0] == '[' && colon[-1] == ']') { /* [ipv6]:port */
    colon[-1] = 0;
    addr++;
  }
  if (strlen(addr) >= sizeof to->host) return -1;
  *slot = (int)v;
  snprintf(to->host, sizeof to->host, "%s", addr);
  to->port = (int)port;
  return 0;
}

static bool starts(const char *s, size_t len, const char *prefix) {
  size_t n = strlen(prefix);
  return len >= n && memcmp(s, prefix, n) == 0;
}

/* Whether needle occurs in s[0..len). */
static bool contains(const char *s, size_t len, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(s + i, needle, n) == 0) return true;
  return false;
}

sq__reply_kind sq__reply_classify(const char *err, size_t len, int *slot, sq__addr *to) {
  if (starts(err, len, "MOVED ") && parse_redirect(err + 6, len - 6, slot, to) == 0) return SQ__REPLY_MOVED;
  if (starts(err, len, "ASK ") && parse_redirect(err + 4, len - 4, slot, to) == 0) return SQ__REPLY_ASK;
  if (starts(err, len, "TRYAGAIN") || starts(err, len, "CLUSTERDOWN")) return SQ__REPLY_BUSY;
  /* A function whose slot is being migrated meets a key that is on the
   * other node (lua/00-base.lua's prefix() touches two absent keys first so
   * this happens before any write). */
  if (contains(err, len, "non local key") || contains(err, len, "cluster is down")) return SQ__REPLY_BUSY;
  if (starts(err, len, "READONLY")) return SQ__REPLY_READONLY;
  return SQ__REPLY_OTHER;
}

int sq__node_find_or_add(sq_queue *q, const sq__addr *addr) {
  for (int i = 0; i < q->n_nodes; i++)
    if (q->nodes[i].addr.port == addr->port && strcmp(q->nodes[i].addr.host, addr->host) == 0) return i;
  if (q->n_nodes >= SQ__MAX_NODES) return -1;
  sq__node *n = &q->nodes[q->n_nodes];
  memset(n, 0, sizeof *n);
  n->addr = *addr;
  return q->n_nodes++;
}

int sq__cluster_apply_slots(sq_queue *q, const redisReply *r, const sq__addr *from) {
  if (!r || r->type != REDIS_REPLY_ARRAY || r->elements == 0) return SQ_EREDIS;
  uint8_t *map = calloc(SQ__SLOTS, 1);
  if (!map) return SQ_ENOMEM;
  for (size_t i = 0; i < r->elements; i++) {
    const redisReply *e = r->element[i];
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 || e->element[0]->type != REDIS_REPLY_INTEGER ||
        e->element[1]->type != REDIS_REPLY_INTEGER || e->element[2]->type != REDIS_REPLY_ARRAY ||
        e->element[2]->elements < 2 || e->element[2]->element[0]->type != REDIS_REPLY_STRING ||
        e->element[2]->element[1]->type != REDIS_REPLY_INTEGER)
      goto bad;
    long long lo = e->element[0]->integer, hi = e->element[1]->integer;
    if (lo < 0 || hi >= SQ__SLOTS || lo > hi) goto bad;
    const redisReply *m = e->element[2];
    sq__addr a = {.port = (int)m->element[1]->integer};
    /* An empty host (or "?") means: the address you reached me on. */
    const char *host = m->element[0]->len && strcmp(m->element[0]->str, "?") != 0 ? m->element[0]->str : from->host;
    if (strlen(host) >= sizeof a.host) goto bad;
    snprintf(a.host, sizeof a.host, "%s", host);
    int idx = sq__node_find_or_add(q, &a);
    if (idx < 0) goto bad;
    memset(map + lo, idx + 1, (size_t)(hi - lo + 1));
  }
  memcpy(q->slots, map, SQ__SLOTS);
  free(map);
  q->slots_stale = false;
  return 0;
bad:
  free(map);
  return SQ_EREDIS;
}

/* CLUSTER SLOTS on ctx (reached at addr) into q's map. */
static int slots_from(sq_queue *q, redisContext *ctx, const sq__addr *addr) {
  redisReply *r = redisCommand(ctx, "CLUSTER SLOTS");
  int rc = r ? sq__cluster_apply_slots(q, r, addr) : SQ_EREDIS_CONN;
  if (!r) sq__queue_err(q, "CLUSTER SLOTS at %s:%d: %s", addr->host, addr->port, sq__queue_ctx_errstr(ctx));
  if (r && rc == SQ_EREDIS)
    sq__queue_err(q, "CLUSTER SLOTS at %s:%d: %s", addr->host, addr->port,
                  r->type == REDIS_REPLY_ERROR ? r->str : "malformed reply");
  freeReplyObject(r);
  return rc;
}

/* A short-lived connection to addr (AUTH as the URL asks), for the map. */
static int slots_via(sq_queue *q, const sq__addr *addr) {
  struct timeval tv = {.tv_sec = PROBE_TIMEOUT_MS / 1000, .tv_usec = (PROBE_TIMEOUT_MS % 1000) * 1000};
  redisContext *c = redisConnectWithTimeout(addr->host, addr->port, tv);
  int rc = SQ_EREDIS_CONN;
  if (!c || c->err) {
    sq__queue_err(q, "cluster node %s:%d: %s", addr->host, addr->port, c ? c->errstr : "out of memory");
    goto out;
  }
  redisSetTimeout(c, tv);
  sq__queue_bound_replies(c);
  if (q->url.password[0]) {
    redisReply *a = q->url.user[0] ? redisCommand(c, "AUTH %s %s", q->url.user, q->url.password)
                                   : redisCommand(c, "AUTH %s", q->url.password);
    bool ok = a && a->type == REDIS_REPLY_STATUS;
    if (!ok) sq__queue_err(q, "cluster node %s:%d: AUTH: %s", addr->host, addr->port,
                           a && a->type == REDIS_REPLY_ERROR ? a->str : "no reply");
    freeReplyObject(a);
    if (!ok) goto out;
  }
  rc = slots_from(q, c, addr);
out:
  redisFree(c);
  return rc;
}

int sq__cluster_refresh(sq_queue *q) {
  int rc = SQ_EREDIS_CONN;
  /* Nodes we hold a connection to first, then every node and seed afresh. */
  for (int i = 0; i < q->n_nodes; i++) {
    sq__node *n = &q->nodes[i];
    if (n->ctx && !n->ctx->err && (rc = slots_from(q, n->ctx, &n->addr)) == 0) return 0;
  }
  for (int i = 0; i < q->n_nodes + q->url.n_seeds; i++) {
    sq__addr a = i < q->n_nodes ? q->nodes[i].addr : q->url.seeds[i - q->n_nodes];
    if ((rc = slots_via(q, &a)) == 0) return 0;
  }
  if (rc == SQ_EREDIS_CONN && !q->errstr[0]) sq__queue_err(q, "no cluster node answered CLUSTER SLOTS");
  return rc == SQ_ENOMEM ? rc : SQ_EREDIS_CONN;
}

