/* queue_claim.c: a task's life on the worker side: claim under a lease and
 * a fencing token, heartbeat, complete (result + acknowledgement in one
 * atomic step), retry through the delayed set, release, recover, reap.
 * The server side of each step is a function in common/queue/lua/ (40-claims.lua
 * and 30-push.lua).
 * A sharded queue (queue_shard.c) claims from each shard in turn; a claim
 * names its shard and every later step of it goes there. The steps that
 * drop a claim wait for the replicas when opts.wait_replicas is set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "errors.h"
#include "queue_internal.h"
#include "util.h"

#define WAIT_SLICE_MS 100 /* how long one blocking wait lasts before polling again */
#define REAP_LIMIT "1000" /* expired leases (and old dead letters) handled per reaper run */

void sq_claim_clear(sq_claim *c) {
  if (!c) return;
  free(c->payload);
  memset(c, 0, sizeof *c);
}

static void i64_text(char *buf, size_t n, int64_t v) { snprintf(buf, n, "%lld", (long long)v); }

/* Parses {token, payload, info, ...} of shard s into out[0..*n); info is
 * "" or "<retries> <first claim wall ms>" (lua/40-claims.lua, claim). */
static int take_claims(sq_queue *q, int s, const redisReply *r, const char *worker_id, sq_claim *out, size_t max,
                       size_t *n) {
  int64_t now_ms = sq_now_wall_ms();
  for (size_t i = 0; i + 2 < r->elements && *n < max; i += 3) {
    const redisReply *t = r->element[i], *p = r->element[i + 1], *info = r->element[i + 2];
    if (t->type != REDIS_REPLY_INTEGER || p->type != REDIS_REPLY_STRING || info->type != REDIS_REPLY_STRING) {
      sq__queue_err(q, "sq1_claim: malformed reply");
      return SQ_EREDIS;
    }
    sq_claim *c = &out[*n];
    memset(c, 0, sizeof *c);
    if (!(c->payload = malloc(p->len + 1))) return SQ_ENOMEM;
    memcpy(c->payload, p->str, p->len);
    c->payload[p->len] = 0;
    c->len = p->len;
    c->token = t->integer;
    c->shard = s;
    if (c->token > q->max_token[s]) q->max_token[s] = c->token;
    snprintf(c->worker_id, sizeof c->worker_id, "%s", worker_id);
    long long retries = 0, first_ms = 0;
    c->attempt = 1;
    c->claimed_at_ms = c->first_claimed_at_ms = now_ms;
    /* retries 0 with a first claim: a task deferred (sq_queue_defer) and never retried */
    if (info->len && sscanf(info->str, "%lld %lld", &retries, &first_ms) >= 1 && retries >= 0 && retries < 1000000) {
      c->attempt = (int)retries + 1;
      if (first_ms > 0 && first_ms <= now_ms) c->first_claimed_at_ms = first_ms;
    }
    (*n)++;
  }
  return 0;
}

/* One non-blocking claim round trip on shard s, under a new claim id; a
 * broken connection records the id as possibly lost (sq_queue_lost_claim). */
static int claim_once(sq_queue *q, int s, const char *worker_id, sq_claim *out, size_t max, size_t *n) {
  char lease[24], cnt[24], id[24];
  int rc;
  if (q->claim_seq == 0 && getrandom(&q->claim_seq, sizeof q->claim_seq, 0) != (ssize_t)sizeof q->claim_seq)
    q->claim_seq = (uint64_t)sq_now_wall_ms() << 16;
  snprintf(id, sizeof id, "%016llx", (unsigned long long)q->claim_seq++);
  i64_text(lease, sizeof lease, q->opts.lease_ms);
  i64_text(cnt, sizeof cnt, (int64_t)max);
  const char *argv[] = {worker_id, lease, cnt, id, "1"};
  redisReply *r = sq__queue_fcall_at(q, s, "sq1_claim", 5, argv, NULL, false, &rc);
  if (rc == SQ_EREDIS_CONN) snprintf(q->lost_claim, sizeof q->lost_claim, "%s", id);
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_claim");
  if (!rc) rc = take_claims(q, s, r, worker_id, out, max, n);
  freeReplyObject(r);
  if (rc) {
    for (size_t i = 0; i < *n; i++) sq_claim_clear(&out[i]);
    *n = 0;
  }
  return rc;
}

/* Blocks up to ms until shard s's normal list holds something, without
 * taking it (BLMOVE of a list onto its own claim end is a peek). */
