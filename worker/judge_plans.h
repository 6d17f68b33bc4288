/* judge_plans.h: the worker's cache of the Python judge's plans (harness.h,
 * "The plan"): the tests' parts compiled and what they take from the
 * candidate, as the first judge of those tests worked them out, passed to
 * every later task with the same tests so that its judge neither compiles
 * nor reads them again (docs/benchmarks.md, "The isolated judge").
 *
 * A key is the sha256 of the profile's name, the tests' text and the entry
 * point: what decides a plan (the profile decides the interpreter; the
 * judge refuses a plan of another). A plan comes only from a judge's mark,
 * written before any code of the candidate's ran and checked against its
 * digest (sq_harness_take_marks). Direct-mapped, SQ__PLANS_SLOTS entries,
 * a newer plan replacing whatever held its slot; each plan is small
 * (SQ_HARNESS_PLAN_MAX_LINE). Used from the worker's event loop thread
 * only. */
#ifndef SQ_WORKER_JUDGE_PLANS_H
#define SQ_WORKER_JUDGE_PLANS_H

#include <stddef.h>

#include "task.h"

#define SQ__PLANS_SLOTS 4096

typedef struct sq__plans sq__plans;

/* A cache (*out), or SQ_ENOMEM. */
int sq__plans_new(sq__plans **out);
void sq__plans_free(sq__plans *p);

/* t's key under profile (NULL: the default) into key. */
void sq__plans_key(const sq_task *t, const char *profile, unsigned char key[32]);

/* The plan kept under key (*len bytes, owned by the cache until the next
 * sq__plans_put), or NULL. p may be NULL (no cache). */
const void *sq__plans_get(sq__plans *p, const unsigned char key[32], size_t *len);

/* Keeps a copy of plan (len bytes) under key. 0 or SQ_ENOMEM (nothing
 * kept). p may be NULL. */
int sq__plans_put(sq__plans *p, const unsigned char key[32], const void *plan, size_t len);

#endif
