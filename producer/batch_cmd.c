/* batch_cmd.c: the producer's commands on batches already pushed: `wait`
 * (re-attach to a batch, as `push --wait` does), `batches` (the queue's
 * batches, latest first) and `cancel` (end a batch's waiting tasks). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errors.h"
#include "log.h"
#include "name.h"
#include "producer.h"
#include "util.h"

#define CANCEL_REASON "cancelled by sandq-producer cancel"

/* A batch operand: refused (explained, SQ_EXIT_USAGE) unless a valid name. */
static int batch_ok(const char *batch) {
  if (sq_name_ok(batch, SQ_NAME_BATCH_MAX)) return SQ_EXIT_OK;
  fprintf(stderr, "sandq-producer: batch '%s' must be 1-%d characters of A-Z a-z 0-9 . _ : -\n", batch,
          SQ_NAME_BATCH_MAX);
  return SQ_EXIT_USAGE;
}

/* Opens the queue and reads batch's counters; a batch the queue does not
 * know is an error (explained). Returns SQ_EXIT_OK with *q open, or an
 * SQ_EXIT_* code with *q freed. */
static int open_known(const sq_config *cfg, const char *batch, sq_queue **q, sq_batch_stats *st) {
  if (sq__open_queue(cfg, q)) return SQ_EXIT_ERROR;
  if (sq_queue_batch_stats(*q, batch, st)) {
    fprintf(stderr, "sandq-producer: %s\n", sq_queue_errstr(*q));
  } else if (st->total == 0 && st->done == 0 && st->n_statuses == 0 && st->push == SQ_PUSH_NONE) {
    fprintf(stderr, "sandq-producer: batch %s is unknown to queue %s\n", batch, cfg->queue);
  } else {
    return SQ_EXIT_OK;
  }
  sq_queue_free(*q);
  *q = NULL;
  return SQ_EXIT_ERROR;
}

int sq__wait_run(const sq_config *cfg, const sq_wait_opts *o) {
  sq_queue *q = NULL;
  sq_batch_stats st;
  int code = batch_ok(o->batch);
  if (code) return code;
  if (o->out_path && sq__out_check(o->out_path) != 0) return SQ_EXIT_USAGE;
  if ((code = open_known(cfg, o->batch, &q, &st))) return code;
  code = sq__wait_report(q, o->batch, st.total, o->timeout_s, o->out_path, o->table);
  sq_queue_free(q);
  return code;
}

/* "2026-12-01 22:10:03" (UTC) of ms since the epoch, "-" for 0. */
static void when_text(int64_t ms, char *buf, size_t n) {
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  if (!ms || !gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm)) snprintf(buf, n, "-");
}

/* The count of status name in st (0 when absent). */
static int64_t status_count(const sq_batch_stats *st, const char *name) {
  for (int i = 0; i < st->n_statuses; i++)
    if (strcmp(st->statuses[i].name, name) == 0) return st->statuses[i].count;
  return 0;
}

/* A push still adding to the batch, or one that died midway, is its state
 * before the counters' (a batch can look finished between two chunks). */
static const char *state_of(const sq_batch_stats *st) {
  if (st->push == SQ_PUSH_PUSHING) return "pushing";
  if (st->push == SQ_PUSH_INCOMPLETE) return "incomplete push";
  return st->finished_at_ms ? (st->cancelled_at_ms ? "cancelled" : "finished") : "running";
}

/* One batch as a JSON object (for --json), added to arr. */
static int add_json(cJSON *arr, const char *name, const sq_batch_stats *st) {
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(arr, o)) {
    cJSON_Delete(o);
    return SQ_ENOMEM;
  }
  bool ok = cJSON_AddStringToObject(o, "batch", name) && cJSON_AddNumberToObject(o, "created_at_ms",
                                                                                  (double)st->created_at_ms) &&
            cJSON_AddNumberToObject(o, "total", (double)st->total) &&
            cJSON_AddNumberToObject(o, "done", (double)st->done) &&
            cJSON_AddNumberToObject(o, "passed", (double)status_count(st, "passed")) &&
            cJSON_AddNumberToObject(o, "cancelled", (double)status_count(st, "cancelled")) &&
            cJSON_AddNumberToObject(o, "dead", (double)st->dead) &&
            cJSON_AddNumberToObject(o, "cost_usd", st->cost_usd) &&
            cJSON_AddBoolToObject(o, "finished", st->finished_at_ms != 0) &&
            cJSON_AddStringToObject(o, "state", state_of(st));
  return ok ? 0 : SQ_ENOMEM;
}

