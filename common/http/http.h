/* http.h: a small scrape endpoint (GET /metrics, GET /healthz and the
 * like) on libmicrohttpd, a well-kept embedded HTTP server: no HTTP is
 * written by hand here. The library serves from its own thread; the
 * caller's handler answers each request and must be thread-safe with
 * respect to the caller's other threads.
 *
 * Addresses are HOST:PORT, [IPv6]:PORT or :PORT (loopback: an endpoint
 * binds to 127.0.0.1 unless told otherwise; 0.0.0.0 or [::] for every
 * interface). Knows nothing of Redis, the jail or metrics. Logs nothing.
 *
 * Bounded against slow clients (a probe still answers under a flood): a
 * connection has 10 s for each request and its reply (not an idle timer:
 * a byte now and then does not extend it), one address holds at most 32
 * connections and all at most 256: past either, a new one closes the
 * oldest (of its address, of all). */
#ifndef SQ_HTTP_H
#define SQ_HTTP_H

#include <stddef.h>

typedef struct sq_http sq_http;

/* What a handler answers. body is malloc'd by the handler (may be NULL for
 * an empty body); the library frees it. */
typedef struct {
  int status;               /* 200, 404, 503, ... */
  const char *content_type; /* static text; NULL: text/plain; charset=utf-8 */
  char *body;
  size_t len;
} sq_http_reply;

/* Answers one GET or HEAD request for path (without the query string).
 * Called on the library's thread, one request at a time; path lives for
 * the call. out arrives zeroed with status 404. */
typedef void (*sq_http_fn)(const char *path, sq_http_reply *out, void *ud);

/* Splits spec into host (hostlen bytes) and port 1..65535. ":PORT" means
 * 127.0.0.1. Returns 0, or SQ_EINVAL with err (errlen bytes) saying what a
 * valid address looks like. Pure: resolves nothing. */
int sq_http_listen_parse(const char *spec, char *host, size_t hostlen, int *port, char *err, size_t errlen);

/* A socket bound to host:port (sq_http_listen_parse's) and listening with
 * backlog, close-on-exec; the socket, or a negative code with a message
 * naming spec (SQ_EEXISTS: the port is taken). */
int sq_http_listen_socket(const char *spec, const char *host, int port, int backlog, char *err, size_t errlen);

/* Binds spec (a numeric address or a host name, resolved once) and serves
 * requests with fn(ud) from a thread of its own. Returns 0 and *out, or
 * SQ_EINVAL (a bad or unresolvable address), SQ_EEXISTS (the port is in
 * use), SQ_ESYS (another bind or listen failure, e.g. no permission),
 * SQ_ENOMEM, with err naming the address and the cause. Stop with
 * sq_http_stop. */
int sq_http_start(const char *spec, sq_http_fn fn, void *ud, sq_http **out, char *err, size_t errlen);

/* The port actually bound (for a spec whose port the caller chose). */
int sq_http_port(const sq_http *h);

/* Stops serving (waits for a request in progress) and frees; NULL: no-op. */
void sq_http_stop(sq_http *h);

#endif
