/* health.c: `sandq-producer health [--json] [WORKER]`: the fleet's health
 * from what every worker writes each metrics flush (sq:{Q}:health) and the
 * queue's own record of heartbeats (sq:{Q}:workers, server time), as lines
 * or, with --json, one JSON object for scripts. Exit 0 when healthy, 1
 * when not (docs/operations.md says what counts). */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "health.h"
#include "producer.h"
#include "rollout.h"
#include "util.h"

#define FORGET_MS (3600 * 1000) /* a worker silent this long is dropped from the view */
#define MAX_WORKERS 1024

typedef struct {
  char id[128];
  int64_t beat_ms; /* server time of its last claim or heartbeat; 0: none */
  bool readable;   /* h holds the record; else err says why not */
  sq_health h;
  char err[160];
} entry;

typedef struct {
  entry *v;
  size_t n;
} fleet;

static entry *find(fleet *f, const char *id, bool add) {
  for (size_t i = 0; i < f->n; i++)
    if (strcmp(f->v[i].id, id) == 0) return &f->v[i];
  if (!add || f->n >= MAX_WORKERS) return NULL;
  entry *e = &f->v[f->n++];
  memset(e, 0, sizeof *e);
  snprintf(e->id, sizeof e->id, "%s", id);
  return e;
}

static int on_health(const char *id, const sq_health *h, const char *err, void *ud) {
  entry *e = find(ud, id, true);
  if (!e) return 0;
  e->readable = h != NULL;
  if (h) e->h = *h;
  else snprintf(e->err, sizeof e->err, "%s", err);
  return 0;
}

static int on_worker(const char *id, int64_t at_ms, void *ud) {
  entry *e = find(ud, id, false); /* workers that never reported health are old or pre-metrics */
  if (e) e->beat_ms = at_ms;
  return 0;
}

static void fleet_free(fleet *f) { free(f->v); }

static int load(sq_queue *q, fleet *f, int64_t *now_ms) {
  f->n = 0;
  f->v = calloc(MAX_WORKERS, sizeof *f->v);
  if (!f->v) return SQ_ENOMEM;
  int rc = sq_health_each(q, on_health, f);
  if (!rc) rc = sq_queue_workers(q, on_worker, f, now_ms);
  return rc;
}

/* Judges one worker: problems (unhealthy) and notes into buf. Returns
 * 0 healthy, 1 unhealthy, 2 stale, 3 forgotten. Every time in a record is
 * within 0..2^53 (sq_health_parse), so the differences below cannot
 * overflow. */
static int judge(const sq_config *cfg, const entry *e, int64_t now_ms, char *buf, size_t n) {
  const sq_health *h = &e->h;
  size_t off = 0;
  int verdict = 0;
  buf[0] = '\0';
#define SAY(...) (off += (size_t)snprintf(buf + off, off < n ? n - off : 0, __VA_ARGS__))
  if (!e->readable) {
    snprintf(buf, n, "health entry unreadable: %s", e->err);
    return 1;
  }
  double age_s = ((double)now_ms - (double)h->updated_ms) / 1000.0; /* in double: no overflow */
  if (age_s * 1000 > FORGET_MS) verdict = 3;
  else if (age_s * 1000 > (double)cfg->health_stale_ms) {
    SAY("stale: no report for %.0f s (stopped, dead, or cut off from redis)", age_s);
    verdict = 2;
  }
  double beat_s = e->beat_ms ? (double)(now_ms - e->beat_ms) / 1000.0 : -1;
  if (verdict == 0 && beat_s * 1000 > (double)cfg->queue_opts.lease_ms) {
    SAY("%sheartbeat %.0f s old (lease %lld ms): its tasks will be reaped", off ? "; " : "", beat_s,
        (long long)cfg->queue_opts.lease_ms);
    verdict = 1;
  }
  if (h->host_error[0]) { /* it stopped: its host cannot run the jail (a missing privilege) */
    SAY("%sstopped: its host cannot run the jail: %s", off ? "; " : "", h->host_error);
    if (verdict != 3) verdict = 1;
  }
  if (verdict == 0 && !(h->jail_layers & SQ_JAIL_LAYER_SECCOMP)) {
    SAY("%sthe seccomp layer is not in force", off ? "; " : "");
    verdict = 1;
  }
  int n_prov = h->n_breakers, n_open = 0;
  for (int i = 0; i < n_prov; i++)
    n_open += strcmp(h->breakers[i].state, "open") == 0;
  if (verdict == 0 && n_prov > 0 && n_open == n_prov) {
    SAY("%severy LLM provider's circuit breaker is open", off ? "; " : "");
    verdict = 1;
  } else if (n_open > 0) {
    SAY("%s%d of %d LLM breaker(s) open", off ? "; " : "", n_open, n_prov);
  }
  SAY("%sin flight %lld, last claim %s", off ? "; " : "", (long long)h->in_flight, h->last_claim_ms > 0 ? "" : "never");
  if (h->last_claim_ms > 0) SAY("%.0f s ago", ((double)now_ms - (double)h->last_claim_ms) / 1000.0);
  if (beat_s >= 0) SAY(", heartbeat %.1f s ago", beat_s);
#undef SAY
  return verdict;
}

int sq__health_count(sq_queue *q, const sq_config *cfg, int *live, int *stale) {
  fleet f;
  int64_t now = 0;
  *live = *stale = 0;
  int rc = load(q, &f, &now);
  for (size_t i = 0; rc == 0 && i < f.n; i++) {
    char why[512];
    int v = judge(cfg, &f.v[i], now, why, sizeof why);
    if (v == 2) (*stale)++;
    else if (v != 3) (*live)++;
  }
  fleet_free(&f);
  return rc;
}

