/* queue_batch.c: the producer side of the queue: push (priorities,
 * idempotency keys, the length cap), batch counters, the completion event,
 * streaming a batch's results, and queue-wide counters. A sharded queue
 * (queue_shard.c) keeps each batch's counters in parts, one per shard next
 * to the shard's tasks; readers add the parts up, and the batch is finished
 * when every part is. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "errors.h"
#include "name.h"
#include "result.h"
#include "queue_internal.h"
#include "util.h"

#define PUSH_CHUNK 500 /* tasks per atomic push step */
#define SCAN_COUNT "1024" /* results per HSCAN step: a 2,000-task batch reads back in 2-3 round trips */
#define PUSH_RETRY_MS 60000   /* a chunk whose outcome is unknown is sent again for this long */
#define PUSH_RETRY_MAX_MS 2000
#define SHARDED_WAIT_POLL_MS 100

static void sleep_ms(int64_t ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static const char *prio_letter(sq_priority p) {
  return p == SQ_PRIORITY_HIGH ? "h" : p == SQ_PRIORITY_LOW ? "l" : "n";
}

/* Whether any of tids[0..n) (NULL: none) is a task id (then the chunk
 * goes through sq1_push_ids, which skips ids already in the batch). */
static bool any_id(const char *const *tids, size_t n) {
  for (size_t i = 0; tids && i < n; i++)
    if (tids[i] && tids[i][0]) return true;
  return false;
}

/* One sq1_push_once (sq1_push_ids when an item has an id, tids[i]) of
 * items[0..n) onto shard s under chunk id; adds to *c. */
static int push_chunk(sq_queue *q, int s, const char *id, const char *batch, const sq_push_item *items,
                      const char *const *tids, size_t n, sq_push_counts *c) {
  char maxl[24], ret[24];
  int rc = SQ_ENOMEM;
  bool ids = any_id(tids, n);
  size_t stride = ids ? 4 : 3, argc = 4 + stride * n;
  const char **argv = malloc(argc * sizeof *argv);
  size_t *lens = malloc(argc * sizeof *lens);
  redisReply *r = NULL;
  if (!argv || !lens) goto out;
  /* each shard takes its share of the cap */
  int64_t shards = sq__queue_nshards(q), cap = q->opts.max_queue_len;
  snprintf(maxl, sizeof maxl, "%lld", (long long)(cap > 0 ? (cap + shards - 1) / shards : 0));
  snprintf(ret, sizeof ret, "%lld", (long long)q->opts.retention_s);
  argv[0] = id, argv[1] = batch, argv[2] = maxl, argv[3] = ret;
  for (size_t i = 0; i < 4; i++) lens[i] = strlen(argv[i]);
  for (size_t i = 0; i < n; i++) {
    const char *idem = items[i].idempotency_key ? items[i].idempotency_key : "";
    const char *tid = ids && tids[i] ? tids[i] : "";
    size_t at = 4 + stride * i;
    argv[at] = prio_letter(items[i].priority), lens[at] = 1;
    argv[at + 1] = idem, lens[at + 1] = strlen(idem);
    if (ids) argv[at + 2] = tid, lens[at + 2] = strlen(tid);
    argv[at + stride - 1] = items[i].payload, lens[at + stride - 1] = items[i].len;
  }
  r = sq__queue_fcall_at(q, s, ids ? "sq1_push_ids" : "sq1_push_once", (int)argc, argv, lens, true, &rc);
  if (rc) goto out;
  if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "QUEUEFULL", 9) == 0) {
    long long len = 0, max = 0;
    sscanf(r->str, "QUEUEFULL %lld %lld", &len, &max);
    snprintf(q->errstr, sizeof q->errstr, "queue %s is full: %lld task(s) waiting, max_queue_len %lld", q->queue,
             len, max);
    rc = SQ_EFULL;
    goto out;
  }
  if ((rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_push"))) goto out;
  if (r->elements != stride - 1) {
    sq__queue_err(q, "sq1_push: malformed reply");
    rc = SQ_EREDIS;
    goto out;
  }
  for (size_t i = 0; i < r->elements; i++)
    if (r->element[i]->type != REDIS_REPLY_INTEGER || r->element[i]->integer < 0) {
      sq__queue_err(q, "sq1_push: malformed reply");
      rc = SQ_EREDIS;
      goto out;
    }
  c->pushed += (size_t)r->element[0]->integer;
  c->duplicates += (size_t)r->element[1]->integer;
  if (ids) c->already += (size_t)r->element[2]->integer;
out:
  freeReplyObject(r);
  free(argv);
  free(lens);
  return rc;
}

/* push_chunk under a fresh chunk id; when its outcome is unknown (the
 * connection broke, or the replicas did not acknowledge it) and a failover
 * may be under way (Sentinel, Cluster, or wait_replicas set), sends it again
 * under the same id, which the server pushes at most once. */
static int push_chunk_retrying(sq_queue *q, int s, const char *batch, const sq_push_item *items,
                               const char *const *tids, size_t n, sq_push_counts *c) {
  char id[24];
  if (q->push_seq == 0 && getrandom(&q->push_seq, sizeof q->push_seq, 0) != (ssize_t)sizeof q->push_seq)
    q->push_seq = (uint64_t)sq_now_wall_ms() << 16;
  snprintf(id, sizeof id, "%016llx", (unsigned long long)q->push_seq++);
  bool retry = q->url.mode != SQ__MODE_PLAIN || q->opts.wait_replicas > 0;
  int64_t deadline = sq_now_mono_ms() + PUSH_RETRY_MS, delay_ms = 100;
  for (;;) {
    int rc = push_chunk(q, s, id, batch, items, tids, n, c);
    if (rc != SQ_EREDIS_CONN || !retry || sq_now_mono_ms() >= deadline) return rc;
    sq__queue_notice("push of %zu task(s) to queue %s: %s; sending it again in %lld ms", n, q->queue, q->errstr,
                     (long long)delay_ms);
    sleep_ms(delay_ms);
    delay_ms = delay_ms * 2 > PUSH_RETRY_MAX_MS ? PUSH_RETRY_MAX_MS : delay_ms * 2;
  }
}

/* The shard item must go to, or -1 when any will do. */
static int item_shard(const sq_queue *q, const sq_push_item *it) {
  if (sq__queue_nshards(q) == 1) return 0;
  return it->idempotency_key && it->idempotency_key[0] ? sq__queue_shard_of(q, it->idempotency_key) : -1;
}

/* For a sharded queue: marks in known[i] each of tids[0..n) that a
 * shard's part of the batch already holds (sq1_batch_has on every shard:
 * a push run again spreads its tasks afresh, so an id may come back on
 * another shard than before). */
static int known_ids(sq_queue *q, const char *batch, const char *const *tids, size_t n, bool *known) {
  int rc = 0, shards = sq__queue_nshards(q);
  size_t m = 0;
  const char **argv = malloc((n + 1) * sizeof *argv);
  size_t *lens = malloc((n + 1) * sizeof *lens), *at = malloc((n ? n : 1) * sizeof *at);
  if (!argv || !lens || !at) {
    rc = SQ_ENOMEM;
    goto out;
  }
  argv[0] = batch, lens[0] = strlen(batch);
  for (size_t i = 0; i < n; i++) {
    known[i] = false;
    if (!tids[i] || !tids[i][0]) continue;
    argv[1 + m] = tids[i], lens[1 + m] = strlen(tids[i]);
    at[m++] = i;
  }
  for (int s = 0; m && s < shards && !rc; s++) {
    redisReply *r = sq__queue_fcall_at(q, s, "sq1_batch_has", (int)(1 + m), argv, lens, false, &rc);
    if (!rc && !(rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_batch_has")) && r->elements != m) {
      sq__queue_err(q, "sq1_batch_has: malformed reply");
      rc = SQ_EREDIS;
    }
    for (size_t k = 0; !rc && k < m; k++)
      if (r->element[k]->type == REDIS_REPLY_INTEGER && r->element[k]->integer == 1) known[at[k]] = true;
    freeReplyObject(r);
  }
out:
  free(argv);
  free(lens);
  free(at);
  return rc;
}

int sq_queue_push_counted(sq_queue *q, const char *batch, const sq_push_item *items, const char *const *ids,
                          size_t n, sq_push_counts *c) {
  sq_push_counts sum = {0};
  int rc = 0, shards = sq__queue_nshards(q);
  bool *known = NULL;
  /* Sharded, a push is spread: runs of consecutive items, each run on one
   * shard (the next in turn, or the one an idempotency key belongs to), so
   * what landed before an error is still a prefix of items. An item whose
   * id another shard already holds is skipped here (counted already),
   * between the runs. */
  size_t chunk = PUSH_CHUNK;
  if (shards > 1) {
    chunk = (n + (size_t)shards - 1) / (size_t)shards;
    chunk = chunk < 1 ? 1 : chunk > PUSH_CHUNK ? PUSH_CHUNK : chunk;
    if (any_id(ids, n)) {
      if (!(known = calloc(n, sizeof *known))) rc = SQ_ENOMEM;
      else rc = known_ids(q, batch, ids, n, known);
    }
  }
  for (size_t i = 0; i < n && !rc;) {
    if (known && known[i]) {
      sum.already++, i++;
      continue;
    }
    int s = item_shard(q, &items[i]);
    if (s < 0) {
      s = q->next_shard % shards;
      q->next_shard = (s + 1) % shards;
    }
    size_t j = i + 1;
    while (j < n && j - i < chunk && !(known && known[j])) {
      int t = item_shard(q, &items[j]);
      if (t >= 0 && t != s) break;
      j++;
    }
    rc = push_chunk_retrying(q, s, batch, items + i, ids ? ids + i : NULL, j - i, &sum);
    i = j;
  }
  free(known);
  if (c) *c = sum;
  return rc;
}

int sq_queue_push_items(sq_queue *q, const char *batch, const sq_push_item *items, size_t n, size_t *pushed,
                        size_t *duplicates) {
  sq_push_counts c;
  int rc = sq_queue_push_counted(q, batch, items, NULL, n, &c);
  if (pushed) *pushed = c.pushed;
  if (duplicates) *duplicates = c.duplicates + c.already;
  return rc;
}

int sq_queue_push_mark(sq_queue *q, const char *batch, const char *push_id, sq_push_mark what) {
  static const char *const words[] = {"begin", "alive", "end", "drop"};
  char lease[24], ret[24];
  int rc;
  snprintf(lease, sizeof lease, "%d", SQ_QUEUE_PUSH_LEASE_MS);
  snprintf(ret, sizeof ret, "%lld", (long long)q->opts.retention_s);
  const char *argv[] = {batch, push_id, words[what], lease, ret};
  size_t lens[5];
  for (size_t i = 0; i < 5; i++) lens[i] = strlen(argv[i]);
  /* the home tag: one record for a sharded batch too (its spend lives there) */
  redisReply *r = sq__queue_fcall_at(q, -1, "sq1_push_mark", 5, argv, lens, true, &rc);
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, "sq1_push_mark");
  freeReplyObject(r);
  return rc;
}

int sq_queue_push(sq_queue *q, const char *batch, const char *const *payloads, const size_t *lens,
                  size_t n) {
  sq_push_item *items = calloc(n ? n : 1, sizeof *items);
  if (!items) return SQ_ENOMEM;
  for (size_t i = 0; i < n; i++) items[i] = (sq_push_item){.payload = payloads[i], .len = lens[i]};
  int rc = sq_queue_push_items(q, batch, items, n, NULL, NULL);
  free(items);
  return rc;
}

/* Parses one value of the batch hash bkey: an integer counter, or (money)
 * a finite number; names the field and the key when it is neither. */
static int counter_value(sq_queue *q, const char *bkey, const redisReply *k, const redisReply *v, bool money,
                         int64_t *out, double *usd) {
  char buf[32];
  if (v->type != REDIS_REPLY_STRING || v->len == 0 || v->len >= sizeof buf) goto bad;
  memcpy(buf, v->str, v->len);
  buf[v->len] = 0;
  if (money) {
    char *end = NULL;
    *usd = strtod(buf, &end);
    if (*end || !(*usd >= -1e15 && *usd <= 1e15)) goto bad; /* also NaN and inf */
    return 0;
  }
  if (sq_parse_i64(buf, INT64_MIN, INT64_MAX, out) != 0) goto bad;
  return 0;
bad:
  sq__queue_err(q, "%s: field '%.40s' is not %s; repair it with HSET or HDEL (docs/operations.md, \"Damaged keys\")",
                bkey, k->str, money ? "a number of dollars" : "an integer");
  return SQ_EPARSE;
}

/* Reads batch's hash on shard s (s's part of a sharded batch, or the whole
 * batch) into out, through sq1_batch_get: the server's 'finished' flag
 * decides finished_at_ms (0 while not finished). */
static int read_part(sq_queue *q, int s, const char *batch, sq_batch_stats *out) {
  int rc;
  char bkey[SQ__KEY_MAX];
  bool finished = false;
  memset(out, 0, sizeof *out);
  out->budget_usd = -1;
  if ((rc = sq__queue_shard_key(q, s, bkey, "batch", batch))) return rc;
  size_t len = strlen(batch);
  redisReply *r = sq__queue_fcall_at(q, s, "sq1_batch_get", 1, &batch, &len, false, &rc);
  if (rc || (rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_batch_get"))) goto out;
  if (r->elements % 2) {
    sq__queue_err(q, "sq1_batch_get: odd number of elements");
    rc = SQ_EREDIS;
    goto out;
  }
  for (size_t i = 0; i < r->elements; i += 2) {
    const redisReply *k = r->element[i], *v = r->element[i + 1];
    int64_t n;
    if (k->type != REDIS_REPLY_STRING) {
      sq__queue_err(q, "sq1_batch_get: field is not a string");
      rc = SQ_EREDIS;
      goto out;
    }
    if (strcmp(k->str, "push") == 0) { /* sq1_batch_get's one word for push_mark's record */
      const char *w = v->type == REDIS_REPLY_STRING ? v->str : "";
      out->push = strcmp(w, "complete") == 0 ? SQ_PUSH_COMPLETE : strcmp(w, "pushing") == 0 ? SQ_PUSH_PUSHING
                                                                                            : SQ_PUSH_INCOMPLETE;
      continue;
    }
    bool money = strcmp(k->str, "cost_usd") == 0 || strcmp(k->str, "budget_usd") == 0;
    double usd = 0;
    if ((rc = counter_value(q, bkey, k, v, money, &n, &usd))) goto out;
    if (money) {
      if (k->str[0] == 'c') out->cost_usd = usd;
      else out->budget_usd = usd;
      continue;
    }
    if (strcmp(k->str, "total") == 0) {
      out->total = n;
    } else if (strcmp(k->str, "done") == 0) {
      out->done = n;
    } else if (strcmp(k->str, "dead") == 0) {
      out->dead = n;
    } else if (strcmp(k->str, "duplicate") == 0) {
      out->duplicate = n;
    } else if (strcmp(k->str, "finished_at_ms") == 0) {
      out->finished_at_ms = n;
    } else if (strcmp(k->str, "created_at_ms") == 0) {
      out->created_at_ms = n;
    } else if (strcmp(k->str, "cancelled_at_ms") == 0) {
      out->cancelled_at_ms = n;
    } else if (strcmp(k->str, "pushed_at_ms") == 0) {
      out->pushed_at_ms = n;
    } else if (strcmp(k->str, "finished") == 0) {
      finished = n == 1;
    } else if (strncmp(k->str, "status:", 7) == 0) {
      const char *name = k->str + 7;
      if (out->n_statuses >= SQ_QUEUE_MAX_STATUSES || strlen(name) >= sizeof out->statuses[0].name) {
        out->n_statuses_dropped++;
        continue;
      }
      strcpy(out->statuses[out->n_statuses].name, name);
      out->statuses[out->n_statuses++].count = n;
    }
  }
  /* Counts that cannot be, whoever wrote them. */
  if (out->total < 0 || out->done < 0 || out->dead < 0 || out->duplicate < 0) {
    sq__queue_err(q, "%s: a negative count (total %lld, done %lld, dead %lld, duplicate %lld); repair it with HSET "
                  "(docs/operations.md, \"Damaged keys\")", bkey, (long long)out->total, (long long)out->done,
                  (long long)out->dead, (long long)out->duplicate);
    rc = SQ_EPARSE;
    goto out;
  }
  if (!finished) out->finished_at_ms = 0;
  else if (!out->finished_at_ms) out->finished_at_ms = 1; /* finished, its stamp lost: still finished */
out:
  freeReplyObject(r);
  return rc;
}

/* Adds a shard's part to the sum. */
static void add_part(sq_batch_stats *sum, const sq_batch_stats *part) {
  sum->total += part->total;
  sum->done += part->done;
  sum->dead += part->dead;
  sum->duplicate += part->duplicate;
  if (part->created_at_ms && (!sum->created_at_ms || part->created_at_ms < sum->created_at_ms))
    sum->created_at_ms = part->created_at_ms;
  if (part->cancelled_at_ms > sum->cancelled_at_ms) sum->cancelled_at_ms = part->cancelled_at_ms;
  sum->n_statuses_dropped += part->n_statuses_dropped;
  for (int i = 0; i < part->n_statuses; i++) {
    int k = 0;
    while (k < sum->n_statuses && strcmp(sum->statuses[k].name, part->statuses[i].name) != 0) k++;
    if (k == sum->n_statuses) {
      if (k >= SQ_QUEUE_MAX_STATUSES) {
        sum->n_statuses_dropped++;
        continue;
      }
      strcpy(sum->statuses[k].name, part->statuses[i].name);
      sum->n_statuses++;
    }
    sum->statuses[k].count += part->statuses[i].count;
  }
}

int sq_queue_batch_stats(sq_queue *q, const char *batch, sq_batch_stats *out) {
  int rc, shards = sq__queue_nshards(q);
  if (shards == 1) return read_part(q, 0, batch, out);
  memset(out, 0, sizeof *out);
  bool finished = true;
  for (int s = 0; s < shards; s++) {
    sq_batch_stats part;
    if ((rc = read_part(q, s, batch, &part))) return rc;
    add_part(out, &part);
    if (part.total > 0 && !part.finished_at_ms) finished = false;
    if (part.finished_at_ms > out->finished_at_ms) out->finished_at_ms = part.finished_at_ms;
  }
  if (!finished || out->total == 0) out->finished_at_ms = 0;
  /* the push's record lives under the home tag (sq_queue_push_mark) */
  sq_batch_stats home;
  if ((rc = read_part(q, -1, batch, &home))) return rc;
  out->push = home.push;
  out->pushed_at_ms = home.pushed_at_ms;
  /* the spend lives under the home tag (queue_spend.c) */
  return sq_queue_batch_spend(q, batch, &out->cost_usd, &out->budget_usd);
}

static int by_last_push(const void *a, const void *b) {
  const sq_batch_entry *x = a, *y = b;
  if (x->last_push_ms != y->last_push_ms) return x->last_push_ms < y->last_push_ms ? 1 : -1;
  return strcmp(x->name, y->name);
}

/* Adds the members of one shard's batches set to *out (a batch already
 * there keeps its latest push). */
static int list_part(sq_queue *q, int s, sq_batch_entry **out, size_t *n, size_t *cap) {
  char key[SQ__KEY_MAX];
  int rc;
  if ((rc = sq__queue_shard_key(q, s, key, "batches", NULL))) return rc;
  redisReply *r = sq__queue_cmdf(q, &rc, key, "ZRANGE %s 0 -1 WITHSCORES", key);
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "ZRANGE batches");
  for (size_t i = 0; !rc && i + 1 < r->elements; i += 2) {
    const redisReply *m = r->element[i], *sc = r->element[i + 1];
    if (m->type != REDIS_REPLY_STRING || sc->type != REDIS_REPLY_STRING) continue;
    /* A member is data: a name sq_name_ok refuses (escape codes, a newline,
     * NUL, too long) is kept only as far as its entry can name it, and
     * flagged; a score that is not a time in ms (inf, nan, negative, past
     * int64) is flagged rather than cast (a cast of inf is undefined). */
    const char *problem = NULL;
    size_t len = m->len > SQ_QUEUE_BATCH_NAME_MAX ? SQ_QUEUE_BATCH_NAME_MAX : m->len;
    if (m->len > SQ_QUEUE_BATCH_NAME_MAX || memchr(m->str, 0, m->len) || !sq_name_ok(m->str, SQ_NAME_BATCH_MAX))
      problem = "its name is not a batch name (1-128 characters of " SQ_NAME_CHARS ")";
    char *end = NULL;
    double d = strtod(sc->str, &end);
    int64_t at = 0;
    if (end == sc->str || *end || !isfinite(d) || d < 0 || d >= 9.2e18) {
      if (!problem) problem = "its score in the batches set is not a time in ms";
    } else {
      at = (int64_t)d;
    }
    size_t k = 0;
    while (!problem && k < *n && ((*out)[k].problem || strcmp((*out)[k].name, m->str) != 0)) k++;
    if (!problem && k < *n) {
      if (at > (*out)[k].last_push_ms) (*out)[k].last_push_ms = at;
      continue;
    }
    if (*n == *cap) {
      size_t ncap = *cap ? *cap * 2 : 64;
      sq_batch_entry *grown = realloc(*out, ncap * sizeof *grown);
      if (!grown) {
        rc = SQ_ENOMEM;
        break;
      }
      *out = grown, *cap = ncap;
    }
    memcpy((*out)[*n].name, m->str, len);
    (*out)[*n].name[len] = 0;
    (*out)[*n].problem = problem;
    (*out)[(*n)++].last_push_ms = at;
  }
  freeReplyObject(r);
  return rc;
}

int sq_queue_batch_list(sq_queue *q, sq_batch_entry **out, size_t *n) {
  size_t cap = 0;
  int rc = 0;
  *out = NULL;
  *n = 0;
  for (int s = 0; s < sq__queue_nshards(q) && !rc; s++) rc = list_part(q, s, out, n, &cap);
  if (rc) {
    free(*out);
    *out = NULL;
    *n = 0;
    return rc;
  }
  if (*n > 1) qsort(*out, *n, sizeof **out, by_last_push);
  return 0;
}

int sq_queue_batch_cancel(sq_queue *q, const char *batch, const char *reason, bool kill, sq_cancel_counts *out) {
  char ret[24];
  int rc = 0;
  memset(out, 0, sizeof *out);
  snprintf(ret, sizeof ret, "%lld", (long long)q->opts.retention_s);
  const char *argv[] = {batch, ret, reason, "kill"};
  size_t lens[] = {strlen(batch), strlen(ret), strlen(reason), 4};
  for (int s = 0; s < sq__queue_nshards(q) && !rc; s++) {
    redisReply *r = sq__queue_fcall_at(q, s, "sq1_cancel", kill ? 4 : 3, argv, lens, true, &rc);
    if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "sq1_cancel");
    if (!rc && (r->elements != 3 || r->element[0]->type != REDIS_REPLY_INTEGER ||
                r->element[1]->type != REDIS_REPLY_INTEGER || r->element[2]->type != REDIS_REPLY_INTEGER)) {
      sq__queue_err(q, "sq1_cancel: malformed reply");
      rc = SQ_EREDIS;
    }
    if (!rc) {
      out->cancelled += r->element[0]->integer;
      out->duplicate += r->element[1]->integer;
      out->running += r->element[2]->integer;
    }
    freeReplyObject(r);
  }
  return rc;
}

int sq_queue_batch_kill_seq(sq_queue *q, const char *batch, int shard, int64_t *seq) {
  char bkey[SQ__KEY_MAX];
  int rc;
  *seq = 0;
  if ((rc = sq__queue_shard_key(q, shard, bkey, "batch", batch))) return rc;
  redisReply *r = sq__queue_cmdf(q, &rc, bkey, "HGET %s kill_seq", bkey);
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_STRING, 1, "HGET kill_seq");
  if (!rc && r->type == REDIS_REPLY_STRING && sq_parse_i64(r->str, 0, INT64_MAX, seq) != 0) {
    sq__queue_err(q, "%s: kill_seq '%.40s' is not a fencing token; repair it with HSET (docs/operations.md, "
                  "\"Damaged keys\")", bkey, r->str);
    rc = SQ_EPARSE;
  }
  freeReplyObject(r);
  return rc;
}

