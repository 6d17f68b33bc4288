/* test_queue.c: the queue module against a real redis-server (started by
 * tests/integration/queue.sh, which sets SANDQ_REDIS_URL and SQ_REDIS_SOCK). */
#include <bson/bson.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "log.h"
#include "queue.h"
#include "util.h"

static const char *g_url;
static int g_port;

/* A raw hiredis connection to poke at keys behind the module's back. */
static redisContext *raw(void) {
  redisContext *c = redisConnect("127.0.0.1", g_port);
  if (!c || c->err) {
    fprintf(stderr, "raw connect failed\n");
    exit(1);
  }
  return c;
}

static long long raw_int(redisContext *c, const char *fmt, const char *arg) {
  redisReply *r = redisCommand(c, fmt, arg);
  long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  freeReplyObject(r);
  return v;
}

static void raw_cmd(redisContext *c, const char *fmt, const char *arg) {
  freeReplyObject(redisCommand(c, fmt, arg));
}

static sq_queue *open_queue(const char *name) {
  sq_queue *q = NULL;
  int rc = sq_queue_new(g_url, name, &q);
  CHECK_EQ(rc, 0);
  if (!q) exit(sq_check_done("test_queue"));
  return q;
}

static void test_fifo(void) {
  sq_queue *q = open_queue("fifo");
  const char *p[] = {"task-a", "task-b", "task-c"};
  size_t l[] = {6, 6, 6};
  CHECK_EQ(sq_queue_push(q, "b1", p, l, 3), 0);
  int64_t n = -1;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 3);
  for (int i = 0; i < 3; i++) {
    char *got = NULL;
    size_t len = 0;
    CHECK_EQ(sq_queue_claim(q, "w1", 1000, &got, &len), 0);
    CHECK_STR(got, p[i]);
    CHECK_EQ(len, 6);
    free(got);
  }
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 0);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "b1", &st), 0);
  CHECK_EQ(st.total, 3);
  CHECK_EQ(st.done, 0);
  CHECK_EQ(st.n_statuses, 0);
  redisContext *c = raw();
  CHECK_EQ(raw_int(c, "SISMEMBER sq:{fifo}:batches %s", "b1"), 1);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{fifo}:processing:w1"), 3);
  redisFree(c);
  sq_queue_free(q);
}

/* Many payloads: more than one LPUSH chunk, order kept across chunks. */
static void test_big_push(void) {
  sq_queue *q = open_queue("big");
  enum { N = 2500 };
  static char bufs[N][16];
  const char *p[N];
  size_t l[N];
  for (int i = 0; i < N; i++) {
    l[i] = (size_t)snprintf(bufs[i], sizeof bufs[i], "t%05d", i);
    p[i] = bufs[i];
  }
  CHECK_EQ(sq_queue_push(q, "big", p, l, N), 0);
  int64_t n = 0;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, N);
  int in_order = 1;
  for (int i = 0; i < N; i++) {
    char *got = NULL;
    if (sq_queue_claim(q, "w", 1000, &got, NULL) != 0 || strcmp(got, p[i]) != 0) in_order = 0;
    free(got);
  }
  CHECK(in_order);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "big", &st), 0);
  CHECK_EQ(st.total, N);
  sq_queue_free(q);
}

static void test_empty_claim(void) {
  sq_queue *q = open_queue("empty");
  char *got = (char *)"sentinel";
  int64_t t0 = sq_now_mono_ms();
  CHECK_EQ(sq_queue_claim(q, "w1", 300, &got, NULL), SQ_EEMPTY);
  int64_t dt = sq_now_mono_ms() - t0;
  CHECK(dt >= 250);
  CHECK(dt < 2000);
  CHECK(got == NULL);
  /* timeout 0: no blocking at all */
  t0 = sq_now_mono_ms();
  CHECK_EQ(sq_queue_claim(q, "w1", 0, &got, NULL), SQ_EEMPTY);
  CHECK(sq_now_mono_ms() - t0 < 200);
  sq_queue_free(q);
}

