/* audit.h: the audit trail: one entry per program a worker ran in the
 * jail, appended to the capped Redis stream sq:{Q}:audit (XADD MAXLEN ~
 * audit_max_len) by the worker in the same round trip as its results, and
 * read back by `sandq-producer audit`. The entry format is a contract
 * (docs/operations.md): every field a string,
 *
 *   task, batch, sha256 (of the program as run: code + tests + check),
 *   status (this run's verdict), worker, provider and model (generated
 *   code only), jail_mode, blocked_syscall (when seccomp killed it),
 *   exit_code, wall_ms, round (0 the first run, n the n-th repair),
 *   time_ms (wall clock when the run ended), language (the task's), profile (the
 *   interpreter profile it ran in)
 *
 * Knows nothing of the jail or the LLM client: the worker fills the entry. */
#ifndef SQ_AUDIT_H
#define SQ_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "queue.h"
#include "task.h"

#define SQ_AUDIT_STREAM "audit" /* sq:{Q}:audit */
#define SQ_AUDIT_FIELDS 15

/* One executed program. Plain data. */
typedef struct {
  char task[SQ_TASK_ID_MAX + 1];
  char batch[SQ_TASK_ID_MAX + 1];
  char sha256[65];
  char status[32];
  char worker[128];
  char provider[64];
  char model[128];
  char jail_mode[16];
  char profile[32];
  char blocked_syscall[32];
  int64_t exit_code;
  int64_t wall_ms;
  int64_t round;
  int64_t time_ms;
  char language[16];
} sq_audit_entry;

/* An entry's stream form: field names (static) and values (pointing into e
 * and into text, which must outlive the form). */
typedef struct {
  const char *fields[SQ_AUDIT_FIELDS];
  const char *values[SQ_AUDIT_FIELDS];
  char text[4][24]; /* the numbers */
  sq_queue_stream_entry entry;
} sq_audit_form;

/* Fills f from e (e must outlive f); f->entry is ready for XADD. */
void sq_audit_form_fill(sq_audit_form *f, const sq_audit_entry *e);

/* Parses one stream entry (fields/values of n pairs) into *e; unknown
 * fields are ignored, missing ones stay empty or 0. */
void sq_audit_parse(const char *const *fields, const char *const *values, size_t n, sq_audit_entry *e);

/* Calls fn for each entry of the trail with time_ms >= since_ms (0: all),
 * of batch (NULL: every batch), oldest first; id is the stream entry's id.
 * Both borrowed for the call. A non-zero return from fn stops and is
 * returned. Returns 0 or SQ_EREDIS*. */
typedef int (*sq_audit_fn)(const char *id, const sq_audit_entry *e, void *ud);
int sq_audit_read(sq_queue *q, const char *batch, int64_t since_ms, sq_audit_fn fn, void *ud);

#endif
