/* queue.c: the queue handle: its URL (redis_url.h, plus passwords from
 * the environment), connecting one server, loading
 * the Redis Functions library (common/queue/lua/) and calling it, and
 * the start-up check of Redis settings that could lose tasks. Which server
 * a command goes to (Sentinel, Cluster) is queue_route.c's business. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "errors.h"
#include "name.h"
#include "queue_internal.h"
#include "util.h"

#define CONNECT_TIMEOUT_MS 5000

void sq__queue_err(sq_queue *q, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(q->errstr, sizeof q->errstr, fmt, ap);
  va_end(ap);
}

static sq_queue_notice_fn notice_fn;
static void *notice_ud;

void sq_queue_set_notice(sq_queue_notice_fn fn, void *ud) {
  notice_fn = fn;
  notice_ud = ud;
}

void sq__queue_notice(const char *fmt, ...) {
  if (!notice_fn) return;
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  notice_fn(text, notice_ud);
}


/* ---- URL parsing ---------------------------------------------------- */

int sq__url_parse(const char *url, sq__url *u, char *err, size_t errlen) {
  char why[300];
  if (sq_redis_url_parse(url, u, why, sizeof why) != 0)
    return sq_errf(err, errlen, SQ_EINVAL, "redis URL: %s", why);
  if (u->mode == SQ__MODE_PLAIN) return 0;
  /* Secrets may stay out of the URL: the master's password from
   * SANDQ_REDIS_PASSWORD, the sentinels' from SANDQ_SENTINEL_PASSWORD (by
   * default the master's, as most deployments share one). */
  if (!u->password[0]) {
    const char *pw = getenv("SANDQ_REDIS_PASSWORD");
    if (pw && strlen(pw) < sizeof u->password) snprintf(u->password, sizeof u->password, "%s", pw);
  }
  if (u->mode == SQ__MODE_SENTINEL) {
    const char *spw = getenv("SANDQ_SENTINEL_PASSWORD");
    snprintf(u->sentinel_password, sizeof u->sentinel_password, "%s", spw && *spw ? spw : u->password);
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
  if (q->url.mode == SQ__MODE_PLAIN && q->url.path[0])
    snprintf(buf, n, "unix://%s", q->url.path);
  else if (q->cur && q->cur->addr.host[0])
    snprintf(buf, n, "%s:%d", q->cur->addr.host, q->cur->addr.port);
  else if (q->url.mode == SQ__MODE_SENTINEL)
    snprintf(buf, n, "the master '%s' of the sentinels", q->url.master);
  else
    snprintf(buf, n, "%s:%d", q->url.host, q->url.port);
}

/* The element count of the reply array this thread last refused; 0 after
 * one was accepted. */
static _Thread_local long long refused_elements;
static pthread_mutex_t bound_lock = PTHREAD_MUTEX_INITIALIZER;
static redisReplyObjectFunctions bounded_fns; /* hiredis's own, createArray wrapped */
static void *(*hiredis_create_array)(const redisReadTask *, int);

static void *bounded_create_array(const redisReadTask *task, int elements) {
  if (elements < 0 || elements > SQ__REPLY_MAX_ELEMENTS) {
    refused_elements = elements < 0 ? -1 : elements;
    return NULL; /* the reader fails the reply: nothing allocated */
  }
  refused_elements = 0;
  return hiredis_create_array(task, elements);
}

void sq__queue_bound_replies(redisContext *c) {
  if (!c || !c->reader || !c->reader->fn) return;
  pthread_mutex_lock(&bound_lock);
  if (!hiredis_create_array && c->reader->fn->createArray) {
    bounded_fns = *c->reader->fn;
    hiredis_create_array = bounded_fns.createArray;
    bounded_fns.createArray = bounded_create_array;
  }
  if (hiredis_create_array && c->reader->fn->createArray == hiredis_create_array) c->reader->fn = &bounded_fns;
  pthread_mutex_unlock(&bound_lock);
}

const char *sq__queue_ctx_errstr(const redisContext *c) {
  static _Thread_local char text[160];
  if (!c) return "no connection";
  if (c->err == REDIS_ERR_OOM && refused_elements) {
    snprintf(text, sizeof text, "a reply of %lld elements refused (at most %d are read)", refused_elements,
             SQ__REPLY_MAX_ELEMENTS);
    return text;
  }
  return c->errstr[0] ? c->errstr : "no reply";
}

/* Turns a missing reply into an error: the connection is broken. */
static int conn_error(sq_queue *q, const char *what) {
  char where[300];
  describe(q, where, sizeof where);
  sq__queue_err(q, "%s: redis connection to %s: %s", what, where, q->ctx ? sq__queue_ctx_errstr(q->ctx) : "no reply");
  return SQ_EREDIS_CONN;
}

int sq__queue_check(sq_queue *q, const redisReply *r, int want, int nil_ok, const char *what) {
  if (!r) return conn_error(q, what);
  if (r->type == REDIS_REPLY_ERROR) {
    /* a pipelined command the cluster redirected: the map is out of date */
    if (q->url.mode == SQ__MODE_CLUSTER && sq__queue_reroute(r)) q->slots_stale = true;
    if (r->len >= 3 && strncmp(r->str, "OOM", 3) == 0) { /* maxmemory reached under noeviction */
      sq__queue_err(q, "%s: redis refuses writes: it is out of memory (maxmemory reached; maxmemory-policy "
                    "noeviction); free memory or raise maxmemory (docs/operations.md, \"What happens when\")", what);
      return SQ_EREDIS;
    }
    sq__queue_err(q, "%s: %.*s", what, (int)(r->len > 200 ? 200 : r->len), r->str);
    return SQ_EREDIS;
  }
  if (r->type == want || (nil_ok && r->type == REDIS_REPLY_NIL)) return 0;
  sq__queue_err(q, "%s: unexpected reply type %d (wanted %d)", what, r->type, want);
  return SQ_EREDIS;
}

/* Whether an error reply is about credentials or an ACL user's rights
 * (NOAUTH, WRONGPASS, NOPERM, an AUTH the server does not expect): the
 * operator's to fix, so it is named and not retried as a network fault. */
static bool is_auth_reply(const redisReply *r) {
  if (!r || r->type != REDIS_REPLY_ERROR || !r->str) return false;
  return strncmp(r->str, "NOAUTH", 6) == 0 || strncmp(r->str, "WRONGPASS", 9) == 0 ||
         strncmp(r->str, "NOPERM", 6) == 0 || strstr(r->str, "invalid password") ||
         strstr(r->str, "without any password configured");
}

/* Names an authentication or permission failure (what: the command);
 * returns SQ_EREDIS_AUTH. The password is never shown. */
static int auth_error(sq_queue *q, const redisReply *r, const char *what) {
  char where[300];
  describe(q, where, sizeof where);
  const char *user = q->url.user[0] ? q->url.user : "default";
  int n = (int)(r->len > 160 ? 160 : r->len);
  if (strncmp(r->str, "NOPERM", 6) == 0)
    sq__queue_err(q, "redis user '%s' at %s may not run %s (%.*s): grant the ACL sandq needs (docs/deploy.md, "
                  "\"Redis authentication\")", user, where, what, n, r->str);
  else if (!q->url.password[0])
    sq__queue_err(q, "redis at %s requires a password (%.*s): give it in the URL, redis://USER:PASSWORD@HOST:PORT "
                  "(docs/deploy.md, \"Redis authentication\")", where, n, r->str);
  else
    sq__queue_err(q, "redis at %s refused the password for user '%s' (%.*s): check the user and password in the "
                  "URL (docs/deploy.md, \"Redis authentication\")", where, user, n, r->str);
  return SQ_EREDIS_AUTH;
}

/* Runs AUTH (or, without a password, a PING that tells whether the server
 * wants one) and SELECT as the URL asks. */
static int handshake(sq_queue *q) {
  redisReply *r;
  int rc;
  if (q->url.password[0] && q->url.user[0])
    r = redisCommand(q->ctx, "AUTH %s %s", q->url.user, q->url.password);
  else if (q->url.password[0])
    r = redisCommand(q->ctx, "AUTH %s", q->url.password);
  else
    r = redisCommand(q->ctx, "PING");
  rc = is_auth_reply(r) ? auth_error(q, r, q->url.password[0] ? "AUTH" : "PING")
                        : sq__queue_check(q, r, REDIS_REPLY_STATUS, 0, q->url.password[0] ? "AUTH" : "PING");
  freeReplyObject(r);
  if (rc) return rc == SQ_EREDIS ? SQ_EREDIS_CONN : rc;
  if (q->url.db >= 0) {
    r = redisCommand(q->ctx, "SELECT %ld", q->url.db);
    rc = sq__queue_check(q, r, REDIS_REPLY_STATUS, 0, "SELECT");
    freeReplyObject(r);
    if (rc) return rc == SQ_EREDIS ? SQ_EREDIS_CONN : rc;
  }
  return 0;
}

int sq__queue_load_functions(sq_queue *q) {
  redisReply *r = redisCommand(q->ctx, "FUNCTION LOAD REPLACE %s", sq__queue_lua);
  int rc = is_auth_reply(r) ? auth_error(q, r, "FUNCTION LOAD") : sq__queue_check(q, r, REDIS_REPLY_STRING, 0, "FUNCTION LOAD");
  freeReplyObject(r);
  return rc;
}

int sq__queue_connect_node(sq_queue *q, sq__node *n) {
  redisFree(n->ctx);
  n->ctx = NULL;
  q->cur = n;
  q->ctx = NULL;
  int rc;
  if (q->url.mode == SQ__MODE_SENTINEL && (rc = sq__sentinel_master(q, &n->addr))) return rc;
  struct timeval tv = ms_to_tv(CONNECT_TIMEOUT_MS);
  if (q->url.mode == SQ__MODE_PLAIN && q->url.path[0])
    n->ctx = redisConnectUnixWithTimeout(q->url.path, tv);
  else
    n->ctx = redisConnectWithTimeout(n->addr.host, n->addr.port, tv);
  q->ctx = n->ctx;
  if (!n->ctx) {
    sq__queue_err(q, "out of memory allocating a redis context");
    return SQ_ENOMEM;
  }
  if (n->ctx->err) return conn_error(q, "connect");
  sq__queue_bound_replies(n->ctx);
  if (redisSetTimeout(n->ctx, ms_to_tv(SQ__COMMAND_TIMEOUT_MS)) != REDIS_OK) return conn_error(q, "set timeout");
  rc = handshake(q);
  if (!rc && q->url.mode == SQ__MODE_SENTINEL) rc = sq__sentinel_check_role(q);
  if (!rc) rc = sq__queue_load_functions(q);
  if (rc == SQ_EREDIS) rc = SQ_EREDIS_CONN; /* e.g. a server older than 7.0 */
  if (rc) {
    redisFree(n->ctx);
    n->ctx = q->ctx = NULL;
    return rc;
  }
  /* A reconnection may reach a promoted replica that never saw our last
   * claims: their tokens must not be handed out again (queue_claim.c). */
  if (n->was_up) sq__queue_raise_floors(q, n);
  n->was_up = true;
  return 0;
}

int sq__queue_ensure(sq_queue *q) { return sq__queue_conn(q, q->tasks_key); }

/* Sets up the handle's servers from its URL: the one of a plain URL, a
 * slot for the master a Sentinel names, or a cluster's (empty) slot map. */
static int setup_nodes(sq_queue *q) {
  if (q->url.mode == SQ__MODE_CLUSTER) {
    if (!(q->slots = calloc(SQ__SLOTS, 1))) return SQ_ENOMEM;
    q->slots_stale = true;
    return 0;
  }
  q->n_nodes = 1;
  if (q->url.mode == SQ__MODE_PLAIN) {
    snprintf(q->nodes[0].addr.host, sizeof q->nodes[0].addr.host, "%s", q->url.host);
    q->nodes[0].addr.port = q->url.port;
  }
  return 0;
}

int sq_queue_new_opts(const char *redis_url, const char *queue, const sq_queue_options *opts,
                      sq_queue **out, char *err, size_t errlen) {
  *out = NULL;
  if (err && errlen) err[0] = '\0';
  if (!sq_name_ok(queue, SQ_NAME_QUEUE_MAX))
    return sq_errf(err, errlen, SQ_EINVAL, "queue name '%s' is invalid (1-%d characters of " SQ_NAME_CHARS ")",
                   queue ? queue : "", SQ_NAME_QUEUE_MAX);
  sq_queue *q = calloc(1, sizeof *q);
  if (!q) return sq_errf(err, errlen, SQ_ENOMEM, "out of memory");
  char url_err[300];
  int rc;
  rc = sq__url_parse(redis_url, &q->url, url_err, sizeof url_err);
  if (rc) {
    free(q);
    return sq_errf(err, errlen, rc, "%s", url_err);
  }
  if (opts)
    q->opts = *opts;
  else
    sq_queue_options_default(&q->opts);
  if (q->opts.shards < 1 || q->opts.shards > SQ__MAX_SHARDS) {
    int64_t shards = q->opts.shards;
    free(q);
    return sq_errf(err, errlen, SQ_EINVAL, "shards: %lld is not in 1..%d", (long long)shards, SQ__MAX_SHARDS);
  }
  strcpy(q->queue, queue);
  snprintf(q->tasks_key, sizeof q->tasks_key, "sq:{%s}:tasks", queue);
  rc = setup_nodes(q);
  if (!rc) rc = sq__queue_ensure(q);
  if (!rc) rc = sq__queue_settle_shards(q);
  if (rc) {
    sq_errf(err, errlen, rc, "%s", q->errstr);
    sq_queue_free(q);
    return rc;
  }
  *out = q;
  return 0;
}

int sq_queue_new(const char *redis_url, const char *queue, sq_queue **out) {
  return sq_queue_new_opts(redis_url, queue, NULL, out, NULL, 0);
}

void sq_queue_free(sq_queue *q) {
  if (!q) return;
  sq__queue_disconnect(q);
  free(q->slots);
  memset(q->url.password, 0, sizeof q->url.password);
  free(q);
}

const char *sq_queue_errstr(const sq_queue *q) {
  if (!q) return "no queue handle";
  return q->errstr[0] ? q->errstr : "no error";
}

int sq__queue_key(sq_queue *q, char key[SQ__KEY_MAX], const char *kind, const char *name) {
  int n = name ? snprintf(key, SQ__KEY_MAX, "sq:{%s}:%s:%s", q->queue, kind, name)
               : snprintf(key, SQ__KEY_MAX, "sq:{%s}:%s", q->queue, kind);
  if (n < 0 || n >= SQ__KEY_MAX) {
    sq__queue_err(q, "key for %s '%.40s' is too long", kind, name ? name : "");
    return SQ_EINVAL;
  }
  return 0;
}

/* ---- calling the functions ------------------------------------------ */

#define FCALL_MAX_FIXED 16

int sq__queue_fcall_append_key(sq_queue *q, const char *key, const char *fn, int argc, const char **argv,
                               const size_t *lens) {
  const char *fixed_v[FCALL_MAX_FIXED + 4];
  size_t fixed_l[FCALL_MAX_FIXED + 4];
  const char **v = fixed_v;
  size_t *l = fixed_l;
  int rc = 0;
  if (argc > FCALL_MAX_FIXED) {
    v = malloc((size_t)(argc + 4) * sizeof *v);
    l = malloc((size_t)(argc + 4) * sizeof *l);
    if (!v || !l) {
      rc = SQ_ENOMEM;
      goto out;
    }
  }
  v[0] = "FCALL", l[0] = 5;
  v[1] = fn, l[1] = strlen(fn);
  v[2] = "1", l[2] = 1;
  if (!key) key = q->tasks_key;
  v[3] = key, l[3] = strlen(key);
  for (int i = 0; i < argc; i++) {
    v[i + 4] = argv[i];
    l[i + 4] = lens ? lens[i] : strlen(argv[i]);
  }
  if (redisAppendCommandArgv(q->ctx, argc + 4, v, l) != REDIS_OK) rc = conn_error(q, fn);
out:
  if (v != fixed_v) free(v);
  if (l != fixed_l) free(l);
  return rc;
}

redisReply *sq__queue_read(sq_queue *q, int *rc) {
  redisReply *r = NULL;
  *rc = 0;
  if (redisGetReply(q->ctx, (void **)&r) != REDIS_OK) {
    *rc = conn_error(q, "reply");
    return NULL;
  }
  return r;
}

redisReply *sq__queue_fcall(sq_queue *q, const char *fn, int argc, const char **argv, const size_t *lens,
                            int *rc) {
  return sq__queue_fcall_at(q, -1, fn, argc, argv, lens, false, rc);
}

/* ---- server settings ------------------------------------------------ */

/* CONFIG GET name into buf; returns 0 or -1 (not allowed, unknown). */
static int config_get(sq_queue *q, const char *name, char *buf, size_t n) {
  redisReply *r = redisCommand(q->ctx, "CONFIG GET %s", name);
  int ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING;
  if (ok) snprintf(buf, n, "%s", r->element[1]->str);
  freeReplyObject(r);
  return ok ? 0 : -1;
}

/* connected_slaves of INFO replication, or -1 when it cannot be read. */
static long connected_replicas(sq_queue *q) {
  redisReply *r = redisCommand(q->ctx, "INFO replication");
  long n = -1;
  const char *f = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "connected_slaves:") : NULL;
  if (f) n = strtol(f + strlen("connected_slaves:"), NULL, 10);
  freeReplyObject(r);
  return n;
}

