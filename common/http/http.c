/* http.c: the scrape endpoint on libmicrohttpd: the address parsed and
 * bound here (so a busy port or a bad address gets a precise error, not
 * libmicrohttpd's NULL), the socket handed to a daemon that serves from
 * its own thread, GET and HEAD only. Slow clients cannot lock probes out:
 * each exchange has a deadline, each address a share of the connections,
 * and a full share or table makes room by closing its oldest connection. */
#include "http.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "util.h"

/* The bounds (docs/operations.md, "Metrics"): a connection must deliver a
 * whole request, and take the whole reply, within EXCHANGE_DEADLINE_MS of
 * its accept or of its previous reply (an idle timeout alone lets a client
 * sending a byte now and then hold a connection for ever); at most
 * PER_IP_CONNECTION_LIMIT connections from one address and at most
 * CONNECTION_LIMIT in all, the oldest (of the address, of all) closed to
 * make room for a new one: refusing the newest would refuse the probe. */
#define EXCHANGE_DEADLINE_MS 10000
#define IDLE_TIMEOUT_S 10
#define CONNECTION_LIMIT 256
#define PER_IP_CONNECTION_LIMIT 32
#define REAP_EVERY_MS 250

/* One open connection, from libmicrohttpd's accept to its close. */
typedef struct conn {
  struct conn *prev, *next;
  int fd;
  int64_t mark_ms; /* accept or end of the previous reply; INT64_MAX: closing */
  int family;      /* AF_INET, AF_INET6; 0: address unknown (counted with no other) */
  unsigned char addr[16]; /* the peer's address without its port */
} conn;

struct sq_http {
  struct MHD_Daemon *d;
  int fd;
  int port;
  sq_http_fn fn;
  void *ud;
  pthread_mutex_t mu; /* guards conns, n_conns, stopping */
  pthread_cond_t cv;
  pthread_t reaper;
  bool reaper_started, stopping;
  conn *conns;
  size_t n_conns;
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Ends c: libmicrohttpd sees the connection closed and frees it (then
 * on_connection unlinks c). The fd is still libmicrohttpd's: it closes a
 * socket only after its CLOSED notice, which waits for h->mu. Under h->mu. */
static void conn_end(conn *c) {
  if (c->mark_ms == INT64_MAX) return;
  c->mark_ms = INT64_MAX;
  shutdown(c->fd, SHUT_RDWR);
}

/* The peer's address (without the port) into c, for its share. */
static void peer_of(struct MHD_Connection *mc, conn *c) {
  const union MHD_ConnectionInfo *a = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  const struct sockaddr *sa = a ? a->client_addr : NULL;
  if (sa && sa->sa_family == AF_INET) {
    c->family = AF_INET;
    memcpy(c->addr, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
  } else if (sa && sa->sa_family == AF_INET6) {
    c->family = AF_INET6;
    memcpy(c->addr, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
  }
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
  sq_http *h = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    conn *c = info ? calloc(1, sizeof *c) : NULL;
    *socket_context = c;
    if (!c) return; /* served, just without a deadline */
    c->fd = info->connect_fd;
    c->mark_ms = now_ms();
    peer_of(mc, c);
    pthread_mutex_lock(&h->mu);
    /* An address past its share: its oldest connection goes, not the new
     * one (a fresh probe from the address slow clients share gets in). */
    conn *oldest_here = NULL;
    size_t here = 0;
    for (conn *o = h->conns; c->family && o; o = o->next) {
      if (o->mark_ms == INT64_MAX || o->family != c->family || memcmp(o->addr, c->addr, sizeof c->addr)) continue;
      here++;
      if (!oldest_here || o->mark_ms <= oldest_here->mark_ms) oldest_here = o; /* newest first: ties go later */
    }
    if (here >= PER_IP_CONNECTION_LIMIT && oldest_here) conn_end(oldest_here);
    if (h->n_conns >= CONNECTION_LIMIT) { /* make room: the oldest goes */
      conn *oldest = NULL;
      for (conn *o = h->conns; o; o = o->next)
        if (o->mark_ms != INT64_MAX && (!oldest || o->mark_ms <= oldest->mark_ms)) oldest = o;
      if (oldest) conn_end(oldest);
    }
    c->next = h->conns;
    if (h->conns) h->conns->prev = c;
    h->conns = c;
    h->n_conns++;
    pthread_mutex_unlock(&h->mu);
    return;
  }
  conn *c = *socket_context;
  if (!c) return;
  pthread_mutex_lock(&h->mu);
  if (c->prev) c->prev->next = c->next;
  else h->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  h->n_conns--;
  pthread_mutex_unlock(&h->mu);
  free(c);
  *socket_context = NULL;
}

/* A reply went out (or the request ended): the next exchange's clock starts. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls, enum MHD_RequestTerminationCode toe) {
  (void)con_cls, (void)toe;
  sq_http *h = cls;
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  conn *c = info ? info->socket_context : NULL;
  if (!c) return;
  pthread_mutex_lock(&h->mu);
  if (c->mark_ms != INT64_MAX) c->mark_ms = now_ms();
  pthread_mutex_unlock(&h->mu);
}

/* Ends every connection past its deadline, a few times a second. */
static void *reap(void *arg) {
  sq_http *h = arg;
  pthread_mutex_lock(&h->mu);
  while (!h->stopping) {
    int64_t now = now_ms();
    for (conn *c = h->conns; c; c = c->next)
      if (now - c->mark_ms > EXCHANGE_DEADLINE_MS) conn_end(c);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += REAP_EVERY_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&h->cv, &h->mu, &ts);
  }
  pthread_mutex_unlock(&h->mu);
  return NULL;
}

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

int sq_http_listen_socket(const char *spec, const char *host, int port, int backlog, char *err, size_t errlen) {
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
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, backlog) == 0) break;
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
  h->fd = sq_http_listen_socket(spec, host, port, 128, err, errlen);
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
   * runs twice at once. libmicrohttpd's own limit has a spare slot, so a
   * new connection is accepted, and the oldest closed, when the table is
   * full; the per-address share is kept here (on_connection), not by
   * libmicrohttpd, which would refuse the newest. */
  pthread_mutex_init(&h->mu, NULL);
  pthread_cond_init(&h->cv, NULL);
  h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC, 0, NULL, NULL, on_request, h,
                          MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_TIMEOUT_S,
                          MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONNECTION_LIMIT + 1,
                          MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                          MHD_OPTION_END);
  if (h->d) h->reaper_started = pthread_create(&h->reaper, NULL, reap, h) == 0;
  if (!h->d || !h->reaper_started) {
    if (h->d) { /* the daemon closes the listen socket unless handed it back */
      MHD_socket fd = MHD_quiesce_daemon(h->d);
      MHD_stop_daemon(h->d);
      if (fd == MHD_INVALID_SOCKET) h->fd = -1;
    }
    if (h->fd >= 0) close(h->fd);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
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
  pthread_mutex_lock(&h->mu);
  h->stopping = true;
  pthread_cond_signal(&h->cv);
  pthread_mutex_unlock(&h->mu);
  pthread_join(h->reaper, NULL);
  MHD_socket fd = MHD_quiesce_daemon(h->d);
  MHD_stop_daemon(h->d); /* each connection's CLOSED notice frees its conn */
  if (fd != MHD_INVALID_SOCKET) close(fd);
  pthread_cond_destroy(&h->cv);
  pthread_mutex_destroy(&h->mu);
  free(h);
}
