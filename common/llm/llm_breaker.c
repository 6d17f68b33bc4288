/* llm_breaker.c: a circuit breaker per provider. Closed: requests flow and
 * outcomes are counted; open (the error rate over a window reached the
 * threshold with enough samples): requests go elsewhere or fail at once;
 * half-open (after the cool-down): one probe decides between the two. */
#include <string.h>

#include "llm_internal.h"

void sq__breaker_init(sq__breaker *b, const sq_llm_options *o) {
  memset(b, 0, sizeof *b);
  b->window_ms = o->breaker_window_ms;
  b->min_samples = o->breaker_min_samples;
  b->error_pct = o->breaker_error_pct;
  b->open_ms = o->breaker_open_ms;
  b->slice_ms = b->window_ms / SQ__BREAKER_SLICES > 0 ? b->window_ms / SQ__BREAKER_SLICES : 1;
  b->state = SQ__BREAKER_CLOSED;
}

bool sq__breaker_available(const sq__breaker *b, int64_t now_ms) {
  switch (b->state) {
  case SQ__BREAKER_CLOSED: return true;
  case SQ__BREAKER_OPEN: return now_ms - b->opened_at_ms >= b->open_ms;
  case SQ__BREAKER_HALF_OPEN: return !b->probe_out;
  }
  return false;
}

void sq__breaker_acquire(sq__breaker *b, int64_t now_ms) {
  if (b->state == SQ__BREAKER_OPEN && now_ms - b->opened_at_ms >= b->open_ms) b->state = SQ__BREAKER_HALF_OPEN;
  if (b->state == SQ__BREAKER_HALF_OPEN) b->probe_out = true;
}

static void trip(sq__breaker *b, int64_t now_ms) {
  b->state = SQ__BREAKER_OPEN;
  b->opened_at_ms = now_ms;
  b->probe_out = false;
}

void sq__breaker_record(sq__breaker *b, int64_t now_ms, bool failed) {
  if (b->state == SQ__BREAKER_HALF_OPEN) {
    if (failed) {
      trip(b, now_ms);
    } else { /* the probe came back: start afresh */
      b->state = SQ__BREAKER_CLOSED;
      memset(b->slice, 0, sizeof b->slice);
      b->probe_out = false;
    }
    return;
  }
  if (b->state == SQ__BREAKER_OPEN) return; /* stragglers sent before it opened */
  int64_t e = now_ms / b->slice_ms;
  sq__breaker_slice *s = &b->slice[e % SQ__BREAKER_SLICES];
  if (s->epoch != e) *s = (sq__breaker_slice){.epoch = e};
  s->n++;
  s->bad += failed;
  int64_t n = 0, bad = 0;
  for (int i = 0; i < SQ__BREAKER_SLICES; i++)
    if (e - b->slice[i].epoch < SQ__BREAKER_SLICES) { /* within the window */
      n += b->slice[i].n;
      bad += b->slice[i].bad;
    }
  if (n >= b->min_samples && bad * 100 >= b->error_pct * n) trip(b, now_ms);
}

const char *sq__breaker_state_name(sq__breaker_state s) {
  switch (s) {
  case SQ__BREAKER_CLOSED: return "closed";
  case SQ__BREAKER_OPEN: return "open";
  case SQ__BREAKER_HALF_OPEN: return "half_open";
  }
  return "?";
}
