/* test_heartbeat.c: the lease-keeping thread (heartbeat.h) against a real
 * redis-server of its own (tests/lib/with_redis.sh): it keeps a
 * claim's lease alive past its length, the claim expires once it stops,
 * and when the shutdown grace runs out it hands every claim back and ends
 * the process. Without Redis it still starts and stops. */
#include "heartbeat.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "errors.h"
#include "log.h"
#include "queue.h"
#include "util.h"

#define LEASE_MS 1500

static const char *g_url;

static sq_config cfg_for(const char *url, const char *queue, const char *worker_id) {
  sq_config c;
  sq_config_defaults(&c);
  snprintf(c.redis_url, sizeof c.redis_url, "%s", url);
  snprintf(c.queue, sizeof c.queue, "%s", queue);
  snprintf(c.worker_id, sizeof c.worker_id, "%s", worker_id);
  c.queue_opts.lease_ms = LEASE_MS;
  c.queue_opts.reap_interval_ms = 100;
  c.heartbeat_ms = 100;
  c.shutdown_grace_ms = 60000;
  return c;
}

static sq_queue *open_queue(const sq_config *c) {
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new_opts(c->redis_url, c->queue, &c->queue_opts, &q, NULL, 0), 0);
  return q;
}

/* Pushes n tasks and claims them as c->worker_id into cl[0..n) (the
 * caller clears them). Returns how many were claimed. */
static size_t push_and_keep(sq_queue *q, const sq_config *c, size_t n, sq_claim *cl) {
  sq_push_item it[4];
  char payload[4][32];
  for (size_t i = 0; i < n; i++) {
    snprintf(payload[i], sizeof payload[i], "{\"id\":\"t%zu\"}", i);
    it[i] = (sq_push_item){.payload = payload[i], .len = strlen(payload[i])};
  }
  CHECK_EQ(sq_queue_push_items(q, "b1", it, n, NULL, NULL), 0);
  size_t got = 0;
  CHECK_EQ(sq_queue_claim_many(q, c->worker_id, 0, cl, n, &got), 0);
  return got;
}

/* Pushes n tasks and claims them as c->worker_id. Returns how many were claimed. */
static size_t push_and_claim(sq_queue *q, const sq_config *c, size_t n) {
  sq_push_item it[4];
  char payload[4][32];
  for (size_t i = 0; i < n; i++) {
    snprintf(payload[i], sizeof payload[i], "{\"id\":\"t%zu\"}", i);
    it[i] = (sq_push_item){.payload = payload[i], .len = strlen(payload[i])};
  }
  CHECK_EQ(sq_queue_push_items(q, "b1", it, n, NULL, NULL), 0);
  sq_claim cl[4] = {0};
  size_t got = 0;
  CHECK_EQ(sq_queue_claim_many(q, c->worker_id, 0, cl, n, &got), 0);
  for (size_t i = 0; i < got; i++) sq_claim_clear(&cl[i]);
  return got;
}

/* Runs the reaper as another worker until it requeues something or
 * wait_ms pass. Returns how many it requeued. */
static size_t reap_as_other(sq_queue *q, int64_t wait_ms) {
  int64_t until = sq_now_mono_ms() + wait_ms;
  size_t requeued = 0;
  do {
    bool ran = false;
    CHECK_EQ(sq_queue_reap(q, "other", &ran, &requeued, NULL), 0);
    if (requeued) break;
    usleep(50 * 1000);
  } while (sq_now_mono_ms() < until);
  return requeued;
}

static void test_without_redis(void) {
  /* nothing listens on port 1: the thread backs off, and still stops */
  sq_config c = cfg_for("redis://127.0.0.1:1", "hb_none", "w-none");
  volatile sig_atomic_t stop = 0;
  sq_heartbeat *hb = NULL;
  CHECK_EQ(sq_heartbeat_start(&c, &stop, &hb), 0);
  CHECK(hb != NULL);
  usleep(200 * 1000);
  sq_heartbeat_stop(hb);
  sq_heartbeat_stop(NULL);
}

