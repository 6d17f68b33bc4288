/* worker.h: what the files of `sandq-worker serve` share. serve.c sets up
 * and tears down; loop.c is the event loop (claim, wait, record); job.c
 * moves one task through generate -> risk -> check -> execute -> repair;
 * pool.c runs the jail on a bounded thread pool; wq.c (wq.h) is every word
 * the worker says to Redis, in one place; spend.c and tick.c keep their
 * own state in their own structs below. */
#ifndef SQ_WORKER_H
#define SQ_WORKER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "config.h"
#include "health.h"
#include "heartbeat.h"
#include "jail.h"
#include "llm.h"
#include "metrics.h"
#include "precheck.h"
#include "queue.h"
#include "result.h"
#include "risk.h"
#include "rollout.h"
#include "task.h"
#include "wq.h"

typedef struct jail_pool jail_pool;
typedef struct job job;

/* One batch's spend as this worker knows it (spend.c). */
#define SQ__SPEND_BATCHES 32
typedef struct {
  char batch[SQ_TASK_ID_MAX + 1]; /* "" : a free entry */
  double cost_usd;     /* the batch's counter when read, plus what we flushed since */
  double budget_usd;   /* -1: none */
  double pending_usd;  /* spent here, not yet added to the counter */
  int64_t read_ms, used_ms; /* monotonic; read_ms 0: never read */
} sq__spend_entry;

/* spend.c's cache of batch spend. */
typedef struct {
  sq__spend_entry e[SQ__SPEND_BATCHES];
  int64_t next_flush_ms; /* monotonic */
} sq__spend_cache;

/* tick.c's clocks and the rollout this worker follows. */
typedef struct {
  int64_t next_flush_ms, next_rollout_ms; /* monotonic */
  int64_t started_ms, last_claim_ms;      /* wall clock; 0: never */
  int64_t rollout_version;                /* the rollout state the weights follow; -1: none yet */
  int rollout_pct;                        /* the candidate's share in force (-1: configured weights) */
} sq__tick_state;

/* audit.c's programs run and not yet in the audit stream. */
typedef struct {
  sq_audit_entry *e;
  size_t n, cap;
  int64_t oldest_ms;    /* monotonic: when e[0] was noted */
  int64_t dropped;      /* entries lost to a full log (Redis away too long) */
} sq__audit_log;

typedef struct sq__endpoint sq__endpoint;

typedef struct {
  sq_config cfg;
  struct {
    sq__wq_link link;     /* the event loop's connection: claims, results, retries */
    sq__backoff chores;   /* spend counters, metrics, health, rollout: they back off apart */
  } wq;                   /* wq.c, wq_chores.c */
  sq_jail *jail;
  sq_llm *llm;            /* NULL when no provider is configured */
  jail_pool *pool;
  sq_heartbeat *heartbeat;  /* keeps our leases alive; runs the fleet's reaper in turn */
  sq_risk_policy risk_policy;
  int in_flight;          /* jobs claimed and not yet stored */
  int llm_waiting;        /* of those, jobs waiting on an LLM reply now */
  int llm_jobs;           /* of those, jobs that went to the LLM at all (the rest came with their code) */
  int in_jail;            /* of those, jobs in the jail pool (waiting for a thread or running) */
  job *done_head, *done_tail; /* finished, waiting to be stored */
  int done_n;             /* how many */
  int64_t done_since_ms;  /* when the oldest of them finished (monotonic) */
  bool fatal;             /* the host cannot run the jail: stop and hand everything back */
  char host_error[256];   /* why, for the last health record (health.h host_error) */
  sq_metrics *metrics;    /* this worker's counters, flushed by tick.c */
  sq__tick_state tick;
  sq__spend_cache spend;
  sq__audit_log audit;     /* audit.c */
  sq__endpoint *endpoint;  /* endpoint.c: GET /metrics, /healthz; NULL without metrics_listen */
} worker;

