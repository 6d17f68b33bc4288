/* backoff.h: how long to wait after failures in a row of one kind of call
 * to Redis. The wait doubles from SQ__BACKOFF_MIN_MS to SQ__BACKOFF_MAX_MS
 * and resets on the next success; a failure deserves a log line only when
 * it starts a step (the first, each doubling, then once every
 * SQ__BACKOFF_LOG_MS at the cap), never one per attempt. */
#ifndef SQ_WORKER_BACKOFF_H
#define SQ_WORKER_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#define SQ__BACKOFF_MIN_MS 100
#define SQ__BACKOFF_MAX_MS 5000
#define SQ__BACKOFF_LOG_MS 60000

typedef struct sq__backoff sq__backoff;

/* A backoff with no failure: a try is due now. Returns 0 or SQ_ENOMEM
 * (*out NULL). The caller frees it with sq__backoff_free (NULL: no-op). */
int sq__backoff_new(sq__backoff **out);
void sq__backoff_free(sq__backoff *b);
/* Counts a failure at now_ms (monotonic). Returns true when it starts a new
 * step and deserves a log line. */
bool sq__backoff_fail(sq__backoff *b, int64_t now_ms);
/* A success: resets b and returns the failures in a row it ended. */
int64_t sq__backoff_ok(sq__backoff *b);
/* Whether a try is due at now_ms. */
bool sq__backoff_due(const sq__backoff *b, int64_t now_ms);
/* Failures in a row (0 after a success). */
int64_t sq__backoff_failures(const sq__backoff *b);
/* The wait the latest failure earned (0 after a success). */
int64_t sq__backoff_delay_ms(const sq__backoff *b);
/* Monotonic ms before which no try is due (0 after a success). */
int64_t sq__backoff_next_try_ms(const sq__backoff *b);

#endif
