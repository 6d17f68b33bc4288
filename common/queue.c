/* queue.c: the Redis side of sandq over the hiredis synchronous API: URL
 * parsing, connection, and one function per Redis operation (the key layout
 * is in queue.h), so leases, heartbeats and a reaper can be added alone. */
#include "queue.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "errors.h"
#include "log.h"
#include "util.h"

#define CONNECT_TIMEOUT_MS 5000
#define COMMAND_TIMEOUT_MS 10000
#define PUSH_CHUNK 1000 /* payloads per LPUSH */
#define SCAN_COUNT "256"
#define KEY_MAX 512

/* A parsed redis:// or unix:// URL. */
typedef struct {
  char host[256];
  int port;
  char path[256];     /* unix socket path; empty for TCP */
  char user[128];     /* empty: AUTH with the password alone */
  char password[256]; /* empty: no AUTH */
  long db;            /* -1: no SELECT */
} url_parts;

struct sq_queue {
  redisContext *ctx;
  url_parts url;
  char queue[64];
  char script_sha[41]; /* empty until SCRIPT LOAD on this connection */
  char errstr[256];
};

/* Stores a message for sq_queue_errstr. */
static void set_err(sq_queue *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(sq_queue *q, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(q->errstr, sizeof q->errstr, fmt, ap);
  va_end(ap);
}

/* ---- URL parsing ---------------------------------------------------- */

/* Copies [s, s+n) into dst (cap bytes) decoding %XX. Returns 0 or -1 when
 * too long or badly escaped. */
static int copy_decoded(char *dst, size_t cap, const char *s, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= n || !isxdigit((unsigned char)s[i + 1]) || !isxdigit((unsigned char)s[i + 2])) return -1;
      char hex[3] = {s[i + 1], s[i + 2], 0};
      c = (char)strtol(hex, NULL, 16);
      i += 2;
    }
    if (o + 1 >= cap) return -1;
    dst[o++] = c;
  }
  dst[o] = 0;
  return 0;
}

/* Parses url into *u. On error returns SQ_EINVAL with err naming the bad
 * part of the URL; the password is never copied into err. */
