/* test_llm_breaker.c: the per-provider circuit breaker (llm_breaker.c):
 * the minimum sample, opening at the error share, half-open with exactly one
 * probe, closing fresh, and a window measured in time, not in exchanges. */
#include "check.h"
#include "llm_internal.h"

static void test_breaker(void) {
  sq_llm_options o;
  sq_llm_options_defaults(&o);
  o.breaker_window_ms = 1000;
  o.breaker_min_samples = 4;
  o.breaker_error_pct = 50;
  o.breaker_open_ms = 500;
  sq__breaker b;
  sq__breaker_init(&b, &o);
  int64_t t = 10000;
  /* Below the minimum sample: never opens, even at 100% failures. */
  for (int i = 0; i < 3; i++)
    sq__breaker_record(&b, t, true);
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED);
  sq__breaker_record(&b, t, true);
  CHECK_EQ(b.state, SQ__BREAKER_OPEN);
  CHECK(!sq__breaker_available(&b, t + 100));
  /* Half-open after the cool-down: exactly one probe. */
  CHECK(sq__breaker_available(&b, t + 500));
  sq__breaker_acquire(&b, t + 500);
  CHECK_EQ(b.state, SQ__BREAKER_HALF_OPEN);
  CHECK(!sq__breaker_available(&b, t + 501));
  sq__breaker_record(&b, t + 600, true); /* the probe failed: open again */
  CHECK_EQ(b.state, SQ__BREAKER_OPEN);
  CHECK(!sq__breaker_available(&b, t + 700));
  sq__breaker_acquire(&b, t + 1200);
  sq__breaker_record(&b, t + 1300, false); /* the probe succeeded: closed, fresh */
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED);
  for (int i = 0; i < SQ__BREAKER_SLICES; i++) CHECK_EQ(b.slice[i].n, 0);
  /* Old failures fall out of the window. */
  t = 50000;
  sq__breaker_record(&b, t, true);
  sq__breaker_record(&b, t, true);
  sq__breaker_record(&b, t + 2000, false);
  sq__breaker_record(&b, t + 2000, true);
  sq__breaker_record(&b, t + 2000, false);
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED); /* 1 of 3 in the window */
  sq__breaker_record(&b, t + 2000, false);
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED); /* 1 of 4: 25% */
  sq__breaker_record(&b, t + 2000, true);
  sq__breaker_record(&b, t + 2000, true);
  CHECK_EQ(b.state, SQ__BREAKER_OPEN);   /* 3 of 6: 50% */

  /* The window is time, not a number of exchanges: at a high rate, 1,000
   * successes of the last two seconds still count against 999 failures
   * (under 50%), and the 1,000th failure (50%) opens it. A window of the
   * last 256 exchanges would have opened at about the 128th. */
  o.breaker_window_ms = 10000;
  sq__breaker_init(&b, &o);
  t = 100000;
  for (int i = 0; i < 1000; i++) sq__breaker_record(&b, t + i, false);
  for (int i = 0; i < 999; i++) sq__breaker_record(&b, t + 1000 + i / 2, true);
  CHECK_EQ(b.state, SQ__BREAKER_CLOSED);
  sq__breaker_record(&b, t + 1600, true);
  CHECK_EQ(b.state, SQ__BREAKER_OPEN);
}

int main(void) {
  test_breaker();
  return sq_check_done("test_llm_breaker");
}
