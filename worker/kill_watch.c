/* kill_watch.c: the worker's side of `cancel --kill` (kill_watch.h). The
 * cancel marks each shard's batch hash with the last fencing token handed
 * out there (kill_seq); a job of that batch and shard whose claim's token
 * is at most it was claimed before the cancel, and is stopped. Tasks pushed
 * into the batch later come under larger tokens and run. */
#include "kill_watch.h"

#include <stdatomic.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "util.h"
#include "best_effort.h"
#include "job.h"
#include "pool.h"
#include "worker.h"

#define MAX_MARKS 32 /* (batch, shard) pairs read per check; more wait for the next */

typedef struct {
  const char *batch; /* a job's own string: jobs in the pool outlive a check (only this thread frees them) */
  int shard;
  int64_t seq; /* the mark read back; 0: none */
} mark;

typedef struct {
  mark m[MAX_MARKS];
  int n;
} marks;

static void collect(job *j, void *ud) {
  marks *ms = ud;
  if (!j->r.batch || atomic_load(&j->kill)) return;
  for (int i = 0; i < ms->n; i++)
    if (ms->m[i].shard == j->claim.shard && strcmp(ms->m[i].batch, j->r.batch) == 0) return;
  if (ms->n < MAX_MARKS) ms->m[ms->n++] = (mark){.batch = j->r.batch, .shard = j->claim.shard};
}

static void apply(job *j, void *ud) {
  const marks *ms = ud;
  if (!j->r.batch) return;
  for (int i = 0; i < ms->n; i++) {
    const mark *m = &ms->m[i];
    if (m->seq > 0 && m->shard == j->claim.shard && j->claim.token <= m->seq && strcmp(m->batch, j->r.batch) == 0 &&
        !atomic_exchange(&j->kill, 1))
      SQ_LOGT(SQ_LOG_INFO, j->r.id, "batch %s was cancelled with --kill: stopping the task", j->r.batch);
  }
}

void sq__kill_watch_check(worker *w) {
  if (!w->pool || w->in_jail == 0) return;
  marks ms = {.n = 0};
  sq__pool_each(w->pool, collect, &ms);
  bool any = false;
  for (int i = 0; i < ms.n; i++) {
    sq_queue *q = sq__best_effort_queue(w);
    if (!q) return;
    int rc = sq_queue_batch_kill_seq(q, ms.m[i].batch, ms.m[i].shard, &ms.m[i].seq);
    if (rc == SQ_EPARSE) { /* a damaged mark: Redis works; the batch's tasks run on */
      SQ_WARN("batch %s: %s", ms.m[i].batch, sq_queue_errstr(q));
      rc = 0;
    }
    if (sq__best_effort_done(w, rc, "reading a batch's kill mark")) return;
    any = any || ms.m[i].seq > 0;
  }
  if (any) sq__pool_each(w->pool, apply, &ms);
}