static void test_ack_requeue(void) {
  sq_queue *q = open_queue("ack");
  const char *p[] = {"a", "b\0x", "c"};
  size_t l[] = {1, 3, 1};
  CHECK_EQ(sq_queue_push(q, "b", p, l, 3), 0);
  char *got[3] = {0};
  size_t len[3] = {0};
  for (int i = 0; i < 3; i++) CHECK_EQ(sq_queue_claim(q, "w1", 500, &got[i], &len[i]), 0);
  CHECK_EQ(len[1], 3);
  CHECK(got[1] && memcmp(got[1], "b\0x", 3) == 0);
  /* ack the binary one */
  CHECK_EQ(sq_queue_ack(q, "w1", got[1], len[1]), 0);
  redisContext *c = raw();
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{ack}:processing:w1"), 2);
  /* a task pushed meanwhile is claimed after the requeued ones */
  const char *d = "d";
  size_t dl = 1;
  CHECK_EQ(sq_queue_push(q, "b", &d, &dl, 1), 0);
  size_t moved = 99;
  CHECK_EQ(sq_queue_requeue_processing(q, "w1", &moved), 0);
  CHECK_EQ(moved, 2);
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{ack}:processing:w1"), 0);
  int64_t n = 0;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 3);
  char *x = NULL, *y = NULL, *z = NULL;
  CHECK_EQ(sq_queue_claim(q, "w2", 500, &x, NULL), 0);
  CHECK_EQ(sq_queue_claim(q, "w2", 500, &y, NULL), 0);
  CHECK_EQ(sq_queue_claim(q, "w2", 500, &z, NULL), 0);
  CHECK(x && y && ((strcmp(x, "a") == 0 && strcmp(y, "c") == 0) || (strcmp(x, "c") == 0 && strcmp(y, "a") == 0)));
  CHECK_STR(z, "d");
  /* nothing left: requeue moves nothing */
  CHECK_EQ(sq_queue_requeue_processing(q, "w1", &moved), 0);
  CHECK_EQ(moved, 0);
  free(x);
  free(y);
  free(z);
  for (int i = 0; i < 3; i++) free(got[i]);
  redisFree(c);
  sq_queue_free(q);
}

/* A small BSON result document; the int32 0 puts NUL bytes in the value. */
static bson_t *result_doc(const char *id, const char *status) {
  bson_t *b = bson_new();
  BSON_APPEND_UTF8(b, "_id", id);
  BSON_APPEND_UTF8(b, "status", status);
  BSON_APPEND_INT32(b, "zero", 0);
  return b;
}

static int find_status(const sq_batch_stats *st, const char *name) {
  for (int i = 0; i < st->n_statuses; i++)
    if (strcmp(st->statuses[i].name, name) == 0) return (int)st->statuses[i].count;
  return -1;
}

typedef struct {
  int seen;
  int matched;
  int stop_after;
} scan_state;

static int on_result(const char *id, const uint8_t *data, size_t len, void *ud) {
  scan_state *s = ud;
  s->seen++;
  bson_t doc;
  if (bson_init_static(&doc, data, len)) {
    bson_iter_t it;
    if (bson_iter_init_find(&it, &doc, "_id") && BSON_ITER_HOLDS_UTF8(&it) &&
        strcmp(bson_iter_utf8(&it, NULL), id) == 0 && bson_iter_init_find(&it, &doc, "zero") &&
        BSON_ITER_HOLDS_INT32(&it) && bson_iter_int32(&it) == 0)
      s->matched++;
  }
  return s->stop_after && s->seen >= s->stop_after ? 42 : 0;
}

