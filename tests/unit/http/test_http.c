/* test_http.c: the scrape endpoint's addresses (common/http): what parses
 * and what is refused with a reason; binding a free port, the port it
 * reports, and a busy port refused as SQ_EEXISTS (the worker's and the
 * producer's exit 2); slow clients (a header byte at a time, from many
 * loopback addresses) neither lock a fresh probe out nor hold a connection
 * past its deadline, and one address gets only its share, a fresh probe
 * from it closing its oldest. Ordinary requests
 * go through real curl in tests/integration/scrape.sh. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "http.h"

static void test_parse(void) {
  char host[64], err[256];
  int port = 0;
  CHECK_EQ(sq_http_listen_parse("127.0.0.1:9464", host, sizeof host, &port, err, sizeof err), 0);
  CHECK_STR(host, "127.0.0.1");
  CHECK_EQ(port, 9464);
  CHECK_EQ(sq_http_listen_parse(":9", host, sizeof host, &port, err, sizeof err), 0);
  CHECK_STR(host, "127.0.0.1"); /* loopback unless told otherwise */
  CHECK_EQ(port, 9);
  CHECK_EQ(sq_http_listen_parse("[::1]:65535", host, sizeof host, &port, err, sizeof err), 0);
  CHECK_STR(host, "::1");
  CHECK_EQ(sq_http_listen_parse("0.0.0.0:80", host, sizeof host, &port, err, sizeof err), 0);
  CHECK_STR(host, "0.0.0.0");
  CHECK_EQ(sq_http_listen_parse("localhost:8080", host, sizeof host, &port, err, sizeof err), 0);
  CHECK_STR(host, "localhost");
  const char *bad[] = {"", "9464", "host:", "host:0", "host:65536", "host:12x", "::1:80", "[::1:80", "a b:1",
                       "user@host:1", "host:-1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    int rc = sq_http_listen_parse(bad[i], host, sizeof host, &port, err, sizeof err);
    if (rc != SQ_EINVAL) fprintf(stderr, "accepted: '%s'\n", bad[i]);
    CHECK_EQ(rc, SQ_EINVAL);
    CHECK(strstr(err, "HOST:PORT") != NULL || strstr(err, "host") != NULL);
  }
  CHECK_EQ(sq_http_listen_parse("averyveryverylonghostnamethatdoesnotfit.example:1", host, 16, &port, err, sizeof err),
           SQ_EINVAL);
}

static void never(const char *path, sq_http_reply *out, void *ud) {
  (void)path, (void)out, (void)ud;
}

static void test_bind(void) {
  char err[256];
  sq_http *a = NULL, *b = NULL;
  /* a free port: bind one, read it back, then ask for it again */
  int rc = sq_http_start("127.0.0.1:0", never, NULL, &a, err, sizeof err);
  CHECK_EQ(rc, SQ_EINVAL); /* port 0 is not an address an operator may give */
  for (int port = 20000 + (int)((unsigned)getpid() % 20000), tries = 0; tries < 50 && !a; tries++, port++) {
    char spec[32];
    snprintf(spec, sizeof spec, "127.0.0.1:%d", port);
    if (sq_http_start(spec, never, NULL, &a, err, sizeof err) == 0) {
      CHECK_EQ(sq_http_port(a), port);
      rc = sq_http_start(spec, never, NULL, &b, err, sizeof err);
      CHECK_EQ(rc, SQ_EEXISTS);
      CHECK(b == NULL);
      CHECK(strstr(err, "in use") != NULL);
    }
  }
  CHECK(a != NULL);
  sq_http_stop(a);
  sq_http_stop(NULL);
  CHECK_EQ(sq_http_start("no-such-host.invalid:9", never, NULL, &b, err, sizeof err), SQ_EINVAL);
  CHECK(strstr(err, "cannot resolve") != NULL);
}

static void healthz(const char *path, sq_http_reply *out, void *ud) {
  (void)ud;
  if (strcmp(path, "/healthz") != 0) return;
  out->status = 200;
  out->body = strdup("ok\n");
}

/* Serves healthz on a free loopback port; NULL when none was free. */
static sq_http *serve(int *port) {
  char err[256];
  sq_http *h = NULL;
  for (int p = 20000 + (int)(((unsigned)getpid() * 7u) % 20000), tries = 0; tries < 50 && !h; tries++, p++) {
    char spec[32];
    snprintf(spec, sizeof spec, "127.0.0.1:%d", p);
    if (sq_http_start(spec, healthz, NULL, &h, err, sizeof err) == 0) *port = p;
  }
  return h;
}

/* A connection from 127.0.0.<src> to the server; -1 on failure. */
static int dial(int src, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct sockaddr_in from = {.sin_family = AF_INET}, to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  from.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)src);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&from, sizeof from) != 0 || connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
    perror("dial");
    close(fd);
    return -1;
  }
  return fd;
}

/* Opens a request that never ends: the request line and a header begun. */
static int dial_slow(int src, int port) {
  int fd = dial(src, port);
  static const char start[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  if (fd >= 0 && send(fd, start, sizeof start - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof start - 1)) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* One round of a slow client: a byte more on each open socket; a socket the
 * server closed is closed here and set to -1. Returns how many stay open. */
static size_t drip(int *fds, size_t n) {
  size_t open_n = 0;
  for (size_t i = 0; i < n; i++) {
    if (fds[i] < 0) continue;
    char b;
    ssize_t r = recv(fds[i], &b, 1, MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || send(fds[i], "x", 1, MSG_NOSIGNAL) != 1) {
      close(fds[i]);
      fds[i] = -1;
      continue;
    }
    open_n++;
  }
  return open_n;
}

static void close_all(int *fds, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]), fds[i] = -1;
}

