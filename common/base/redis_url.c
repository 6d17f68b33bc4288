/* redis_url.c: a Redis URL's syntax into sq_redis_url (redis_url.h): no
 * connection, no environment, no hiredis. */
#include "redis_url.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "util.h"

#define fail(...) sq_errf(err, errlen, SQ_EINVAL, __VA_ARGS__)

/* Copies [s, s+n) into dst (cap bytes) decoding %XX. Returns 0 or -1 when
 * too long or badly escaped. */
static int copy_decoded(char *dst, size_t cap, const char *s, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= n || !isxdigit((unsigned char)s[i + 1]) || !isxdigit((unsigned char)s[i + 2])) return -1;
      char hex[3] = {s[i + 1], s[i + 2], 0};
      c = (char)strtol(hex, NULL, 16);
      i += 2;
    }
    if (o + 1 >= cap) return -1;
    dst[o++] = c;
  }
  dst[o] = 0;
  return 0;
}

/* A port of [p, p+n): 1..65535. Returns it, or -1. */
static int parse_port(const char *p, size_t n) {
  char buf[16];
  int64_t v;
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, p, n);
  buf[n] = 0;
  if (!isdigit((unsigned char)buf[0]) || sq_parse_i64(buf, 1, 65535, &v) != 0) return -1;
  return (int)v;
}

/* One host[:port] or [ipv6][:port] of s[0..len). Returns 0 or -1. */
static int parse_hostport(const char *s, size_t len, int default_port, sq_redis_addr *a) {
  const char *host = s, *host_end, *port = NULL;
  const char *end = s + len;
  if (len && *s == '[') {
    const char *rb = memchr(s, ']', len);
    if (!rb || (rb + 1 < end && rb[1] != ':')) return -1;
    host = s + 1;
    host_end = rb;
    if (rb + 1 < end) port = rb + 2;
  } else {
    const char *colon = memchr(s, ':', len);
    host_end = colon ? colon : end;
    if (colon) port = colon + 1;
  }
  if (host_end == host || (size_t)(host_end - host) >= sizeof a->host) return -1;
  memcpy(a->host, host, (size_t)(host_end - host));
  a->host[host_end - host] = 0;
  a->port = default_port;
  if (port && (a->port = parse_port(port, (size_t)(end - port))) < 0) return -1;
  return 0;
}

/* [[user]:password@] at s, up to its last '@' before end, into u. *hosts
 * points past it. Returns 0 or SQ_EINVAL (err quotes nothing of it). */
static int parse_credentials(const char *s, const char *end, sq_redis_url *u, const char **hosts, char *err,
                             size_t errlen) {
  const char *at = NULL;
  for (const char *p = s; p < end; p++)
    if (*p == '@') at = p;
  *hosts = s;
  if (!at) return 0;
  const char *colon = memchr(s, ':', (size_t)(at - s));
  if (!colon) return fail("credentials must be ':password@' or 'user:password@'");
  if (copy_decoded(u->user, sizeof u->user, s, (size_t)(colon - s)) != 0)
    return fail("user name is too long or badly %%-escaped");
  if (copy_decoded(u->password, sizeof u->password, colon + 1, (size_t)(at - colon - 1)) != 0)
    return fail("password is too long or badly %%-escaped");
  *hosts = at + 1;
  return 0;
}

/* The seeds of a sentinel or cluster URL: s up to the first '/' or '?':
 * [[user]:password@]host:port[,host:port...]. *rest points past it. */
static int parse_seeds(const char *s, int default_port, sq_redis_url *u, const char **rest, char *err,
                       size_t errlen) {
  const char *end = s + strcspn(s, "/?");
  const char *hosts;
  int rc = parse_credentials(s, end, u, &hosts, err, errlen);
  if (rc) return rc;
  for (const char *p = hosts; p < end;) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *e = comma ? comma : end;
    if (u->n_seeds >= SQ_REDIS_URL_MAX_SEEDS) return fail("more than %d addresses", SQ_REDIS_URL_MAX_SEEDS);
    if (parse_hostport(p, (size_t)(e - p), default_port, &u->seeds[u->n_seeds]) != 0)
      return fail("address '%.*s' is not host:port (port 1..65535)", (int)(e - p > 64 ? 64 : e - p), p);
    u->n_seeds++;
    p = comma ? comma + 1 : end;
  }
  if (u->n_seeds == 0) return fail("no host:port given");
  *rest = end;
  snprintf(u->host, sizeof u->host, "%s", u->seeds[0].host);
  u->port = u->seeds[0].port;
  return 0;
}

static int parse_sentinel(const char *s, sq_redis_url *u, char *err, size_t errlen) {
  const char *rest;
  int rc = parse_seeds(s, 26379, u, &rest, err, errlen);
  if (rc) return rc;
  const char *name = *rest == '/' ? rest + 1 : "";
  const char *qm = strchr(name, '?');
  size_t n = qm ? (size_t)(qm - name) : strlen(name);
  if (n == 0 || n >= sizeof u->master)
    return fail("the master's name is missing or too long (redis-sentinel://host:port[,host:port...]/MASTER_NAME[?db=N])");
  memcpy(u->master, name, n);
  u->master[n] = 0;
  if (qm) {
    int64_t v;
    if (strncmp(qm, "?db=", 4) != 0 || sq_parse_i64(qm + 4, 0, 1000000, &v) != 0)
      return fail("the only option is ?db=N (a database number), not '%.32s'", qm);
    u->db = (long)v;
  }
  return 0;
}

