/* queue.h: the Redis side of sandq (hiredis + a Redis Functions library,
 * common/queue/lua/): push tasks, claim them under a lease and a fencing
 * token, heartbeat, complete, retry, hand back, reap, dead letter, batches.
 *
 * Knows nothing of the jail or the LLM. Every key of queue Q starts with
 * sq:{Q}: so a queue lives in one Redis Cluster slot; the key layout and
 * what happens on each failure are in docs/operations.md.
 *
 * A handle is one connection (one per cluster master it talks to) and is
 * not thread-safe: a heartbeat thread opens its own. A call that finds the
 * connection broken reconnects once (with Sentinel, asking the sentinels
 * for the master again); a call that finds the functions library missing
 * reloads it and retries. In a cluster, calls follow MOVED and ASK and wait
 * out a slot that is moving (queue_route.c).
 *
 * With opts.wait_replicas > 0, the calls that write a task's fate (push,
 * complete, retry, stall, release_all, recover, claim_undo,
 * dead_requeue) also fail with SQ_EREDIS_CONN when fewer replicas than that
 * acknowledged the write: it happened on the master but could be lost in a
 * failover, so the caller sends it again (docs/operations.md, Failover).
 */
#ifndef SQ_QUEUE_H
#define SQ_QUEUE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

typedef struct sq_queue sq_queue;


/* Connects to redis_url (redis://[:password@]host[:port][/db],
 * unix:///path, redis-sentinel://HOST:PORT[,...]/MASTER[?db=N] or
 * redis-cluster://HOST:PORT[,...]; docs/configuration.md) and loads the
 * functions library. queue is the queue name
 * (sq_name_ok, name.h). opts may be NULL (defaults; copied). Returns 0 and
 * a handle, or SQ_EINVAL (bad name or URL), SQ_EREDIS_CONN, SQ_ENOMEM with
 * the reason in err (errlen bytes; err may be NULL); *out is then NULL.
 * sq_queue_new is the same with default options and no reason. */
int sq_queue_new(const char *redis_url, const char *queue, sq_queue **out);
int sq_queue_new_opts(const char *redis_url, const char *queue, const sq_queue_options *opts,
                      sq_queue **out, char *err, size_t errlen);
/* Disconnects and frees; NULL is a no-op. */
void sq_queue_free(sq_queue *q);
/* The last error's text for this handle (never NULL). The library logs
 * nothing: a call that fails leaves its reason here, and its caller decides
 * whether and how to log it. */
const char *sq_queue_errstr(const sq_queue *q);

/* Notices: things a call recovered from on its own, worth an operator's
 * eye but no error (the connection was re-established; Redis had lost the
 * functions library and it was reloaded). This is an observer, process-wide
 * because no caller is there to return them to: set it once before any
 * handle is used (NULL: notices are dropped, the default). fn is called on
 * the thread whose handle noticed, so it must be thread-safe (the logger
 * is); text lives only for the call. */
typedef void (*sq_queue_notice_fn)(const char *text, void *ud);
void sq_queue_set_notice(sq_queue_notice_fn fn, void *ud);

/* Checks the Redis settings that can lose tasks: an evicting
 * maxmemory-policy, no AOF and no RDB snapshots; and, with wait_replicas
 * set, fewer replicas connected than it asks (writes would wait). Writes one line (ending
 * in a newline) per finding into out (outlen bytes, truncated; may be
 * NULL) for the caller to report. Returns how many it found (0 when CONFIG
 * GET is not allowed). */
int sq_queue_check_server(sq_queue *q, char *out, size_t outlen);

/* ---- producing ------------------------------------------------------ */

typedef enum { SQ_PRIORITY_NORMAL = 0, SQ_PRIORITY_HIGH, SQ_PRIORITY_LOW } sq_priority;

typedef struct {
  const char *payload; /* borrowed */
  size_t len;
  sq_priority priority;
  const char *idempotency_key; /* NULL or "": no deduplication */
} sq_push_item;

