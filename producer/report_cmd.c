/* report_cmd.c: `sandq-producer report BATCH [B2] [--json] [--html FILE]
 * [--k 1,10,100] [--allow-missing]`: a batch's results summed up
 * (report_model.c) as text for a terminal, as JSON, and as an HTML page
 * (report_html.c); with two batches, their comparison (report_compare.c).
 * Samples without a verdict are set apart and make the exit code 3 (a
 * comparison is refused) unless --allow-missing; unreadable results are
 * named and make it 6, as `results` does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "errors.h"
#include "name.h"
#include "eval.h"
#include "log.h"
#include "producer.h"
#include "stats.h"
#include "util.h"

int sq__report_parse_k(const char *s, int *k, int *n) {
  *n = 0;
  const char *p = s;
  while (*p) {
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p || v < 1 || v > 1000000 || (*end && *end != ',') || *n == SQ__REPORT_MAX_K) return -1;
    for (int i = 0; i < *n; i++)
      if (k[i] == v) return -1;
    k[(*n)++] = (int)v;
    p = *end ? end + 1 : end;
    if (*end && !*p) return -1;
  }
  return *n ? 0 : -1;
}

static int pct(int64_t part, size_t whole, char *buf, size_t len) {
  return snprintf(buf, len, "%.1f", whole ? 100.0 * (double)part / (double)whole : 0.0);
}

/* "failed 4, timeout 1": a problem's samples by status. */
static int status_list(sq_buf *b, const sq__report_problem *p) {
  int rc = 0, first = 1;
  for (int s = 0; !rc && s < SQ_STATUS__COUNT; s++) {
    if (!p->status_counts[s]) continue;
    rc = sq_buf_appendf(b, "%s%s %lld", first ? "" : ", ", sq_status_name((sq_status)s), (long long)p->status_counts[s]);
    first = 0;
  }
  return rc;
}


/* Stored text for a terminal: control characters escaped (an ESC sequence
 * in a status or reason is data), cut to width bytes (0: no limit) with
 * "..." marking the cut, never inside a character. Returns buf. */
static const char *shown(const char *s, size_t width, char *buf, size_t buflen) {
  sq_log_escape(s, buf, buflen);
  size_t n = strlen(buf);
  if (width >= 4 && n > width) {
    size_t cut = width - 3;
    while (cut > 0 && ((unsigned char)buf[cut] & 0xc0) == 0x80) cut--;
    memcpy(buf + cut, "...", 4);
  }
  return buf;
}

/* A reason for a terminal: escaped as shown() does, and when longer than
 * width bytes, cut at the last space before it with " ..." marking the
 * cut; never inside a word (a reason without a space that fits is shown
 * whole). Returns buf. */
static const char *shown_words(const char *s, size_t width, char *buf, size_t buflen) {
  sq_log_escape(s, buf, buflen);
  size_t n = strlen(buf);
  if (width < 8 || n <= width) return buf;
  size_t cut = width - 4;
  while (cut > 0 && buf[cut] != ' ') cut--;
  while (cut > 0 && buf[cut - 1] == ' ') cut--;
  if (cut > 0) memcpy(buf + cut, " ...", 5);
  return buf;
}

/* text into b as lines of at most width bytes after indent spaces, broken
 * at spaces only (a longer word gets a line of its own, whole). */
static int wrap(sq_buf *b, const char *text, int indent, size_t width) {
  char esc[4096];
  sq_log_escape(text, esc, sizeof esc);
  const char *p = esc;
  int rc = 0;
  while (!rc && *p) {
    while (*p == ' ') p++;
    if (!*p) break;
    size_t len = strlen(p), take = len;
    if (len > width) {
      take = width;
      while (take > 0 && p[take] != ' ') take--;
      if (take == 0) take = strcspn(p, " "); /* one word longer than the line */
    }
    rc = sq_buf_appendf(b, "%*s%.*s\n", indent, "", (int)take, p);
    p += take;
  }
  return rc;
}