int sq__batches_run(const sq_config *cfg, const sq_batches_opts *o) {
  sq_queue *q = NULL;
  sq_batch_entry *list = NULL;
  size_t n = 0;
  cJSON *arr = NULL;
  int code = SQ_EXIT_ERROR, rc;
  if (sq__open_queue(cfg, &q)) return SQ_EXIT_ERROR;
  if ((rc = sq_queue_batch_list(q, &list, &n))) {
    fprintf(stderr, "sandq-producer: listing batches: %s\n", rc == SQ_ENOMEM ? sq_strerror(rc) : sq_queue_errstr(q));
    goto out;
  }
  if (o->limit > 0 && n > (size_t)o->limit) n = (size_t)o->limit;
  if (o->json && !(arr = cJSON_CreateArray())) goto out;
  if (!o->json)
    printf("%-32s  %-19s  %7s  %7s  %7s  %5s  %10s  %s\n", "batch", "created (UTC)", "total", "done", "passed",
           "dead", "cost_usd", "state");
  size_t skipped = 0;
  for (size_t i = 0; i < n; i++) {
    sq_batch_stats st;
    char esc[4 * SQ_QUEUE_BATCH_NAME_MAX + 1]; /* a member is data: no escape codes to the terminal */
    if (list[i].problem) { /* each batch on its own: a damaged one is named and skipped */
      fprintf(stderr, "sandq-producer: batch '%s' skipped: %s\n", sq_log_escape(list[i].name, esc, sizeof esc),
              list[i].problem);
      skipped++;
      continue;
    }
    if ((rc = sq_queue_batch_stats(q, list[i].name, &st))) {
      if (rc != SQ_EPARSE) { /* Redis itself failed: the rest would too */
        fprintf(stderr, "sandq-producer: batch %s: %s\n", list[i].name, sq_queue_errstr(q));
        goto out;
      }
      fprintf(stderr, "sandq-producer: batch %s skipped: %s\n", list[i].name, sq_queue_errstr(q));
      skipped++;
      continue;
    }
    if (!st.created_at_ms) st.created_at_ms = list[i].last_push_ms; /* pushed before the stamp existed */
    if (o->json) {
      if (add_json(arr, list[i].name, &st)) goto out;
      continue;
    }
    char when[32];
    when_text(st.created_at_ms, when, sizeof when);
    printf("%-32s  %-19s  %7lld  %7lld  %7lld  %5lld  %10.4f  %s\n", list[i].name, when, (long long)st.total,
           (long long)st.done, (long long)status_count(&st, "passed"), (long long)st.dead, st.cost_usd,
           state_of(&st));
  }
  if (o->json) {
    char *text = cJSON_PrintUnformatted(arr);
    if (!text) goto out;
    puts(text);
    free(text);
  }
  fflush(stdout);
  if (skipped)
    fprintf(stderr, "sandq-producer: %zu damaged batch(es) skipped (docs/operations.md, \"Damaged keys\")\n", skipped);
  code = skipped ? SQ_EXIT_ERROR : SQ_EXIT_OK;
out:
  cJSON_Delete(arr);
  free(list);
  sq_queue_free(q);
  return code;
}

int sq__cancel_run(const sq_config *cfg, const char *batch, bool kill) {
  sq_queue *q = NULL;
  sq_batch_stats st;
  sq_cancel_counts c;
  int code = batch_ok(batch);
  if (code) return code;
  if ((code = open_known(cfg, batch, &q, &st))) return code;
  if (sq_queue_batch_cancel(q, batch, CANCEL_REASON, kill, &c)) {
    fprintf(stderr, "sandq-producer: cancelling batch %s: %s\n", batch, sq_queue_errstr(q));
    code = SQ_EXIT_ERROR;
  } else {
    printf("batch %s: %lld waiting task(s) cancelled, %lld running (%s)\n", batch, (long long)c.cancelled,
           (long long)(c.running), kill ? "their workers stop them" : "they finish");
    if (c.duplicate)
      printf("batch %s: %lld waiting copie(s) of ids that had a result already removed\n", batch,
             (long long)c.duplicate);
  }
  sq_queue_free(q);
  return code;
}