/* One claimed task on its way to a result; owns every string it points to. */
struct job {
  job *next;              /* done list or pool queue */
  worker *w;
  sq_claim claim;         /* the task's payload, fencing token and lease */
  sq_result r;
  sq_task *task;
  char *code;             /* the code being judged (generated, repaired or the task's) */
  char *program;          /* what the jail runs (the listing, or the judge around the code) */
  char *input;            /* the run's stdin (the judge's tests), or NULL */
  size_t input_len;
  char *listing;          /* code, tests, check(entry_point): what the result shows */
  char raw_id[SQ_TASK_ID_MAX + 1];    /* the result's id when the task has none of its own */
  char raw_batch[SQ_TASK_ID_MAX + 1]; /* and its batch, read out of the payload (sq_task_salvage) */
  char reason[512];
  char judge[16];         /* the result's "judge" (sq_harness_marks) */
  char judge_reason[160];
  sq_jail_limits lim;
  sq_jail_outcome out;
  int jail_rc;
  bool generated;         /* code came from the LLM */
  bool transient;         /* worth another attempt: the LLM client says so (sq_llm_reply.transient) */
  bool used_llm;          /* counted in w->llm_jobs */
  sq_precheck_report findings; /* the static pre-check's */
  char provider[64], model[128];
  sq_risk_result risk;
  sq_result_risk risk_doc;
  sq_result_repair *repairs; /* cfg.max_repairs slots */
  char **repair_code;
  int n_repairs;
  int64_t t0_ms;
  int64_t jail_t0_ms;     /* handed to the pool */
};

/* job.c */
/* Starts a claimed task (ownership of the claim moves to the job); it
 * reaches the done list through LLM callbacks, the pool, or at once. */
void sq__job_begin(worker *w, sq_claim *claim);
/* The pool ran the job's program: decide, maybe repair, else finish. */
void sq__job_executed(job *j);
void sq__job_free(job *j);

/* pool.c */
int sq__pool_new(sq_jail *jail, int n_threads, jail_pool **out);
/* Compiles the test judge once, in the jail (sq_harness_set_compiled); on
 * failure logs a warning and tasks compile it each (the same verdicts). */
void sq__judge_precompile(sq_jail *jail);
/* Readable when finished jobs wait in sq__pool_take_all. */
int sq__pool_fd(const jail_pool *p);
void sq__pool_submit(jail_pool *p, job *j);
/* Jobs submitted that no thread has started yet. */
int sq__pool_waiting(jail_pool *p);
/* Every finished job, oldest first, linked by ->next (the caller's now), or NULL. */
job *sq__pool_take_all(jail_pool *p);
/* Stops the threads after their current run; queued jobs are not run. */
void sq__pool_free(jail_pool *p);

/* wq.c: the event loop's words to the queue (see wq.h for the backoff). */
/* Connects (waiting out Redis with backoff), checks the server's settings
 * and recovers what an earlier run of this worker id left. Returns 0, or
 * SQ_EINTERRUPTED when asked to stop first. */
int sq__wq_open(worker *w);
void sq__wq_close(worker *w);
/* Claims up to max tasks in one round trip into out[0..*n) (waiting up to
 * timeout_ms for a first; 0: just look), after handing back the tasks of a
 * claim whose reply was lost. Waits out the backoff first. Returns 0,
 * SQ_EEMPTY, SQ_EINTERRUPTED or a Redis error (counted in the backoff). */
int sq__wq_claim(worker *w, int timeout_ms, sq_claim *out, size_t max, size_t *n);
/* Settles j: a transient failure is scheduled for another attempt when
 * attempts remain; otherwise the result is stored and the claim
 * acknowledged in one fenced step (a late result after a lost lease is
 * refused: its new owner stores it). Until then the claim stays ours (the
 * heartbeat keeps its lease): every Redis failure, lost connection or
 * refused command, backs off and tries again, until done or asked to stop
 * (SQ_EINTERRUPTED; the claim is still held and is handed back). */
int sq__wq_store(worker *w, job *j);
/* Settles js[0..n) like sq__wq_store, storing the results in one pipelined
 * round trip where it can; logs what could not be stored. The caller still
 * owns (and frees) the jobs. */
void sq__wq_store_many(worker *w, job **js, size_t n);
/* Hands j's claim back as a stall (a jail failure during its run): it goes
 * to the dead letter after max_stalls; the caller still owns j. */
void sq__wq_stall(worker *w, job *j, const char *why);
/* Hands every task this worker holds back to the queue (one try). */
void sq__wq_hand_back(worker *w);