int sq_queue_check_server(sq_queue *q, char *out, size_t outlen) {
  char policy[64], aof[16], save[256], where[300];
  int found = 0;
  sq_buf text = {0};
  if (out && outlen) out[0] = '\0';
  if (sq__queue_ensure(q)) return 0;
  describe(q, where, sizeof where);
  if (config_get(q, "maxmemory-policy", policy, sizeof policy) == 0 && strcmp(policy, "noeviction") != 0) {
    sq_buf_appendf(&text, "redis at %s has maxmemory-policy %s: it may evict queued tasks and results; set "
                   "noeviction (docs/operations.md)\n", where, policy);
    found++;
  }
  if (config_get(q, "appendonly", aof, sizeof aof) == 0 && config_get(q, "save", save, sizeof save) == 0 &&
      strcmp(aof, "yes") != 0) {
    sq_buf_appendf(&text, "redis at %s has no AOF (appendonly no%s): a restart loses %s; set appendonly yes "
                   "(docs/operations.md)\n", where, save[0] ? ", RDB snapshots only" : ", no snapshots",
                   save[0] ? "what changed since the last snapshot" : "every queued task and result");
    found++;
  }
  /* INFO is @dangerous (the documented ACL denies it): asked only when it matters */
  long replicas = q->opts.wait_replicas > 0 ? connected_replicas(q) : -1;
  if (q->opts.wait_replicas > 0 && replicas >= 0 && replicas < q->opts.wait_replicas) {
    sq_buf_appendf(&text, "redis at %s has %ld replica(s) connected and wait_replicas is %lld: pushes and results "
                   "wait until enough are back (docs/operations.md, Failover)\n", where, replicas,
                   (long long)q->opts.wait_replicas);
    found++;
  }
  if (out && outlen && text.data) snprintf(out, outlen, "%s", text.data);
  sq_buf_clear(&text);
  return found;
}
