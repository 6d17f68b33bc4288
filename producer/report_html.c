/* report_html.c: the report as one self-contained HTML page: inline CSS and
 * inline SVG plots (statuses, pass@k, per-stage latency, cost per provider
 * and model) and tables (failures with their reasons, the problems in two
 * orders switched by CSS, the first failing tasks, slowest and costliest
 * tasks): its size is bounded whatever the batch's. No scripts, no fonts, nothing fetched: it opens from a file, a
 * mail attachment or an artifact store alike. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "eval.h"

#define PLOT_W 560
#define LABEL_W 150 /* left margin for bar labels */
#define BAR_H 22
#define MAX_PROBLEM_ROWS 2000 /* problems listed in each order; then a count (--json has them all) */

/* Appends s HTML-escaped (also fit for SVG text and attributes). */
static int esc(sq_buf *b, const char *s) {
  int rc = 0;
  for (const char *p = s ? s : ""; !rc && *p; p++) {
    switch (*p) {
    case '&': rc = sq_buf_append(b, "&amp;", 5); break;
    case '<': rc = sq_buf_append(b, "&lt;", 4); break;
    case '>': rc = sq_buf_append(b, "&gt;", 4); break;
    case '"': rc = sq_buf_append(b, "&quot;", 6); break;
    case '\'': rc = sq_buf_append(b, "&#39;", 5); break;
    default: rc = sq_buf_append(b, p, 1);
    }
  }
  return rc;
}

static const char *status_color(const char *status) {
  static const struct {
    const char *name, *color;
  } colors[] = {{"passed", "#2e9e5b"},        {"ok", "#6cc28f"},           {"failed", "#d9534f"},
                {"runtime_error", "#ec8a3c"}, {"timeout", "#a05fd0"},      {"cpu_limit", "#7d68d8"},
                {"memory_limit", "#5a79d6"},  {"output_limit", "#3fa2c8"}, {"policy_violation", "#8a5a3a"},
                {"blocked", "#5f6368"},       {"llm_error", "#c9a227"},    {"invalid_task", "#9aa0a6"},
                {"compile_error", "#b5651d"}};
  for (size_t i = 0; i < sizeof colors / sizeof colors[0]; i++)
    if (strcmp(colors[i].name, status) == 0) return colors[i].color;
  return "#bbbbbb";
}

static int svg_open(sq_buf *b, int h, const char *title) {
  int rc = sq_buf_appendf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                          "role=\"img\" aria-label=\"",
                          PLOT_W, h, PLOT_W, h);
  return rc || esc(b, title) || sq_buf_appendf(b, "\">\n");
}

/* A horizontal bar: label on the left, value text on the right. */
static int hbar(sq_buf *b, int y, const char *label, double frac, const char *color, const char *value) {
  int max_w = PLOT_W - LABEL_W - 170; /* room for the value on the right */
  int w = frac > 0 ? (int)lround(frac * max_w) : 0;
  if (frac > 0 && w < 2) w = 2;
  int rc = sq_buf_appendf(b, "<text x=\"%d\" y=\"%d\" class=\"lbl\" text-anchor=\"end\">", LABEL_W - 8, y + 15);
  rc = rc || esc(b, label) || sq_buf_appendf(b, "</text>\n");
  rc = rc || sq_buf_appendf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"%s\"/>\n", LABEL_W, y + 2,
                            w, BAR_H - 6, color);
  rc = rc || sq_buf_appendf(b, "<text x=\"%d\" y=\"%d\" class=\"val\">", LABEL_W + w + 6, y + 15);
  return rc || esc(b, value) || sq_buf_appendf(b, "</text>\n");
}

static int plot_empty(sq_buf *b, const char *title, const char *why) {
  int rc = svg_open(b, 60, title) || sq_buf_appendf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"60\" fill=\"#f6f7f9\" "
                                                     "rx=\"6\"/><text x=\"%d\" y=\"35\" class=\"note\" "
                                                     "text-anchor=\"middle\">",
                                                     PLOT_W, PLOT_W / 2);
  return rc || esc(b, why) || sq_buf_appendf(b, "</text></svg>\n");
}