/* wq_chores.c: the rest, best effort, behind their own backoff: a call
 * while it waits is not tried and fails with SQ_EREDIS_CONN. */
int sq__wq_cache_get(worker *w, const char *ns, const char *key, char **out, size_t *len);
void sq__wq_cache_set(worker *w, const char *ns, const char *key, const char *val, int64_t ttl_s);
/* Adds usd to batch's cost counter. */
int sq__wq_add_cost(worker *w, const char *batch, double usd);
/* Reads batch's cost (0 unset) and budget (-1 unset). */
int sq__wq_batch_spend(worker *w, const char *batch, double *cost_usd, double *budget_usd);
/* Sends the metrics changed since the last flush. */
int sq__wq_metrics_flush(worker *w, int64_t now_wall_ms);
/* Writes (NULL: removes) this worker's health record. */
int sq__wq_health_put(worker *w, const sq_health *h);
/* Follows the fleet's rollout, taking a turn as its controller. */
int sq__wq_rollout_step(worker *w, int64_t now_wall_ms, sq_rollout *r);
/* Appends audit entries (sq:{Q}:audit) on their own round trip. */
int sq__wq_audit_add(worker *w, const sq_queue_stream_batch *b);
/* Whether the connection is up (so a last flush is worth trying). */
bool sq__wq_up(const worker *w);

/* spend.c: batch spend and budgets, cached (see there for the bounds). */
/* Counts usd against batch (reaches Redis with the next flush). */
void sq__spend_add(worker *w, const char *batch, double usd);
/* Whether batch has spent its budget (false when unknown or none). */
bool sq__spend_exhausted(worker *w, const char *batch);
/* Adds every batch's pending spend to its counter: when due (now false:
 * every SPEND_FLUSH_MS), or at once. */
void sq__spend_flush(worker *w, bool now);

/* tick.c: the worker's periodic chores on its own event loop. */
/* Creates w->metrics and hooks the LLM client's exchanges into it. */
int sq__tick_init(worker *w);
/* At most every metrics_flush_ms: flush metrics and write this worker's
 * health; about once a second: follow (and maybe step) the provider rollout. */
void sq__tick(worker *w);
/* The last flush, and this worker's health entry removed (a clean stop). */
void sq__tick_final(worker *w);

/* audit.c: the audit trail (common/fleet/audit.h), pipelined with results. */
/* Notes the run j just finished (call after its outcome is taken). */
void sq__audit_note(worker *w, const job *j);
/* The pending entries as a stream batch; *forms (malloc'd, the caller
 * frees; NULL when none) holds their text. Returns how many. */
size_t sq__audit_batch(worker *w, sq_queue_stream_batch *b, sq_audit_form **forms);
/* The first n pending entries reached Redis: forgets them. */
void sq__audit_sent(worker *w, size_t n);
/* Sends what waits when it waited long enough (now: at once); a chore. */
void sq__audit_flush(worker *w, bool now);
void sq__audit_free(worker *w);

/* endpoint.c: GET /metrics (this worker's series) and GET /healthz. */
/* Starts serving on cfg.metrics_listen (nothing when empty). Returns 0, or
 * SQ_EINVAL/SQ_EEXISTS/SQ_ESYS after logging why. */
int sq__endpoint_start(worker *w);
/* From the event loop: what the endpoint answers (claiming or not and why;
 * the metrics text when due). Cheap; call often. */
void sq__endpoint_publish(worker *w);
void sq__endpoint_stop(worker *w);

/* loop.c */
extern volatile sig_atomic_t sq__worker_stop;
/* How many tasks w may claim now (0: none): free jail threads plus
 * claim_prefetch for tasks that came with their code, LLM waits counted
 * apart against the providers' slots (loop.c says why). */
int64_t sq__loop_claim_room(const worker *w);
int sq__worker_loop(worker *w);
/* Moves the tasks in hand for up to timeout_ms without the queue: LLM
 * transfers, finished jail runs (their jobs end on the done list, or go on
 * to a repair). Also what a wait for Redis does (wq.c), so an outage stalls
 * only claiming and storing. */
void sq__loop_service(worker *w, int timeout_ms);

#endif