static int wait_for_work(sq_queue *q, int s, int64_t ms) {
  char key[SQ__KEY_MAX];
  int rc;
  if ((rc = sq__queue_shard_key(q, s, key, "tasks", NULL))) return rc;
  redisReply *r = sq__queue_cmdf(q, &rc, key, "BLMOVE %s %s RIGHT RIGHT %lld.%03lld", key, key,
                                 (long long)(ms / 1000), (long long)(ms % 1000));
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_STRING, 1, "BLMOVE");
  freeReplyObject(r);
  return rc;
}

void sq_queue_set_stop(sq_queue *q, volatile sig_atomic_t *stop) { q->stop = stop; }

int sq_queue_claim_many(sq_queue *q, const char *worker_id, int timeout_ms, sq_claim *out, size_t max,
                        size_t *n) {
  *n = 0;
  if (max == 0) return SQ_EINVAL;
  int64_t deadline = sq_now_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
  int shards = sq__queue_nshards(q);
  for (;;) {
    if (q->stop && *q->stop) return SQ_EINTERRUPTED;
    /* Each call starts one shard further, and fills what room is left from
     * the next ones, so no shard waits behind a busy one. */
    int first = q->next_shard % shards;
    q->next_shard = (first + 1) % shards;
    for (int k = 0; k < shards && *n < max; k++) {
      size_t got = 0;
      int rc = claim_once(q, (first + k) % shards, worker_id, out + *n, max - *n, &got);
      if (rc) return *n ? 0 : rc; /* what other shards gave is claimed: hand it out */
      *n += got;
    }
    if (*n) return 0;
    int64_t left = deadline - sq_now_mono_ms();
    if (left <= 0) return SQ_EEMPTY;
    /* High and low priority, due retries and other shards are polled every slice. */
    int rc = wait_for_work(q, q->next_shard, left < WAIT_SLICE_MS ? left : WAIT_SLICE_MS);
    if (rc) return rc;
  }
}

bool sq_queue_lost_claim(const sq_queue *q, char *id, size_t idlen) {
  if (!q || !q->lost_claim[0]) return false;
  snprintf(id, idlen, "%s", q->lost_claim);
  return true;
}

/* Calls fn with argv on every shard (wait: for the replicas too), summing
 * the integer replies into *sum (may be NULL). Stops at the first error. */
static int each_shard(sq_queue *q, const char *fn, int argc, const char **argv, bool wait, int64_t *sum) {
  int64_t total = 0;
  int rc = 0;
  for (int s = 0; s < sq__queue_nshards(q) && !rc; s++) {
    redisReply *r = sq__queue_fcall_at(q, s, fn, argc, argv, NULL, wait, &rc);
    if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, fn);
    if (!rc) total += r->integer;
    freeReplyObject(r);
  }
  if (sum) *sum = total;
  return rc;
}

int sq_queue_claim_undo(sq_queue *q, const char *worker_id, const char *claim_id, size_t *n) {
  const char *argv[] = {worker_id, claim_id};
  int64_t back = 0;
  int rc = each_shard(q, "sq1_claim_undo", 2, argv, true, &back);
  if (!rc && n) *n = (size_t)back;
  if (!rc && strcmp(q->lost_claim, claim_id) == 0) q->lost_claim[0] = 0;
  return rc;
}

int sq_queue_heartbeat(sq_queue *q, const char *worker_id, int64_t *n_leases) {
  char lease[24];
  i64_text(lease, sizeof lease, q->opts.lease_ms);
  const char *argv[] = {worker_id, lease};
  return each_shard(q, "sq1_heartbeat", 2, argv, false, n_leases);
}