static int plot_statuses(sq_buf *b, const sq__report *r) {
  int n = 0;
  int64_t top = 1;
  for (int s = 0; s < SQ_STATUS__COUNT; s++)
    if (r->status_counts[s]) n++, top = r->status_counts[s] > top ? r->status_counts[s] : top;
  if (!n) return plot_empty(b, "statuses", "no results");
  int rc = svg_open(b, n * BAR_H + 8, "tasks by status"), y = 4;
  for (int s = 0; !rc && s < SQ_STATUS__COUNT; s++) {
    int64_t c = r->status_counts[s];
    if (!c) continue;
    char val[64];
    snprintf(val, sizeof val, "%lld (%.1f%%)", (long long)c, 100.0 * (double)c / (double)r->n_rows);
    const char *name = sq_status_name((sq_status)s);
    rc = hbar(b, y, name, (double)c / (double)top, status_color(name), val);
    y += BAR_H;
  }
  return rc || sq_buf_appendf(b, "</svg>\n");
}

static int plot_pass_at_k(sq_buf *b, const sq__report *r) {
  int defined = 0;
  for (int j = 0; j < r->n_k; j++) defined += r->pass_at_k[j] >= 0;
  if (!defined) return plot_empty(b, "pass@k", "no problem has enough samples for these k");
  const int h = 220, top = 20, bottom = 190, left = 44;
  int slot = (PLOT_W - left - 10) / r->n_k, bw = slot > 90 ? 60 : slot * 2 / 3;
  int rc = svg_open(b, h, "pass@k");
  for (int t = 0; !rc && t <= 4; t++) { /* gridlines at 0, .25, .5, .75, 1 */
    int y = bottom - (bottom - top) * t / 4;
    rc = sq_buf_appendf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"grid\"/><text x=\"%d\" y=\"%d\" "
                        "class=\"axis\" text-anchor=\"end\">%.2f</text>\n",
                        left, y, PLOT_W - 6, y, left - 6, y + 4, t / 4.0);
  }
  for (int j = 0; !rc && j < r->n_k; j++) {
    int x = left + slot * j + (slot - bw) / 2;
    double v = r->pass_at_k[j];
    int bh = v > 0 ? (int)lround(v * (bottom - top)) : 0;
    if (v > 0 && bh < 2) bh = 2;
    rc = sq_buf_appendf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"%s\"/>\n", x, bottom - bh,
                        bw, bh, v < 0 ? "#dddddd" : "#3b6fd6");
    char val[32];
    if (v < 0) snprintf(val, sizeof val, "n/a");
    else snprintf(val, sizeof val, "%.3f", v);
    rc = rc || sq_buf_appendf(b, "<text x=\"%d\" y=\"%d\" class=\"val\" text-anchor=\"middle\">%s</text>\n", x + bw / 2,
                              bottom - bh - 5, val);
    rc = rc || sq_buf_appendf(b, "<text x=\"%d\" y=\"%d\" class=\"lbl\" text-anchor=\"middle\">pass@%d</text>\n",
                              x + bw / 2, bottom + 18, r->k[j]);
  }
  return rc || sq_buf_appendf(b, "</svg>\n");
}

/* x on a log10 scale from 1 ms to max_ms over [x0, x1]. */
static int log_x(double ms, double max_ms, int x0, int x1) {
  if (ms < 1) ms = 1;
  double f = log10(ms) / log10(max_ms > 10 ? max_ms : 10);
  return x0 + (int)lround((f > 1 ? 1 : f) * (x1 - x0));
}