/* The samples without a verdict, set apart: how many, and per status and
 * reason what it means and an example, whole. */
static int missing_text(const sq__report *r, sq_buf *b) {
  int64_t missing = r->n_missing + r->batch_dead, all = (int64_t)r->n_rows + r->batch_dead;
  int rc = sq_buf_appendf(b, "\n%lld of %lld samples have no verdict (never reached a model or a test; pass@k leaves "
                          "them out):\n", (long long)missing, (long long)all);
  char s1[256], s2[512];
  for (size_t i = 0; !rc && i < r->n_missing_groups; i++) {
    const sq__report_failure *f = &r->missing[i];
    rc = sq_buf_appendf(b, "  %s %lld — %s\n", shown(f->status, 0, s1, sizeof s1), (long long)f->count,
                        sq__missing_hint(f->status, f->example));
    if (!rc && f->n_ids) {
      sq_buf line = {0};
      rc = sq_buf_appendf(&line, "%s: %s", shown(f->ids[0], 0, s2, sizeof s2), f->example ? f->example : f->kind);
      if (!rc) rc = wrap(b, line.data, 4, 96);
      sq_buf_clear(&line);
    }
  }
  if (!rc && r->batch_dead > 0)
    rc = sq_buf_appendf(b, "  dead letter %lld — %s\n", (long long)r->batch_dead, sq__missing_hint("(dead letter)", NULL));
  return rc;
}