/* One HSCAN step: *reply holds [cursor, [k, v, ...]] after a 0 return. */
static int hscan_step(sq_queue *q, const char *rkey, const char *cursor, redisReply **reply) {
  int rc;
  redisReply *r = sq__queue_cmdf(q, &rc, rkey, "HSCAN %s %s COUNT " SCAN_COUNT, rkey, cursor);
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "HSCAN");
  if (!rc && (r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING ||
              r->element[1]->type != REDIS_REPLY_ARRAY || r->element[1]->elements % 2 ||
              r->element[0]->len >= 32)) {
    sq__queue_err(q, "HSCAN: malformed reply");
    rc = SQ_EREDIS;
  }
  if (rc) {
    freeReplyObject(r);
    return rc;
  }
  *reply = r;
  return 0;
}

/* Streams one results hash (a shard's, or the batch's), each result in
 * full (sq_result_from_stored; a value that is not BSON as it is, for fn
 * to name). Each result comes once: SCAN repeats an entry only when its
 * hash shrinks mid-scan, and no field is ever removed from a results hash
 * (the whole key expires, or sq_queue_batch_results_drop removes it). */
static int results_of(sq_queue *q, const char *rkey, const char *batch, sq_queue_result_fn fn, void *ud) {
  char cursor[32] = "0";
  int rc;
  do {
    redisReply *r = NULL;
    if ((rc = hscan_step(q, rkey, cursor, &r))) return rc;
    memcpy(cursor, r->element[0]->str, r->element[0]->len + 1);
    const redisReply *kv = r->element[1];
    for (size_t i = 0; i < kv->elements && !rc; i += 2) {
      const redisReply *k = kv->element[i], *v = kv->element[i + 1];
      if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) {
        sq__queue_err(q, "HSCAN: result entry is not a string pair");
          rc = SQ_EREDIS;
        break;
      }
      bson_t full;
      if (sq_result_from_stored(k->str, batch, (const uint8_t *)v->str, v->len, &full) != 0) {
        rc = fn(k->str, (const uint8_t *)v->str, v->len, ud);
        continue;
      }
      rc = fn(k->str, bson_get_data(&full), full.len, ud);
      bson_destroy(&full);
    }
    freeReplyObject(r);
    if (rc) return rc;
  } while (strcmp(cursor, "0") != 0);
  return 0;
}

