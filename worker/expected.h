/* expected.h: evalplus's expected values, computed once per problem per
 * worker. A task whose tests begin with SQ__EXPECTED_MARK (import's
 * HumanEval+/MBPP+ tiers) compares the candidate with a reference solution
 * on each input. The first job of such tests runs the reference alone, in
 * the jail like any program (it is data from a file), and its output (each
 * input's value and the reference's CPU time, in the tests' own tagged
 * encoding) is kept here, keyed by the exact tests text; every job with the
 * same tests gets it appended as _SQ_EXPECTED, and the judge decodes it
 * instead of running the reference. Jobs that arrive while the reference
 * runs wait for it. The reference runs under the profile's default limits
 * (never the task's) and is charged to no task. A reference run that fails
 * is tried again by the next job, SQ__EXPECTED_TRIES runs in all; after
 * that its jobs end invalid_task, naming why (a problem of the tests, never
 * the candidate's status). Only when the cache has no free slot does a job
 * compute the values in its own run.
 *
 * The same cache holds the calls judge's reference values (calls.h), keyed
 * by the reference program.
 *
 * The fleet shares the values through Redis, sq:{Q}:cache:expected:<sha256>
 * (docs/formats.md): before its first reference run for a key a worker
 * reads the entry, and uses it when well-formed (a damaged one is ignored
 * and the reference runs); a run that ended well is offered with SET NX,
 * and the worker uses what the key then holds, so the first value stored
 * is every worker's. Failed runs are never stored. A task with files or
 * fetches neither reads nor offers the shared values (its reference run
 * may see them), and a Redis that cannot be reached only means the
 * reference runs here. */
#ifndef SQ_WORKER_EXPECTED_H
#define SQ_WORKER_EXPECTED_H

#include <stdbool.h>

#include "calls.h"
#include "worker.h"

#define SQ__EXPECTED_MARK "# sandq:expected v1\n"
#define SQ__EXPECTED_OUTPUT_KIB 1024 /* the reference run's stdout */
#define SQ__EXPECTED_MAX_ENTRIES 256
#define SQ__EXPECTED_MAX_BYTES ((size_t)64 << 20) /* keys and values held, all entries */
#define SQ__EXPECTED_REDIS_NS "expected"              /* sq:{Q}:cache:expected:<sha256> */
#define SQ__EXPECTED_REDIS_TTL_S (7 * 24 * 3600)      /* a shared value's life in Redis */
#define SQ__EXPECTED_REDIS_MAX_BYTES ((size_t)8 << 20) /* a longer entry is damaged */

typedef struct sq__expected sq__expected;

enum { SQ__EXPECTED_READY = 0, SQ__EXPECTED_WAIT = 1, SQ__EXPECTED_FAILED = 2 };

/* A reference whose run did not end well is tried again by the next jobs
 * that need it, this many runs in all; after that those jobs end with its
 * failure named (a problem's fault, never a candidate's). */
#define SQ__EXPECTED_TRIES 3

/* For job j about to run tests: SQ__EXPECTED_READY with *out the tests to
 * judge with (malloc'd, the caller frees; NULL: tests as they are),
 * SQ__EXPECTED_WAIT: the job was handed to the pool for the reference run
 * or waits for another job's; it comes back through sq__job_exec_resume;
 * SQ__EXPECTED_FAILED with why (len bytes) naming how the reference's
 * last run ended. SQ_ENOMEM on failure. Creates w's cache on first use. */
int sq__expected_prepare(job *j, const char *tests, char **out, char *why, size_t len);
/* The calls judge's reference values for plan (calls.h), keyed by the
 * reference program's text: SQ__EXPECTED_READY with *ref filled (the
 * caller clears it), SQ__EXPECTED_WAIT (the job runs the reference, or
 * waits for another job's run; it comes back through
 * sq__job_exec_resume), SQ__EXPECTED_FAILED with why naming the reference's
 * failure, or SQ_ENOMEM. The reference runs under the profile's default
 * limits, never the task's, and is charged to no task. */
int sq__expected_calls(job *j, const sq_calls_plan *plan, sq_calls_results *ref, char *why, size_t len);
/* The reference run of j ended (j->out, j->jail_rc): keeps its values (or
 * that it failed) and resumes j and every job that waited for it. */
void sq__expected_done(job *j);
/* NULL: no-op. */
void sq__expected_free(sq__expected *c);

#endif