int sq__report_text(const sq__report *r, sq_buf *b) {
  char s1[1024], s2[1024], s3[1024], s4[1024];
  char p[32];
  int rc = sq_buf_appendf(b, "batch %s (queue %s): %zu task(s), %zu problem(s)\n", r->batch, r->queue, r->n_rows,
                          r->n_problems);
  rc = rc || sq__report_header(r, b) || sq_buf_appendf(b, "\n");
  if (!rc && !r->finished && r->batch_tasks >= 0)
    rc = sq_buf_appendf(b, "batch not finished: %lld of %lld results; the figures below are not final\n",
                        (long long)r->batch_results, (long long)r->batch_tasks);
  else if (!rc && !r->finished)
    rc = sq_buf_appendf(b, "batch counters unreadable: the figures below may not be final\n");
  rc = rc || sq_buf_append(b, "\n", 1);
  rc = rc || sq_buf_appendf(b, "%-22s %8s %7s\n", "status", "count", "%");
  for (int s = 0; !rc && s < SQ_STATUS__COUNT; s++) {
    if (!r->status_counts[s]) continue;
    pct(r->status_counts[s], r->n_rows, p, sizeof p);
    rc = sq_buf_appendf(b, "  %-20s %8lld %7s\n", sq_status_name((sq_status)s), (long long)r->status_counts[s], p);
  }
  if (!rc && r->other_statuses) rc = sq_buf_appendf(b, "  %-20s %8lld\n", "(other)", (long long)r->other_statuses);
  if (!rc && (r->n_missing || r->batch_dead > 0)) rc = missing_text(r, b);
  if (!rc && (r->judge_isolated || r->judge_in_process))
    rc = sq_buf_appendf(b, "\ntests judged: %lld isolated, %lld in-process\n", (long long)r->judge_isolated,
                        (long long)r->judge_in_process);

  rc = rc || sq_buf_appendf(b, "\npass@k (unbiased estimator, over problems with at least k samples)\n");
  for (int j = 0; !rc && j < r->n_k; j++) {
    char key[16];
    snprintf(key, sizeof key, "pass@%d", r->k[j]);
    if (r->pass_at_k[j] < 0)
      rc = sq_buf_appendf(b, "  %-10s %8s  (no problem has %d samples)\n", key, "-", r->k[j]);
    else
      rc = sq_buf_appendf(b, "  %-10s %8.4f  (%lld problem(s))%s\n", key, r->pass_at_k[j],
                          (long long)r->pass_at_k_problems[j], r->tiered ? ", the plus tier" : "");
    if (!rc && r->tiered && r->pass_at_k_base[j] >= 0)
      rc = sq_buf_appendf(b, "  %-10s %8.4f  base tier\n", key, r->pass_at_k_base[j]);
  }
  for (int l = 0; !rc && r->n_languages > 1 && l < r->n_languages; l++) {
    rc = sq_buf_appendf(b, "  %-10s", r->languages[l]);
    for (int j = 0; !rc && j < r->n_k; j++) {
      char v[16] = "-";
      if (r->pass_at_k_language[l][j] >= 0) snprintf(v, sizeof v, "%.4f", r->pass_at_k_language[l][j]);
      rc = sq_buf_appendf(b, " pass@%d %s", r->k[j], v);
    }
    if (!rc) rc = sq_buf_appendf(b, "  (%lld problem(s))\n", (long long)r->problems_language[l]);
  }

  if (!rc && r->n_problems > 1) { /* the problems that passed least, up to SQ__REPORT_TOP */
    const size_t *order = r->by_rate;
    size_t n = r->n_problems < SQ__REPORT_TOP ? r->n_problems : SQ__REPORT_TOP;
    rc = sq_buf_appendf(b, "\nproblems, lowest pass rate first\n  %-24s %6s %6s %8s  %s\n", "problem", "n", "c",
                        "pass@1", "statuses");
    for (size_t i = 0; !rc && i < n; i++) {
      const sq__report_problem *q = &r->problems[order[i]];
      char p1[16] = "-";
      if (q->n) snprintf(p1, sizeof p1, "%.4f", sq_stats_pass_at_k(q->n, q->c, 1));
      rc = sq_buf_appendf(b, "  %-24.24s %6lld %6lld %8s  ", q->task_id, (long long)q->n, (long long)q->c, p1) ||
           status_list(b, q) || sq_buf_appendf(b, "\n");
    }
    if (!rc && r->n_problems > n)
      rc = sq_buf_appendf(b, "  ... and %zu more (--json or --html lists every problem)\n", r->n_problems - n);
  }

  if (!rc && r->n_failures) {
    rc = sq_buf_appendf(b, "\nfailures by reason\n  %6s  %-16s %-36s %s\n", "count", "status", "kind", "example");
    for (size_t i = 0; !rc && i < r->n_failures; i++) {
      const sq__report_failure *f = &r->failures[i];
      rc = sq_buf_appendf(b, "  %6lld  %-16s %-36s %s: %s\n", (long long)f->count, shown(f->status, 16, s1, sizeof s1),
                          shown(f->kind, 36, s2, sizeof s2), shown(f->ids[0], 0, s3, sizeof s3),
                          shown_words(f->example ? f->example : "-", 100, s4, sizeof s4));
    }
  }

  if (!rc && r->n_case_failures) rc = sq__report_cases_text(r, b);
  rc = rc || sq_buf_appendf(b, "\nlatency (ms)   %8s %8s %8s %8s %8s %10s\n", "count", "p50", "p90", "p99", "max", "mean");
  for (int s = 0; !rc && s < SQ__STAGE_COUNT; s++) {
    const sq__report_latency *l = &r->latency[s];
    rc = sq_buf_appendf(b, "  %-12s %8lld %8lld %8lld %8lld %8lld %10.1f\n", sq__stage_name((sq__stage)s),
                        (long long)l->count, (long long)l->p50, (long long)l->p90, (long long)l->p99, (long long)l->max,
                        l->mean);
  }

  if (!rc && r->n_llm) {
    rc = sq_buf_appendf(b, "\nLLM usage       %-24s %6s %12s %12s %12s\n", "model", "tasks", "prompt_tok", "compl_tok",
                        "cost_usd");
    for (size_t i = 0; !rc && i < r->n_llm; i++) {
      const sq__report_llm *g = &r->llm[i];
      rc = sq_buf_appendf(b, "  %-13s %-24s %6lld %12lld %12lld %12.6f\n", shown(g->provider, 13, s1, sizeof s1),
                          shown(g->model, 24, s2, sizeof s2),
                          (long long)g->tasks, (long long)g->prompt_tokens, (long long)g->completion_tokens, g->cost_usd);
    }
  }
  int w = 16; /* the id column fits the longest id shown, up to 48 */
  for (size_t i = 0; i < r->n_slowest + r->n_costliest; i++) {
    size_t idx = i < r->n_slowest ? r->slowest[i] : r->costliest[i - r->n_slowest];
    int n = (int)strlen(r->rows[idx].id);
    w = n > w ? (n > 48 ? 48 : n) : w;
  }
  if (!rc && r->n_slowest) {
    rc = sq_buf_appendf(b, "\n%-*s %-16s %10s %8s\n", w + 2, "slowest tasks", "status", "total_ms", "attempts");
    for (size_t i = 0; !rc && i < r->n_slowest; i++) {
      const sq__report_row *x = &r->rows[r->slowest[i]];
      rc = sq_buf_appendf(b, "  %-*s %-16s %10lld %8d\n", w, shown(x->id, 0, s1, sizeof s1), shown(x->status, 16, s2, sizeof s2),
                          (long long)x->ms[SQ__STAGE_TOTAL],
                          x->attempts);
    }
  }
  if (!rc && r->n_costliest) {
    rc = sq_buf_appendf(b, "\n%-*s %-16s %12s %10s\n", w + 2, "costliest tasks", "status", "cost_usd", "tokens");
    for (size_t i = 0; !rc && i < r->n_costliest; i++) {
      const sq__report_row *x = &r->rows[r->costliest[i]];
      rc = sq_buf_appendf(b, "  %-*s %-16s %12.6f %10lld\n", w, shown(x->id, 0, s1, sizeof s1), shown(x->status, 16, s2, sizeof s2),
                          x->cost_usd,
                          (long long)(x->prompt_tokens + x->completion_tokens));
    }
  }
  return rc ? SQ_ENOMEM : 0;
}