int sq_queue_batch_results(sq_queue *q, const char *batch, sq_queue_result_fn fn, void *ud) {
  char rkey[SQ__KEY_MAX];
  int rc = 0;
  for (int s = 0; s < sq__queue_nshards(q) && !rc; s++)
    if (!(rc = sq__queue_shard_key(q, s, rkey, "results", batch))) rc = results_of(q, rkey, batch, fn, ud);
  return rc;
}


/* Removes the batch's stored results when there are exactly `exported` of
 * them, shard by shard: each shard's results hash is removed only if it
 * still holds the count read a moment before (a check and UNLINK in one
 * script), so a result that arrived since is never removed unexported. */
int sq_queue_batch_results_drop(sq_queue *q, const char *batch, int64_t exported, int64_t *dropped) {
  enum { MAX_SHARDS = 64 };
  char rkey[SQ__KEY_MAX];
  int64_t held[MAX_SHARDS], sum = 0;
  int rc = 0, n = sq__queue_nshards(q);
  *dropped = 0;
  if (n > MAX_SHARDS) return SQ_EINVAL;
  for (int s = 0; s < n && !rc; s++) {
    if ((rc = sq__queue_shard_key(q, s, rkey, "results", batch))) break;
    redisReply *r = sq__queue_cmdf(q, &rc, rkey, "HLEN %s", rkey);
    if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, "HLEN");
    if (!rc) sum += held[s] = r->integer;
    freeReplyObject(r);
  }
  if (rc) return rc;
  if (sum != exported) return SQ_ECONFLICT;
  static const char script[] =
      "if redis.call('HLEN', KEYS[1]) == tonumber(ARGV[1]) then return redis.call('UNLINK', KEYS[1]) end return -1";
  for (int s = 0; s < n && !rc; s++) {
    if (!held[s]) continue;
    if ((rc = sq__queue_shard_key(q, s, rkey, "results", batch))) break;
    redisReply *r = sq__queue_cmdf(q, &rc, rkey, "EVAL %s 1 %s %lld", script, rkey, (long long)held[s]);
    if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, "EVAL drop results");
    if (!rc && r->integer < 0) rc = SQ_ECONFLICT;
    if (!rc) *dropped += held[s];
    freeReplyObject(r);
  }
  return rc;
}

