/* queue_internal.h: what the queue_*.c files share: the handle, key
 * names, reply checks and the FCALL helper that reloads the functions
 * library when Redis lost it. Private to the queue module. */
#ifndef SQ_QUEUE_INTERNAL_H
#define SQ_QUEUE_INTERNAL_H

#include <hiredis/hiredis.h>
#include <stdbool.h>

#include "queue.h"
#include "redis_url.h"

#define SQ__KEY_MAX 512
#define SQ__COMMAND_TIMEOUT_MS 10000

#define SQ__MAX_SEEDS SQ_REDIS_URL_MAX_SEEDS
#define SQ__MAX_NODES 64    /* cluster nodes one handle talks to */
#define SQ__SLOTS 16384     /* Redis Cluster hash slots */
#define SQ__MAX_SHARDS 64   /* the config's range for shards */
/* The most elements one reply array may announce. hiredis 0.14 (Debian 12)
 * has no maxelements and allocates what the header says: one "*2147483647"
 * from a sentinel or a node cost gigabytes and a hang. Real replies (CLUSTER
 * SLOTS of a full cluster, a fleet's HGETALL) are far below. */
#define SQ__REPLY_MAX_ELEMENTS (1 << 20)

/* Bounds c's reply arrays to SQ__REPLY_MAX_ELEMENTS: a larger one fails
 * its command (c->err set) before anything is allocated. NULL is a no-op. */
void sq__queue_bound_replies(redisContext *c);
/* c's error text, naming a reply refused by sq__queue_bound_replies (hiredis
 * reports it as "Out of memory"). */
const char *sq__queue_ctx_errstr(const redisContext *c);

/* Where a handle finds its Redis (redis_url.h): one server (redis://,
 * unix://), the master a set of sentinels names (redis-sentinel://), or a
 * cluster (redis-cluster://, every key on the node serving its slot). */
typedef sq_redis_url_mode sq__mode;
#define SQ__MODE_PLAIN SQ_REDIS_URL_PLAIN
#define SQ__MODE_SENTINEL SQ_REDIS_URL_SENTINEL
#define SQ__MODE_CLUSTER SQ_REDIS_URL_CLUSTER
typedef sq_redis_addr sq__addr;
typedef sq_redis_url sq__url;

/* One server a handle talks to: the one of a plain URL, the master the
 * sentinels named last, or a cluster node. */
typedef struct {
  sq__addr addr;
  redisContext *ctx; /* NULL or broken (ctx->err): connect before use */
  bool was_up;       /* connected before: the next connection is a reconnection */
} sq__node;

struct sq_queue {
  redisContext *ctx; /* the connection of the command at hand: one of nodes[].ctx */
  sq__node *cur;     /* its node (messages, reloading the functions) */
  sq__url url;
  sq_queue_options opts;
  char queue[64];
  char tasks_key[SQ__KEY_MAX]; /* sq:{Q}:tasks, KEYS[1] of the home functions (queue_kv.c) */
  char errstr[256];
  volatile sig_atomic_t *stop; /* claims give up once set; NULL: never */
  uint64_t claim_seq;          /* the next claim's id (random start) */
  char lost_claim[24];         /* a claim whose reply was lost; "" when none */
  /* routing (queue_route.c, queue_cluster.c, queue_sentinel.c) */
  sq__node nodes[SQ__MAX_NODES];
  int n_nodes;            /* plain and sentinel: 1 */
  uint8_t *slots;         /* cluster: node index + 1 per slot, 0 unknown; NULL otherwise */
  bool slots_stale;       /* cluster: refresh the map (CLUSTER SLOTS) before the next command */
  /* sharding and failover */
  int next_shard;                      /* pushes and claims rotate from here */
  int64_t max_token[SQ__MAX_SHARDS];   /* the highest fencing token this handle was given per shard */
  uint64_t push_seq;                   /* the next push chunk's id (random start) */
};

/* ---- routing (queue_route.c) ------------------------------------------ */

/* Sends the formatted command cmd (len bytes, from redisFormatCommand*) to
 * the server of key (the node serving key's slot in a cluster; any key
 * elsewhere) and reads its reply. In a cluster, follows MOVED (updating
 * the slot map) and ASK, and waits out a slot that is moving (TRYAGAIN,
 * CLUSTERDOWN, a function refused mid-migration) for a short while; a
 * READONLY reply (the server became a replica: a failover) drops the
 * connection. When wait is true and opts.wait_replicas > 0, a WAIT follows
 * in the same round trip and a write not acknowledged by enough replicas
 * fails with SQ_EREDIS_CONN (the write may be lost; send it again).
 * Returns the reply (the caller frees; it may be an error reply) or NULL
 * with *rc set (SQ_EREDIS_CONN, SQ_ENOMEM); q->ctx and q->cur then name
 * the server it went to. */
