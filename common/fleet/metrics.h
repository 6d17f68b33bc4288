/* metrics.h: a worker's counters and latency histograms (per stage, per
 * LLM provider), task outcomes, LLM errors, tokens and cost; their Redis
 * form (fleet-wide cumulative totals plus short time windows with a TTL)
 * and their Prometheus text (metrics_text.c).
 *
 * Recording is a few array increments: no allocation, no I/O, so it sits on
 * the hot path. sq_metrics_flush sends what changed since the last flush in
 * one pipelined round trip (HINCRBY/HINCRBYFLOAT); call it a few times a
 * second at most. A handle is not thread-safe: one event loop records and
 * flushes. Knows nothing of the jail or the LLM client. */
#ifndef SQ_METRICS_H
#define SQ_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "language.h"
#include "queue.h"
#include "status.h"
#include "util.h"


#define SQ_METRICS_N_BUCKETS 15 /* latency buckets, the last one +Inf */

/* Where a task spends its time. */
#define SQ_METRICS_STAGE_MAP(X)                                                \
  X(QUEUE, "queue")       /* pushed -> claimed */                              \
  X(CLAIM, "claim")       /* one claim round trip that returned work */        \
  X(LLM, "llm")           /* one LLM call, retries and queueing included */    \
  X(PRECHECK, "precheck") /* the static pre-check */                           \
  X(JAIL, "jail")         /* handed to the pool -> run finished */             \
  X(STORE, "store")       /* storing a result (per pipelined round trip) */    \
  X(TOTAL, "total")       /* claimed -> result ready */

typedef enum {
#define X(n, s) SQ_METRICS_STAGE_##n,
  SQ_METRICS_STAGE_MAP(X)
#undef X
  SQ_METRICS_STAGE__COUNT
} sq_metrics_stage_id;

/* Why an LLM request counts as an error for its provider. */
#define SQ_METRICS_LLM_ERROR_MAP(X)                                            \
  X(TRANSPORT, "transport")     /* connect, timeout, reset, truncated */       \
  X(HTTP_429, "http_429")                                                      \
  X(HTTP_5XX, "http_5xx")                                                      \
  X(HTTP_4XX, "http_4xx")                                                      \
  X(BAD_REPLY, "bad_reply")     /* 2xx, but not a usable completion */         \
  X(NO_CODE, "no_code")         /* a completion with no code in it */          \
  X(BAD_VERDICT, "bad_verdict") /* a risk reply that is not a verdict */

typedef enum {
#define X(n, s) SQ_METRICS_LLM_##n,
  SQ_METRICS_LLM_ERROR_MAP(X)
#undef X
  SQ_METRICS_LLM__COUNT
} sq_metrics_llm_kind;


typedef struct sq_metrics sq_metrics;

/* Creates a registry for up to SQ_METRICS_MAX_PROVIDERS providers (names
 * copied; requests naming another provider are not counted). o is copied.
 * Returns 0, SQ_EINVAL or SQ_ENOMEM. Free with sq_metrics_free (NULL: no-op). */
int sq_metrics_new(const char *const *providers, int n_providers, const sq_metrics_options *o, sq_metrics **out);
void sq_metrics_free(sq_metrics *m);

/* Recording; m may be NULL (nothing recorded). */
void sq_metrics_stage(sq_metrics *m, sq_metrics_stage_id s, int64_t ms);
/* A result was stored with this status (counted once per task). */
void sq_metrics_task(sq_metrics *m, sq_status st);
/* The same result by its task's language (tasks whose language was read;
 * one series per language of the table and status, written once the
 * language has a count). */
void sq_metrics_task_language(sq_metrics *m, sq_language_id lang, sq_status st);
/* A compiled language's build was looked up in the worker's compile cache:
 * found (hit) or not. */
void sq_metrics_compile_cache(sq_metrics *m, sq_language_id lang, bool hit);
/* A transient failure sent the task back for another attempt. */
void sq_metrics_task_retried(sq_metrics *m);
/* A result was refused: a result existed already (duplicate) or the lease was lost (fenced). */
void sq_metrics_result_refused(sq_metrics *m, bool fenced);
/* One HTTP exchange with provider: ok, or failed with kind. */
void sq_metrics_llm_exchange(sq_metrics *m, const char *provider, bool ok, sq_metrics_llm_kind kind, int64_t ms);
/* A content error of a successful exchange (NO_CODE, BAD_VERDICT). */
void sq_metrics_llm_error(sq_metrics *m, const char *provider, sq_metrics_llm_kind kind);
/* One call's tokens and cost. */
void sq_metrics_llm_usage(sq_metrics *m, const char *provider, int64_t prompt_tokens, int64_t completion_tokens,
                          double cost_usd);

