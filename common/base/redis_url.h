/* redis_url.h: the syntax of a Redis URL (redis://, unix://,
 * redis-sentinel://, redis-cluster://) parsed into a plain struct, with no
 * connection and no environment: the configuration checks a URL with it
 * when it is built, the queue connects by what it returns. */
#ifndef SQ_REDIS_URL_H
#define SQ_REDIS_URL_H

#include <stddef.h>

#define SQ_REDIS_URL_MAX_SEEDS 16 /* sentinels or cluster seed nodes in one URL */

/* Where a URL points: one server (redis://, unix://), the master a set of
 * sentinels names (redis-sentinel://), or a cluster (redis-cluster://). */
typedef enum { SQ_REDIS_URL_PLAIN = 0, SQ_REDIS_URL_SENTINEL, SQ_REDIS_URL_CLUSTER } sq_redis_url_mode;

typedef struct {
  char host[256];
  int port;
} sq_redis_addr;

/* A parsed URL: plain data, the caller's. */
typedef struct {
  sq_redis_url_mode mode;
  char host[256];
  int port;
  char path[256];     /* unix socket path; empty for TCP */
  char user[128];     /* empty: AUTH with the password alone */
  char password[256]; /* empty: no AUTH */
  long db;            /* -1: no SELECT */
  int n_seeds;        /* sentinel and cluster: the addresses in the URL */
  sq_redis_addr seeds[SQ_REDIS_URL_MAX_SEEDS];
  char master[128];            /* sentinel: the master's name */
  char sentinel_password[256]; /* sentinel: AUTH for the sentinels; the parser leaves it empty */
} sq_redis_url;

/* Parses url into *u (zeroed first; a sentinel or cluster URL's host and
 * port are its first address's). Returns 0, or SQ_EINVAL with err naming
 * the bad part ("port '0' is not a number in 1..65535"); err never holds any
 * part of the credentials, and credentials holding an unescaped '/', '?' or
 * '#' are refused without quoting them. */
int sq_redis_url_parse(const char *url, sq_redis_url *u, char *err, size_t errlen);

#endif