static void test_results(void) {
  sq_queue *q = open_queue("res");
  const char *p[] = {"x", "y"};
  size_t l[] = {1, 1};
  CHECK_EQ(sq_queue_push(q, "rb", p, l, 2), 0);
  bson_t *d1 = result_doc("t1", "passed");
  CHECK(memchr(bson_get_data(d1), 0, d1->len) != NULL);
  CHECK_EQ(sq_queue_put_result(q, "rb", "t1", "passed", bson_get_data(d1), d1->len), 0);
  CHECK_EQ(sq_queue_put_result(q, "rb", "t1", "failed", bson_get_data(d1), d1->len), SQ_EEXISTS);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "rb", &st), 0);
  CHECK_EQ(st.total, 2);
  CHECK_EQ(st.done, 1);
  CHECK_EQ(find_status(&st, "passed"), 1);
  CHECK_EQ(find_status(&st, "failed"), -1);

  /* the script cache is flushed behind our back: NOSCRIPT, reload, retry */
  redisContext *c = raw();
  raw_cmd(c, "SCRIPT FLUSH%s", "");
  bson_t *d2 = result_doc("t2", "timeout");
  CHECK_EQ(sq_queue_put_result(q, "rb", "t2", "timeout", bson_get_data(d2), d2->len), 0);
  CHECK_EQ(sq_queue_batch_stats(q, "rb", &st), 0);
  CHECK_EQ(st.done, 2);
  CHECK_EQ(st.n_statuses, 2);
  CHECK_EQ(find_status(&st, "passed"), 1);
  CHECK_EQ(find_status(&st, "timeout"), 1);

  /* the stored bytes come back whole, NULs included */
  redisReply *r = redisCommand(c, "HGET sq:{res}:results:rb %s", "t1");
  CHECK(r && r->type == REDIS_REPLY_STRING && r->len == d1->len &&
        memcmp(r->str, bson_get_data(d1), d1->len) == 0);
  freeReplyObject(r);
  scan_state s = {0};
  CHECK_EQ(sq_queue_batch_results(q, "rb", on_result, &s), 0);
  CHECK_EQ(s.seen, 2);
  CHECK_EQ(s.matched, 2);

  /* unknown batch: zeros and no results */
  CHECK_EQ(sq_queue_batch_stats(q, "nobody", &st), 0);
  CHECK_EQ(st.total, 0);
  CHECK_EQ(st.done, 0);
  scan_state s0 = {0};
  CHECK_EQ(sq_queue_batch_results(q, "nobody", on_result, &s0), 0);
  CHECK_EQ(s0.seen, 0);
  bson_destroy(d1);
  bson_destroy(d2);
  redisFree(c);
  sq_queue_free(q);
}

/* Enough results that HSCAN needs several round trips; a callback's
 * non-zero return stops the scan and comes back. */
static void test_results_scan(void) {
  sq_queue *q = open_queue("scan");
  enum { N = 700 };
  for (int i = 0; i < N; i++) {
    char id[16];
    snprintf(id, sizeof id, "id%04d", i);
    bson_t *d = result_doc(id, i % 2 ? "passed" : "failed");
    CHECK_EQ(sq_queue_put_result(q, "sb", id, i % 2 ? "passed" : "failed", bson_get_data(d), d->len), 0);
    bson_destroy(d);
  }
  scan_state s = {0};
  CHECK_EQ(sq_queue_batch_results(q, "sb", on_result, &s), 0);
  CHECK_EQ(s.seen, N);
  CHECK_EQ(s.matched, N);
  scan_state s2 = {.stop_after = 5};
  CHECK_EQ(sq_queue_batch_results(q, "sb", on_result, &s2), 42);
  CHECK_EQ(s2.seen, 5);
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "sb", &st), 0);
  CHECK_EQ(st.done, N);
  CHECK_EQ(find_status(&st, "passed"), N / 2);
  CHECK_EQ(find_status(&st, "failed"), N / 2);
  sq_queue_free(q);
}

/* Keys of the wrong type give SQ_EREDIS with a message, not a crash. */
static void test_wrong_types(void) {
  sq_queue *q = open_queue("wrong");
  redisContext *c = raw();
  raw_cmd(c, "SET sq:{wrong}:tasks %s", "a-string");
  int64_t n;
  CHECK_EQ(sq_queue_length(q, &n), SQ_EREDIS);
  CHECK_CONTAINS(sq_queue_errstr(q), "WRONGTYPE");
  char *got = NULL;
  CHECK_EQ(sq_queue_claim(q, "w", 100, &got, NULL), SQ_EREDIS);
  const char *p = "x";
  size_t l = 1;
  CHECK_EQ(sq_queue_push(q, "b", &p, &l, 1), SQ_EREDIS);
  raw_cmd(c, "HSET sq:{wrong}:batch:b total %s", "not-a-number");
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "b", &st), SQ_EREDIS);
  raw_cmd(c, "SET sq:{wrong}:batch:s %s", "x");
  CHECK_EQ(sq_queue_batch_stats(q, "s", &st), SQ_EREDIS);
  raw_cmd(c, "SET sq:{wrong}:results:s %s", "x");
  scan_state s = {0};
  CHECK_EQ(sq_queue_batch_results(q, "s", on_result, &s), SQ_EREDIS);
  /* the connection is still usable afterwards */
  raw_cmd(c, "DEL sq:{wrong}:tasks%s", "");
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 0);
  redisFree(c);
  sq_queue_free(q);
}

/* A restarted connection (CLIENT KILL) is reopened on the next call. */
static void test_reconnect(void) {
  sq_queue *q = open_queue("reconn");
  redisContext *c = raw();
  int64_t n;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  raw_cmd(c, "CLIENT KILL TYPE normal SKIPME %s", "yes");
  int rc = sq_queue_length(q, &n);
  CHECK(rc == SQ_EREDIS_CONN || rc == 0);
  CHECK_EQ(sq_queue_length(q, &n), 0);
  redisFree(c);
  sq_queue_free(q);
}

