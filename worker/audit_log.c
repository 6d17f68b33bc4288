/* audit_log.c: the audit entries this worker holds until they reach
 * Redis (audit_log.h). */
#include "audit_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "risk.h"
#include "util.h"
#include "best_effort.h"
#include "job.h"

#define AUDIT_WAIT_MS 1000    /* an entry no pipeline took goes on its own after this */
#define AUDIT_BATCH 256       /* ... or once this many wait */
#define AUDIT_MAX 20000       /* held while Redis is away; more are dropped (and counted) */

struct sq__audit_log {
  sq_audit_entry *e;
  size_t n, cap;
  int64_t oldest_ms;    /* monotonic: when e[0] was noted */
  int64_t dropped;      /* entries lost to a full log (Redis away too long) */
  int64_t max_len;      /* the stream's length; <= 0: no audit trail */
  char worker[sizeof ((sq_audit_entry *)0)->worker];
};

int sq__audit_log_new(const char *worker_id, int64_t max_len, sq__audit_log **out) {
  sq__audit_log *a = calloc(1, sizeof *a);
  *out = a;
  if (!a) return SQ_ENOMEM;
  a->max_len = max_len;
  snprintf(a->worker, sizeof a->worker, "%s", worker_id);
  return 0;
}

void sq__audit_log_note(sq__audit_log *a, const job *j) {
  if (a->max_len <= 0 || !j->program) return;
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 64;
    sq_audit_entry *e = a->n < AUDIT_MAX ? realloc(a->e, cap * sizeof *e) : NULL;
    if (!e) {
      if (a->dropped++ % 1000 == 0)
        SQ_LOGT(SQ_LOG_WARN, j->r.id, "audit: %zu entries wait for redis; dropping this one (%lld dropped so far)",
                a->n, (long long)a->dropped);
      return;
    }
    a->e = e;
    a->cap = cap;
  }
  sq_audit_entry *e = &a->e[a->n];
  memset(e, 0, sizeof *e);
  snprintf(e->task, sizeof e->task, "%s", j->r.id);
  snprintf(e->batch, sizeof e->batch, "%s", j->r.batch);
  /* The listing (code, tests, check): what the result's `code` shows. The
   * jail ran it inside the test harness (common/judge/harness.c), a fixed
   * wrapper, so the listing names the program without the wrapper's bytes. */
  const char *prog = j->listing ? j->listing : j->program;
  sq_risk_code_sha256(prog, strlen(prog), e->sha256);
  snprintf(e->status, sizeof e->status, "%s", sq_status_name(j->r.status));
  snprintf(e->worker, sizeof e->worker, "%s", a->worker);
  if (j->generated) {
    snprintf(e->provider, sizeof e->provider, "%s", j->provider);
    snprintf(e->model, sizeof e->model, "%s", j->model);
  }
  snprintf(e->jail_mode, sizeof e->jail_mode, "%s", sq_jail_mode_name(j->out.mode));
  snprintf(e->language, sizeof e->language, "%s", sq_language_get(j->task->language)->name);
  snprintf(e->profile, sizeof e->profile, "%s", j->r.profile ? j->r.profile : "default");
  snprintf(e->blocked_syscall, sizeof e->blocked_syscall, "%s", j->out.blocked_syscall);
  e->exit_code = j->out.exit_code;
  e->wall_ms = j->out.wall_ms;
  e->round = j->n_repairs;
  e->time_ms = sq_now_wall_ms();
  if (a->n++ == 0) a->oldest_ms = sq_now_mono_ms();
}

size_t sq__audit_log_batch(sq__audit_log *a, sq_queue_stream_batch *b, sq_audit_form **forms) {
  *b = (sq_queue_stream_batch){.name = SQ_AUDIT_STREAM, .max_len = a->max_len};
  *forms = NULL;
  if (a->n == 0) return 0;
  /* One block: the forms, then the entries pointing into them (a form holds
   * pointers, so its size keeps the entries aligned). */
  sq_audit_form *f = malloc(a->n * (sizeof *f + sizeof(sq_queue_stream_entry)));
  if (!f) return 0;
  sq_queue_stream_entry *entries = (sq_queue_stream_entry *)(void *)(f + a->n);
  for (size_t i = 0; i < a->n; i++) {
    sq_audit_form_fill(&f[i], &a->e[i]);
    entries[i] = f[i].entry;
  }
  b->entries = entries;
  b->n = a->n;
  *forms = f;
  return a->n;
}

void sq__audit_log_sent(sq__audit_log *a, size_t n) {
  if (n > a->n) n = a->n;
  memmove(a->e, a->e + n, (a->n - n) * sizeof *a->e);
  a->n -= n;
  a->oldest_ms = sq_now_mono_ms(); /* near enough: what stays is younger than what went */
}

void sq__audit_log_flush(sq__audit_log *a, worker *w, bool now) {
  if (a->n == 0 || (!now && a->n < AUDIT_BATCH && sq_now_mono_ms() - a->oldest_ms < AUDIT_WAIT_MS)) return;
  sq_queue_stream_batch b;
  sq_audit_form *forms = NULL;
  if (sq__audit_log_batch(a, &b, &forms) && sq__best_effort_audit_add(w, &b) == 0) sq__audit_log_sent(a, b.n);
  free(forms);
}

int64_t sq__audit_log_dropped(const sq__audit_log *a) { return a->dropped; }

void sq__audit_log_free(sq__audit_log *a) {
  if (!a) return;
  if (a->n) SQ_WARN("audit: %zu entries never reached redis", a->n);
  free(a->e);
  free(a);
}