int sq_queue_heartbeat_held(sq_queue *q, const char *worker_id, const int64_t *seen, int n_seen,
                            const sq_held_claim *held, size_t n, sq_heartbeat_report *report) {
  sq_heartbeat_report sum = {0};
  int shards = sq__queue_nshards(q), rc = 0;
  char lease[24], top[24];
  i64_text(lease, sizeof lease, q->opts.lease_ms);
  const char **argv = malloc((n + 3) * sizeof *argv);
  char (*toks)[24] = malloc((n ? n : 1) * sizeof *toks);
  if (!argv || !toks) rc = SQ_ENOMEM;
  for (int s = 0; s < shards && !rc; s++) {
    int argc = 3;
    i64_text(top, sizeof top, s < n_seen ? seen[s] : 0);
    argv[0] = worker_id, argv[1] = lease, argv[2] = top;
    for (size_t i = 0; i < n; i++) {
      if ((held[i].shard < 0 || held[i].shard >= shards ? 0 : held[i].shard) != s) continue;
      i64_text(toks[argc - 3], sizeof toks[0], held[i].token);
      argv[argc] = toks[argc - 3];
      argc++;
    }
    redisReply *r = sq__queue_fcall_at(q, s, "sq1_heartbeat_held", argc, argv, NULL, false, &rc);
    if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_heartbeat_held");
    if (!rc && (r->elements != 3 || r->element[0]->type != REDIS_REPLY_INTEGER ||
                r->element[1]->type != REDIS_REPLY_INTEGER || r->element[2]->type != REDIS_REPLY_INTEGER)) {
      sq__queue_err(q, "sq1_heartbeat_held: malformed reply");
      rc = SQ_EREDIS;
    }
    if (!rc) {
      sum.renewed += r->element[0]->integer;
      sum.handed_back += r->element[1]->integer;
      sum.unknown += r->element[2]->integer;
    }
    freeReplyObject(r);
  }
  free(argv);
  free(toks);
  if (report) *report = sum;
  return rc;
}

/* ---- complete ------------------------------------------------------- */

/* The arguments of sq1_complete; argv points into a and c. */
typedef struct {
  char tok[24], ret[24];
  const char *argv[7];
  size_t lens[7];
} complete_args;

static void complete_args_fill(sq_queue *q, const sq_completion *c, complete_args *a) {
  i64_text(a->tok, sizeof a->tok, c->claim->token);
  i64_text(a->ret, sizeof a->ret, q->opts.retention_s);
  const char *v[] = {c->claim->worker_id, a->tok, c->batch, c->id, c->status, (const char *)c->bson, a->ret};
  for (int i = 0; i < 7; i++) {
    a->argv[i] = v[i];
    a->lens[i] = i == 5 ? c->bson_len : strlen(v[i]);
  }
}

static int complete_code(sq_queue *q, const redisReply *r) {
  int rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, "sq1_complete");
  if (rc) return rc;
  if (r->integer == 1) return 0;
  if (r->integer == 0) return SQ_EEXISTS;
  return SQ_EFENCED; /* the claim is no longer this worker's */
}

/* The servers a pipeline of completions went to (distinct, in order). */
typedef struct {
  redisContext **ctx; /* per completion */
  redisContext **uniq;
  size_t n_uniq;
} pipe_conns;

/* Results per sq1_complete_n call: a worker's flush is a few; the cap
 * bounds one call's time on the server. */
#define COMPLETE_GROUP_MAX 32

/* Whether completion i joins the group that starts at g: the same server,
 * key (shard) and worker. */
static bool same_group(const pipe_conns *pc, char (*keys)[SQ__KEY_MAX], const sq_completion *c, size_t g, size_t i) {
  return i - g < COMPLETE_GROUP_MAX && pc->ctx[i] == pc->ctx[g] && strcmp(keys[i], keys[g]) == 0 &&
         strcmp(c[i].claim->worker_id, c[g].claim->worker_id) == 0;
}

/* Appends one sq1_complete_n for c[0, n) (one server, key and worker):
 * ARGV worker, retention_s, then token, batch, id, status, bson each. */
static int complete_n_append(sq_queue *q, const char *key, const sq_completion *c, size_t n) {
  int argc = 2 + 5 * (int)n, rc;
  const char **v = malloc((size_t)argc * sizeof *v);
  size_t *l = malloc((size_t)argc * sizeof *l);
  char(*tok)[24] = malloc(n * sizeof *tok);
  char ret[24];
  if (!v || !l || !tok) {
    rc = SQ_ENOMEM;
    goto out;
  }
  i64_text(ret, sizeof ret, q->opts.retention_s);
  v[0] = c[0].claim->worker_id, v[1] = ret;
  for (size_t i = 0; i < n; i++) {
    i64_text(tok[i], sizeof tok[i], c[i].claim->token);
    const char **e = v + 2 + 5 * i;
    e[0] = tok[i], e[1] = c[i].batch, e[2] = c[i].id, e[3] = c[i].status, e[4] = (const char *)c[i].bson;
  }
  for (int k = 0; k < argc; k++) l[k] = (k >= 2 && (k - 2) % 5 == 4) ? c[(k - 2) / 5].bson_len : strlen(v[k]);
  rc = sq__queue_fcall_append_key(q, key, "sq1_complete_n", argc, v, l);
out:
  free(v);
  free(l);
  free(tok);
  return rc;
}

