/* test_queue_conn.c: the queue handle (queue.c) against a real redis-server
 * (started by tests/lib/with_redis.sh, which also gives a unix socket in
 * SQ_REDIS_SOCK): URLs good and bad, AUTH and SELECT, a connection killed
 * under it, and keys of the wrong type. */
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "queue.h"
#include "queue_claim_one.h"
#include "queue_fixture.h"

/* Pushes one payload (NUL-terminated) at normal priority. */
static int push1(sq_queue *q, const char *batch, const char *p) {
  sq_push_item it = {.payload = p, .len = strlen(p), .priority = SQ_PRIORITY_NORMAL};
  return sq_queue_push_items(q, batch, &it, 1, NULL, NULL);
}

/* The notice hook's record of what it was told. */
static int notices;
static char last_notice[512];
static void on_notice(const char *text, void *ud) {
  (void)ud;
  notices++;
  snprintf(last_notice, sizeof last_notice, "%s", text);
}

/* Keys of the wrong type give SQ_EREDIS with a message, not a crash. */
static void test_wrong_types(void) {
  sq_queue *q = open_queue("wrong");
  redisContext *c = raw();
  raw_cmd(c, "SET sq:{wrong}:tasks %s", "a-string");
  int64_t n;
  CHECK_EQ(sq_queue_length(q, &n), SQ_EREDIS);
  CHECK_CONTAINS(sq_queue_errstr(q), "WRONGTYPE");
  sq_claim cl = {0};
  CHECK_EQ(claim_one(q, "w", 100, &cl), SQ_EREDIS);
  CHECK_EQ(push1(q, "b", "x"), SQ_EREDIS);
  raw_cmd(c, "HSET sq:{wrong}:batch:b total %s", "not-a-number");
  sq_batch_stats st;
  CHECK_EQ(sq_queue_batch_stats(q, "b", &st), SQ_EPARSE); /* damaged data, not a Redis failure */
  CHECK_CONTAINS(sq_queue_errstr(q), "field 'total'");
  raw_cmd(c, "DEL sq:{wrong}:tasks%s", "");
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(n, 0);
  redisFree(c);
  sq_queue_free(q);
}

/* A restarted connection (CLIENT KILL) is reopened on the next call: the
 * call that meets the closed socket fails with SQ_EREDIS_CONN (it cannot
 * know whether Redis ran its command, so it does not resend it), and the
 * call after it reconnects (queue.h). */