static int plot_latency(sq_buf *b, const sq__report *r) {
  int64_t max_ms = 1;
  for (int s = 0; s < SQ__STAGE_COUNT; s++)
    if (r->latency[s].count && r->latency[s].max > max_ms) max_ms = r->latency[s].max;
  double top_ms = pow(10, ceil(log10((double)max_ms > 10 ? (double)max_ms : 10)));
  const int x0 = 110, x1 = PLOT_W - 20, row = 34, head = 24;
  int h = head + SQ__STAGE_COUNT * row + 26;
  int rc = svg_open(b, h, "latency per stage (log scale): p50, p90, p99, max");
  for (double t = 1; !rc && t <= top_ms; t *= 10) {
    int x = log_x(t, top_ms, x0, x1);
    char lab[32];
    if (t >= 1000) snprintf(lab, sizeof lab, "%gs", t / 1000);
    else snprintf(lab, sizeof lab, "%gms", t);
    rc = sq_buf_appendf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"grid\"/><text x=\"%d\" y=\"%d\" "
                        "class=\"axis\" text-anchor=\"middle\">%s</text>\n",
                        x, head - 6, x, h - 22, x, h - 8, lab);
  }
  static const char *const shade[] = {"#1f4fb0", "#5d8ce6", "#a9c3f2"};
  for (int s = 0, y = head; !rc && s < SQ__STAGE_COUNT; s++, y += row) {
    const sq__report_latency *l = &r->latency[s];
    rc = sq_buf_appendf(b, "<text x=\"%d\" y=\"%d\" class=\"lbl\" text-anchor=\"end\">%s</text>\n", x0 - 8, y + 17,
                        sq__stage_name((sq__stage)s));
    if (rc || !l->count) {
      rc = rc || sq_buf_appendf(b, "<text x=\"%d\" y=\"%d\" class=\"note\">not used by these tasks</text>\n", x0 + 4,
                                y + 17);
      continue;
    }
    /* 1 ms .. p50 (dark), p50 .. p90, p90 .. p99 (light), a tick at max */
    int64_t edges[] = {1, l->p50, l->p90, l->p99};
    for (int i = 0; !rc && i < 3; i++) {
      int a = log_x((double)edges[i], top_ms, x0, x1), c = log_x((double)edges[i + 1], top_ms, x0, x1);
      if (c - a < 2) c = a + 2;
      rc = sq_buf_appendf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"16\" fill=\"%s\"/>\n", a, y + 5, c - a,
                          shade[i]);
    }
    int xm = log_x((double)l->max, top_ms, x0, x1);
    rc = rc || sq_buf_appendf(b, "<rect x=\"%d\" y=\"%d\" width=\"3\" height=\"24\" fill=\"#d9534f\"/>\n", xm - 1, y + 1);
    rc = rc || sq_buf_appendf(b, "<title>%s: p50 %lld ms, p90 %lld ms, p99 %lld ms, max %lld ms, n %lld</title>\n",
                              sq__stage_name((sq__stage)s), (long long)l->p50, (long long)l->p90, (long long)l->p99,
                              (long long)l->max, (long long)l->count);
  }
  return rc || sq_buf_appendf(b, "</svg>\n");
}

static int plot_cost(sq_buf *b, const sq__report *r) {
  if (!r->n_llm) return plot_empty(b, "cost per provider", "no LLM calls in this batch (code given with the tasks)");
  double top = 0;
  int64_t top_tok = 1;
  for (size_t i = 0; i < r->n_llm; i++) {
    top = r->llm[i].cost_usd > top ? r->llm[i].cost_usd : top;
    int64_t t = r->llm[i].prompt_tokens + r->llm[i].completion_tokens;
    top_tok = t > top_tok ? t : top_tok;
  }
  size_t n = r->n_llm < 12 ? r->n_llm : 12;
  int rc = svg_open(b, (int)n * BAR_H + 8, top > 0 ? "cost per provider and model" : "tokens per provider and model"),
      y = 4;
  for (size_t i = 0; !rc && i < n; i++, y += BAR_H) {
    const sq__report_llm *g = &r->llm[i];
    int64_t tok = g->prompt_tokens + g->completion_tokens;
    char label[200], val[96];
    snprintf(label, sizeof label, "%.40s / %.40s", g->provider, g->model);
    if (top > 0) snprintf(val, sizeof val, "$%.4f · %lld tok", g->cost_usd, (long long)tok);
    else snprintf(val, sizeof val, "%lld tok", (long long)tok);
    /* no prices configured: the bars show tokens */
    double frac = top > 0 ? g->cost_usd / top : (double)tok / (double)top_tok;
    rc = hbar(b, y, label, frac, "#c9a227", val);
  }
  return rc || sq_buf_appendf(b, "</svg>\n");
}