static int parse_url(const char *url, url_parts *u, char *err, size_t errlen) {
  memset(u, 0, sizeof *u);
  u->port = 6379;
  u->db = -1;
  if (!url || !*url) {
    snprintf(err, errlen, "redis URL is empty (want redis://[:password@]host[:port][/db] or unix:///path)");
    return SQ_EINVAL;
  }
  if (strncmp(url, "unix://", 7) == 0) {
    const char *p = url + 7;
    if (*p != '/') {
      snprintf(err, errlen, "redis URL: unix socket path must be absolute (unix:///path)");
      return SQ_EINVAL;
    }
    if (strlen(p) >= sizeof u->path) {
      snprintf(err, errlen, "redis URL: unix socket path is too long");
      return SQ_EINVAL;
    }
    strcpy(u->path, p);
    return 0;
  }
  if (strncmp(url, "redis://", 8) != 0) {
    const char *colon = strstr(url, "://");
    snprintf(err, errlen, "redis URL: scheme '%.*s' is not redis:// or unix://",
             colon ? (int)(colon - url > 32 ? 32 : colon - url) : 0, url);
    if (!colon) snprintf(err, errlen, "redis URL: missing scheme (want redis:// or unix://)");
    return SQ_EINVAL;
  }
  const char *auth = url + 8;
  const char *slash = strchr(auth, '/');
  const char *end = slash ? slash : auth + strlen(auth);
  const char *at = NULL;
  for (const char *p = auth; p < end; p++)
    if (*p == '@') at = p;
  const char *host = auth;
  if (at) {
    const char *colon = memchr(auth, ':', (size_t)(at - auth));
    if (!colon) {
      snprintf(err, errlen, "redis URL: credentials must be ':password@' or 'user:password@'");
      return SQ_EINVAL;
    }
    if (copy_decoded(u->user, sizeof u->user, auth, (size_t)(colon - auth)) != 0) {
      snprintf(err, errlen, "redis URL: user name is too long or badly %%-escaped");
      return SQ_EINVAL;
    }
    if (copy_decoded(u->password, sizeof u->password, colon + 1, (size_t)(at - colon - 1)) != 0) {
      snprintf(err, errlen, "redis URL: password is too long or badly %%-escaped");
      return SQ_EINVAL;
    }
    host = at + 1;
  }
  const char *host_end;
  const char *port = NULL;
  if (*host == '[') { /* [ipv6] */
    const char *rb = memchr(host, ']', (size_t)(end - host));
    if (!rb) {
      snprintf(err, errlen, "redis URL: unterminated '[' in host");
      return SQ_EINVAL;
    }
    host_end = rb + 1;
    if (host_end < end && *host_end != ':') {
      snprintf(err, errlen, "redis URL: unexpected text after ']' in host");
      return SQ_EINVAL;
    }
    if (host_end < end) port = host_end + 1;
    host++;
    host_end = rb;
  } else {
    const char *colon = memchr(host, ':', (size_t)(end - host));
    host_end = colon ? colon : end;
    if (colon) port = colon + 1;
  }
  if (host_end == host) {
    snprintf(err, errlen, "redis URL: missing host");
    return SQ_EINVAL;
  }
  if ((size_t)(host_end - host) >= sizeof u->host) {
    snprintf(err, errlen, "redis URL: host is too long");
    return SQ_EINVAL;
  }
  memcpy(u->host, host, (size_t)(host_end - host));
  u->host[host_end - host] = 0;
  if (port) {
    char buf[16];
    int64_t v;
    size_t n = (size_t)(end - port);
    if (n == 0 || n >= sizeof buf) {
      snprintf(err, errlen, "redis URL: port '%.*s' is not a number in 1..65535", (int)(n > 15 ? 15 : n), port);
      return SQ_EINVAL;
    }
    memcpy(buf, port, n);
    buf[n] = 0;
    if (!isdigit((unsigned char)buf[0]) || sq_parse_i64(buf, 1, 65535, &v) != 0) {
      snprintf(err, errlen, "redis URL: port '%s' is not a number in 1..65535", buf);
      return SQ_EINVAL;
    }
    u->port = (int)v;
  }
  if (slash && slash[1]) {
    int64_t v;
    if (!isdigit((unsigned char)slash[1]) || sq_parse_i64(slash + 1, 0, 1000000, &v) != 0) {
      snprintf(err, errlen, "redis URL: database '%.32s' is not a number", slash + 1);
      return SQ_EINVAL;
    }
    u->db = (long)v;
  }
  return 0;
}

/* ---- connection ----------------------------------------------------- */

static struct timeval ms_to_tv(int64_t ms) {
  struct timeval tv = {.tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};
  return tv;
}

/* Where the handle points, for messages (no password). */
static void describe(const sq_queue *q, char *buf, size_t n) {
  if (q->url.path[0])
    snprintf(buf, n, "unix://%s", q->url.path);
  else
    snprintf(buf, n, "%s:%d", q->url.host, q->url.port);
}

/* Turns a missing reply into an error: the connection is broken. Keeps
 * hiredis's errstr on the handle and logs it. */
static int conn_error(sq_queue *q, const char *what) {
  char where[300];
  describe(q, where, sizeof where);
  set_err(q, "%s: redis connection to %s: %s", what, where,
          q->ctx && q->ctx->errstr[0] ? q->ctx->errstr : "no reply");
  SQ_ERROR("%s", q->errstr);
  return SQ_EREDIS_CONN;
}

/* Checks r is of type want (REDIS_REPLY_*; a NIL is accepted when
 * nil_ok). Error replies and wrong types become SQ_EREDIS with a message;
 * a NULL reply is a lost connection. Does not free r. */
static int check_reply(sq_queue *q, const redisReply *r, int want, int nil_ok, const char *what) {
  if (!r) return conn_error(q, what);
  if (r->type == REDIS_REPLY_ERROR) {
    set_err(q, "%s: %.*s", what, (int)(r->len > 200 ? 200 : r->len), r->str);
    SQ_ERROR("%s", q->errstr);
    return SQ_EREDIS;
  }
  if (r->type == want || (nil_ok && r->type == REDIS_REPLY_NIL)) return 0;
  set_err(q, "%s: unexpected reply type %d (wanted %d)", what, r->type, want);
  SQ_ERROR("%s", q->errstr);
  return SQ_EREDIS;
}