/* A sharded batch has one event per part: polls the parts until all are
 * finished, then consumes their events. */
static int sharded_wait(sq_queue *q, const char *batch, int timeout_ms) {
  int64_t deadline = sq_now_mono_ms() + timeout_ms;
  for (;;) {
    sq_batch_stats st;
    int rc = sq_queue_batch_stats(q, batch, &st);
    if (rc) return rc;
    if (st.finished_at_ms) {
      for (int s = 0; s < sq__queue_nshards(q) && !rc; s++) {
        char key[SQ__KEY_MAX];
        if ((rc = sq__queue_shard_key(q, s, key, "done", batch))) break;
        freeReplyObject(sq__queue_cmdf(q, &rc, key, "LPOP %s", key));
      }
      return rc;
    }
    if (sq_now_mono_ms() >= deadline) return SQ_ETIMEOUT;
    sleep_ms(SHARDED_WAIT_POLL_MS);
  }
}

int sq_queue_batch_wait(sq_queue *q, const char *batch, int timeout_ms) {
  char key[SQ__KEY_MAX];
  int rc;
  if (sq__queue_nshards(q) > 1) return sharded_wait(q, batch, timeout_ms);
  if ((rc = sq__queue_key(q, key, "done", batch)) || (rc = sq__queue_conn(q, key))) return rc;
  /* The socket must wait longer than the server blocks. */
  redisContext *ctx = q->ctx;
  redisSetTimeout(ctx, (struct timeval){.tv_sec = (timeout_ms + SQ__COMMAND_TIMEOUT_MS) / 1000 + 1});
  redisReply *r = sq__queue_cmdf(q, &rc, key, "BLPOP %s %d.%03d", key, timeout_ms / 1000, timeout_ms % 1000);
  if (q->ctx == ctx && !ctx->err) redisSetTimeout(ctx, (struct timeval){.tv_sec = SQ__COMMAND_TIMEOUT_MS / 1000});
  if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 1, "BLPOP");
  if (!rc && r->type == REDIS_REPLY_NIL) rc = SQ_ETIMEOUT;
  freeReplyObject(r);
  return rc;
}