/* What a push did: tasks pushed, skipped for an idempotency_key already
 * pushed, and skipped because their id was already in the batch. */
typedef struct {
  size_t pushed;
  size_t duplicates;
  size_t already;
} sq_push_counts;

/* sq_queue_push_items, where ids (NULL: none) holds each item's task id
 * (borrowed; a NULL or "" entry: none): an item whose id its batch already
 * holds (an id an earlier push with ids put into it, within retention_s)
 * is skipped, so a push run again into its batch (after one killed
 * midway) adds only the tasks it lacks: the batch keeps each id once.
 * *c (not NULL) counts what happened, also on error. Returns as
 * sq_queue_push_items. */
int sq_queue_push_counted(sq_queue *q, const char *batch, const sq_push_item *items, const char *const *ids,
                          size_t n, sq_push_counts *c);

/* Whether a batch's push completed, as sq_queue_push_mark recorded it:
 * each push begins (push_id, a name of the caller's of up to 32
 * characters), renews its lease while it pushes (at least every
 * SQ_QUEUE_PUSH_LEASE_MS) and ends; alive and end do nothing once a later
 * push began on the batch. A push that never ended and whose lease ran
 * out is incomplete (its process died). Returns 0 or a Redis error. */
#define SQ_QUEUE_PUSH_LEASE_MS 15000
typedef enum {
  SQ_PUSH_MARK_BEGIN,
  SQ_PUSH_MARK_ALIVE,
  SQ_PUSH_MARK_END,
  SQ_PUSH_MARK_DROP /* the end of a push that put nothing into the batch: no record, and no key for it */
} sq_push_mark;
int sq_queue_push_mark(sq_queue *q, const char *batch, const char *push_id, sq_push_mark what);

/* Pushes n items for batch in chunks (one atomic step per chunk, spread
 * over the shards of a sharded queue): a task whose idempotency_key was
 * seen within retention_s is skipped. A chunk whose outcome is unknown (a
 * broken connection, replicas that did not acknowledge it) is sent again
 * for up to a minute with Sentinel, Cluster or wait_replicas, under an id
 * that makes the server push it once. Adds the
 * pushed count to the batch's total. *pushed and *duplicates (either may be
 * NULL) count what happened, also on error. Returns 0, SQ_EFULL when a
 * chunk would take the queue past max_queue_len (earlier chunks stay
 * pushed), or SQ_EREDIS/SQ_EREDIS_CONN. */
int sq_queue_push_items(sq_queue *q, const char *batch, const sq_push_item *items, size_t n, size_t *pushed,
                        size_t *duplicates);
/* Pushes n payloads (borrowed) at normal priority without deduplication. */
int sq_queue_push(sq_queue *q, const char *batch, const char *const *payloads, const size_t *lens,
                  size_t n);

/* ---- claiming and settling ------------------------------------------ */

/* One claimed task. token is the fencing token: every later step names it
 * and is refused (SQ_EFENCED) once the lease was reaped and the task went
 * to someone else. Owns payload; clear with sq_claim_clear. */
typedef struct {
  int64_t token;
  char *payload; /* NUL-terminated, len bytes (may hold NULs) */
  size_t len;
  char worker_id[128];
  int shard;                   /* which of the queue's shards holds the claim (0 unless sharded) */
  int attempt;                 /* 1 on the first claim, n + 1 after n retries (sq_queue_retry) */
  int64_t claimed_at_ms;       /* wall clock of this claim (the worker's) */
  int64_t first_claimed_at_ms; /* wall clock of the first attempt's claim (this one's when attempt is 1) */
} sq_claim;

void sq_claim_clear(sq_claim *c);

/* Makes claims on q return SQ_EINTERRUPTED, without taking anything, once
 * *stop is non-zero (a worker's SIGTERM flag). stop may be NULL. */
void sq_queue_set_stop(sq_queue *q, volatile sig_atomic_t *stop);

