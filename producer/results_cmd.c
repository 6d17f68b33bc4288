/* results_cmd.c: `sandq-producer results BATCH [--format bson|jsonl|csv]
 * [--out FILE]`: a batch's stored results, exported at any time within
 * retention_s (not only at the end of `push --wait`); and the output-file
 * helpers the evaluation commands share (checked before work starts,
 * written whole or not at all). */
#include <bson/bson.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"
#include "name.h"
#include "eval.h"
#include "log.h"
#include "producer.h"

/* One CSV field, quoted (RFC 4180) when it holds a comma, quote or line
 * break; control characters escaped (sq_log_escape: an ESC sequence in a
 * stored status or reason reaches no terminal that shows the file). */
static int csv_field(sq_buf *b, const char *raw, bool last) {
  int rc = 0;
  if (!raw) raw = "";
  size_t cap = strlen(raw) * 6 + 1;
  char *s = malloc(cap);
  if (!s) return SQ_ENOMEM;
  sq_log_escape(raw, s, cap);
  if (strpbrk(s, ",\"\r\n")) {
    rc = sq_buf_append(b, "\"", 1);
    for (const char *p = s; !rc && *p; p++) rc = *p == '"' ? sq_buf_append(b, "\"\"", 2) : sq_buf_append(b, p, 1);
    if (!rc) rc = sq_buf_append(b, "\"", 1);
  } else {
    rc = sq_buf_append(b, s, strlen(s));
  }
  free(s);
  return rc ? rc : sq_buf_append(b, last ? "\r\n" : ",", last ? 2 : 1);
}

static const char CSV_HEADER[] = "id,task_id,status,reason,attempts,queue_ms,llm_ms,exec_ms,total_ms,all_attempts_ms,"
                                 "provider,model,prompt_tokens,completion_tokens,cost_usd\r\n";

static int csv_row(sq_buf *b, const sq__report_row *r) {
  char num[SQ__STAGE_COUNT + 4][32];
  snprintf(num[0], sizeof num[0], "%d", r->attempts);
  for (int s = 0; s < SQ__STAGE_COUNT; s++) { /* an unknown time (-1) is an empty field */
    if (r->ms[s] < 0) num[1 + s][0] = 0;
    else snprintf(num[1 + s], sizeof num[1 + s], "%lld", (long long)r->ms[s]);
  }
  int rc = csv_field(b, r->id, false) || csv_field(b, r->task_id, false) || csv_field(b, r->status, false) ||
           csv_field(b, r->reason, false) || csv_field(b, num[0], false);
  for (int s = 0; s < SQ__STAGE_COUNT && !rc; s++) rc = csv_field(b, num[1 + s], false);
  if (rc) return SQ_ENOMEM;
  char pt[32] = "", ct[32] = "", cost[32] = "";
  if (r->has_llm) {
    snprintf(pt, sizeof pt, "%lld", (long long)r->prompt_tokens);
    snprintf(ct, sizeof ct, "%lld", (long long)r->completion_tokens);
    snprintf(cost, sizeof cost, "%.8f", r->cost_usd);
  }
  return csv_field(b, r->provider, false) || csv_field(b, r->model, false) || csv_field(b, pt, false) ||
                 csv_field(b, ct, false) || csv_field(b, cost, true)
             ? SQ_ENOMEM
             : 0;
}

/* What `results` carries from one stored result to the next. */
typedef struct {
  const char *batch, *format;
  sq__out *out;
  sq_buf line; /* one rendered result, reused */
  size_t n, bad;
  int err;
} render_state;

/* One stored result in the chosen format, appended to the output as it
 * comes (sq_queue_batch_results' callback); a value that is not BSON is
 * named on stderr, left out and counted. */
static int render_one(const char *id, const uint8_t *bson, size_t len, void *ud) {
  render_state *st = ud;
  if (st->n++ == 0 && strcmp(st->format, "csv") == 0 && (st->err = sq__out_put(st->out, CSV_HEADER, sizeof CSV_HEADER - 1)))
    return st->err;
  if (!sq__result_bson_ok(bson, len)) {
    char esc[4 * 128 + 1];
    fprintf(stderr, "sandq-producer: result '%s' of batch %s is not a valid BSON document (%zu bytes); left out\n",
            sq_log_escape(id, esc, sizeof esc), st->batch, len);
    st->bad++;
    return 0;
  }
  if (strcmp(st->format, "bson") == 0) return st->err = sq__out_put(st->out, bson, len);
  int rc = 0;
  st->line.len = 0;
  if (strcmp(st->format, "jsonl") == 0) {
    bson_t doc;
    size_t n = 0;
    char *json = bson_init_static(&doc, bson, len) ? bson_as_relaxed_extended_json(&doc, &n) : NULL;
    if (!json) return st->err = SQ_ENOMEM;
    rc = sq__out_put(st->out, json, n) || sq__out_put(st->out, "\n", 1) ? SQ_EIO : 0;
    bson_free(json);
    return st->err = rc;
  }
  sq__report_row r;
  sq__result_doc d = {.id = (char *)id, .bson = (uint8_t *)bson, .len = len};
  rc = sq__report_row_read(&d, &r);
  if (!rc) rc = csv_row(&st->line, &r);
  sq__report_row_clear(&r);
  if (!rc) rc = sq__out_put(st->out, st->line.data, st->line.len);
  return st->err = rc;
}

