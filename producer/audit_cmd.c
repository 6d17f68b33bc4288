/* audit_cmd.c: `sandq-producer audit [--batch B] [--since T] [--json]`: the
 * audit trail (sq:{Q}:audit, common/fleet/audit.h), one line per program a
 * worker ran, oldest first; --json gives JSON Lines for shipping elsewhere
 * (docs/operations.md also shows a consumer group doing that). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "errors.h"
#include "name.h"
#include "producer.h"
#include "util.h"

static void usage(void) {
  fprintf(stderr, "usage: sandq-producer audit [--batch B] [--since T] [--json]\n"
                  "       T: a duration back from now (90s, 15m, 2h, 7d), Unix seconds, or YYYY-MM-DDTHH:MM:SSZ\n");
}

/* T into wall-clock ms. Returns 0 or -1. */
static int parse_since(const char *t, int64_t now_ms, int64_t *out) {
  char *end = NULL;
  long long n = strtoll(t, &end, 10);
  if (end != t && n >= 0 && end[0] && !end[1]) {
    int64_t unit = end[0] == 's' ? 1000 : end[0] == 'm' ? 60000 : end[0] == 'h' ? 3600000 : end[0] == 'd' ? 86400000 : 0;
    if (!unit || n > 3650LL * 86400000 / unit) return -1;
    *out = now_ms - (int64_t)n * unit;
    return 0;
  }
  if (end != t && !*end && n >= 0 && n < 100000000000LL) { /* Unix seconds */
    *out = (int64_t)n * 1000;
    return 0;
  }
  struct tm tm = {0};
  const char *rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest || (strcmp(rest, "Z") != 0 && strcmp(rest, "+00:00") != 0)) return -1;
  *out = (int64_t)timegm(&tm) * 1000;
  return 0;
}

typedef struct {
  bool json;
  size_t n;
} printer;

static int print_entry(const char *id, const sq_audit_entry *e, void *ud) {
  printer *p = ud;
  p->n++;
  if (p->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", id);
    const struct {
      const char *k, *v;
    } strs[] = {{"task", e->task},         {"batch", e->batch},      {"sha256", e->sha256},
                {"status", e->status},     {"worker", e->worker},    {"provider", e->provider},
                {"model", e->model},       {"jail_mode", e->jail_mode}, {"blocked_syscall", e->blocked_syscall},
                {"language", e->language},
                {"profile", e->profile}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
      if (strs[i].v[0] || i < 5) cJSON_AddStringToObject(o, strs[i].k, strs[i].v);
    cJSON_AddNumberToObject(o, "exit_code", (double)e->exit_code);
    cJSON_AddNumberToObject(o, "wall_ms", (double)e->wall_ms);
    cJSON_AddNumberToObject(o, "round", (double)e->round);
    cJSON_AddNumberToObject(o, "time_ms", (double)e->time_ms);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!text) return SQ_ENOMEM;
    printf("%s\n", text);
    free(text);
    return 0;
  }
  if (p->n == 1)
    printf("%-24s  %-24s  %-16s  %-14s  %-16s  %-20s  %s\n", "time (UTC)", "task", "batch", "status", "sha256",
           "worker", "llm / jail");
  char when[32] = "-";
  time_t t = (time_t)(e->time_ms / 1000);
  struct tm tm;
  if (gmtime_r(&t, &tm)) {
    size_t k = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + k, sizeof when - k, ".%03lldZ", (long long)(e->time_ms % 1000));
  }
  printf("%-24s  %-24.24s  %-16.16s  %-14s  %-16.16s  %-20.20s  %s%s%s%s%s%s%s\n", when, e->task, e->batch, e->status,
         e->sha256, e->worker, e->provider[0] ? e->provider : "-", e->model[0] ? "/" : "", e->model, " jail ",
         e->jail_mode, e->blocked_syscall[0] ? " blocked " : "", e->blocked_syscall);
  return 0;
}

int sq__audit_run(const sq_config *cfg, const sq_cli *cli) {
  const char *batch = sq_cli_get(cli, "batch"), *since = sq_cli_get(cli, "since");
  int64_t since_ms = 0;
  printer p = {.json = sq_cli_get(cli, "json") != NULL};
  if (batch && !sq_name_ok(batch, SQ_NAME_BATCH_MAX)) {
    fprintf(stderr, "sandq-producer: audit --batch '%s' must be 1-%d characters of " SQ_NAME_CHARS "\n", batch,
            SQ_NAME_BATCH_MAX);
    return SQ_EXIT_USAGE;
  }
  if (since && parse_since(since, sq_now_wall_ms(), &since_ms) != 0) {
    fprintf(stderr, "sandq-producer: audit --since '%s' is not a time\n", since);
    usage();
    return SQ_EXIT_USAGE;
  }
  if (cli->n_operands != 0) {
    usage();
    return SQ_EXIT_USAGE;
  }
  sq_queue *q = NULL;
  if (sq__open_queue(cfg, &q) != 0) return SQ_EXIT_ERROR;
  int rc = sq_audit_read(q, batch, since_ms, print_entry, &p);
  if (rc) fprintf(stderr, "sandq-producer: reading the audit trail failed: %s\n",
                  rc == SQ_ENOMEM ? "out of memory" : sq_queue_errstr(q));
  else if (!p.json && p.n == 0) fprintf(stderr, "sandq-producer: no audit entries%s%s\n", batch ? " for batch " : "",
                                        batch ? batch : "");
  sq_queue_free(q);
  return rc ? SQ_EXIT_ERROR : SQ_EXIT_OK;
}