/* Claims up to max tasks (high, then normal, then low priority) into
 * worker_id's processing list, each under a lease of lease_ms. Waits up to
 * timeout_ms (0: not at all) for a first task. Returns 0 with *n >= 1
 * claims in out[0..n) (the caller clears each), SQ_EEMPTY, SQ_EINTERRUPTED
 * (the stop flag is set), or SQ_EREDIS*. */
int sq_queue_claim_many(sq_queue *q, const char *worker_id, int timeout_ms, sq_claim *out, size_t max,
                        size_t *n);

/* When the connection broke during a claim, Redis may have run it and the
 * reply been lost: tasks this worker holds without knowing (its heartbeat
 * would keep them forever). Copies that claim's id into id (idlen >= 24) and
 * returns true when the last claim on q ended so. */
bool sq_queue_lost_claim(const sq_queue *q, char *id, size_t idlen);
/* Hands back (front of their lists, no stall) the tasks of worker_id's claim
 * claim_id if it was the worker's last and they are still its own; a claim
 * that never ran hands back nothing. Call on a working connection before
 * claiming again. *n (may be NULL) gets how many. Returns 0 or SQ_EREDIS*. */
int sq_queue_claim_undo(sq_queue *q, const char *worker_id, const char *claim_id, size_t *n);

/* Extends every lease worker_id holds; call every lease_ms/3 or so from a
 * thread with its own handle. *n_leases (may be NULL) gets how many. */
int sq_queue_heartbeat(sq_queue *q, const char *worker_id, int64_t *n_leases);

/* One claim a worker holds in memory: its shard and fencing token. */
typedef struct {
  int shard;
  int64_t token;
} sq_held_claim;

/* What sq_queue_heartbeat_held did, summed over the shards. */
typedef struct {
  int64_t renewed;     /* held claims whose leases were extended */
  int64_t handed_back; /* claims Redis listed for this worker that it does not hold (their
                          results were acknowledged and then lost by a Redis that went back,
                          or a claim's reply was lost): back to the front of their lists */
  int64_t unknown;     /* held claims Redis does not know (it restarted empty or went back):
                          their results will be refused */
} sq_heartbeat_report;

/* The heartbeat of a worker that says what it holds: extends the leases of
 * held[0..n) only, so a claim is renewed only while a worker has it in
 * memory. seen[s] (n_seen entries; missing ones are 0) is the highest
 * token of shard s the worker has read in a claim reply: a claim listed for
 * worker_id at or below it and not held is handed back (no stall counted)
 * and runs again; one above it (a claim whose reply is on its way) keeps
 * the lease it was claimed with. report may be NULL. Returns 0 or
 * SQ_EREDIS*; also runs when Redis is at maxmemory (allow-oom). */
int sq_queue_heartbeat_held(sq_queue *q, const char *worker_id, const int64_t *seen, int n_seen,
                            const sq_held_claim *held, size_t n, sq_heartbeat_report *report);

/* What to store for one claim. Borrowed. */
typedef struct {
  const sq_claim *claim;
  const char *batch, *id, *status;
  const uint8_t *bson;
  size_t bson_len;
} sq_completion;

/* Stores the result and acknowledges the claim in one atomic step, if the
 * claim is still this worker's. Returns 0 stored, SQ_EEXISTS (a result for
 * this id was there already; the claim is acknowledged; also when the claim
 * is gone but the stored result is this very one, sent again after a lost
 * reply), SQ_EFENCED (lease lost; nothing written; counted in stats
 * "fenced"), or SQ_EREDIS*. */
int sq_queue_complete(sq_queue *q, const sq_completion *c);
/* The same for n completions in one round trip; rcs[i] gets each code.
 * Returns 0, or the connection error that stopped it. */
int sq_queue_complete_many(sq_queue *q, const sq_completion *c, size_t n, int *rcs);

/* ---- capped streams (queue_stream.c) ------------------------------- */

/* One stream entry: n field/value pairs, all borrowed. */
typedef struct {
  const char *const *fields;
  const char *const *values;
  size_t n;
} sq_queue_stream_entry;

/* Entries for the stream sq:{Q}:<name>, capped at about max_len entries
 * (XADD MAXLEN ~ max_len: Redis trims whole nodes, so a little more may
 * stay). Borrowed. */