/* Runs AUTH and SELECT as the URL asks. */
static int handshake(sq_queue *q) {
  redisReply *r;
  int rc;
  if (q->url.password[0]) {
    if (q->url.user[0])
      r = redisCommand(q->ctx, "AUTH %s %s", q->url.user, q->url.password);
    else
      r = redisCommand(q->ctx, "AUTH %s", q->url.password);
    rc = check_reply(q, r, REDIS_REPLY_STATUS, 0, "AUTH");
    freeReplyObject(r);
    if (rc) return rc == SQ_EREDIS ? SQ_EREDIS_CONN : rc;
  }
  if (q->url.db >= 0) {
    r = redisCommand(q->ctx, "SELECT %ld", q->url.db);
    rc = check_reply(q, r, REDIS_REPLY_STATUS, 0, "SELECT");
    freeReplyObject(r);
    if (rc) return rc == SQ_EREDIS ? SQ_EREDIS_CONN : rc;
  }
  return 0;
}

/* Opens (or reopens) the connection. */
static int do_connect(sq_queue *q) {
  redisFree(q->ctx);
  q->ctx = NULL;
  q->script_sha[0] = 0;
  struct timeval tv = ms_to_tv(CONNECT_TIMEOUT_MS);
  if (q->url.path[0])
    q->ctx = redisConnectUnixWithTimeout(q->url.path, tv);
  else
    q->ctx = redisConnectWithTimeout(q->url.host, q->url.port, tv);
  if (!q->ctx) {
    set_err(q, "out of memory allocating a redis context");
    SQ_ERROR("%s", q->errstr);
    return SQ_ENOMEM;
  }
  if (q->ctx->err) return conn_error(q, "connect");
  if (redisSetTimeout(q->ctx, ms_to_tv(COMMAND_TIMEOUT_MS)) != REDIS_OK) return conn_error(q, "set timeout");
  return handshake(q);
}

/* Reconnects when the last operation broke the connection (a worker that
 * outlives a redis restart). */
static int ensure_connected(sq_queue *q) {
  if (q->ctx && !q->ctx->err) return 0;
  SQ_WARN("reconnecting to redis after: %s", q->ctx ? q->ctx->errstr : "no connection");
  return do_connect(q);
}

/* Valid queue names: they sit inside the {hash tag}. */
static int queue_name_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= sizeof(((sq_queue *)0)->queue)) return 0;
  for (const char *p = s; *p; p++)
    if (*p == '{' || *p == '}' || isspace((unsigned char)*p) || iscntrl((unsigned char)*p)) return 0;
  return 1;
}

int sq_queue_new(const char *redis_url, const char *queue, sq_queue **out) {
  char err[300];
  *out = NULL;
  if (!queue || !queue_name_ok(queue)) {
    SQ_ERROR("queue name '%s' is invalid (1..63 characters, no braces or spaces)", queue ? queue : "");
    return SQ_EINVAL;
  }
  sq_queue *q = calloc(1, sizeof *q);
  if (!q) return SQ_ENOMEM;
  int rc = parse_url(redis_url, &q->url, err, sizeof err);
  if (rc) {
    SQ_ERROR("%s", err);
    free(q);
    return rc;
  }
  strcpy(q->queue, queue);
  rc = do_connect(q);
  if (rc) {
    sq_queue_free(q);
    return rc;
  }
  *out = q;
  return 0;
}

void sq_queue_free(sq_queue *q) {
  if (!q) return;
  redisFree(q->ctx);
  memset(q->url.password, 0, sizeof q->url.password);
  free(q);
}

const char *sq_queue_errstr(const sq_queue *q) {
  if (!q) return "no queue handle";
  return q->errstr[0] ? q->errstr : "no error";
}

/* ---- keys ----------------------------------------------------------- */

/* Writes sq:{Q}:<kind>[:<name>] into key. Returns 0 or SQ_EINVAL when too
 * long. */
static int make_key(sq_queue *q, char key[KEY_MAX], const char *kind, const char *name) {
  int n = name ? snprintf(key, KEY_MAX, "sq:{%s}:%s:%s", q->queue, kind, name)
               : snprintf(key, KEY_MAX, "sq:{%s}:%s", q->queue, kind);
  if (n < 0 || n >= KEY_MAX) {
    set_err(q, "key for %s '%.40s' is too long", kind, name ? name : "");
    SQ_ERROR("%s", q->errstr);
    return SQ_EINVAL;
  }
  return 0;
}

/* ---- push ----------------------------------------------------------- */