static const char CSS[] =
    "body{font:14px/1.45 -apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#1d2330;margin:24px auto;"
    "max-width:1200px;padding:0 16px;background:#fff}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 8px}.sub{color:#5f6368;margin:0 0 16px}"
    ".cards{display:flex;gap:12px;flex-wrap:wrap;margin:0 0 18px}.card{border:1px solid #e3e6ea;border-radius:8px;"
    "padding:10px 16px;min-width:120px}.card b{display:block;font-size:22px}.card span{color:#5f6368;font-size:12px}"
    ".grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(580px,1fr));gap:16px}"
    ".panel{border:1px solid #e3e6ea;border-radius:8px;padding:12px 14px}"
    "svg{display:block;max-width:100%;height:auto}svg text{font:12px 'DejaVu Sans',sans-serif;fill:#1d2330}"
    "svg .axis{fill:#80868b;font-size:11px}svg .note{fill:#80868b}svg .val{font-weight:600}"
    "svg .grid{stroke:#e8eaed;stroke-width:1}"
    "table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;"
    "border-bottom:1px solid #eef0f2;vertical-align:top}th{color:#5f6368;font-weight:600}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}code{font:12px ui-monospace,'DejaVu Sans Mono',monospace;white-space:pre-wrap;"
    "word-break:break-word}.pill{display:inline-block;border-radius:9px;padding:0 8px;color:#fff;font-size:12px}"
    "section{margin:16px 0}"
    /* the problems' two orders, switched without a script */
    "table.compact td,table.compact th{padding:1px 6px;font-size:12px}.byrate{display:none}"
    "#ord-rate:checked~.byname{display:none}#ord-rate:checked~.byrate{display:table}.ord{margin:0 0 6px}";

static int pill(sq_buf *b, const char *status) {
  return sq_buf_appendf(b, "<span class=\"pill\" style=\"background:%s\">", status_color(status)) || esc(b, status) ||
         sq_buf_appendf(b, "</span>");
}

static int failures_tables(sq_buf *b, const sq__report *r) {
  int rc = sq_buf_appendf(b, "<section class=\"panel\"><h2>Failures by reason</h2>\n");
  if (!r->n_failures) return rc || sq_buf_appendf(b, "<p class=\"sub\">No failing task.</p></section>\n");
  rc = rc || sq_buf_appendf(b, "<table><tr><th>count</th><th>status</th><th>kind</th><th>example</th><th>tasks</th></tr>\n");
  for (size_t i = 0; !rc && i < r->n_failures; i++) {
    const sq__report_failure *f = &r->failures[i];
    rc = sq_buf_appendf(b, "<tr><td class=\"num\">%lld</td><td>", (long long)f->count) || pill(b, f->status) ||
         sq_buf_appendf(b, "</td><td>") || esc(b, f->kind) || sq_buf_appendf(b, "</td><td><code>") ||
         esc(b, f->example ? f->example : "-") || sq_buf_appendf(b, "</code></td><td>");
    for (int j = 0; !rc && j < f->n_ids; j++) rc = esc(b, f->ids[j]) || sq_buf_appendf(b, j + 1 < f->n_ids ? ", " : "");
    if (!rc && f->count > f->n_ids) rc = sq_buf_appendf(b, " &hellip;");
    rc = rc || sq_buf_appendf(b, "</td></tr>\n");
  }
  return rc || sq_buf_appendf(b, "</table></section>\n");
}

/* The samples without a verdict, set apart from the failures (nothing
 * when every sample has one). */