static int parse_cluster(const char *s, sq_redis_url *u, char *err, size_t errlen) {
  const char *rest;
  int rc = parse_seeds(s, 6379, u, &rest, err, errlen);
  if (rc) return rc;
  if (*rest && strcmp(rest, "/") != 0)
    return fail("a cluster has one database: nothing may follow the addresses (redis-cluster://host:port[,host:port...])");
  return 0;
}

/* redis://[[user]:password@]host[:port][/db] after the scheme. */
static int parse_plain(const char *auth, sq_redis_url *u, char *err, size_t errlen) {
  const char *slash = strchr(auth, '/');
  const char *end = slash ? slash : auth + strlen(auth);
  const char *host, *host_end, *port = NULL;
  int rc = parse_credentials(auth, end, u, &host, err, errlen);
  if (rc) return rc;
  if (*host == '[') { /* [ipv6] */
    const char *rb = memchr(host, ']', (size_t)(end - host));
    if (!rb) return fail("unterminated '[' in host");
    host_end = rb + 1;
    if (host_end < end && *host_end != ':') return fail("unexpected text after ']' in host");
    if (host_end < end) port = host_end + 1;
    host++;
    host_end = rb;
  } else {
    const char *colon = memchr(host, ':', (size_t)(end - host));
    host_end = colon ? colon : end;
    if (colon) port = colon + 1;
  }
  if (host_end == host) return fail("missing host");
  if ((size_t)(host_end - host) >= sizeof u->host) return fail("host is too long");
  memcpy(u->host, host, (size_t)(host_end - host));
  u->host[host_end - host] = 0;
  if (port && (u->port = parse_port(port, (size_t)(end - port))) < 0) {
    size_t n = (size_t)(end - port);
    return fail("port '%.*s' is not a number in 1..65535", (int)(n > 15 ? 15 : n), port);
  }
  if (slash && slash[1]) {
    int64_t v;
    if (!isdigit((unsigned char)slash[1]) || sq_parse_i64(slash + 1, 0, 1000000, &v) != 0)
      return fail("database '%.32s' is not a number", slash + 1);
    u->db = (long)v;
  }
  return 0;
}

int sq_redis_url_parse(const char *url, sq_redis_url *u, char *err, size_t errlen) {
  memset(u, 0, sizeof *u);
  u->port = 6379;
  u->db = -1;
  if (!url || !*url) return fail("empty (want redis://[user:password@]host[:port][/db] or unix:///path)");
  if (strncmp(url, "unix://", 7) == 0) {
    const char *p = url + 7;
    if (*p != '/') return fail("unix socket path must be absolute (unix:///path)");
    if (strlen(p) >= sizeof u->path) return fail("unix socket path is too long");
    strcpy(u->path, p);
    return 0;
  }
  if (strncmp(url, "rediss://", 9) == 0)
    return fail("rediss:// (TLS) is not supported; reach Redis through a TLS tunnel and use redis://127.0.0.1:PORT "
                "(docs/deploy.md, \"Redis over TLS\")");
  static const struct {
    const char *scheme;
    sq_redis_url_mode mode;
  } schemes[] = {{"redis://", SQ_REDIS_URL_PLAIN},
                 {"redis-sentinel://", SQ_REDIS_URL_SENTINEL},
                 {"redis-cluster://", SQ_REDIS_URL_CLUSTER}};
  for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
    size_t n = strlen(schemes[i].scheme);
    if (strncmp(url, schemes[i].scheme, n) != 0) continue;
    const char *s = url + n;
    /* The credentials end at the last '@'; one after a '/', '?' or '#'
     * means they hold one of those unescaped, and every part the parser
     * would name could be a piece of the password. */
    const char *at = strrchr(s, '@');
    if (at && (size_t)(at - s) > strcspn(s, "/?#"))
      return fail("the credentials hold a '/', '?' or '#': write them %%-escaped (%%2F, %%3F, %%23)");
    u->mode = schemes[i].mode;
    if (u->mode == SQ_REDIS_URL_SENTINEL) return parse_sentinel(s, u, err, errlen);
    if (u->mode == SQ_REDIS_URL_CLUSTER) return parse_cluster(s, u, err, errlen);
    return parse_plain(s, u, err, errlen);
  }
  const char *colon = strstr(url, "://");
  if (!colon) return fail("missing scheme (want redis://, unix://, redis-sentinel:// or redis-cluster://)");
  return fail("scheme '%.*s' is not redis://, unix://, redis-sentinel:// or redis-cluster://",
              (int)(colon - url > 32 ? 32 : colon - url), url);
}
