/* audit_log.h: the worker's side of the audit trail (common/fleet/audit.h):
 * one entry per program run in the jail, noted when the run ends and held
 * until a result pipeline carries it to the stream sq:{Q}:audit
 * (redis_link.c), or, when none comes within a second, a best-effort call
 * of its own (housekeeping.c). A worker that dies loses the entries it held
 * (at most a second's worth); a pipeline that broke half-way may send some
 * twice (at least once). While Redis is away it holds up to 20000 entries;
 * more are dropped and counted. */
#ifndef SQ_WORKER_AUDIT_LOG_H
#define SQ_WORKER_AUDIT_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "queue.h"

typedef struct worker worker;
typedef struct job job;
typedef struct sq__audit_log sq__audit_log;

/* An empty log for worker_id (copied); max_len <= 0: auditing is off and
 * nothing is noted. Returns 0 or SQ_ENOMEM. sq__audit_log_free (NULL:
 * no-op) warns about entries that never reached Redis. */
int sq__audit_log_new(const char *worker_id, int64_t max_len, sq__audit_log **out);
void sq__audit_log_free(sq__audit_log *a);
/* Notes the run j just finished (call after its outcome is taken). */
void sq__audit_log_note(sq__audit_log *a, const job *j);
/* The pending entries as a stream batch; *forms (malloc'd, the caller
 * frees; NULL when none) holds their text. Returns how many. */
size_t sq__audit_log_batch(sq__audit_log *a, sq_queue_stream_batch *b, sq_audit_form **forms);
/* The first n pending entries reached Redis: forgets them. */
void sq__audit_log_sent(sq__audit_log *a, size_t n);
/* Sends what waits, through w's best-effort calls, when it waited long
 * enough (now: at once). */
void sq__audit_log_flush(sq__audit_log *a, worker *w, bool now);
/* Entries lost to a full log so far. */
int64_t sq__audit_log_dropped(const sq__audit_log *a);

#endif