/* LLEN/ZCARD/HLEN of sq:{Q}:<kind> of every shard added to *out. */
static int add_size(sq_queue *q, const char *cmd, const char *kind, int64_t *out) {
  char key[SQ__KEY_MAX];
  int rc = 0;
  for (int s = 0; s < sq__queue_nshards(q) && !rc; s++) {
    if ((rc = sq__queue_shard_key(q, s, key, kind, NULL))) return rc;
    redisReply *r = sq__queue_cmdf(q, &rc, key, "%s %s", cmd, key);
    if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_INTEGER, 0, cmd);
    if (!rc) *out += r->integer;
    freeReplyObject(r);
  }
  return rc;
}

int sq_queue_length(sq_queue *q, int64_t *out) {
  int rc;
  *out = 0;
  if ((rc = add_size(q, "LLEN", "tasks", out)) || (rc = add_size(q, "LLEN", "tasks:high", out)) ||
      (rc = add_size(q, "LLEN", "tasks:low", out)))
    return rc;
  return 0;
}

int sq_queue_counters_get(sq_queue *q, sq_queue_counters *out) {
  char key[SQ__KEY_MAX];
  int rc;
  memset(out, 0, sizeof *out);
  if ((rc = sq_queue_length(q, &out->waiting)) || (rc = add_size(q, "ZCARD", "delayed", &out->delayed)) ||
      (rc = add_size(q, "ZCARD", "leases", &out->in_flight)) || (rc = add_size(q, "HLEN", "dead", &out->dead_letter)))
    return rc;
  static const char *const names[] = {"fenced", "duplicate", "stalled", "retried", "dead", "deduplicated"};
  for (int s = 0; s < sq__queue_nshards(q) && !rc; s++) {
    if ((rc = sq__queue_shard_key(q, s, key, "stats", NULL))) return rc;
    redisReply *r = sq__queue_cmdf(q, &rc, key, "HMGET %s fenced duplicate stalled retried dead deduplicated", key);
    if (!rc) rc = sq__queue_check(q, r, REDIS_REPLY_ARRAY, 0, "HMGET stats");
    if (!rc && r->elements == 6) {
      int64_t *f[] = {&out->fenced, &out->duplicate, &out->stalled,
                      &out->retried, &out->dead, &out->deduplicated};
      for (size_t i = 0; i < 6 && !rc; i++) {
        int64_t v = 0;
        if (r->element[i]->type != REDIS_REPLY_STRING) continue;
        if (sq_parse_i64(r->element[i]->str, 0, INT64_MAX, &v) != 0) {
          sq__queue_err(q, "%s: field '%s' is not a count; repair it with HSET or HDEL (docs/operations.md, "
                        "\"Damaged keys\")", key, names[i]);
          rc = SQ_EPARSE;
        }
        *f[i] += v;
      }
    }
    freeReplyObject(r);
  }
  return rc;
}