/* Sends what changed since the last successful flush to the totals and to
 * the window of now_wall_ms, in one pipelined round trip. On failure the
 * changes are kept and go with the next flush. Returns 0 or SQ_EREDIS*. */
int sq_metrics_flush(sq_metrics *m, sq_queue *q, int64_t now_wall_ms);
/* What the next flush would send: the series changed since the last
 * successful flush, each with its delta (fields as in Redis, e.g.
 * sandq_tasks_total{status="passed"}). *items points into m, valid until
 * the next call on m; m NULL: 0 and NULL. Sends nothing, changes nothing. */
size_t sq_metrics_pending(sq_metrics *m, const sq_queue_incr **items);
/* Every series of this registry with its total since m was created, zeros
 * included (fields as in Redis; deltas hold the totals). Same lifetime
 * rules as sq_metrics_pending; shares its scratch. */
size_t sq_metrics_totals(sq_metrics *m, const sq_queue_incr **items);

/* ---- reading the fleet's figures ---- */

/* The Redis hash (under the queue's prefix) holding the cumulative totals. */
#define SQ_METRICS_TOTALS "metrics"

/* One provider over the last span_s seconds, fleet-wide. */
typedef struct {
  double requests;   /* HTTP exchanges */
  double errors;     /* every error kind, content errors included */
  double p95_ms;     /* 0 when there were no requests */
} sq_metrics_window;

/* Reads provider's figures over the windows covering the last span_s
 * seconds before now_wall_ms, leaving out any window that began before
 * from_wall_ms (0: none left out; all left out: zeros). Returns 0 or
 * SQ_EREDIS*. */
int sq_metrics_read_window(sq_queue *q, const sq_metrics_options *o, const char *provider, int64_t span_s,
                           int64_t from_wall_ms, int64_t now_wall_ms, sq_metrics_window *out);
/* The provider's cumulative exchange count (all time, fleet-wide). */
int sq_metrics_read_requests(sq_queue *q, const char *provider, double *out);

/* The q-quantile (0..1) in ms of a histogram given as cumulative counts per
 * bucket (SQ_METRICS_N_BUCKETS, the last +Inf), interpolated linearly
 * within its bucket as Prometheus' histogram_quantile does; 0 when empty. */
double sq_metrics_quantile_ms(const double *cumulative, double q);

/* Upper bound of bucket i in seconds as Prometheus writes it ("0.005", ..., "+Inf"). */
const char *sq_metrics_bucket_le(int i);

/* ---- Prometheus text (metrics_text.c) ---- */

/* Appends the fleet-wide totals (HELP, TYPE and samples, families in a
 * fixed order, every histogram bucket present) to out, each sample with
 * the labels const_labels ('queue="Q"'; "" or NULL: none) first. Returns
 * 0, SQ_ENOMEM or SQ_EREDIS*. */
int sq_metrics_text(sq_queue *q, const char *const_labels, sq_buf *out);
/* The same for one process's registry (sq_metrics_totals): its own
 * series, e.g. with 'worker="W",queue="Q"'. Returns 0 or SQ_ENOMEM. */
int sq_metrics_text_local(sq_metrics *m, const char *const_labels, sq_buf *out);
/* Writes 'a,b' (either may be "" or NULL) into out (outlen bytes). */
void sq_metrics_labels_join(char *out, size_t outlen, const char *a, const char *b);
/* Appends a family's HELP and TYPE ("gauge", "counter") lines, then
 * samples of it; labels is "" or 'name="value",...' with values escaped by
 * sq_metrics_escape. Return 0 or SQ_ENOMEM. */
int sq_metrics_text_header(sq_buf *out, const char *name, const char *type, const char *help);
int sq_metrics_text_sample(sq_buf *out, const char *name, const char *labels, double value);
/* Escapes a label value (\\, \", \n) into out (outlen bytes, truncated). */
void sq_metrics_escape(const char *value, char *out, size_t outlen);

#endif
