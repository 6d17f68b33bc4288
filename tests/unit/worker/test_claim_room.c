/* test_claim_room.c: how many tasks a worker claims at once
 * (sq__loop_claim_room): the jail's budget, the LLM's, max_tasks_in_flight
 * and claim_batch each cap it; a small jail room waits while a task waits
 * for a jail thread. */
#include <stdio.h>

#include "check.h"
#include "config.h"
#include "loop.h"

/* A worker with 4 jail threads, a prefetch of 2, room for 100 in flight and
 * claims of up to 50; one provider with 8 requests in flight. */
static sq_config cfg(void) {
  sq_config c;
  sq_config_defaults(&c);
  c.jail_threads = 4;
  c.claim_prefetch = 2;
  c.max_tasks_in_flight = 100;
  c.claim_batch = 50;
  c.n_providers = 1;
  c.providers[0].max_in_flight = 8;
  return c;
}

static void test_jail_budget(void) {
  sq_config c = cfg();
  /* nothing held: every jail thread plus the prefetch */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){0}), 6);
  /* tasks that came with their code use it up */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 4}), 2);
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 6}), 0);
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 9}), 0); /* never negative */
  /* tasks whose code the LLM writes do not count against the jail */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 6, .llm_jobs = 6}), 6);
}

static void test_small_room_waits_for_a_queued_run(void) {
  sq_config c = cfg();
  /* one slot left (less than the prefetch) while a run waits for a thread:
   * wait for a prefetch's worth */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 5, .jail_queued = 1}), 0);
  /* no run waiting: any room is claimed */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 5}), 1);
  /* a prefetch's worth or more is claimed even while runs wait */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 4, .jail_queued = 3}), 2);
}

static void test_llm_budget(void) {
  sq_config c = cfg();
  c.jail_threads = 64;
  /* no provider configured: the LLM's slots do not count */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 10, .llm_jobs = 10, .llm_waiting = 10}), 50);
  /* with one: its max_in_flight + prefetch, less the replies awaited */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.has_llm = true}), 10);
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 7, .llm_jobs = 7, .llm_waiting = 7,
                                                      .has_llm = true}),
           3);
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 12, .llm_jobs = 12, .llm_waiting = 12,
                                                      .has_llm = true}),
           0);
  /* providers' slots add up */
  c.n_providers = 2;
  c.providers[1].max_in_flight = 5;
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.has_llm = true}), 15);
}

static void test_caps(void) {
  sq_config c = cfg();
  c.jail_threads = 64;
  c.claim_batch = 3; /* one round trip's worth */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){0}), 3);
  c.claim_batch = 50;
  c.max_tasks_in_flight = 10; /* what one worker may hold */
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 7, .llm_jobs = 7}), 3);
  CHECK_EQ(sq__loop_claim_room(&c, &(sq__claim_load){.in_flight = 10, .llm_jobs = 10}), 0);
}

int main(void) {
  test_jail_budget();
  test_small_room_waits_for_a_queued_run();
  test_llm_budget();
  test_caps();
  return sq_check_done("test_claim_room");
}