/* After building (rc): the page to html (when set), then the text to
 * stdout. Explains a failure on stderr; returns 0 or -1. */
static int emit(int rc, const char *html, const sq_buf *page, const sq_buf *text) {
  if (rc) {
    fprintf(stderr, "sandq-producer: report: %s\n", sq_strerror(rc));
    return -1;
  }
  if (html && sq__out_write(html, page->data, page->len) != 0) return -1;
  if (html) fprintf(stderr, "sandq-producer: wrote the HTML page to %s\n", html);
  return sq__out_write(NULL, text->data, text->len) != 0 ? -1 : 0;
}

/* The report of batch folded as its results stream in (sq__report_add),
 * in memory that does not grow with the batch (eval.h). A batch
 * without results is an error naming it. Explains failures on stderr;
 * returns 0 or an SQ_E* code. */
static int fold_batch(sq_queue *q, const sq_config *cfg, const char *batch, const int *k, int n_k, sq__report *rep) {
  int rc = sq__report_begin(rep, batch, cfg->queue, k, n_k);
  if (rc) {
    fprintf(stderr, "sandq-producer: report: %s\n", sq_strerror(rc));
    return rc;
  }
  if ((rc = sq_queue_batch_results(q, batch, sq__report_add, rep)) != 0) {
    fprintf(stderr, "sandq-producer: reading results of batch %s: %s\n", batch,
            rc == SQ_ENOMEM ? sq_strerror(rc) : sq_queue_errstr(q));
    return rc;
  }
  if (rep->n_rows == 0) {
    fprintf(stderr, "sandq-producer: batch %s has no results in queue %s (unknown, not started, or past its "
            "retention_s)\n", batch, cfg->queue);
    return SQ_ENOTFOUND;
  }
  if ((rc = sq__report_end(rep)) != 0) fprintf(stderr, "sandq-producer: report: %s\n", sq_strerror(rc));
  return rc;
}