static void test_reconnect(void) {
  sq_queue *q = open_queue("reconn");
  redisContext *c = raw();
  int64_t n;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  raw_cmd(c, "CLIENT KILL TYPE normal SKIPME %s", "yes");
  CHECK_EQ(sq_queue_length(q, &n), SQ_EREDIS_CONN);
  CHECK_CONTAINS(sq_queue_errstr(q), "redis connection to 127.0.0.1:");
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
  /* the reason goes to the caller's buffer (the library logs nothing) */
  char err[300];
  CHECK_EQ(sq_queue_new_opts(g_url, "bad{name}", NULL, &q, err, sizeof err), SQ_EINVAL);
  CHECK_CONTAINS(err, "queue name 'bad{name}' is invalid (1-63 characters of A-Z a-z 0-9 . _ : -)");
  CHECK_EQ(sq_queue_new_opts("http://x", "default", NULL, &q, err, sizeof err), SQ_EINVAL);
  CHECK(err[0] != '\0');

  char url[128];
  snprintf(url, sizeof url, "redis://127.0.0.1:%d", closed_port());
  q = (sq_queue *)&g_port;
  CHECK_EQ(sq_queue_new(url, "default", &q), SQ_EREDIS_CONN);
  CHECK(q == NULL);
  CHECK_EQ(sq_queue_new_opts(url, "default", NULL, &q, err, sizeof err), SQ_EREDIS_CONN);
  CHECK_CONTAINS(err, "Connection refused");
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

  /* AUTH: an ACL user with a password; a wrong one is named, and is an
   * authentication error (the callers fail fast on it), not a lost link */
  freeReplyObject(redisCommand(c, "ACL SETUSER alice on >s3cret ~* &* +@all"));
  snprintf(url, sizeof url, "redis://alice:s3cret@127.0.0.1:%d", g_port);
  q = NULL;
  CHECK_EQ(sq_queue_new(url, "auth", &q), 0);
  sq_queue_free(q);
  snprintf(url, sizeof url, "redis://alice:wrong@127.0.0.1:%d", g_port);
  q = NULL;
  char aerr[512] = "";
  CHECK_EQ(sq_queue_new_opts(url, "auth", NULL, &q, aerr, sizeof aerr), SQ_EREDIS_AUTH);
  CHECK(q == NULL);
  CHECK(strstr(aerr, "refused the password for user 'alice' (WRONGPASS") != NULL);
  CHECK(strstr(aerr, "wrong") == NULL); /* the password is never shown */
  snprintf(url, sizeof url, "rediss://alice:s3cret@127.0.0.1:%d", g_port);
  CHECK_EQ(sq_queue_new_opts(url, "auth", NULL, &q, aerr, sizeof aerr), SQ_EINVAL);
  CHECK(strstr(aerr, "docs/deploy.md") != NULL);
  redisFree(c);

  /* unix socket, when the script gave one (with_redis.sh does) */
  const char *sock = getenv("SQ_REDIS_SOCK");
  if (!sock || !*sock) sq_check_skip("unix socket URL", "SQ_REDIS_SOCK is not set (run through tests/lib/with_redis.sh)");
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

/* What a call recovered from on its own reaches the notice hook, once per
 * event, and nothing when no hook is set. */
static void test_notices(void) {
  sq_queue *q = open_queue("notes");
  redisContext *c = raw();
  int64_t n;
  const char *p = "x";
  size_t l = 1;
  sq_queue_set_notice(on_notice, NULL);
  notices = 0;
  raw_cmd(c, "FUNCTION FLUSH%s", "");
  CHECK_EQ(sq_queue_push(q, "b", &p, &l, 1), 0); /* reloads the library and goes on */
  CHECK_EQ(notices, 1);
  CHECK_CONTAINS(last_notice, "redis lost the sandq functions");
  raw_cmd(c, "CLIENT KILL TYPE normal SKIPME %s", "yes");
  sq_queue_length(q, &n); /* finds the connection broken */
  notices = 0;
  CHECK_EQ(sq_queue_length(q, &n), 0);
  CHECK_EQ(notices, 1);
  CHECK_CONTAINS(last_notice, "reconnecting to redis after:");
  sq_queue_set_notice(NULL, NULL);
  raw_cmd(c, "FUNCTION FLUSH%s", "");
  CHECK_EQ(sq_queue_push(q, "b", &p, &l, 1), 0);
  CHECK_EQ(notices, 1); /* no hook: nothing told */
  redisFree(c);
  sq_queue_free(q);
}

/* The server check hands its findings back as lines (with_redis.sh starts redis
 * with appendonly no and no snapshots: one finding). */
static void test_check_server(void) {
  sq_queue *q = open_queue("check");
  char text[1024];
  int found = sq_queue_check_server(q, text, sizeof text);
  CHECK_EQ(found, 1);
  CHECK_CONTAINS(text, "has no AOF (appendonly no, no snapshots)");
  CHECK(text[0] && text[strlen(text) - 1] == '\n');
  CHECK_EQ(sq_queue_check_server(q, NULL, 0), 1);
  sq_queue_free(q);
}

int main(void) {
  int rc = fixture_init("test_queue_conn");
  if (rc) return rc;
  test_urls();
  test_wrong_types();
  test_reconnect();
  test_notices();
  test_check_server();
  return sq_check_done("test_queue_conn");
}