int sq__results_run(const sq_config *cfg, const sq_cli *cli) {
  const char *format = sq_cli_get(cli, "format"), *out_path = sq_cli_get(cli, "out");
  bool drop = sq_cli_get(cli, "delete") != NULL;
  if (!format) format = "bson";
  if (cli->n_operands != 1) {
    fprintf(stderr, "sandq-producer: results takes exactly one BATCH id (sandq-producer results --help)\n");
    return SQ_EXIT_USAGE;
  }
  if (out_path && !out_path[0]) {
    fprintf(stderr, "sandq-producer: --out needs a file name (or - for standard output)\n");
    return SQ_EXIT_USAGE;
  }
  if (drop && (!out_path || strcmp(out_path, "-") == 0)) {
    fprintf(stderr, "sandq-producer: --delete needs --out FILE: results are removed only once a file holds them\n");
    return SQ_EXIT_USAGE;
  }
  const char *batch = cli->operands[0];
  if (strcmp(format, "bson") && strcmp(format, "jsonl") && strcmp(format, "csv")) {
    fprintf(stderr, "sandq-producer: --format '%s' must be bson, jsonl or csv\n", format);
    return SQ_EXIT_USAGE;
  }
  if (!sq_name_ok(batch, SQ_NAME_BATCH_MAX)) {
    fprintf(stderr, "sandq-producer: batch '%s' must be 1-128 characters of A-Z a-z 0-9 . _ : -\n", batch);
    return SQ_EXIT_USAGE;
  }
  if (!out_path && strcmp(format, "bson") == 0 && isatty(STDOUT_FILENO)) {
    fprintf(stderr, "sandq-producer: BSON is binary: give --out FILE, or --format jsonl|csv for a terminal\n");
    return SQ_EXIT_USAGE;
  }
  if (sq__out_check(out_path) != 0) return SQ_EXIT_USAGE;
  sq_queue *q = NULL;
  sq__out out = {0};
  render_state st = {.batch = batch, .format = format, .out = &out};
  int code = SQ_EXIT_ERROR;
  int64_t done = 0;
  if (sq__open_queue(cfg, &q) != 0 || sq__out_open(out_path, &out) != 0) goto out;
  if (out_path && strcmp(out_path, "-") && sq__results_done(q, batch, &done) != 0) goto out;
  int rc = sq_queue_batch_results(q, batch, render_one, &st);
  if (rc) {
    if (st.err != SQ_EIO) /* a write error was explained where it happened */
      fprintf(stderr, "sandq-producer: reading results of batch %s: %s\n", batch,
              st.err ? sq_strerror(st.err) : sq_queue_errstr(q));
    goto out;
  }
  if (st.n == 0) {
    fprintf(stderr, "sandq-producer: batch %s has no results in queue %s (unknown, not started, or past its "
            "retention_s)\n", batch, cfg->queue);
    goto out;
  }
  if (sq__results_short(batch, out_path, st.n, done) || sq__out_commit(&out) != 0) goto out;
  if (out_path) fprintf(stderr, "sandq-producer: wrote %zu result(s) of batch %s to %s\n", st.n - st.bad, batch, out_path);
  code = SQ_EXIT_OK;
  if (st.bad) {
    fprintf(stderr, "sandq-producer: %zu stored result(s) of batch %s are not BSON%s\n", st.bad, batch,
            drop ? "; nothing deleted" : "");
    code = SQ_EXIT_BAD_RESULT;
  } else if (drop) {
    int64_t dropped = 0;
    rc = sq_queue_batch_results_drop(q, batch, (int64_t)st.n, &dropped);
    if (rc == SQ_ECONFLICT) {
      fprintf(stderr, "sandq-producer: batch %s got results while they were exported: %lld deleted, the rest kept "
              "(run results --delete again once it has finished)\n", batch, (long long)dropped);
      code = SQ_EXIT_ERROR;
    } else if (rc) {
      fprintf(stderr, "sandq-producer: deleting the results of batch %s: %s\n", batch, sq_queue_errstr(q));
      code = SQ_EXIT_ERROR;
    } else {
      fprintf(stderr, "sandq-producer: deleted %lld result(s) of batch %s from the queue\n", (long long)dropped, batch);
    }
  }
out:
  sq__out_abort(&out);
  sq_buf_clear(&st.line);
  sq_queue_free(q);
  return code;
}
