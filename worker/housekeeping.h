/* housekeeping.h: the worker's periodic work on its event loop: flushing
 * metrics and batch spend, writing this worker's health record, following
 * the provider rollout, publishing what the scrape endpoint answers and
 * sending audit entries no result pipeline took. Its clocks and the
 * rollout state it follows are its own (opaque). */
#ifndef SQ_WORKER_HOUSEKEEPING_H
#define SQ_WORKER_HOUSEKEEPING_H

#include <stdint.h>

typedef struct worker worker;
typedef struct sq__housekeeping sq__housekeeping;

/* Makes w->housekeeping and w->metrics, and hooks the LLM client's
 * exchanges (w->llm, when set) into the metrics. Returns 0, SQ_ENOMEM or
 * sq_metrics_new's error. The caller frees both (sq__housekeeping_free,
 * sq_metrics_free; NULL: no-op). */
int sq__housekeeping_new(worker *w);
void sq__housekeeping_free(sq__housekeeping *h);
/* At most every metrics_flush_ms: flush metrics and write this worker's
 * health; about once a second: follow (and maybe step) the provider
 * rollout; twice a second: stop the runs of batches cancelled with --kill
 * (kill_watch.h); when due: batch spend and the audit log. Cheap; call
 * often. */
void sq__housekeeping_run(worker *w);
/* The last flush, and this worker's health entry removed (a clean stop) or
 * left naming why the host failed it (w->fatal). */
void sq__housekeeping_final(worker *w);
/* Notes a claim that brought tasks (wall clock ms), for the health record. */
void sq__housekeeping_claimed(sq__housekeeping *h, int64_t wall_ms);
/* When this worker started (wall clock ms). */
int64_t sq__housekeeping_started_ms(const sq__housekeeping *h);

#endif