typedef struct {
  const char *name;
  int64_t max_len;
  const sq_queue_stream_entry *entries;
  size_t n;
} sq_queue_stream_batch;

/* Appends b's entries in one round trip. Returns 0, or the first error
 * (SQ_EREDIS: e.g. the key holds another type; SQ_EREDIS_CONN). */
int sq_queue_stream_add(sq_queue *q, const sq_queue_stream_batch *b);

/* sq_queue_complete_many, with log's entries appended in the same round
 * trip (after the completions). *log_rc gets 0 or the entries' first error;
 * the completions' codes are as sq_queue_complete_many's. log may be NULL. */
int sq_queue_complete_many_log(sq_queue *q, const sq_completion *c, size_t n, int *rcs,
                               const sq_queue_stream_batch *log, int *log_rc);

/* Calls fn once per entry of sq:{Q}:<name> from start_id (inclusive;
 * "(ID" exclusive; NULL or "": the first), oldest first, paging with
 * XRANGE. The entry's id, fields and values are borrowed for the call (at
 * most 64 pairs). A non-zero return from fn stops and is returned. */
typedef int (*sq_queue_stream_fn)(const char *entry_id, const char *const *fields, const char *const *values,
                                  size_t n, void *ud);
int sq_queue_stream_range(sq_queue *q, const char *name, const char *start_id, sq_queue_stream_fn fn, void *ud);

/* Schedules a transient failure for another attempt after delay_ms (< 0:
 * exponential backoff with jitter from the handle's options) through the
 * delayed set; the task's next claim carries attempt + 1 and this claim's
 * first_claimed_at_ms. Returns 0 with *scheduled_ms (may be NULL) set,
 * SQ_EEXHAUSTED (max_attempts reached: the claim is still held, store a
 * final result), SQ_EFENCED, or SQ_EREDIS*. reason goes into the task's
 * history. */
int sq_queue_retry(sq_queue *q, const sq_claim *c, int64_t delay_ms, const char *reason, int64_t *scheduled_ms);
/* Defers c for delay_ms through the delayed set without charging an
 * attempt (a failure that was not the task's: its LLM provider is
 * unavailable); its next claim keeps attempt and first_claimed_at_ms, so
 * the caller can tell how long the task has waited. Counted in stats
 * "deferred". Returns 0, SQ_EFENCED or SQ_EREDIS*. */
int sq_queue_defer(sq_queue *q, const sq_claim *c, int64_t delay_ms, const char *reason);

/* Hands a claim back as a stall (its worker could not run it, maybe
 * because of the task: a jail failure): front of its list, or the dead
 * letter after max_stalls, so a task that takes workers down ends there.
 * why goes into the task's history. *dead (may be NULL) tells which.
 * Returns 0, SQ_EFENCED or SQ_EREDIS*. */
int sq_queue_stall(sq_queue *q, const sq_claim *c, const char *why, bool *dead);

/* Hands back every claim worker_id holds (a shutdown out of time). *n gets
 * how many (may be NULL). */
int sq_queue_release_all(sq_queue *q, const char *worker_id, size_t *n);

/* A worker id starting up: everything an earlier run of it held counts a
 * stall and goes back (or to the dead letter). Sets *requeued, *dead. */
int sq_queue_recover(sq_queue *q, const char *worker_id, size_t *requeued, size_t *dead);

/* Runs the reaper if no one else did within reap_interval_ms: requeues
 * claims whose lease expired (a stall each). *ran tells whether this call
 * did the work, *requeued and *dead what it did (for the caller to report).
 * Any pointer may be NULL. */
int sq_queue_reap(sq_queue *q, const char *worker_id, bool *ran, size_t *requeued, size_t *dead);

/* ---- batches -------------------------------------------------------- */

/* A batch's push as recorded (sq_queue_push_mark): none recorded (pushed
 * by other means), complete, pushing (a push under way) or incomplete (a
 * push that began and never ended: its pusher died). */
