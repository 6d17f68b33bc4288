/* queue_shard.c: a queue spread over N hash tags ({Q#0}..{Q#N-1}, config
 * `shards`), so a cluster spreads its tasks over N slots and so over its
 * masters. Each shard is a whole queue of its own (lists, claims, leases,
 * its part of every batch's counters) so that every step stays one atomic
 * function on one node; the home tag {Q} keeps what is not per task
 * (metrics, health, rollout, spend, cache, locks). With one shard the
 * shard and the home are the same tag {Q}, as before sharding existed.
 * Also the FCALL every queue step goes through. */
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

static int is_missing_function(const redisReply *r) {
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
    if (!r || attempt > 0 || !is_missing_function(r)) break;
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
