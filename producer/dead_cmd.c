/* dead.c: `sandq-producer dead list|show ID|requeue ID|requeue --all`:
 * inspect and requeue the dead letter (docs/operations.md). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errors.h"
#include "producer.h"
#include "util.h"

#define MAX_DEAD_AT_MS 253402300799999.0 /* 9999-12-31T23:59:59.999Z */

/* Copies s into buf (n bytes) for a terminal: control characters (C0, DEL,
 * C1 as UTF-8) become \xNN, so stored text cannot move the cursor or
 * change colours; cut to fit. */
static const char *printable(const char *s, char *buf, size_t n) {
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < n; p++) {
    if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)) {
      unsigned c = *p == 0xc2 ? *++p : *p;
      o += (size_t)snprintf(buf + o, n - o, "\\x%02x", c);
    } else {
      buf[o++] = (char)*p;
    }
  }
  buf[o] = 0;
  return buf;
}

static const char *str_field(const cJSON *o, const char *k, char *buf, size_t n) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? printable(v->valuestring, buf, n) : "-";
}

/* One line per entry: id, when, task id, batch, reason. A record that is
 * not JSON, or a time outside years 1970..9999, shows as such. */
static int print_entry(int64_t id, const char *rec, size_t len, void *ud) {
  int *n = ud;
  char task[100], batch[100], reason[600];
  cJSON *o = cJSON_ParseWithLength(rec, len);
  const cJSON *at = cJSON_GetObjectItemCaseSensitive(o, "dead_at_ms");
  if (!*n) printf("%-8s  %-20s  %-24s  %-16s  %s\n", "id", "dead at (UTC)", "task", "batch", "reason");
  char when[32] = "-";
  if (cJSON_IsNumber(at) && at->valuedouble >= 0 && at->valuedouble <= MAX_DEAD_AT_MS) {
    time_t t = (time_t)(at->valuedouble / 1000);
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  } else if (at) {
    snprintf(when, sizeof when, "(bad time)");
  }
  printf("%-8lld  %-20s  %-24.24s  %-16.16s  %s\n", (long long)id, when, str_field(o, "task_id", task, sizeof task),
         str_field(o, "batch", batch, sizeof batch),
         cJSON_IsObject(o) ? str_field(o, "reason", reason, sizeof reason) : "(damaged record: not a JSON object)");
  cJSON_Delete(o);
  (*n)++;
  return 0;
}

/* requeue: names each entry kept. */
static int print_kept(const char *id, const char *why, void *ud) {
  char a[64], b[200];
  (void)ud;
  fprintf(stderr, "sandq-producer: dead-letter entry %s kept: %s (sandq-producer dead show %s)\n",
          printable(id, a, sizeof a), printable(why, b, sizeof b), a);
  return 0;
}

static int parse_id(const char *s, int64_t *id) {
  if (sq_parse_i64(s, 1, INT64_MAX, id) == 0) return 0;
  fprintf(stderr, "sandq-producer: dead-letter id '%s' must be a positive integer (see dead list)\n", s);
  return -1;
}

int sq__dead_run(const sq_config *cfg, int argc, char **argv) {
  if (argc == 2 && strcmp(argv[0], "--all") == 0) { /* main.c hands pass_on flags first: "requeue --all" */
    char *t = argv[0];
    argv[0] = argv[1];
    argv[1] = t;
  }
  const char *sub = argc > 0 ? argv[0] : "";
  int64_t id = -1;
  bool list = strcmp(sub, "list") == 0 && argc == 1;
  bool show = strcmp(sub, "show") == 0 && argc == 2;
  bool requeue = strcmp(sub, "requeue") == 0 && argc == 2;
  if (!list && !show && !requeue) {
    fprintf(stderr, "usage: sandq-producer dead list | show ID | requeue ID | requeue --all\n");
    return SQ_EXIT_USAGE;
  }
  if ((show || (requeue && strcmp(argv[1], "--all") != 0)) && parse_id(argv[1], &id) != 0) return SQ_EXIT_USAGE;
  sq_queue *q = NULL;
  if (sq__open_queue(cfg, &q) != 0) return SQ_EXIT_ERROR;
  int rc, code = SQ_EXIT_OK;
  if (list) {
    int n = 0;
    rc = sq_queue_dead_list(q, print_entry, &n);
    if (!rc) fprintf(stderr, "%d task(s) in the dead letter of queue %s\n", n, cfg->queue);
  } else if (show) {
    char *rec = NULL;
    rc = sq_queue_dead_show(q, id, &rec);
    cJSON *o = rc ? NULL : cJSON_Parse(rec);
    char *pretty = o ? cJSON_Print(o) : NULL;
    if (!rc && !o) fprintf(stderr, "sandq-producer: entry %lld is not a JSON object; shown as stored\n", (long long)id);
    char *raw = !rc && !pretty ? malloc(strlen(rec) * 4 + 8) : NULL;
    if (!rc) printf("%s\n", pretty ? pretty : raw ? printable(rec, raw, strlen(rec) * 4 + 8) : "(out of memory)");
    free(raw);
    free(pretty);
    cJSON_Delete(o);
    free(rec);
  } else {
    size_t n = 0;
    rc = sq_queue_dead_requeue_each(q, id, &n, print_kept, NULL);
    if (!rc || rc == SQ_EPARSE) printf("requeued %zu task(s)\n", n);
    if (rc == SQ_EPARSE) {
      fprintf(stderr, "sandq-producer: some entries could not be requeued and were kept; fix or remove them "
              "(docs/operations.md, \"The dead letter\")\n");
      code = SQ_EXIT_ERROR;
      rc = 0;
    }
  }
  if (rc == SQ_ENOTFOUND) {
    fprintf(stderr, "sandq-producer: no dead-letter entry %lld in queue %s\n", (long long)id, cfg->queue);
    code = SQ_EXIT_ERROR;
  } else if (rc) {
    fprintf(stderr, "sandq-producer: %s\n", sq_queue_errstr(q));
    code = SQ_EXIT_ERROR;
  }
  sq_queue_free(q);
  return code;
}