static int missing_table(sq_buf *b, const sq__report *r) {
  if (!r->n_missing && r->batch_dead <= 0) return 0;
  int rc = sq_buf_appendf(b, "<section class=\"panel\"><h2>Samples without a verdict</h2>\n<p class=\"sub\">%lld of "
                          "%lld samples never reached a model or a test: pass@k leaves them out.</p>\n"
                          "<table><tr><th>count</th><th>status</th><th>why</th><th>example</th><th>tasks</th></tr>\n",
                          (long long)(r->n_missing + r->batch_dead), (long long)r->n_rows + r->batch_dead);
  for (size_t i = 0; !rc && i < r->n_missing_groups; i++) {
    const sq__report_failure *f = &r->missing[i];
    rc = sq_buf_appendf(b, "<tr><td class=\"num\">%lld</td><td>", (long long)f->count) || pill(b, f->status) ||
         sq_buf_appendf(b, "</td><td>") || esc(b, sq__missing_hint(f->status, f->example)) ||
         sq_buf_appendf(b, "</td><td><code>") || esc(b, f->example ? f->example : f->kind) ||
         sq_buf_appendf(b, "</code></td><td>");
    for (int j = 0; !rc && j < f->n_ids; j++) rc = esc(b, f->ids[j]) || sq_buf_appendf(b, j + 1 < f->n_ids ? ", " : "");
    if (!rc && f->count > f->n_ids) rc = sq_buf_appendf(b, " &hellip;");
    rc = rc || sq_buf_appendf(b, "</td></tr>\n");
  }
  if (!rc && r->batch_dead > 0)
    rc = sq_buf_appendf(b, "<tr><td class=\"num\">%lld</td><td>dead letter</td><td>", (long long)r->batch_dead) ||
         esc(b, sq__missing_hint("(dead letter)", NULL)) || sq_buf_appendf(b, "</td><td>-</td><td></td></tr>\n");
  return rc || sq_buf_appendf(b, "</table></section>\n");
}

/* A failing task's LLM reply (store_llm_reply), folded: nothing without one. */
static int llm_reply(sq_buf *b, const sq__report_row *x) {
  if (!x->llm_reply) return 0;
  return sq_buf_appendf(b, "<details><summary>LLM reply</summary><code>") || esc(b, x->llm_reply) ||
         sq_buf_appendf(b, "%s</code></details>",
                        x->llm_reply_cut ? "\n[cut here: sandq-producer results has up to 16 KiB]" : "");
}

/* The first failing tasks in natural order of their ids (the fold keeps
 * SQ__REPORT_FAILING), then how many more and where they all are. */
static int failing_table(sq_buf *b, const sq__report *r) {
  int rc = sq_buf_appendf(b, "<section class=\"panel\"><h2>Failing tasks</h2>\n<table class=\"compact\"><tr><th>id"
                          "</th><th>status</th><th>reason</th></tr>\n");
  for (size_t i = 0; !rc && i < r->n_failing_shown; i++) {
    const sq__report_row *x = &r->rows[r->failing[i]];
    rc = sq_buf_appendf(b, "<tr><td>") || esc(b, x->id) || sq_buf_appendf(b, "</td><td>") || pill(b, x->status) ||
         sq_buf_appendf(b, "</td><td><code>") || esc(b, x->reason ? x->reason : "-") || sq_buf_appendf(b, "</code>") ||
         llm_reply(b, x) || sq_buf_appendf(b, "</td></tr>\n");
  }
  rc = rc || sq_buf_appendf(b, "</table>");
  if (!rc && r->n_failing > (int64_t)r->n_failing_shown)
    rc = sq_buf_appendf(b, "<p class=\"sub\">%lld more; <code>sandq-producer results %s --format csv</code> lists every "
                        "one.</p>", (long long)(r->n_failing - (int64_t)r->n_failing_shown), r->batch);
  return rc || sq_buf_appendf(b, "</section>\n");
}

