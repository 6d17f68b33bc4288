/* queue_fixture.h: what the queue's unit tests share: the Redis server
 * tests/lib/with_redis.sh started (SANDQ_REDIS_URL, SQ_REDIS_PORT), a
 * raw hiredis connection to poke at keys behind the module's back, and
 * handles opened on it. Header-only: each test binary is one source file. */
#ifndef SQ_QUEUE_FIXTURE_H
#define SQ_QUEUE_FIXTURE_H

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "queue.h"

static const char *g_url; /* the server's URL */
static int g_port;        /* and its TCP port */
static const char *g_test_name;

/* Reads the server's address from the environment. Returns 0, or 77 (SKIP)
 * when the test was not started by tests/lib/with_redis.sh. */
static inline int fixture_init(const char *test_name) {
  g_test_name = test_name;
  sq_log_init(test_name, SQ_LOG_ERROR);
  g_url = getenv("SANDQ_REDIS_URL");
  const char *port = getenv("SQ_REDIS_PORT");
  if (!g_url || !port) {
    fprintf(stderr, "SKIP: SANDQ_REDIS_URL/SQ_REDIS_PORT not set (run through tests/lib/with_redis.sh)\n");
    return 77;
  }
  g_port = atoi(port);
  return 0;
}

/* A raw hiredis connection to poke at keys behind the module's back. */
static inline redisContext *raw(void) {
  redisContext *c = redisConnect("127.0.0.1", g_port);
  if (!c || c->err) {
    fprintf(stderr, "raw connect failed\n");
    exit(1);
  }
  return c;
}

static inline long long raw_int(redisContext *c, const char *fmt, const char *arg) {
  redisReply *r = redisCommand(c, fmt, arg);
  long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  freeReplyObject(r);
  return v;
}

static inline void raw_cmd(redisContext *c, const char *fmt, const char *arg) {
  freeReplyObject(redisCommand(c, fmt, arg));
}

/* A handle on queue name (options o, NULL: defaults); a test that cannot
 * open one ends here. */
static inline sq_queue *open_opts(const char *name, const sq_queue_options *o) {
  sq_queue *q = NULL;
  int rc = sq_queue_new_opts(g_url, name, o, &q, NULL, 0);
  CHECK_EQ(rc, 0);
  if (!q) exit(sq_check_done(g_test_name));
  return q;
}

static inline sq_queue *open_queue(const char *name) { return open_opts(name, NULL); }

static inline void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

#endif
