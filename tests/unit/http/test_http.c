/* test_http.c: the scrape endpoint's addresses (common/http): what parses
 * and what is refused with a reason; binding a free port, the port it
 * reports, and a busy port refused as SQ_EEXISTS (the worker's and the
 * producer's exit 2). Requests themselves go through real curl in
 * tests/integration/scrape.sh. */
#include <stdio.h>
#include <string.h>
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

int main(void) {
  test_parse();
  test_bind();
  return sq_check_done("test_http");
}