typedef enum { SQ_PUSH_NONE = 0, SQ_PUSH_COMPLETE, SQ_PUSH_PUSHING, SQ_PUSH_INCOMPLETE } sq_push_state;

#define SQ_QUEUE_MAX_STATUSES 16
#define SQ_QUEUE_BATCH_NAME_MAX 128 /* bytes in a batch name (as a task id) */
typedef struct {
  int64_t total;
  int64_t done;           /* tasks with a result */
  int64_t dead;           /* tasks in the dead letter */
  int64_t duplicate;      /* copies of an id that had a result already: settled, their result not kept */
  int64_t finished_at_ms; /* 0 until the server marks the batch finished (its finished field) */
  int64_t created_at_ms;  /* the batch's first push (server time); 0 when unknown */
  int64_t cancelled_at_ms; /* when sq_queue_batch_cancel ran on it; 0 when never */
  double cost_usd;        /* LLM spend so far */
  double budget_usd;      /* -1 when the batch has no budget */
  int n_statuses;
  struct {
    char name[32];
    int64_t count;
  } statuses[SQ_QUEUE_MAX_STATUSES];
  int n_statuses_dropped; /* status counters past SQ_QUEUE_MAX_STATUSES or with too long a name */
  sq_push_state push;     /* whether its push completed (sq_queue_push_mark) */
  int64_t pushed_at_ms;   /* when its last push completed (server time); 0 when none did */
} sq_batch_stats;

/* Reads a batch's counters. A batch nobody knows gives zeros. A value that
 * is not an integer (or, for cost_usd and budget_usd, a finite number), or
 * a negative count, gives SQ_EPARSE with the key and field named. */
int sq_queue_batch_stats(sq_queue *q, const char *batch, sq_batch_stats *out);

/* One batch of sq_queue_batch_list: its name and the server time of its
 * latest push (the score of sq:{Q}:batches). */
typedef struct {
  char name[SQ_QUEUE_BATCH_NAME_MAX + 1]; /* with problem: raw bytes (cut at 128, at a NUL): escape to show */
  int64_t last_push_ms;                   /* 0 with problem */
  const char *problem; /* NULL, or why the member is damaged (static text): not a batch to read */
} sq_batch_entry;

/* The batches of the queue pushed within retention_s (sq:{Q}:batches of
 * every shard, each batch once), latest push first, into *out (malloc'd;
 * the caller frees; NULL when none) and *n. A member whose name is not a
 * batch name or whose score is not a time comes with problem set (never
 * merged with another). Returns 0, SQ_ENOMEM or SQ_EREDIS*. */
int sq_queue_batch_list(sq_queue *q, sq_batch_entry **out, size_t *n);

/* What sq_queue_batch_cancel did, summed over the shards. */
typedef struct {
  int64_t cancelled; /* waiting tasks removed, each with a 'cancelled' result */
  int64_t duplicate; /* waiting copies of an id that had a result already: removed, counted as duplicates */
  int64_t running;   /* tasks of the batch claimed by a worker: left to finish */
} sq_cancel_counts;

/* Cancels batch: on each shard, in one atomic step (sq1_cancel), every
 * waiting task of it (all priorities, the delayed retries) is removed and
 * gets a result with status "cancelled" and reason (borrowed); running ones
 * finish, or with kill are marked to be stopped (sq_queue_batch_kill_seq):
 * their workers end them with status "cancelled". A worker claiming at the
 * same moment either took the task before or never sees it. Returns 0 with
 * *out set, or SQ_EREDIS* (the shards before the failing one are
 * cancelled). */
int sq_queue_batch_cancel(sq_queue *q, const char *batch, const char *reason, bool kill, sq_cancel_counts *out);

/* The claims of batch on shard to stop: those whose fencing token is at
 * most *seq (0: none; a cancel with kill sets it). Returns 0, SQ_EPARSE (a
 * damaged value, named in the error) or SQ_EREDIS*. */
int sq_queue_batch_kill_seq(sq_queue *q, const char *batch, int shard, int64_t *seq);