/* Queues one LPUSH of payloads[0..n) on the pipeline. */
static int append_lpush(sq_queue *q, const char *key, const char *const *payloads, const size_t *lens,
                        size_t n) {
  const char **argv = malloc((n + 2) * sizeof *argv);
  size_t *argl = malloc((n + 2) * sizeof *argl);
  int rc = 0;
  if (!argv || !argl) {
    rc = SQ_ENOMEM;
    goto out;
  }
  argv[0] = "LPUSH";
  argl[0] = 5;
  argv[1] = key;
  argl[1] = strlen(key);
  for (size_t i = 0; i < n; i++) {
    argv[i + 2] = payloads[i];
    argl[i + 2] = lens[i];
  }
  if (redisAppendCommandArgv(q->ctx, (int)(n + 2), argv, argl) != REDIS_OK) rc = conn_error(q, "LPUSH");
out:
  free(argv);
  free(argl);
  return rc;
}

int sq_queue_push(sq_queue *q, const char *batch, const char *const *payloads, const size_t *lens,
                  size_t n) {
  char tasks[KEY_MAX], bkey[KEY_MAX], batches[KEY_MAX];
  int rc;
  if ((rc = make_key(q, tasks, "tasks", NULL)) || (rc = make_key(q, bkey, "batch", batch)) ||
      (rc = make_key(q, batches, "batches", NULL)))
    return rc;
  if ((rc = ensure_connected(q))) return rc;
  /* The total goes first so done can never overtake it. */
  size_t appended = 0;
  if (redisAppendCommand(q->ctx, "HINCRBY %s total %lld", bkey, (long long)n) != REDIS_OK)
    return conn_error(q, "HINCRBY");
  appended++;
  if (redisAppendCommand(q->ctx, "SADD %s %s", batches, batch) != REDIS_OK) return conn_error(q, "SADD");
  appended++;
  for (size_t i = 0; i < n; i += PUSH_CHUNK) {
    size_t m = n - i < PUSH_CHUNK ? n - i : PUSH_CHUNK;
    if ((rc = append_lpush(q, tasks, payloads + i, lens + i, m))) return rc;
    appended++;
  }
  /* Read every reply, even after an error, to keep the connection in step. */
  int first = 0;
  for (size_t i = 0; i < appended; i++) {
    redisReply *r = NULL;
    if (redisGetReply(q->ctx, (void **)&r) != REDIS_OK) return conn_error(q, "push pipeline");
    rc = check_reply(q, r, REDIS_REPLY_INTEGER, 0, i == 0 ? "HINCRBY" : i == 1 ? "SADD" : "LPUSH");
    if (rc && !first) first = rc;
    freeReplyObject(r);
  }
  return first;
}

/* ---- claim / ack / requeue ------------------------------------------ */

int sq_queue_claim(sq_queue *q, const char *worker_id, int timeout_ms, char **out, size_t *len) {
  char tasks[KEY_MAX], proc[KEY_MAX];
  int rc;
  *out = NULL;
  if (len) *len = 0;
  if ((rc = make_key(q, tasks, "tasks", NULL)) || (rc = make_key(q, proc, "processing", worker_id)))
    return rc;
  if ((rc = ensure_connected(q))) return rc;
  redisReply *r;
  if (timeout_ms <= 0) {
    r = redisCommand(q->ctx, "LMOVE %s %s RIGHT LEFT", tasks, proc);
  } else {
    /* The socket must wait longer than the server blocks. */
    redisSetTimeout(q->ctx, ms_to_tv((int64_t)timeout_ms + COMMAND_TIMEOUT_MS));
    r = redisCommand(q->ctx, "BLMOVE %s %s RIGHT LEFT %d.%03d", tasks, proc, timeout_ms / 1000,
                     timeout_ms % 1000);
    if (!q->ctx->err) redisSetTimeout(q->ctx, ms_to_tv(COMMAND_TIMEOUT_MS));
  }
  rc = check_reply(q, r, REDIS_REPLY_STRING, 1, "BLMOVE");
  if (rc) goto out;
  if (r->type == REDIS_REPLY_NIL) {
    rc = SQ_EEMPTY;
    goto out;
  }
  *out = malloc(r->len + 1);
  if (!*out) {
    rc = SQ_ENOMEM;
    goto out;
  }
  memcpy(*out, r->str, r->len);
  (*out)[r->len] = 0;
  if (len) *len = r->len;
out:
  freeReplyObject(r);
  return rc;
}