/* Names the results of rep that are not BSON on stderr (the first few),
 * as `results` does; whether there were any. */
static bool name_unreadable(const sq__report *rep) {
  if (!rep->n_bad) return false;
  char esc[4 * 128 + 1];
  for (size_t i = 0; i < rep->n_missing_groups; i++) {
    const sq__report_failure *f = &rep->missing[i];
    if (strcmp(f->status, "(bad bson)") != 0) continue;
    for (int j = 0; j < f->n_ids; j++)
      fprintf(stderr, "sandq-producer: result '%s' of batch %s is not a valid BSON document; left out of the report\n",
              sq_log_escape(f->ids[j], esc, sizeof esc), rep->batch);
  }
  fprintf(stderr, "sandq-producer: %lld stored result(s) of batch %s are not BSON\n", (long long)rep->n_bad, rep->batch);
  return true;
}

/* Says on stderr that rep has samples without a verdict, and what they are. */
static void tell_missing(const sq__report *rep, const char *consequence) {
  sq_buf list = {0};
  const char *hint = "";
  if (rep->n_missing_groups) hint = sq__missing_hint(rep->missing[0].status, rep->missing[0].example);
  else if (rep->batch_dead > 0) hint = sq__missing_hint("(dead letter)", NULL);
  if (sq__missing_list(rep, &list) != 0) sq_buf_clear(&list);
  fprintf(stderr, "sandq-producer: report: %lld of %lld samples of batch %s have no verdict: %s — %s; %s\n",
          (long long)(rep->n_missing + rep->batch_dead), (long long)rep->n_rows + rep->batch_dead, rep->batch,
          list.data ? list.data : "?", hint, consequence);
  sq_buf_clear(&list);
}

/* `report A B`: both batches' reports, then their comparison. */
static int compare(const sq_config *cfg, const char *a, const char *b, const int *k, int n_k, bool json,
                   const char *html, bool allow_missing) {
  sq_queue *q = NULL;
  sq__report rep[2] = {{0}, {0}};
  sq__compare cmp = {0};
  sq_buf text = {0}, page = {0};
  int code = SQ_EXIT_ERROR;
  if (sq__open_queue(cfg, &q) != 0 || fold_batch(q, cfg, a, k, n_k, &rep[0]) != 0 ||
      fold_batch(q, cfg, b, k, n_k, &rep[1]) != 0)
    goto out;
  bool bad = name_unreadable(&rep[0]);
  bad = name_unreadable(&rep[1]) || bad;
  if (bad) {
    code = SQ_EXIT_BAD_RESULT;
    goto out;
  }
  /* a sample that never reached a model or a test would read as the model's failure on one side */
  bool missing = false;
  for (int i = 0; i < 2; i++)
    if (rep[i].n_missing) {
      missing = true;
      tell_missing(&rep[i], allow_missing ? "the comparison counts the samples with a verdict only"
                                          : "refusing to compare (--allow-missing compares the samples with a verdict)");
    }
  if (missing && !allow_missing) {
    code = SQ__EXIT_MISSING;
    goto out;
  }
  int rc = sq__compare_build(&rep[0], &rep[1], &cmp);
  if (!rc) rc = json ? sq__compare_json(&cmp, &text) : sq__compare_text(&cmp, 20, &text);
  if (!rc && html) rc = sq__compare_html(&cmp, &page);
  if (emit(rc, html, &page, &text) == 0) code = SQ_EXIT_OK;
out:
  sq_buf_clear(&text);
  sq_buf_clear(&page);
  sq__compare_free(&cmp);
  for (int i = 0; i < 2; i++) sq__report_free(&rep[i]);
  sq_queue_free(q);
  return code;
}