/* Blocks up to timeout_ms for the batch's completion event (BLPOP on
 * sq:{Q}:done:<B>, consumed). Returns 0, or SQ_ETIMEOUT. */
int sq_queue_batch_wait(sq_queue *q, const char *batch, int timeout_ms);

/* Calls fn once per stored result of batch, in full (sq_result_from_stored:
 * _id and batch first, as docs/formats.md shows; a stored value that is not
 * BSON comes as it is). id and bytes are borrowed for the call only.
 * Iterates with HSCAN so large batches stream. A
 * non-zero return from fn stops and is returned. */
typedef int (*sq_queue_result_fn)(const char *id, const uint8_t *bson, size_t len, void *ud);
int sq_queue_batch_results(sq_queue *q, const char *batch, sq_queue_result_fn fn, void *ud);
/* Removes batch's stored results (results --delete, after they are
 * exported) when they number exactly `exported`, summed over the shards; a
 * shard whose count changed in between keeps its results. *dropped gets how
 * many were removed. Returns 0, SQ_ECONFLICT (a count differs: results
 * arrived since; nothing, or only the shards that still matched, removed),
 * SQ_EINVAL (more than 64 shards) or SQ_EREDIS*. */
int sq_queue_batch_results_drop(sq_queue *q, const char *batch, int64_t exported, int64_t *dropped);

/* Number of tasks waiting in the queue, all priorities. */
int sq_queue_length(sq_queue *q, int64_t *out);

/* Queue-wide counters (sq:{Q}:stats) and sizes. */
typedef struct {
  int64_t waiting, delayed, in_flight, dead_letter;
  int64_t fenced, duplicate, stalled, retried, dead, deduplicated;
} sq_queue_counters;
int sq_queue_counters_get(sq_queue *q, sq_queue_counters *out);

/* ---- dead letter ---------------------------------------------------- */

/* Calls fn per dead-letter entry, oldest first, with its id and its JSON
 * record (borrowed; docs/operations.md). A non-zero return stops. */
typedef int (*sq_queue_dead_fn)(int64_t id, const char *record_json, size_t len, void *ud);
int sq_queue_dead_list(sq_queue *q, sq_queue_dead_fn fn, void *ud);
/* The JSON record of entry id, malloc'd into *out. SQ_ENOTFOUND if none. */
int sq_queue_dead_show(sq_queue *q, int64_t id, char **out);
/* Puts entry id (or every entry, id < 0) back on the queue with fresh
 * counters; *n gets how many. SQ_ENOTFOUND when id named none. An entry
 * that cannot be requeued (not a JSON object, no payload) is kept as it is
 * and the call returns SQ_EPARSE (after requeueing the others), with the
 * first such entry named in sq_queue_errstr. */
int sq_queue_dead_requeue(sq_queue *q, int64_t id, size_t *n);
/* The same, calling fn(entry id, why; both borrowed) for each entry kept;
 * fn may be NULL; a non-zero return from fn is returned. */
typedef int (*sq_queue_dead_skip_fn)(const char *id, const char *why, void *ud);
int sq_queue_dead_requeue_each(sq_queue *q, int64_t id, size_t *n, sq_queue_dead_skip_fn fn, void *ud);

/* ---- LLM-side state: batch spend and budget, cached verdicts ----
 * Kept apart so the queue's core can change without touching them. */

/* Adds usd to the batch's cost_usd (HINCRBYFLOAT on sq:{Q}:batch:<B>). */
int sq_queue_batch_add_cost(sq_queue *q, const char *batch, double usd);
/* Sets the batch's budget_usd (the producer's --budget-usd). */
int sq_queue_batch_set_budget(sq_queue *q, const char *batch, double usd);
/* Reads cost_usd (0 when unset) and budget_usd (-1 when unset). */
int sq_queue_batch_spend(sq_queue *q, const char *batch, double *cost_usd, double *budget_usd);
/* A cache entry sq:{Q}:cache:<ns>:<key>: get gives a malloc'd value (the
 * caller frees) or SQ_ENOTFOUND; set stores with a TTL (ttl_s 0: none). */