int sq_queue_ack(sq_queue *q, const char *worker_id, const char *payload, size_t len) {
  char proc[KEY_MAX];
  int rc;
  if ((rc = make_key(q, proc, "processing", worker_id))) return rc;
  if ((rc = ensure_connected(q))) return rc;
  redisReply *r = redisCommand(q->ctx, "LREM %s 1 %b", proc, payload, len);
  rc = check_reply(q, r, REDIS_REPLY_INTEGER, 0, "LREM");
  if (!rc && r->integer == 0) SQ_WARN("ack: payload was not in %s (requeued elsewhere?)", proc);
  freeReplyObject(r);
  return rc;
}

/* Moves one element from proc back to the claim end of tasks. Returns 0
 * with *moved 0 or 1. */
static int requeue_one(sq_queue *q, const char *proc, const char *tasks, int *moved) {
  redisReply *r = redisCommand(q->ctx, "LMOVE %s %s RIGHT RIGHT", proc, tasks);
  int rc = check_reply(q, r, REDIS_REPLY_STRING, 1, "LMOVE");
  *moved = !rc && r->type == REDIS_REPLY_STRING;
  freeReplyObject(r);
  return rc;
}

int sq_queue_requeue_processing(sq_queue *q, const char *worker_id, size_t *n_moved) {
  char tasks[KEY_MAX], proc[KEY_MAX];
  int rc, moved = 1;
  *n_moved = 0;
  if ((rc = make_key(q, tasks, "tasks", NULL)) || (rc = make_key(q, proc, "processing", worker_id)))
    return rc;
  if ((rc = ensure_connected(q))) return rc;
  while (moved) {
    if ((rc = requeue_one(q, proc, tasks, &moved))) return rc;
    *n_moved += (size_t)moved;
  }
  return 0;
}

/* ---- results -------------------------------------------------------- */

/* KEYS: results hash, batch hash. ARGV: id, bson, status. */
static const char PUT_RESULT_LUA[] =
    "if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then\n"
    "  redis.call('HINCRBY', KEYS[2], 'done', 1)\n"
    "  redis.call('HINCRBY', KEYS[2], 'status:' .. ARGV[3], 1)\n"
    "  return 1\n"
    "end\n"
    "return 0\n";

/* SCRIPT LOAD once per connection. */
static int load_script(sq_queue *q) {
  redisReply *r = redisCommand(q->ctx, "SCRIPT LOAD %s", PUT_RESULT_LUA);
  int rc = check_reply(q, r, REDIS_REPLY_STRING, 0, "SCRIPT LOAD");
  if (!rc && r->len != 40) {
    set_err(q, "SCRIPT LOAD: unexpected sha of %zu bytes", r->len);
    SQ_ERROR("%s", q->errstr);
    rc = SQ_EREDIS;
  }
  if (!rc) memcpy(q->script_sha, r->str, 41);
  freeReplyObject(r);
  return rc;
}

/* EVALSHA of the put-result script; *reply is the caller's to free. */
static redisReply *eval_put_result(sq_queue *q, const char *rkey, const char *bkey, const char *id,
                                   const char *status, const uint8_t *bson, size_t bson_len) {
  return redisCommand(q->ctx, "EVALSHA %s 2 %s %s %s %b %s", q->script_sha, rkey, bkey, id,
                      (const char *)bson, bson_len, status);
}

int sq_queue_put_result(sq_queue *q, const char *batch, const char *id, const char *status,
                        const uint8_t *bson, size_t bson_len) {
  char rkey[KEY_MAX], bkey[KEY_MAX];
  int rc;
  if ((rc = make_key(q, rkey, "results", batch)) || (rc = make_key(q, bkey, "batch", batch))) return rc;
  if ((rc = ensure_connected(q))) return rc;
  if (!q->script_sha[0] && (rc = load_script(q))) return rc;
  redisReply *r = eval_put_result(q, rkey, bkey, id, status, bson, bson_len);
  if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0) {
    freeReplyObject(r);
    r = NULL;
    if ((rc = load_script(q))) return rc;
    r = eval_put_result(q, rkey, bkey, id, status, bson, bson_len);
  }
  rc = check_reply(q, r, REDIS_REPLY_INTEGER, 0, "EVALSHA put_result");
  if (!rc && r->integer == 0) rc = SQ_EEXISTS;
  freeReplyObject(r);
  return rc;
}

