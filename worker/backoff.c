/* backoff.c: the doubling wait after failures in a row (backoff.h), one
 * per kind of call: the event loop's link, the heartbeat's, its reaper,
 * and the best-effort calls each have their own. */
#include "backoff.h"

#include <stdlib.h>

#include "errors.h"

struct sq__backoff {
  int64_t failures;    /* in a row */
  int64_t delay_ms;    /* the wait after the latest failure */
  int64_t next_try_ms; /* monotonic: no try before */
  int64_t next_log_ms; /* monotonic: at the cap, the next log line */
};

int sq__backoff_new(sq__backoff **out) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : SQ_ENOMEM;
}

void sq__backoff_free(sq__backoff *b) { free(b); }

bool sq__backoff_fail(sq__backoff *b, int64_t now_ms) {
  bool step = b->delay_ms < SQ__BACKOFF_MAX_MS; /* the first failure and each doubling */
  b->failures++;
  b->delay_ms = b->delay_ms ? b->delay_ms * 2 : SQ__BACKOFF_MIN_MS;
  if (b->delay_ms > SQ__BACKOFF_MAX_MS) b->delay_ms = SQ__BACKOFF_MAX_MS;
  b->next_try_ms = now_ms + b->delay_ms;
  if (!step && now_ms < b->next_log_ms) return false;
  b->next_log_ms = now_ms + SQ__BACKOFF_LOG_MS;
  return true;
}

int64_t sq__backoff_ok(sq__backoff *b) {
  int64_t n = b->failures;
  *b = (sq__backoff){0};
  return n;
}

bool sq__backoff_due(const sq__backoff *b, int64_t now_ms) { return now_ms >= b->next_try_ms; }

int64_t sq__backoff_failures(const sq__backoff *b) { return b->failures; }

int64_t sq__backoff_delay_ms(const sq__backoff *b) { return b->delay_ms; }

int64_t sq__backoff_next_try_ms(const sq__backoff *b) { return b->next_try_ms; }