int sq_queue_cache_get(sq_queue *q, const char *ns, const char *key, char **out, size_t *len);
int sq_queue_cache_set(sq_queue *q, const char *ns, const char *key, const char *val, size_t len, int64_t ttl_s);
/* Adds val under (ns, key) with a TTL (ttl_s 0: none) unless an entry is
 * there already (SET NX GET, one step): *stored is NULL when this call
 * wrote val, else the entry the key holds, left as it is (malloc'd, the
 * caller frees; *stored_len its length). So the first writer's value is
 * every writer's. */
int sq_queue_cache_add(sq_queue *q, const char *ns, const char *key, const char *val, size_t len, int64_t ttl_s,
                       char **stored, size_t *stored_len);

/* ---- metrics, health and rollout state (queue_kv.c) ------------------
 * Generic hashes under the queue's prefix, sq:{Q}:<name>; the metrics,
 * health and rollout modules give them meaning. */

/* One increment: field += delta (HINCRBYFLOAT when is_float, else HINCRBY
 * of the rounded delta). field is borrowed. */
typedef struct {
  const char *field;
  double delta;
  bool is_float;
} sq_queue_incr;

/* Applies items[0..n) to each hash names[0..n_names) and sets each hash's
 * TTL to ttl_s[k] seconds (0: none), all in one pipelined round trip.
 * Returns 0 or SQ_EREDIS*. */
int sq_queue_hash_incr(sq_queue *q, const char *const *names, const int64_t *ttl_s, size_t n_names,
                       const sq_queue_incr *items, size_t n);

/* Calls fn(field, value, ud) for every field of hash sq:{Q}:<name> (both
 * borrowed for the call). A non-zero return from fn stops and is returned. */
typedef int (*sq_queue_field_fn)(const char *field, const char *value, void *ud);
int sq_queue_hash_get_all(sq_queue *q, const char *name, sq_queue_field_fn fn, void *ud);

/* sums[i] = the sum over hashes names[0..n_names) of fields[i] (missing: 0),
 * read with one pipelined HMGET per hash. */
int sq_queue_hash_sum(sq_queue *q, const char *const *names, size_t n_names, const char *const *fields, size_t n,
                      double *sums);

/* HSET / HDEL of one field of sq:{Q}:<name>. */
int sq_queue_hash_set(sq_queue *q, const char *name, const char *field, const char *value);
int sq_queue_hash_del(sq_queue *q, const char *name, const char *field);
/* DEL of sq:{Q}:<name>. */
int sq_queue_hash_clear(sq_queue *q, const char *name);

/* Writes fields[i] = values[i] into sq:{Q}:<name> and bumps its "version"
 * field, atomically, only if the version is still expected_version (< 0:
 * any) and, when lock is not NULL, the lock sq:{Q}:<lock> is still held by
 * owner. Returns 0 with *version (may be NULL) the new version,
 * SQ_ECONFLICT (someone changed it or the lock was lost) or SQ_EREDIS*. */
int sq_queue_hash_cas(sq_queue *q, const char *name, int64_t expected_version, const char *lock, const char *owner,
                      const char *const *fields, const char *const *values, size_t n, int64_t *version);

/* Takes the lock sq:{Q}:<name> for owner for ttl_ms if nobody holds it
 * (SET NX PX; never released early, it just expires, so at most one holder
 * acts per ttl_ms). *got says whether this call took it. */
int sq_queue_lock(sq_queue *q, const char *name, const char *owner, int64_t ttl_ms, bool *got);

/* Calls fn(worker_id, last_seen_ms, ud) for every worker of the queue
 * (sq:{Q}:workers: the server time of its last claim or heartbeat), and
 * sets *server_now_ms to the server's time. */
typedef int (*sq_queue_worker_fn)(const char *worker_id, int64_t last_seen_ms, void *ud);
int sq_queue_workers(sq_queue *q, sq_queue_worker_fn fn, void *ud, int64_t *server_now_ms);

#endif
