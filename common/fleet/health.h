/* health.h: one worker's health record, the one definition both ends use:
 * sandq-worker writes its record every metrics flush, `sandq-producer
 * health` reads the fleet's. The records live in the hash sq:{Q}:health,
 * one field per worker id, each a JSON object (docs/operations.md):
 *
 *   {"worker": ID, "updated_ms": T, "started_ms": T, "last_claim_ms": T,
 *    "in_flight": N, "jail_mode": "warm", "jail_layers": ["pid_ns", ...],
 *    "breakers": {"provider": "closed", ...}, "rollout_pct": -1}
 *
 * Times are wall-clock milliseconds (0: never). Knows the queue's hashes
 * and the run's vocabulary; nothing of the jail or the LLM client. */
#ifndef SQ_HEALTH_H
#define SQ_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "queue.h"
#include "run.h"

#define SQ_HEALTH_MAX_BREAKERS 8 /* SQ_CONFIG_MAX_PROVIDERS */
#define SQ_HEALTH_MS_MAX ((int64_t)1 << 53) /* the largest time a record may carry: exact in a double */

typedef struct {
  char provider[64];
  char state[16]; /* "closed", "open" or "half_open" */
} sq_health_breaker;

/* Plain data; no pointers. */
typedef struct {
  char worker[128];
  int64_t updated_ms;     /* when this record was written */
  int64_t started_ms;
  int64_t last_claim_ms;  /* 0: never */
  int64_t in_flight;
  sq_jail_mode jail_mode;
  uint32_t jail_layers;   /* SQ_JAIL_LAYER_* in force */
  int n_breakers;
  sq_health_breaker breakers[SQ_HEALTH_MAX_BREAKERS];
  int rollout_pct;        /* the candidate's share this worker follows; -1: configured weights */
  char host_error[256];   /* "": none; else why this worker's host cannot run the jail (it stopped) */
} sq_health;

/* The record as JSON, malloc'd into *out (the caller frees). Returns 0 or
 * SQ_ENOMEM. */
int sq_health_to_json(const sq_health *h, char **out);
/* Parses a record (len bytes, need not be NUL-terminated) into *out.
 * Returns 0, or SQ_EPARSE with err naming what is wrong: not a JSON
 * object, a missing updated_ms, a time or count that is not a whole
 * number in 0..2^53, an unknown jail_mode, a rollout_pct outside -1..100.
 * Unknown layer names and extra fields are ignored (a newer worker). */
int sq_health_parse(const char *json, size_t len, sq_health *out, char *err, size_t errlen);

/* Writes h as h->worker's record. Returns 0 or SQ_EREDIS*. */
int sq_health_put(sq_queue *q, const sq_health *h);
/* Removes worker_id's record. */
int sq_health_remove(sq_queue *q, const char *worker_id);

/* Calls fn once per record: h is the parsed record, or NULL when it is
 * unreadable (err says why). Both borrowed for the call. A non-zero return
 * from fn stops and is returned. */
typedef int (*sq_health_fn)(const char *worker_id, const sq_health *h, const char *err, void *ud);
int sq_health_each(sq_queue *q, sq_health_fn fn, void *ud);

#endif