int sq_queue_complete_many(sq_queue *q, const sq_completion *c, size_t n, int *rcs) {
  return sq_queue_complete_many_log(q, c, n, rcs, NULL, NULL);
}

int sq_queue_complete_many_log(sq_queue *q, const sq_completion *c, size_t n, int *rcs,
                               const sq_queue_stream_batch *log, int *log_rc) {
  int rc = 0, first_err = 0, lrc = 0, rrc = 0;
  size_t n_log = 0;
  bool with_log = log && log->n > 0, log_sent = false;
  redisContext *home = NULL; /* the log's server */
  pipe_conns pc = {.ctx = calloc(n ? n : 1, sizeof *pc.ctx), .uniq = calloc(n ? n : 1, sizeof *pc.uniq)};
  bool *redo = calloc(n ? n : 1, sizeof *redo);
  bool *log_redo = calloc(with_log ? log->n : 1, sizeof *log_redo);
  char(*keys)[SQ__KEY_MAX] = malloc((n ? n : 1) * sizeof *keys);
  redisContext **reload = calloc(n ? n : 1, sizeof *reload); /* servers without sq1_complete_n */
  size_t n_reload = 0;
  if (log_rc) *log_rc = 0;
  if (!pc.ctx || !pc.uniq || !redo || !log_redo || !keys || !reload) {
    rc = SQ_ENOMEM;
    goto out;
  }
  /* Every server first (the log's too), so a failure leaves no reply
   * unread anywhere. */
  for (size_t i = 0; i < n; i++) {
    if ((rc = sq__queue_shard_key(q, c[i].claim->shard, keys[i], "tasks", NULL)) || (rc = sq__queue_conn(q, keys[i])))
      goto out;
    pc.ctx[i] = q->ctx;
  }
  if (with_log && !(lrc = sq__queue_stream_conn(q, log))) home = q->ctx;
  /* One sq1_complete_n per run of completions for the same server, shard
   * and worker: one call's fixed cost and checks for several results. */
  for (size_t g = 0, i; g < n; g = i) {
    for (i = g + 1; i < n && same_group(&pc, keys, c, g, i);) i++;
    q->ctx = pc.ctx[g];
    if ((rc = complete_n_append(q, keys[g], c + g, i - g))) goto out;
    size_t u = 0;
    while (u < pc.n_uniq && pc.uniq[u] != pc.ctx[g]) u++;
    if (u == pc.n_uniq) pc.uniq[pc.n_uniq++] = pc.ctx[g];
  }
  /* The log's entries ride in the same round trip, on the home tag's
   * server, behind the completions (and before its WAIT). */
  if (home) {
    q->ctx = home;
    lrc = sq__queue_stream_append(q, log, &n_log);
    log_sent = true;
  }
  bool wait = q->opts.wait_replicas > 0;
  for (size_t u = 0; wait && u < pc.n_uniq; u++) {
    q->ctx = pc.uniq[u];
    sq__queue_wait_append(q);
  }
  for (size_t g = 0, i; g < n; g = i) {
    for (i = g + 1; i < n && same_group(&pc, keys, c, g, i);) i++;
    q->ctx = pc.ctx[g];
    redisReply *r = sq__queue_read(q, &rc);
    if (!r) { /* that connection is gone: its other replies fail at once too */
      for (size_t k = g; k < i; k++) rcs[k] = rc;
      if (!first_err) first_err = rc;
      continue;
    }
    bool missing = sq__queue_missing_function(r);
    if (missing) {
      size_t k = 0;
      while (k < n_reload && reload[k] != pc.ctx[g]) k++;
      if (k == n_reload) reload[n_reload++] = pc.ctx[g];
    }
    if (missing || sq__queue_reroute(r)) {
      for (size_t k = g; k < i; k++) redo[k] = true, rcs[k] = SQ_EREDIS;
    } else if ((rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_complete_n")) == 0 &&
               r->elements != i - g) {
      sq__queue_err(q, "sq1_complete_n: %zu codes for %zu results", r->elements, i - g);
      rc = SQ_EREDIS;
    }
    for (size_t k = g; k < i && !redo[k]; k++) rcs[k] = rc ? rc : complete_code(q, r->element[k - g]);
    rc = 0;
    freeReplyObject(r);
  }
  if (home) {
    q->ctx = home;
    rrc = sq__queue_stream_replies(q, n_log, log_redo);
  }
  for (size_t u = 0; wait && u < pc.n_uniq; u++) {
    q->ctx = pc.uniq[u];
    int w = sq__queue_wait_read(q);
    if (!w) continue;
    /* Not on enough replicas: a failover could lose those results. */
    for (size_t i = 0; i < n; i++)
      if (pc.ctx[i] == pc.uniq[u] && (rcs[i] == 0 || rcs[i] == SQ_EEXISTS)) rcs[i] = w;
    if (!first_err) first_err = w;
  }
  /* A server whose library has no sq1_complete_n (lost, or loaded by an
   * older worker) gets this one's; what ran nowhere goes again, alone. */
  for (size_t k = 0; k < n_reload && !first_err; k++) {
    q->ctx = reload[k];
    sq__queue_notice("redis lacks sq1_complete_n (restart, FUNCTION FLUSH, or an older worker's library); reloading");
    sq__queue_load_functions(q);
  }
  for (size_t i = 0; i < n && !first_err; i++) {
    if (redo[i]) rcs[i] = sq_queue_complete(q, &c[i]);
  }
  if (home && !lrc && !rrc) rrc = sq__queue_stream_resend(q, log, log_redo);
  rc = first_err;
out:
  /* The log's entries went nowhere, or some failed: the caller keeps them. */
  if (log_rc && with_log) *log_rc = lrc ? lrc : rrc ? rrc : !log_sent ? (rc ? rc : SQ_EREDIS_CONN) : 0;
  free(pc.ctx);
  free(pc.uniq);
  free(redo);
  free(log_redo);
  free(keys);
  free(reload);
  return rc;
}

int sq_queue_complete(sq_queue *q, const sq_completion *c) {
  complete_args a;
  int rc;
  complete_args_fill(q, c, &a);
  redisReply *r = sq__queue_fcall_at(q, c->claim->shard, "sq1_complete", 7, a.argv, a.lens, true, &rc);
  if (!rc) rc = complete_code(q, r);
  freeReplyObject(r);
  return rc;
}

/* ---- retry / release ------------------------------------------------ */

/* sq_queue_retry and sq_queue_defer: sq1_retry, deferring (no attempt
 * charged) when defer. */
static int retry_or_defer(sq_queue *q, const sq_claim *c, int64_t delay_ms, const char *reason, bool defer,
                          int64_t *scheduled_ms) {
  char tok[24], maxa[24], delay[24], base[24], cap[24], jit[32], ret[24], first[24];
  uint32_t rnd = 0;
  int rc;
  if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) rnd = (uint32_t)sq_now_mono_ms() * 2654435761u;
  i64_text(tok, sizeof tok, c->token);
  i64_text(maxa, sizeof maxa, q->opts.max_attempts);
  i64_text(delay, sizeof delay, delay_ms < 0 ? -1 : delay_ms);
  i64_text(base, sizeof base, q->opts.backoff_base_ms);
  i64_text(cap, sizeof cap, q->opts.backoff_max_ms);
  snprintf(jit, sizeof jit, "%.6f", (double)rnd / 4294967296.0);
  i64_text(ret, sizeof ret, q->opts.retention_s);
  i64_text(first, sizeof first, c->first_claimed_at_ms > 0 ? c->first_claimed_at_ms : 0);
  const char *argv[] = {c->worker_id, tok, reason ? reason : "", maxa, delay, base, cap, jit, ret, first, "1"};
  redisReply *r = sq__queue_fcall_at(q, c->shard, "sq1_retry", defer ? 11 : 10, argv, NULL, true, &rc);
  if (rc) return rc;
  if (r->type == REDIS_REPLY_INTEGER && r->integer == -1) {
    rc = SQ_EFENCED;
  } else if ((rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_retry")) == 0) {
    if (r->elements != 3 || r->element[0]->type != REDIS_REPLY_INTEGER || r->element[2]->type != REDIS_REPLY_INTEGER) {
      sq__queue_err(q, "sq1_retry: malformed reply");
      rc = SQ_EREDIS;
    } else if (r->element[0]->integer == 0) {
      rc = SQ_EEXHAUSTED;
    } else if (scheduled_ms) {
      *scheduled_ms = r->element[2]->integer;
    }
  }
  freeReplyObject(r);
  return rc;
}

int sq_queue_retry(sq_queue *q, const sq_claim *c, int64_t delay_ms, const char *reason, int64_t *scheduled_ms) {
  return retry_or_defer(q, c, delay_ms, reason, false, scheduled_ms);
}

int sq_queue_defer(sq_queue *q, const sq_claim *c, int64_t delay_ms, const char *reason) {
  return retry_or_defer(q, c, delay_ms < 0 ? 0 : delay_ms, reason, true, NULL);
}

int sq_queue_stall(sq_queue *q, const sq_claim *c, const char *why, bool *dead) {
  char tok[24], stalls[24], ret[24];
  int rc;
  i64_text(tok, sizeof tok, c->token);
  i64_text(stalls, sizeof stalls, q->opts.max_stalls);
  i64_text(ret, sizeof ret, q->opts.retention_s);
  const char *argv[] = {c->worker_id, tok, stalls, ret, why ? why : "handed back"};
  redisReply *r = sq__queue_fcall_at(q, c->shard, "sq1_stall", 5, argv, NULL, true, &rc);
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, "sq1_stall");
  if (!rc && r->integer < 0) rc = SQ_EFENCED;
  if (!rc && dead) *dead = r->integer == 2;
  freeReplyObject(r);
  return rc;
}