static void test_keeps_leases_alive(void) {
  sq_config c = cfg_for(g_url, "hb_lease", "w-lease");
  sq_queue *q = open_queue(&c);
  if (!q) return;
  sq_claim cl[1] = {0};
  CHECK_EQ(push_and_keep(q, &c, 1, cl), 1);
  volatile sig_atomic_t stop = 0;
  sq_heartbeat *hb = NULL;
  CHECK_EQ(sq_heartbeat_start(&c, &stop, &hb), 0);
  CHECK_EQ(sq_heartbeat_hold(hb, &cl[0]), 0);
  /* twice the lease: without heartbeats the reaper would take it back */
  CHECK_EQ(reap_as_other(q, 2 * LEASE_MS), 0);
  sq_heartbeat_stop(hb);
  sq_claim_clear(&cl[0]);
  /* stopped: the lease runs out, and the reaper requeues the task */
  CHECK_EQ(reap_as_other(q, 10 * LEASE_MS), 1);
  sq_queue_free(q);
}

/* A claim Redis lists for the worker that it does not hold (its result
 * was acknowledged and then lost by a Redis that went back) is not renewed
 * for ever: it goes back to the queue at the next heartbeat, no stall
 * counted, while the one held keeps its lease. */
static void test_renews_only_held(void) {
  sq_config c = cfg_for(g_url, "hb_held", "w-held");
  c.queue_opts.lease_ms = 600000; /* only a hand back frees a claim in time */
  sq_queue *q = open_queue(&c);
  if (!q) return;
  sq_claim cl[2] = {0};
  CHECK_EQ(push_and_keep(q, &c, 2, cl), 2);
  CHECK(cl[1].token > cl[0].token);
  volatile sig_atomic_t stop = 0;
  sq_heartbeat *hb = NULL;
  CHECK_EQ(sq_heartbeat_start(&c, &stop, &hb), 0);
  /* the worker read both claims and settled cl[0]: Redis lost that */
  CHECK_EQ(sq_heartbeat_hold(hb, &cl[0]), 0);
  CHECK_EQ(sq_heartbeat_hold(hb, &cl[1]), 0);
  sq_heartbeat_let_go(hb, &cl[0]);
  int64_t len = 0, until = sq_now_mono_ms() + 10000;
  while (sq_queue_length(q, &len) == 0 && len == 0 && sq_now_mono_ms() < until) usleep(20 * 1000);
  CHECK_EQ(len, 1);
  sq_queue_counters k;
  CHECK_EQ(sq_queue_counters_get(q, &k), 0);
  CHECK_EQ(k.stalled, 0);
  CHECK_EQ(k.in_flight, 1); /* cl[1], still held */
  sq_claim again = {0};
  size_t got = 0;
  CHECK_EQ(sq_queue_claim_many(q, "other", 0, &again, 1, &got), 0);
  CHECK(again.payload && strcmp(again.payload, cl[0].payload) == 0);
  sq_claim_clear(&again);
  sq_heartbeat_stop(hb);
  sq_claim_clear(&cl[0]);
  sq_claim_clear(&cl[1]);
  sq_queue_free(q);
}

static void test_grace_hands_back_and_ends(void) {
  sq_config c = cfg_for(g_url, "hb_grace", "w-grace");
  c.shutdown_grace_ms = 0;
  c.queue_opts.lease_ms = 600000; /* only a hand back frees these claims */
  sq_queue *q = open_queue(&c);
  if (!q) return;
  CHECK_EQ(push_and_claim(q, &c, 3), 3);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    static volatile sig_atomic_t stop = 1; /* asked to stop before it starts */
    sq_heartbeat *hb = NULL;
    alarm(30); /* a thread that never ends the process dies by SIGALRM */
    if (sq_heartbeat_start(&c, &stop, &hb) != 0) _exit(3);
    for (;;) pause();
  }
  CHECK(pid > 0);
  int status = 0;
  CHECK_EQ(waitpid(pid, &status, 0), pid);
  CHECK(WIFEXITED(status));
  CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
  /* every claim went back: another worker gets all three now */
  sq_claim cl[4] = {0};
  size_t got = 0;
  CHECK_EQ(sq_queue_claim_many(q, "other", 0, cl, 4, &got), 0);
  CHECK_EQ(got, 3);
  for (size_t i = 0; i < got; i++) sq_claim_clear(&cl[i]);
  sq_queue_free(q);
}

int main(void) {
  sq_log_init("test_heartbeat", SQ_LOG_ERROR);
  test_without_redis();
  g_url = getenv("SANDQ_REDIS_URL");
  if (!g_url) {
    sq_check_skip("leases and grace", "SANDQ_REDIS_URL not set (run through tests/lib/with_redis.sh)");
  } else {
    test_keeps_leases_alive();
    test_renews_only_held();
    test_grace_hands_back_and_ends();
  }
  return sq_check_done("test_heartbeat");
}
