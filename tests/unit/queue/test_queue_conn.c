/* test_queue_conn.c: the queue handle (queue.c) against a real
 * redis-server (started by tests/integration/queue.sh): URLs, names,
 * connecting, reconnecting, and what the library reports instead of
 * logging (err buffers, notices, the server check). */
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

static const char *g_url;
static int g_port;

/* A raw hiredis connection to poke at the server behind the module's back. */
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
  char err[300] = "";
  int rc = sq_queue_new_opts(g_url, name, NULL, &q, err, sizeof err);
  CHECK_EQ(rc, 0);
  if (!q) {
    fprintf(stderr, "open: %s\n", err);
    exit(sq_check_done("test_queue_conn"));
  }
  return q;
}

/* The notice hook's record of what it was told. */
static int notices;
static char last_notice[512];
static void on_notice(const char *text, void *ud) {
  (void)ud;
  notices++;
  snprintf(last_notice, sizeof last_notice, "%s", text);
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

/* The server check hands its findings back as lines (queue.sh starts redis
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
  sq_log_init("test_queue_conn", SQ_LOG_ERROR);
  g_url = getenv("SANDQ_REDIS_URL");
  const char *port = getenv("SQ_REDIS_PORT");
  if (!g_url || !port) {
    fprintf(stderr, "SKIP: SANDQ_REDIS_URL/SQ_REDIS_PORT not set (run through tests/integration/queue.sh)\n");
    return 77;
  }
  g_port = atoi(port);
  test_urls();
  test_reconnect();
  test_notices();
  test_check_server();
  return sq_check_done("test_queue_conn");
}