/* One table of the problems in the order given, the first MAX_PROBLEM_ROWS. */
static int problems_table(sq_buf *b, const sq__report *r, const size_t *order, const char *cls) {
  int rc = sq_buf_appendf(b, "<table class=\"compact %s\"><tr><th>problem</th><th>n</th><th>c</th>", cls);
  for (int j = 0; !rc && j < r->n_k; j++) rc = sq_buf_appendf(b, "<th>pass@%d</th>", r->k[j]);
  rc = rc || sq_buf_appendf(b, "<th>statuses</th></tr>\n");
  for (size_t i = 0; !rc && i < r->n_problems && i < MAX_PROBLEM_ROWS; i++) {
    const sq__report_problem *p = &r->problems[order[i]];
    rc = sq_buf_appendf(b, "<tr><td>") || esc(b, p->task_id) ||
         sq_buf_appendf(b, "</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td>", (long long)p->n,
                        (long long)p->c);
    for (int j = 0; !rc && j < r->n_k; j++)
      rc = p->pass_at_k[j] < 0 ? sq_buf_appendf(b, "<td class=\"num\">-</td>")
                               : sq_buf_appendf(b, "<td class=\"num\">%.3f</td>", p->pass_at_k[j]);
    rc = rc || sq_buf_appendf(b, "<td>");
    for (int st = 0; !rc && st < SQ_STATUS__COUNT; st++)
      if (p->status_counts[st])
        rc = pill(b, sq_status_name((sq_status)st)) || sq_buf_appendf(b, " %lld ", (long long)p->status_counts[st]);
    rc = rc || sq_buf_appendf(b, "</td></tr>\n");
  }
  return rc || sq_buf_appendf(b, "</table>\n");
}

/* The problems by id (natural order) or lowest pass rate first, switched
 * by two radio buttons and CSS alone; past MAX_PROBLEM_ROWS, a note. */
static int problems_section(sq_buf *b, const sq__report *r) {
  int rc = sq_buf_appendf(b, "<section class=\"panel\"><h2>Problems (%zu)</h2>\n<input type=\"radio\" name=\"ord\" "
                          "id=\"ord-name\" checked><label for=\"ord-name\" class=\"ord\"> by id </label><input "
                          "type=\"radio\" name=\"ord\" id=\"ord-rate\"><label for=\"ord-rate\" class=\"ord\"> lowest "
                          "pass rate first</label>\n",
                          r->n_problems);
  rc = rc || problems_table(b, r, r->by_name, "byname") || problems_table(b, r, r->by_rate, "byrate");
  if (!rc && r->n_problems > MAX_PROBLEM_ROWS)
    rc = sq_buf_appendf(b, "<p class=\"sub\">The first %d of each order; %zu more: <code>sandq-producer report %s "
                        "--json</code> lists every problem.</p>", MAX_PROBLEM_ROWS, r->n_problems - MAX_PROBLEM_ROWS,
                        r->batch);
  return rc || sq_buf_appendf(b, "</section>\n");
}

static int top_table(sq_buf *b, const sq__report *r, const char *title, const size_t *idx, size_t n) {
  int rc = sq_buf_appendf(b, "<section class=\"panel\"><h2>%s</h2>\n", title);
  if (!n) return rc || sq_buf_appendf(b, "<p class=\"sub\">None.</p></section>\n");
  rc = rc || sq_buf_appendf(b, "<table><tr><th>id</th><th>status</th><th>total ms</th><th>attempts</th><th>tokens</th>"
                            "<th>cost usd</th></tr>\n");
  for (size_t i = 0; !rc && i < n; i++) {
    const sq__report_row *x = &r->rows[idx[i]];
    rc = sq_buf_appendf(b, "<tr><td>") || esc(b, x->id) || sq_buf_appendf(b, "</td><td>") || pill(b, x->status) ||
         sq_buf_appendf(b, "</td><td class=\"num\">%lld</td><td class=\"num\">%d</td><td class=\"num\">%lld</td>"
                        "<td class=\"num\">%.6f</td></tr>\n",
                        (long long)x->ms[SQ__STAGE_TOTAL], x->attempts,
                        (long long)(x->prompt_tokens + x->completion_tokens), x->cost_usd);
  }
  return rc || sq_buf_appendf(b, "</table></section>\n");
}