/* --json: the same verdicts as one object on stdout (docs/operations.md). */
typedef struct {
  cJSON *root, *workers;
} json_out;

static void json_worker(json_out *j, const entry *e, const char *word, const char *why, int64_t now) {
  cJSON *w = cJSON_CreateObject();
  cJSON_AddStringToObject(w, "worker", e->id);
  cJSON_AddStringToObject(w, "state", word);
  cJSON_AddStringToObject(w, "detail", why);
  if (e->beat_ms) cJSON_AddNumberToObject(w, "heartbeat_age_ms", (double)(now - e->beat_ms));
  char *rec = NULL;
  if (e->readable && sq_health_to_json(&e->h, &rec) == 0) cJSON_AddItemToObject(w, "record", cJSON_Parse(rec));
  free(rec);
  cJSON_AddItemToArray(j->workers, w);
}

static void json_print(json_out *j, bool healthy, int live, const char *summary, const sq_rollout *r) {
  cJSON_AddBoolToObject(j->root, "healthy", healthy);
  cJSON_AddNumberToObject(j->root, "live", live);
  cJSON_AddStringToObject(j->root, "summary", summary);
  if (r && r->state != SQ_ROLLOUT_NONE) {
    cJSON *o = cJSON_AddObjectToObject(j->root, "rollout");
    cJSON_AddStringToObject(o, "candidate", r->candidate);
    cJSON_AddStringToObject(o, "baseline", r->baseline);
    cJSON_AddStringToObject(o, "state", sq_rollout_state_name(r->state));
    cJSON_AddNumberToObject(o, "pct", r->pct);
    cJSON_AddStringToObject(o, "reason", r->reason);
  }
  char *text = cJSON_PrintUnformatted(j->root);
  printf("%s\n", text ? text : "{\"healthy\": false, \"summary\": \"out of memory\"}");
  free(text);
  cJSON_Delete(j->root);
}

int sq__health_run(const sq_config *cfg, int argc, char **argv) {
  static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
  bool as_json = false, bad_opt = false;
  int c;
  optind = 0; /* argv[-1] is the command's name (main.c); options anywhere */
  while ((c = getopt_long(argc + 1, argv - 1, "", opts, NULL)) != -1) {
    if (c == 'j') as_json = true;
    else bad_opt = true;
  }
  argc -= optind - 1, argv += optind - 1;
  if (bad_opt || argc > 1 || (argc == 1 && argv[0][0] == '-')) {
    fprintf(stderr, "usage: sandq-producer health [--json] [WORKER]\n");
    return SQ_EXIT_USAGE;
  }
  const char *only = argc ? argv[0] : NULL;
  json_out j = {0};
  if (as_json) {
    j.root = cJSON_CreateObject();
    j.workers = cJSON_AddArrayToObject(j.root, "workers");
  }
  char summary[256];
  sq_queue *q = NULL;
  if (sq__open_queue(cfg, &q) != 0) {
    if (as_json) json_print(&j, false, 0, "redis unreachable", NULL);
    else printf("UNHEALTHY redis unreachable\n");
    return SQ_EXIT_ERROR;
  }
  fleet f;
  int64_t now = 0;
  int rc = load(q, &f, &now);
  if (rc) {
    snprintf(summary, sizeof summary, "redis: %s", sq_queue_errstr(q));
    if (as_json) json_print(&j, false, 0, summary, NULL);
    else printf("UNHEALTHY %s\n", summary);
    fleet_free(&f);
    sq_queue_free(q);
    return SQ_EXIT_ERROR;
  }
  int live = 0, bad = 0, seen = 0;
  static const char *const word[] = {"ok", "UNHEALTHY", "stale", "gone"};
  for (size_t i = 0; i < f.n; i++) {
    const entry *e = &f.v[i];
    if (only && strcmp(only, e->id) != 0) continue;
    char why[512];
    int v = judge(cfg, e, now, why, sizeof why);
    if (v == 3) {
      sq_health_remove(q, e->id); /* long gone: forget it */
      if (!only) continue;
    }
    seen++;
    live += v == 0 || v == 1;
    bad += v == 1 || (only && v != 0);
    if (as_json) json_worker(&j, e, v == 1 ? "unhealthy" : word[v], why, now);
    else printf("worker %-32s %-9s %s\n", e->id, word[v], why);
  }
  sq_rollout r;
  bool have_rollout = !only && sq_rollout_load(q, &r) == 0 && r.state != SQ_ROLLOUT_NONE;
  if (have_rollout && !as_json)
    printf("rollout %s vs %s: %s at %d%%: %s\n", r.candidate, r.baseline, sq_rollout_state_name(r.state), r.pct,
           r.reason);
  int code = SQ_EXIT_ERROR;
  if (only && seen == 0) snprintf(summary, sizeof summary, "worker %s has not reported", only);
  else if (!only && live == 0) snprintf(summary, sizeof summary, "no live worker");
  else if (bad) snprintf(summary, sizeof summary, "%d worker(s) with problems", bad);
  else {
    snprintf(summary, sizeof summary, "%d live worker(s)", live);
    code = SQ_EXIT_OK;
  }
  if (as_json) json_print(&j, code == SQ_EXIT_OK, live, summary, have_rollout ? &r : NULL);
  else printf("%s %s\n", code == SQ_EXIT_OK ? "HEALTHY" : "UNHEALTHY", summary);
  fleet_free(&f);
  sq_queue_free(q);
  return code;
}