#define FLOOD 300     /* more than the server's 256 connections */
#define FLOOD_PER_IP 30 /* under its 32 per address */
#define BOUND_S 60    /* generous: every bound below is met in well under it */

/* 300 slow clients from ten addresses, a byte a second each: a fresh
 * /healthz still answers, and the server holds at most 256 of them. */
static void test_slow_flood(void) {
  int port = 0, fds[FLOOD];
  sq_http *h = serve(&port);
  CHECK(h != NULL);
  if (!h) return;
  for (int i = 0; i < FLOOD; i++) {
    fds[i] = dial_slow(2 + i / FLOOD_PER_IP, port);
    CHECK(fds[i] >= 0);
  }
  int probe = dial(1, port);
  CHECK(probe >= 0);
  static const char req[] = "GET /healthz HTTP/1.0\r\n\r\n";
  CHECK_EQ(send(probe, req, sizeof req - 1, MSG_NOSIGNAL), (long long)(sizeof req - 1));
  char reply[512] = "";
  size_t got = 0, open_n = FLOOD;
  bool done = false;
  for (int s = 0; s < BOUND_S && !done; s++) {
    open_n = drip(fds, FLOOD);
    struct pollfd p = {.fd = probe, .events = POLLIN};
    while (!done && poll(&p, 1, 1000) > 0) {
      ssize_t r = recv(probe, reply + got, sizeof reply - 1 - got, 0);
      if (r <= 0) done = true;
      else got += (size_t)r;
    }
  }
  reply[got] = '\0';
  CHECK(done);
  CHECK(strncmp(reply, "HTTP/1.", 7) == 0 && strstr(reply, " 200 ") != NULL);
  CHECK(strstr(reply, "\r\n\r\nok\n") != NULL);
  if (!done) fprintf(stderr, "the probe got no answer in %d s under %d slow clients\n", BOUND_S, FLOOD);
  for (int s = 0; s < BOUND_S && open_n > 256; s++, sleep(1)) open_n = drip(fds, FLOOD);
  CHECK(open_n <= 256);
  close(probe);
  close_all(fds, FLOOD);
  sq_http_stop(h);
}

/* One address gets 32 connections: its 33rd closes its oldest, the 31
 * others stay (they are still within their deadline). */
static void test_per_ip(void) {
  int port = 0, fds[33];
  sq_http *h = serve(&port);
  CHECK(h != NULL);
  if (!h) return;
  for (int i = 0; i < 33; i++) CHECK((fds[i] = dial_slow(99, port)) >= 0);
  size_t open_n = 33;
  for (int s = 0; s < BOUND_S && open_n == 33; s++, usleep(100000)) open_n = drip(fds, 33);
  CHECK_EQ(open_n, 32);
  CHECK(fds[0] == -1);
  CHECK(fds[32] >= 0);
  close_all(fds, 33);
  sq_http_stop(h);
}

/* Sends a /healthz probe on a new connection from 127.0.0.<src> and
 * whether a 200 came back within BOUND_S, the slow ones (fds, n) kept
 * dripping meanwhile. */
static bool probe_answered(int src, int port, int *fds, size_t n) {
  int probe = dial(src, port);
  if (probe < 0) return false;
  static const char req[] = "GET /healthz HTTP/1.0\r\n\r\n";
  char reply[512] = "";
  size_t got = 0;
  bool done = send(probe, req, sizeof req - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof req - 1);
  for (int s = 0; s < BOUND_S && !done; s++) {
    drip(fds, n);
    struct pollfd p = {.fd = probe, .events = POLLIN};
    while (!done && poll(&p, 1, 1000) > 0) {
      ssize_t r = recv(probe, reply + got, sizeof reply - 1 - got, 0);
      if (r <= 0) done = true;
      else got += (size_t)r;
    }
  }
  close(probe);
  reply[got] = '\0';
  return strstr(reply, " 200 ") != NULL && strstr(reply, "\r\n\r\nok\n") != NULL;
}

#define SAME_IP_FLOOD 80

/* 80 slow clients from the address the probes come from (127.0.0.1, as a
 * kubelet on the same host): each of 3 fresh probes is answered (refusing
 * the newest connection of a full address refused the probe, 1 of 3 got
 * in). */
static void test_same_ip_flood(void) {
  int port = 0, fds[SAME_IP_FLOOD];
  sq_http *h = serve(&port);
  CHECK(h != NULL);
  if (!h) return;
  for (int i = 0; i < SAME_IP_FLOOD; i++) CHECK((fds[i] = dial_slow(1, port)) >= 0);
  for (int k = 0; k < 3; k++) {
    bool ok = probe_answered(1, port, fds, SAME_IP_FLOOD);
    CHECK(ok);
    if (!ok) fprintf(stderr, "probe %d of 3 from the slow clients' address got no answer\n", k + 1);
  }
  close_all(fds, SAME_IP_FLOOD);
  sq_http_stop(h);
}

/* A client sending a byte a second (which an idle timer never ends) is
 * closed once its request's deadline passes. */
static void test_deadline(void) {
  int port = 0, fd;
  sq_http *h = serve(&port);
  CHECK(h != NULL);
  if (!h) return;
  CHECK((fd = dial_slow(98, port)) >= 0);
  for (int s = 0; s < BOUND_S && fd >= 0; s++, sleep(1)) drip(&fd, 1);
  CHECK(fd == -1);
  if (fd >= 0) fprintf(stderr, "a slow client still held its connection after %d s\n", BOUND_S), close(fd);
  sq_http_stop(h);
}

int main(void) {
  test_parse();
  test_bind();
  test_slow_flood();
  test_per_ip();
  test_same_ip_flood();
  test_deadline();
  return sq_check_done("test_http");
}