/* Parses one counter value of the batch hash. */
static int counter_value(sq_queue *q, const redisReply *v, int64_t *out) {
  char buf[32];
  if (v->type != REDIS_REPLY_STRING || v->len == 0 || v->len >= sizeof buf) goto bad;
  memcpy(buf, v->str, v->len);
  buf[v->len] = 0;
  if (sq_parse_i64(buf, INT64_MIN, INT64_MAX, out) != 0) goto bad;
  return 0;
bad:
  set_err(q, "HGETALL: batch counter is not an integer");
  SQ_ERROR("%s", q->errstr);
  return SQ_EREDIS;
}

int sq_queue_batch_stats(sq_queue *q, const char *batch, sq_batch_stats *out) {
  char bkey[KEY_MAX];
  int rc;
  memset(out, 0, sizeof *out);
  out->budget_usd = -1;
  if ((rc = make_key(q, bkey, "batch", batch))) return rc;
  if ((rc = ensure_connected(q))) return rc;
  redisReply *r = redisCommand(q->ctx, "HGETALL %s", bkey);
  if ((rc = check_reply(q, r, REDIS_REPLY_ARRAY, 0, "HGETALL"))) goto out;
  if (r->elements % 2) {
    set_err(q, "HGETALL: odd number of elements");
    SQ_ERROR("%s", q->errstr);
    rc = SQ_EREDIS;
    goto out;
  }
  for (size_t i = 0; i < r->elements; i += 2) {
    const redisReply *k = r->element[i], *v = r->element[i + 1];
    int64_t n;
    if (k->type != REDIS_REPLY_STRING) {
      set_err(q, "HGETALL: field is not a string");
      SQ_ERROR("%s", q->errstr);
      rc = SQ_EREDIS;
      goto out;
    }
    if (strcmp(k->str, "cost_usd") == 0 || strcmp(k->str, "budget_usd") == 0) { /* not counters */
      double d = v->type == REDIS_REPLY_STRING ? strtod(v->str, NULL) : 0;
      if (k->str[0] == 'c') out->cost_usd = d;
      else out->budget_usd = d;
      continue;
    }
    if ((rc = counter_value(q, v, &n))) goto out;
    if (strcmp(k->str, "total") == 0) {
      out->total = n;
    } else if (strcmp(k->str, "done") == 0) {
      out->done = n;
    } else if (strncmp(k->str, "status:", 7) == 0) {
      const char *name = k->str + 7;
      if (out->n_statuses >= SQ_QUEUE_MAX_STATUSES || strlen(name) >= sizeof out->statuses[0].name) {
        SQ_WARN("batch %s: status counter '%.40s' dropped", batch, name);
        continue;
      }
      strcpy(out->statuses[out->n_statuses].name, name);
      out->statuses[out->n_statuses++].count = n;
    }
  }
out:
  freeReplyObject(r);
  return rc;
}