int sq_queue_release_all(sq_queue *q, const char *worker_id, size_t *n) {
  const char *argv[] = {worker_id};
  int64_t back = 0;
  int rc = each_shard(q, "sq1_release_all", 1, argv, true, &back);
  if (n) *n = (size_t)back;
  return rc;
}

/* ---- recover / reap ------------------------------------------------- */

/* Reads an array reply of integers into v[0..n). */
static int int_array(sq_queue *q, const redisReply *r, const char *what, int64_t *v, size_t n) {
  int rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, what);
  if (rc) return rc;
  if (r->elements != n) goto bad;
  for (size_t i = 0; i < n; i++) {
    if (r->element[i]->type != REDIS_REPLY_INTEGER) goto bad;
    v[i] = r->element[i]->integer;
  }
  return 0;
bad:
  sq__queue_err(q, "%s: malformed reply", what);
  return SQ_EREDIS;
}

int sq_queue_recover(sq_queue *q, const char *worker_id, size_t *requeued, size_t *dead) {
  char stalls[24], ret[24];
  int64_t sum[2] = {0, 0};
  int rc = 0;
  i64_text(stalls, sizeof stalls, q->opts.max_stalls);
  i64_text(ret, sizeof ret, q->opts.retention_s);
  const char *argv[] = {worker_id, stalls, ret};
  for (int s = 0; s < sq__queue_nshards(q) && !rc; s++) {
    int64_t v[2] = {0, 0};
    redisReply *r = sq__queue_fcall_at(q, s, "sq1_recover", 3, argv, NULL, true, &rc);
    if (!rc) rc = int_array(q, r, "sq1_recover", v, 2);
    freeReplyObject(r);
    sum[0] += v[0];
    sum[1] += v[1];
  }
  if (requeued) *requeued = (size_t)sum[0];
  if (dead) *dead = (size_t)sum[1];
  return rc;
}

