/* http.c: the scrape endpoint on libmicrohttpd: the address parsed and
 * bound here (so a busy port or a bad address gets a precise error, not
 * libmicrohttpd's NULL), the socket handed to a daemon that serves from
 * its own thread, GET and HEAD only. */
#include "http.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errors.h"
#include "util.h"

#define CONNECTION_TIMEOUT_S 10
#define CONNECTION_LIMIT 64

struct sq_http {
  struct MHD_Daemon *d;
  int fd;
  int port;
  sq_http_fn fn;
  void *ud;
};

int sq_http_listen_parse(const char *spec, char *host, size_t hostlen, int *port, char *err, size_t errlen) {
  static const char *const want = "want HOST:PORT, [IPv6]:PORT or :PORT with PORT in 1..65535, e.g. 127.0.0.1:9464";
  if (!spec || !*spec) return sq_errf(err, errlen, SQ_EINVAL, "empty listen address: %s", want);
  const char *colon = strrchr(spec, ':');
  if (!colon) return sq_errf(err, errlen, SQ_EINVAL, "listen address '%s' has no port: %s", spec, want);
  const char *h = spec;
  size_t hlen = (size_t)(colon - spec);
  if (hlen > 0 && spec[0] == '[') { /* [v6]:port */
    if (spec[hlen - 1] != ']' || hlen < 3)
      return sq_errf(err, errlen, SQ_EINVAL, "listen address '%s': unbalanced brackets: %s", spec, want);
    h = spec + 1;
    hlen -= 2;
  } else if (memchr(spec, ':', hlen)) {
    return sq_errf(err, errlen, SQ_EINVAL, "listen address '%s': put an IPv6 address in brackets: %s", spec, want);
  }
  if (hlen == 0) h = "127.0.0.1", hlen = strlen(h);
  if (hlen >= hostlen) return sq_errf(err, errlen, SQ_EINVAL, "listen address '%s': host too long", spec);
  for (size_t i = 0; i < hlen; i++)
    if (h[i] <= ' ' || h[i] == '/' || h[i] == '@' || (unsigned char)h[i] >= 0x7f)
      return sq_errf(err, errlen, SQ_EINVAL, "listen address '%s': bad character in host: %s", spec, want);
  int64_t p;
  if (sq_parse_i64(colon + 1, 1, 65535, &p) != 0)
    return sq_errf(err, errlen, SQ_EINVAL, "listen address '%s': port '%s' is not in 1..65535: %s", spec,
                   colon + 1, want);
  memcpy(host, h, hlen);
  host[hlen] = '\0';
  *port = (int)p;
  return 0;
}

/* Binds and listens on host:port; returns the socket or a negative code. */
static int bind_listen(const char *spec, const char *host, int port, char *err, size_t errlen) {
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai = NULL;
  int g = getaddrinfo(host, service, &hints, &ai);
  if (g != 0)
    return sq_errf(err, errlen, SQ_EINVAL, "listen address '%s': cannot resolve '%s': %s", spec, host,
                   gai_strerror(g));
  int fd = -1, rc = SQ_ESYS, saved = 0;
  for (struct addrinfo *a = ai; a; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      saved = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0) break;
    saved = errno;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(ai);
  if (fd >= 0) return fd;
  if (saved == EADDRINUSE) rc = SQ_EEXISTS;
  if (saved == EADDRNOTAVAIL) rc = SQ_EINVAL;
  return sq_errf(err, errlen, rc, "cannot listen on %s: %s%s", spec, strerror(saved),
                 saved == EADDRINUSE ? " (another process holds the port; pick another)" : "");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_len, void **con_cls) {
  (void)version, (void)upload, (void)upload_len, (void)con_cls;
  sq_http *h = cls;
  sq_http_reply r = {.status = MHD_HTTP_NOT_FOUND};
  bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0, head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
  if (!get && !head) {
    r.status = MHD_HTTP_METHOD_NOT_ALLOWED;
    r.body = strdup("only GET and HEAD\n");
  } else {
    h->fn(url, &r, h->ud);
  }
  if (!r.body && r.status == MHD_HTTP_NOT_FOUND) r.body = strdup("not found: try /metrics or /healthz\n");
  size_t len = r.body ? (r.len ? r.len : strlen(r.body)) : 0;
  struct MHD_Response *resp = MHD_create_response_from_buffer(len, r.body ? r.body : (void *)"",
                                                              r.body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (!resp) {
    free(r.body);
    return MHD_NO;
  }
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                          r.content_type ? r.content_type : "text/plain; charset=utf-8");
  if (r.status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  enum MHD_Result ok = MHD_queue_response(c, (unsigned)r.status, resp);
  MHD_destroy_response(resp);
  return ok;
}

int sq_http_start(const char *spec, sq_http_fn fn, void *ud, sq_http **out, char *err, size_t errlen) {
  char host[256];
  int port, rc;
  *out = NULL;
  if ((rc = sq_http_listen_parse(spec, host, sizeof host, &port, err, errlen))) return rc;
  sq_http *h = calloc(1, sizeof *h);
  if (!h) return sq_errf(err, errlen, SQ_ENOMEM, "out of memory");
  h->fn = fn;
  h->ud = ud;
  h->fd = bind_listen(spec, host, port, err, errlen);
  if (h->fd < 0) {
    rc = h->fd;
    free(h);
    return rc;
  }
  struct sockaddr_storage sa;
  socklen_t salen = sizeof sa;
  h->port = port;
  if (getsockname(h->fd, (struct sockaddr *)&sa, &salen) == 0)
    h->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                              : ((struct sockaddr_in *)&sa)->sin_port);
  /* One internal thread serves every connection in turn: a handler never
   * runs twice at once. */
  h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC, 0, NULL, NULL, on_request, h,
                          MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_CONNECTION_TIMEOUT,
                          (unsigned int)CONNECTION_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
                          (unsigned int)CONNECTION_LIMIT, MHD_OPTION_END);
  if (!h->d) {
    close(h->fd);
    free(h);
    return sq_errf(err, errlen, SQ_ESYS, "cannot serve on %s: libmicrohttpd did not start", spec);
  }
  *out = h;
  return 0;
}

int sq_http_port(const sq_http *h) { return h ? h->port : 0; }

void sq_http_stop(sq_http *h) {
  if (!h) return;
  /* MHD closes the listen socket it was given when it stops, unless it
   * was quiesced first: then it hands it back, to be closed after the stop. */
  MHD_socket fd = MHD_quiesce_daemon(h->d);
  MHD_stop_daemon(h->d);
  if (fd != MHD_INVALID_SOCKET) close(fd);
  free(h);
}