int sq__report_batch(const sq_config *cfg, sq_queue *q, const char *batch, const sq__report_opts *o) {
  sq__report rep = {0};
  sq_buf text = {0}, page = {0};
  int code = SQ_EXIT_ERROR;
  if (fold_batch(q, cfg, batch, o->k, o->n_k, &rep) != 0) goto out;
  sq_batch_stats st;
  if (sq_queue_batch_stats(q, batch, &st) == 0) {
    rep.batch_tasks = st.total;
    rep.batch_results = st.done;
    rep.batch_dead = st.dead;
    rep.finished = st.finished_at_ms > 0 || (st.total > 0 && st.done + st.dead + st.duplicate >= st.total);
  } else {
    fprintf(stderr, "sandq-producer: batch %s: its counters cannot be read (%s); the report is not known to be "
            "final\n", batch, sq_queue_errstr(q));
    rep.batch_tasks = rep.batch_results = -1;
  }
  int rc = o->json ? sq__report_json(&rep, &text) : sq__report_text(&rep, &text);
  if (!rc && o->html) rc = sq__report_html(&rep, &page);
  if (emit(rc, o->html, &page, &text) != 0) goto out;
  code = SQ_EXIT_OK;
  if (name_unreadable(&rep)) {
    code = SQ_EXIT_BAD_RESULT;
  } else if (rep.n_missing || rep.batch_dead > 0) {
    tell_missing(&rep, o->allow_missing ? "pass@k counts the others (--allow-missing)"
                                        : "pass@k counts the others only (exit 3; --allow-missing accepts this)");
    if (!o->allow_missing) code = SQ__EXIT_MISSING;
  }
out:
  sq_buf_clear(&text);
  sq_buf_clear(&page);
  sq__report_free(&rep);
  return code;
}

int sq__report_cmd_run(const sq_config *cfg, const sq_cli *cli) {
  const char *html = sq_cli_get(cli, "html"), *kv = sq_cli_get(cli, "k");
  sq__report_opts o = {.k = {1, 10, 100}, .n_k = 3, .json = sq_cli_get(cli, "json") != NULL, .html = html,
                       .allow_missing = sq_cli_get(cli, "allow-missing") != NULL};
  if (kv && sq__report_parse_k(kv, o.k, &o.n_k) != 0) {
    fprintf(stderr, "sandq-producer: --k '%s' must be up to %d distinct whole numbers >= 1, comma-separated\n", kv,
            SQ__REPORT_MAX_K);
    return SQ_EXIT_USAGE;
  }
  size_t argc = cli->n_operands;
  char **argv = cli->operands;
  if (argc != 1 && argc != 2) {
    fprintf(stderr, "sandq-producer: report takes one BATCH id, or two to compare them (sandq-producer report --help)\n");
    return SQ_EXIT_USAGE;
  }
  for (size_t i = 0; i < argc; i++)
    if (!sq_name_ok(argv[i], SQ_NAME_BATCH_MAX)) {
      fprintf(stderr, "sandq-producer: batch '%s' must be 1-128 characters of A-Z a-z 0-9 . _ : -\n", argv[i]);
      return SQ_EXIT_USAGE;
    }
  if (html && (!html[0] || strcmp(html, "-") == 0)) { /* stdout has the text; "" names no file */
    fprintf(stderr, "sandq-producer: --html needs a file name\n");
    return SQ_EXIT_USAGE;
  }
  if (sq__out_check(html) != 0) return SQ_EXIT_USAGE;
  if (argc == 2) return compare(cfg, argv[0], argv[1], o.k, o.n_k, o.json, html, o.allow_missing);
  sq_queue *q = NULL;
  if (sq__open_queue(cfg, &q) != 0) return SQ_EXIT_ERROR;
  int code = sq__report_batch(cfg, q, argv[0], &o);
  sq_queue_free(q);
  return code;
}