int sq__report_html(const sq__report *r, sq_buf *b) {
  double cost = 0;
  for (size_t i = 0; i < r->n_llm; i++) cost += r->llm[i].cost_usd;
  int rc = sq_buf_appendf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                          "<title>sandq report: ") ||
           esc(b, r->batch) || sq_buf_appendf(b, "</title>\n<style>%s</style></head>\n<body>\n<h1>sandq report: ", CSS) ||
           esc(b, r->batch) || sq_buf_appendf(b, "</h1>\n<p class=\"sub\">queue ") || esc(b, r->queue) ||
           sq_buf_appendf(b, " &middot; %zu task(s) &middot; %zu problem(s)<br>", r->n_rows, r->n_problems);
  sq_buf head = {0};
  rc = rc || sq__report_header(r, &head) || esc(b, head.data) || sq_buf_appendf(b, "</p>\n");
  sq_buf_clear(&head);
  if (!rc && !r->finished)
    rc = r->batch_tasks >= 0 ? sq_buf_appendf(b, "<p class=\"sub\"><b>batch not finished: %lld of %lld results; the "
                                              "figures below are not final</b></p>\n",
                                              (long long)r->batch_results, (long long)r->batch_tasks)
                             : sq_buf_appendf(b, "<p class=\"sub\"><b>batch counters unreadable: the figures below "
                                              "may not be final</b></p>\n");
  if (!rc && (r->n_missing || r->batch_dead > 0))
    rc = sq_buf_appendf(b, "<p class=\"sub\"><b>%lld of %lld samples have no verdict: pass@k counts the others "
                        "only (below, \"Samples without a verdict\")</b></p>\n",
                        (long long)(r->n_missing + r->batch_dead), (long long)r->n_rows + r->batch_dead);
  rc = rc || sq_buf_appendf(b, "<div class=\"cards\">");
  int64_t passed = r->status_counts[SQ_STATUS_PASSED];
  rc = rc || sq_buf_appendf(b, "<div class=\"card\"><b>%zu</b><span>tasks</span></div>", r->n_rows);
  rc = rc || sq_buf_appendf(b, "<div class=\"card\"><b>%.1f%%</b><span>passed (of those with a verdict)</span></div>",
                            r->n_verdict ? 100.0 * (double)passed / (double)r->n_verdict : 0.0);
  for (int j = 0; !rc && j < r->n_k && j < 3; j++) {
    if (r->pass_at_k[j] < 0) continue;
    rc = sq_buf_appendf(b, "<div class=\"card\"><b>%.3f</b><span>pass@%d (%lld problems)</span></div>", r->pass_at_k[j],
                        r->k[j], (long long)r->pass_at_k_problems[j]);
  }
  if (cost > 0) rc = rc || sq_buf_appendf(b, "<div class=\"card\"><b>$%.4f</b><span>LLM cost</span></div>", cost);
  rc = rc || sq_buf_appendf(b, "<div class=\"card\"><b>%lld ms</b><span>p50 total per task</span></div></div>\n",
                            (long long)r->latency[SQ__STAGE_TOTAL].p50);
  rc = rc || sq_buf_appendf(b, "<div class=\"grid2\">\n<section class=\"panel\"><h2>Statuses</h2>\n") ||
       plot_statuses(b, r) || sq_buf_appendf(b, "</section>\n<section class=\"panel\"><h2>pass@k</h2>\n") ||
       plot_pass_at_k(b, r) ||
       sq_buf_appendf(b, "</section>\n<section class=\"panel\"><h2>Latency per stage</h2>\n<p class=\"sub\">log "
                         "scale; dark to light: up to p50, p90, p99; red tick: max</p>\n") ||
       plot_latency(b, r) ||
       sq_buf_appendf(b, "</section>\n<section class=\"panel\"><h2>%s per provider and model</h2>\n",
                      cost > 0 ? "Cost" : "Tokens") ||
       plot_cost(b, r) || sq_buf_appendf(b, "</section>\n</div>\n");
  rc = rc || missing_table(b, r) || failures_tables(b, r) || problems_section(b, r) || failing_table(b, r);
  rc = rc || sq_buf_appendf(b, "<div class=\"grid2\">\n") || top_table(b, r, "Slowest tasks", r->slowest, r->n_slowest) ||
       top_table(b, r, "Costliest tasks", r->costliest, r->n_costliest) || sq_buf_appendf(b, "</div>\n");
  rc = rc || sq_buf_appendf(b, "<p class=\"sub\">sandq-producer report &middot; pass@k by the unbiased estimator of Chen "
                            "et al. (2021), over problems with at least k samples</p>\n</body></html>\n");
  return rc ? SQ_ENOMEM : 0;
}