redisReply *sq__queue_send(sq_queue *q, const char *key, const char *cmd, size_t len, bool wait, int *rc);
/* The same from a printf-like format (hiredis' %s %b ...) or argv. */
redisReply *sq__queue_cmdf(sq_queue *q, int *rc, const char *key, const char *fmt, ...);
redisReply *sq__queue_cmdv(sq_queue *q, int *rc, const char *key, int argc, const char **argv, const size_t *lens);
/* Connects (when needed) the server of key and makes it q->ctx, for a
 * pipeline. A reply in the pipeline for which sq__queue_reroute is true
 * ran nowhere: send that command again alone through sq__queue_send. */
int sq__queue_conn(sq_queue *q, const char *key);
bool sq__queue_reroute(const redisReply *r);
/* Whether r says the called function is not loaded (Redis lost the
 * library, or another worker loaded an older one): load ours, call again. */
bool sq__queue_missing_function(const redisReply *r);
/* Appends WAIT to q->ctx's pipeline / reads and judges its reply (one per
 * append). Return 0, or SQ_EREDIS_CONN with the reason on q. */
void sq__queue_wait_append(sq_queue *q);
int sq__queue_wait_read(sq_queue *q);
/* Drops every connection (the next command reconnects). */
void sq__queue_disconnect(sq_queue *q);

/* ---- cluster (queue_cluster.c) ---------------------------------------- */

/* The hash slot of key (CRC16 of its {hash tag}, or of the whole key). */
int sq__key_slot(const char *key, size_t len);

/* What an error reply asks of a client. */
typedef enum {
  SQ__REPLY_OTHER = 0, /* an error of the command itself */
  SQ__REPLY_MOVED,     /* the slot lives elsewhere for good: *slot, *to */
  SQ__REPLY_ASK,       /* this once, ask *to (after ASKING) */
  SQ__REPLY_BUSY,      /* the slot is moving or the cluster is down: later */
  SQ__REPLY_READONLY   /* a replica answered a write */
} sq__reply_kind;
/* Classifies the error text err (len bytes). */
sq__reply_kind sq__reply_classify(const char *err, size_t len, int *slot, sq__addr *to);
/* The index of the node at addr, added when new. Returns -1 when the
 * table is full. */
int sq__node_find_or_add(sq_queue *q, const sq__addr *addr);
/* Re-reads the slot map (CLUSTER SLOTS) from any node that answers.
 * Returns 0 or SQ_EREDIS_CONN. */
int sq__cluster_refresh(sq_queue *q);
/* Parses a CLUSTER SLOTS reply into q's map (from is the node asked, for
 * entries without a host). Returns 0 or SQ_EREDIS. */
int sq__cluster_apply_slots(sq_queue *q, const redisReply *r, const sq__addr *from);

/* ---- sentinel (queue_sentinel.c) -------------------------------------- */

/* Checks that the server on q->ctx is a master (ROLE): a sentinel may name
 * an old master for a moment after a failover. Returns 0 or SQ_EREDIS_CONN. */
int sq__sentinel_check_role(sq_queue *q);
/* Asks the sentinels, in turn, for the master's address. Returns 0 with
 * *out set, or SQ_EREDIS_CONN with the reason on q. */
int sq__sentinel_master(sq_queue *q, sq__addr *out);

/* ---- shards (queue_shard.c) ------------------------------------------- */

/* After a reconnection to n: raises each shard's token counter that n
 * serves above the highest token this handle was given (sq1_seq_floor), so
 * a promoted replica that lost the last claims never hands their tokens out
 * again (a stale claim must stay fenced). Best effort. */
void sq__queue_raise_floors(sq_queue *q, sq__node *n);

/* How many shards the queue has (opts.shards, at least 1). */
int sq__queue_nshards(const sq_queue *q);
/* Makes opts.shards the queue's recorded count (sq:{Q}:shards), recording
 * ours when there is none yet; 0, or SQ_EPARSE for a damaged record, or a
 * Redis error. Called once, when the handle opens. */
int sq__queue_settle_shards(sq_queue *q);
/* sq:{Q}:<kind>[:<name>] of shard s ({Q#s} when sharded); s < 0: the home
 * tag {Q} (metrics, health, rollout, spend, cache, locks). */