int sq_queue_reap(sq_queue *q, const char *worker_id, bool *ran, size_t *requeued, size_t *dead) {
  char lock[24], stalls[24], ret[24], dead_ret[24];
  int64_t v[3] = {0, 0, 0};
  int rc;
  i64_text(lock, sizeof lock, q->opts.reap_interval_ms);
  i64_text(stalls, sizeof stalls, q->opts.max_stalls);
  i64_text(ret, sizeof ret, q->opts.retention_s);
  i64_text(dead_ret, sizeof dead_ret, q->opts.dead_retention_s);
  const char *argv[] = {worker_id, lock, stalls, REAP_LIMIT, ret, dead_ret};
  int64_t sum[3] = {0, 0, 0};
  rc = 0;
  /* each shard has its own reaper lock */
  for (int s = 0; s < sq__queue_nshards(q) && !rc; s++) {
    redisReply *r = sq__queue_fcall_at(q, s, "sq1_reap", 6, argv, NULL, false, &rc);
    if (!rc) rc = int_array(q, r, "sq1_reap", v, 3);
    freeReplyObject(r);
    for (int i = 0; i < 3 && !rc; i++) sum[i] += v[i];
  }
  if (ran) *ran = sum[0] > 0;
  if (requeued) *requeued = (size_t)sum[1];
  if (dead) *dead = (size_t)sum[2];
  return rc;
}
