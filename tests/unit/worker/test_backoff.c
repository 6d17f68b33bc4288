/* test_backoff.c: the wait after failures in a row (backoff.h): from
 * SQ__BACKOFF_MIN_MS, doubling to SQ__BACKOFF_MAX_MS, reset by a success;
 * one log line per step, then one per SQ__BACKOFF_LOG_MS at the cap. */
#include "backoff.h"

#include <stdio.h>

#include "check.h"

static void test_doubles_to_the_cap(void) {
  sq__backoff *b;
  CHECK_EQ(sq__backoff_new(&b), 0);
  if (!b) return;
  CHECK(sq__backoff_due(b, 0)); /* no failure: due at once */
  CHECK_EQ(sq__backoff_failures(b), 0);
  int64_t want = SQ__BACKOFF_MIN_MS, now = 1000;
  for (int i = 0; i < 12; i++) {
    CHECK(sq__backoff_fail(b, now)); /* each step below the cap is logged */
    CHECK_EQ(sq__backoff_failures(b), i + 1);
    CHECK_EQ(sq__backoff_delay_ms(b), want);
    CHECK_EQ(sq__backoff_next_try_ms(b), now + want);
    CHECK(!sq__backoff_due(b, now + want - 1));
    CHECK(sq__backoff_due(b, now + want));
    if (want == SQ__BACKOFF_MAX_MS) break;
    want = want * 2 > SQ__BACKOFF_MAX_MS ? SQ__BACKOFF_MAX_MS : want * 2;
    now += 10;
  }
  CHECK_EQ(sq__backoff_delay_ms(b), SQ__BACKOFF_MAX_MS);
  sq__backoff_free(b);
}

static void test_logs_once_per_step_at_the_cap(void) {
  sq__backoff *b;
  CHECK_EQ(sq__backoff_new(&b), 0);
  if (!b) return;
  int64_t now = 5000;
  while (sq__backoff_delay_ms(b) < SQ__BACKOFF_MAX_MS) CHECK(sq__backoff_fail(b, now));
  /* the step that reached the cap logged at now: the next line is due a
   * SQ__BACKOFF_LOG_MS later, not one per failure */
  CHECK(!sq__backoff_fail(b, now + 1));
  CHECK(!sq__backoff_fail(b, now + SQ__BACKOFF_LOG_MS - 1));
  CHECK(sq__backoff_fail(b, now + SQ__BACKOFF_LOG_MS));
  CHECK(!sq__backoff_fail(b, now + SQ__BACKOFF_LOG_MS + 1));
  CHECK_EQ(sq__backoff_delay_ms(b), SQ__BACKOFF_MAX_MS);
  sq__backoff_free(b);
}

static void test_success_resets(void) {
  sq__backoff *b;
  CHECK_EQ(sq__backoff_new(&b), 0);
  if (!b) return;
  sq__backoff_fail(b, 100);
  sq__backoff_fail(b, 200);
  sq__backoff_fail(b, 300);
  CHECK_EQ(sq__backoff_ok(b), 3); /* the failures it ended */
  CHECK_EQ(sq__backoff_failures(b), 0);
  CHECK_EQ(sq__backoff_delay_ms(b), 0);
  CHECK(sq__backoff_due(b, 0));
  CHECK_EQ(sq__backoff_ok(b), 0);
  /* after a reset the wait starts over, and the first failure is logged */
  CHECK(sq__backoff_fail(b, 400));
  CHECK_EQ(sq__backoff_delay_ms(b), SQ__BACKOFF_MIN_MS);
  sq__backoff_free(b);
  sq__backoff_free(NULL);
}

int main(void) {
  test_doubles_to_the_cap();
  test_logs_once_per_step_at_the_cap();
  test_success_resets();
  return sq_check_done("test_backoff");
}
