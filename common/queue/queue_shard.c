/* queue_shard.c: a queue spread over N hash tags ({Q#0}..{Q#N-1}, config
 * `shards`), so a cluster spreads its tasks over N slots and so over its
 * masters. Each shard is a whole queue of its own (lists, claims, leases,
 * its part of every batch's counters) so that every step stays one atomic
 * function on one node; the home tag {Q} keeps what is not per task
 * (metrics, health, rollout, spend, cache, locks). With one shard the
 * shard and the home are the same tag {Q}, as before sharding existed.
 * Also the FCALL every queue step goes through. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "queue_internal.h"

int sq__queue_nshards(const sq_queue *q) { return q->opts.shards > 1 ? (int)q->opts.shards : 1; }

int sq__queue_shard_key(sq_queue *q, int s, char key[SQ__KEY_MAX], const char *kind, const char *name) {
  if (s < 0 || sq__queue_nshards(q) == 1) return sq__queue_key(q, key, kind, name);
  int n = name ? snprintf(key, SQ__KEY_MAX, "sq:{%s#%d}:%s:%s", q->queue, s, kind, name)
               : snprintf(key, SQ__KEY_MAX, "sq:{%s#%d}:%s", q->queue, s, kind);
  if (n < 0 || n >= SQ__KEY_MAX) {
    sq__queue_err(q, "key for %s '%.40s' is too long", kind, name ? name : "");
    return SQ_EINVAL;
  }
  return 0;
}

int sq__queue_shard_of(const sq_queue *q, const char *idempotency_key) {
  return sq__key_slot(idempotency_key, strlen(idempotency_key)) % sq__queue_nshards(q);
}

/* Whether this process has not yet said that queue has recorded shards
 * and not configured ones (a worker opens several handles: one notice). */
static bool first_notice(const char *queue, long long recorded, int configured) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static char last[SQ__KEY_MAX];
  char now[SQ__KEY_MAX];
  snprintf(now, sizeof now, "%s %lld %d", queue, recorded, configured);
  pthread_mutex_lock(&lock);
  bool first = strcmp(now, last) != 0;
  if (first) snprintf(last, sizeof last, "%s", now);
  pthread_mutex_unlock(&lock);
  return first;
}

/* The shard count is the queue's own, not each handle's: the first handle
 * that opens a queue records its count in sq:{Q}:shards (SET NX), and every
 * handle after uses the recorded one, whatever its `shards` says. Two
 * handles that disagreed would strand tasks: a producer pushing where no
 * worker claims (a worker of a sharded queue never claims from {Q}), or a
 * worker claiming where nothing is pushed. A queue used before the record
 * existed gets the count of the first handle that opens it now. A handle
 * whose configuration differs says so through the notice hook; the
 * record is changed only by deleting it with the queue drained and every
 * handle stopped (docs/operations.md, "Sharded queues"). */
int sq__queue_settle_shards(sq_queue *q) {
  char key[SQ__KEY_MAX], want[24];
  int rc = sq__queue_key(q, key, "shards", NULL);
  if (rc) return rc;
  int mine = sq__queue_nshards(q);
  snprintf(want, sizeof want, "%d", mine);
  char what[SQ__KEY_MAX + 32];
  snprintf(what, sizeof what, "recording the shard count in %s", key);
  redisReply *r = sq__queue_cmdf(q, &rc, key, "SET %s %s NX GET", key, want);
  if (rc || (rc = sq__queue_check(q, r, REDIS_REPLY_STRING, 1, what))) {
    freeReplyObject(r);
    return rc;
  }
  if (r->type == REDIS_REPLY_STRING) { /* recorded before: that count holds */
    char *end = NULL;
    long long v = strtoll(r->str, &end, 10);
    if (end == r->str || *end || v < 1 || v > SQ__MAX_SHARDS) {
      sq__queue_err(q, "CORRUPT %s: value '%.40s' is not a shard count (1..%d); nothing was changed "
                    "(docs/operations.md, \"Damaged keys\")", key, r->str, SQ__MAX_SHARDS);
      freeReplyObject(r);
      return SQ_EPARSE;
    }
    if (v != mine && first_notice(q->queue, v, mine)) {
      sq__queue_notice("queue %s has %lld shard(s), recorded when it was first used: those are used, not this "
                       "configuration's shards: %d (docs/operations.md, \"Sharded queues\")",
                       q->queue, v, mine);
    }
    q->opts.shards = v;
  }
  freeReplyObject(r);
  return 0;
}

bool sq__queue_missing_function(const redisReply *r) {
  return r && r->type == REDIS_REPLY_ERROR && strstr(r->str, "Function not found");
}

#define FCALL_MAX_FIXED 16

redisReply *sq__queue_fcall_at(sq_queue *q, int s, const char *fn, int argc, const char **argv,
                               const size_t *lens, bool wait, int *rc) {
  char key[SQ__KEY_MAX];
  const char *fixed_v[FCALL_MAX_FIXED + 4];
  size_t fixed_l[FCALL_MAX_FIXED + 4];
  const char **v = fixed_v;
  size_t *l = fixed_l;
  char *cmd = NULL;
  redisReply *r = NULL;
  if ((*rc = sq__queue_shard_key(q, s, key, "tasks", NULL))) return NULL;
  if (argc > FCALL_MAX_FIXED) {
    v = malloc((size_t)(argc + 4) * sizeof *v);
    l = malloc((size_t)(argc + 4) * sizeof *l);
    if (!v || !l) {
      *rc = SQ_ENOMEM;
      goto out;
    }
  }
  v[0] = "FCALL", l[0] = 5;
  v[1] = fn, l[1] = strlen(fn);
  v[2] = "1", l[2] = 1;
  v[3] = key, l[3] = strlen(key);
  for (int i = 0; i < argc; i++) {
    v[i + 4] = argv[i];
    l[i + 4] = lens ? lens[i] : strlen(argv[i]);
  }
  int len = redisFormatCommandArgv(&cmd, argc + 4, v, l);
  if (len < 0) {
    *rc = SQ_ENOMEM;
    goto out;
  }
  for (int attempt = 0;; attempt++) {
    r = sq__queue_send(q, key, cmd, (size_t)len, wait, rc);
    if (!r || attempt > 0 || !sq__queue_missing_function(r)) break;
    freeReplyObject(r);
    r = NULL;
    /* q->ctx is the server that answered */
    sq__queue_notice("redis lost the sandq functions (restart or FUNCTION FLUSH); reloading");
    if ((*rc = sq__queue_load_functions(q))) break;
  }
out:
  redisFreeCommand(cmd);
  if (v != fixed_v) free(v);
  if (l != fixed_l) free(l);
  return r;
}

void sq__queue_raise_floors(sq_queue *q, sq__node *n) {
  int idx = (int)(n - q->nodes) + 1;
  for (int s = 0; s < sq__queue_nshards(q); s++) {
    char key[SQ__KEY_MAX], tok[24];
    if (q->max_token[s] <= 0 || sq__queue_shard_key(q, s, key, "tasks", NULL)) continue;
    if (q->url.mode == SQ__MODE_CLUSTER && q->slots[sq__key_slot(key, strlen(key))] != idx) continue;
    snprintf(tok, sizeof tok, "%lld", (long long)q->max_token[s]);
    freeReplyObject(redisCommand(n->ctx, "FCALL sq1_seq_floor 1 %s %s", key, tok));
  }
}