/* One HSCAN step: *reply holds [cursor, [k, v, ...]] after a 0 return. */
static int hscan_step(sq_queue *q, const char *rkey, const char *cursor, redisReply **reply) {
  redisReply *r = redisCommand(q->ctx, "HSCAN %s %s COUNT " SCAN_COUNT, rkey, cursor);
  int rc = check_reply(q, r, REDIS_REPLY_ARRAY, 0, "HSCAN");
  if (!rc && (r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING ||
              r->element[1]->type != REDIS_REPLY_ARRAY || r->element[1]->elements % 2 ||
              r->element[0]->len >= 32)) {
    set_err(q, "HSCAN: malformed reply");
    SQ_ERROR("%s", q->errstr);
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
  char rkey[KEY_MAX], cursor[32] = "0";
  int rc;
  if ((rc = make_key(q, rkey, "results", batch))) return rc;
  if ((rc = ensure_connected(q))) return rc;
  do {
    redisReply *r;
    if ((rc = hscan_step(q, rkey, cursor, &r))) return rc;
    memcpy(cursor, r->element[0]->str, r->element[0]->len + 1);
    const redisReply *kv = r->element[1];
    for (size_t i = 0; i < kv->elements && !rc; i += 2) {
      const redisReply *k = kv->element[i], *v = kv->element[i + 1];
      if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) {
        set_err(q, "HSCAN: result entry is not a string pair");
        SQ_ERROR("%s", q->errstr);
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

int sq_queue_length(sq_queue *q, int64_t *out) {
  char tasks[KEY_MAX];
  int rc;
  *out = 0;
  if ((rc = make_key(q, tasks, "tasks", NULL))) return rc;
  if ((rc = ensure_connected(q))) return rc;
  redisReply *r = redisCommand(q->ctx, "LLEN %s", tasks);
  rc = check_reply(q, r, REDIS_REPLY_INTEGER, 0, "LLEN");
  if (!rc) *out = r->integer;
  freeReplyObject(r);
  return rc;
}

/* ---- LLM-side state (issue 5): batch spend and budget, cached verdicts -- */

/* Runs one command expecting type want (or NIL when nil_ok); *out keeps the
 * reply for the caller to free. */
static int run_cmd(sq_queue *q, redisReply **out, int want, int nil_ok, const char *what, const char *fmt, ...) {
  int rc;
  *out = NULL;
  if ((rc = ensure_connected(q))) return rc;
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(q->ctx, fmt, ap);
  va_end(ap);
  if ((rc = check_reply(q, r, want, nil_ok, what))) {
    freeReplyObject(r);
    return rc;
  }
  *out = r;
  return 0;
}

/* HINCRBYFLOAT or HSET of one dollar field of the batch hash. */
static int batch_money(sq_queue *q, const char *batch, const char *cmd, const char *field, double usd, int want) {
  char bkey[KEY_MAX], val[64];
  int rc;
  redisReply *r;
  if ((rc = make_key(q, bkey, "batch", batch))) return rc;
  snprintf(val, sizeof val, "%.12f", usd);
  rc = run_cmd(q, &r, want, 0, cmd, "%s %s %s %s", cmd, bkey, field, val);
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
  char bkey[KEY_MAX];
  int rc;
  redisReply *r;
  *cost_usd = 0;
  *budget_usd = -1;
  if ((rc = make_key(q, bkey, "batch", batch))) return rc;
  if ((rc = run_cmd(q, &r, REDIS_REPLY_ARRAY, 0, "HMGET", "HMGET %s cost_usd budget_usd", bkey))) return rc;
  if (r->elements == 2) {
    if (r->element[0]->type == REDIS_REPLY_STRING) *cost_usd = strtod(r->element[0]->str, NULL);
    if (r->element[1]->type == REDIS_REPLY_STRING) *budget_usd = strtod(r->element[1]->str, NULL);
  }
  freeReplyObject(r);
  return 0;
}

int sq_queue_cache_get(sq_queue *q, const char *ns, const char *key, char **out, size_t *len) {
  char name[KEY_MAX / 2], ckey[KEY_MAX];
  int rc;
  redisReply *r;
  *out = NULL;
  snprintf(name, sizeof name, "%s:%s", ns, key);
  if ((rc = make_key(q, ckey, "cache", name))) return rc;
  if ((rc = run_cmd(q, &r, REDIS_REPLY_STRING, 1, "GET", "GET %s", ckey))) return rc;
  if (r->type == REDIS_REPLY_NIL) {
    rc = SQ_ENOTFOUND;
  } else if (!(*out = malloc(r->len + 1))) {
    rc = SQ_ENOMEM;
  } else {
    memcpy(*out, r->str, r->len);
    (*out)[r->len] = '\0';
    if (len) *len = r->len;
  }
  freeReplyObject(r);
  return rc;
}

int sq_queue_cache_set(sq_queue *q, const char *ns, const char *key, const char *val, size_t len, int64_t ttl_s) {
  char name[KEY_MAX / 2], ckey[KEY_MAX];
  int rc;
  redisReply *r;
  snprintf(name, sizeof name, "%s:%s", ns, key);
  if ((rc = make_key(q, ckey, "cache", name))) return rc;
  if (ttl_s > 0)
    rc = run_cmd(q, &r, REDIS_REPLY_STATUS, 0, "SET", "SET %s %b EX %lld", ckey, val, len, (long long)ttl_s);
  else
    rc = run_cmd(q, &r, REDIS_REPLY_STATUS, 0, "SET", "SET %s %b", ckey, val, len);
  freeReplyObject(r);
  return rc;
}