int sq__queue_shard_key(sq_queue *q, int s, char key[SQ__KEY_MAX], const char *kind, const char *name);
/* FCALL fn with KEYS[1] = shard s's tasks key (s < 0: home), wait as for
 * sq__queue_send; reloads the functions on the server that lost them. */
redisReply *sq__queue_fcall_at(sq_queue *q, int s, const char *fn, int argc, const char **argv,
                               const size_t *lens, bool wait, int *rc);
/* The shard an idempotency key belongs to (the same key always lands on
 * the same shard, so deduplication holds). */
int sq__queue_shard_of(const sq_queue *q, const char *idempotency_key);

/* Parses url (redis_url.h) into *u and adds what the environment holds:
 * SANDQ_REDIS_PASSWORD when the URL of a sentinel or cluster carries no
 * password, SANDQ_SENTINEL_PASSWORD (else the master's) for the sentinels.
 * Returns 0 or SQ_EINVAL with err ("redis URL: ...", no credentials). */
int sq__url_parse(const char *url, sq__url *u, char *err, size_t errlen);

/* Stores a message for sq_queue_errstr (the caller of the public call
 * decides whether to log it). */
void sq__queue_err(sq_queue *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Tells the notice hook (sq_queue_set_notice), if one is set. */
void sq__queue_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes sq:{Q}:<kind>[:<name>] into key. Returns 0 or SQ_EINVAL. */
int sq__queue_key(sq_queue *q, char key[SQ__KEY_MAX], const char *kind, const char *name);

/* Connects the home server (the one of sq:{Q}:) when needed and makes it
 * q->ctx. */
int sq__queue_ensure(sq_queue *q);

/* Connects node n: TCP or unix socket, AUTH and SELECT as the URL asks, a
 * Sentinel master's role checked, the functions library loaded. Leaves
 * q->ctx and q->cur on n. Returns 0, SQ_EREDIS_CONN or SQ_ENOMEM. */
int sq__queue_connect_node(sq_queue *q, sq__node *n);

/* Checks r is of type want (REDIS_REPLY_*; NIL accepted when nil_ok).
 * Error replies and wrong types become SQ_EREDIS; NULL is a lost
 * connection (SQ_EREDIS_CONN). Does not free r. */
int sq__queue_check(sq_queue *q, const redisReply *r, int want, int nil_ok, const char *what);

/* FCALL fn with KEYS[1] = sq:{Q}:tasks (the home tag) and argc arguments;
 * reloads the library and retries once when Redis answers "Function not
 * found". Returns the reply (caller frees) or NULL with *rc set. */
redisReply *sq__queue_fcall(sq_queue *q, const char *fn, int argc, const char **argv, const size_t *lens,
                            int *rc);

/* Appends FCALL fn with KEYS[1] = key (NULL: sq:{Q}:tasks) to q->ctx's
 * pipeline (no reply read). */
int sq__queue_fcall_append_key(sq_queue *q, const char *key, const char *fn, int argc, const char **argv,
                               const size_t *lens);

/* Reads one pipelined reply, reloading nothing (the caller retries). */
redisReply *sq__queue_read(sq_queue *q, int *rc);

/* Connects the server of b's stream (sq:{Q}:<name>, the home tag) and
 * makes it q->ctx (queue_stream.c). Returns 0 or an error. */
int sq__queue_stream_conn(sq_queue *q, const sq_queue_stream_batch *b);
/* Appends b's XADDs to q->ctx's pipeline, which must be the stream's
 * server (sq__queue_stream_conn); *n_cmds gets how many went out. Returns
 * 0 or an error. */
int sq__queue_stream_append(sq_queue *q, const sq_queue_stream_batch *b, size_t *n_cmds);
/* Reads n XADD replies from q->ctx. One the cluster redirected (the slot
 * moved: it did not land) sets redo[i] instead of failing. Returns 0 or
 * the first error. */
int sq__queue_stream_replies(sq_queue *q, size_t n, bool *redo);
/* Sends b's entries with redo[i] set again, one by one, following the
 * cluster's redirects; only once every pipelined reply is read. Returns 0
 * or the first error. */
int sq__queue_stream_resend(sq_queue *q, const sq_queue_stream_batch *b, const bool *redo);

/* Loads the functions library (FUNCTION LOAD REPLACE). */
int sq__queue_load_functions(sq_queue *q);

/* The embedded Functions library, the files of common/queue/lua concatenated
 * (generated by common/embed.cmake). */
extern const char sq__queue_lua[];

#endif