static int closed_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &al) != 0)
    return 1;
  close(fd);
  return ntohs(a.sin_port);
}

static void test_urls(void) {
  static const char *bad[] = {
      "",
      "http://127.0.0.1:6379",
      "127.0.0.1:6379",
      "redis://",
      "redis://:secret@",
      "redis://127.0.0.1:0",
      "redis://127.0.0.1:65536",
      "redis://127.0.0.1:port",
      "redis://127.0.0.1:6379/db",
      "redis://secret@127.0.0.1:6379",
      "redis://:bad%zzescape@127.0.0.1",
      "redis://[::1",
      "unix://relative/path",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sq_queue *q = (sq_queue *)&g_port;
    int rc = sq_queue_new(bad[i], "default", &q);
    if (rc != SQ_EINVAL) fprintf(stderr, "URL '%s'\n", bad[i]);
    CHECK_EQ(rc, SQ_EINVAL);
    CHECK(q == NULL);
  }
  sq_queue *q = NULL;
  CHECK_EQ(sq_queue_new(g_url, "bad{name}", &q), SQ_EINVAL);
  CHECK_EQ(sq_queue_new(g_url, "", &q), SQ_EINVAL);

  char url[128];
  snprintf(url, sizeof url, "redis://127.0.0.1:%d", closed_port());
  q = (sq_queue *)&g_port;
  CHECK_EQ(sq_queue_new(url, "default", &q), SQ_EREDIS_CONN);
  CHECK(q == NULL);
  snprintf(url, sizeof url, "unix:///nonexistent/redis.sock");
  CHECK_EQ(sq_queue_new(url, "default", &q), SQ_EREDIS_CONN);

  /* /db selects a database: the same queue name in db 3 is separate */
  snprintf(url, sizeof url, "redis://127.0.0.1:%d/3", g_port);
  CHECK_EQ(sq_queue_new(url, "dbq", &q), 0);
  const char *p = "only-in-3";
  size_t l = strlen(p);
  CHECK_EQ(sq_queue_push(q, "b", &p, &l, 1), 0);
  sq_queue_free(q);
  redisContext *c = raw();
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{dbq}:tasks"), 0);
  raw_cmd(c, "SELECT %s", "3");
  CHECK_EQ(raw_int(c, "LLEN %s", "sq:{dbq}:tasks"), 1);

  /* AUTH: an ACL user with a password; a wrong one fails to connect */
  freeReplyObject(redisCommand(c, "ACL SETUSER alice on >s3cret ~* &* +@all"));
  snprintf(url, sizeof url, "redis://alice:s3cret@127.0.0.1:%d", g_port);
  q = NULL;
  CHECK_EQ(sq_queue_new(url, "auth", &q), 0);
  sq_queue_free(q);
  snprintf(url, sizeof url, "redis://alice:wrong@127.0.0.1:%d", g_port);
  q = NULL;
  CHECK_EQ(sq_queue_new(url, "auth", &q), SQ_EREDIS_CONN);
  CHECK(q == NULL);
  redisFree(c);

  /* unix socket, when the script gave one */
  const char *sock = getenv("SQ_REDIS_SOCK");
  if (sock && *sock) {
    snprintf(url, sizeof url, "unix://%s", sock);
    q = NULL;
    CHECK_EQ(sq_queue_new(url, "unixq", &q), 0);
    int64_t n = -1;
    CHECK_EQ(sq_queue_length(q, &n), 0);
    CHECK_EQ(n, 0);
    sq_queue_free(q);
  }
  sq_queue_free(NULL);
}

int main(void) {
  sq_log_init("test_queue", SQ_LOG_WARN);
  g_url = getenv("SANDQ_REDIS_URL");
  const char *port = getenv("SQ_REDIS_PORT");
  if (!g_url || !port) {
    fprintf(stderr, "SKIP: SANDQ_REDIS_URL/SQ_REDIS_PORT not set (run through tests/integration/queue.sh)\n");
    return 77;
  }
  g_port = atoi(port);
  test_urls();
  test_fifo();
  test_big_push();
  test_empty_claim();
  test_ack_requeue();
  test_results();
  test_results_scan();
  test_wrong_types();
  test_reconnect();
  return sq_check_done("test_queue");
}
