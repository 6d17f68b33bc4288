/* report_json.c: the report as JSON (cJSON), schema "sandq.report/1",
 * documented field by field in docs/evaluation.md. Stable: fields are only
 * ever added. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "errors.h"
#include "eval.h"
#include "util.h"

void *sq__json_float(double v) {
  if (!(v >= 0) || !isfinite(v)) return NULL;
  char text[40];
  /* the fewest digits that read back as v (as cJSON prints), then a
   * decimal point where none is: a float to every reader */
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(text, sizeof text, "%.*g", digits, v);
    if (strtod(text, NULL) == v) break;
  }
  if (!strpbrk(text, ".eE")) strcat(text, ".0");
  return cJSON_CreateRaw(text);
}

/* A float or null when v < 0 (undefined). */
static cJSON *num_or_null(double v) { return v < 0 ? cJSON_CreateNull() : sq__json_float(v); }

/* The groups of samples without a verdict. */
static cJSON *missing_groups(const sq__report *r) {
  cJSON *a = cJSON_CreateArray();
  bool ok = a != NULL;
  for (size_t i = 0; ok && i < r->n_missing_groups; i++) {
    const sq__report_failure *f = &r->missing[i];
    cJSON *e = cJSON_CreateObject(), *ids = NULL;
    ok = e && cJSON_AddStringToObject(e, "status", f->status) && cJSON_AddStringToObject(e, "kind", f->kind) &&
         cJSON_AddNumberToObject(e, "count", (double)f->count) &&
         cJSON_AddStringToObject(e, "why", sq__missing_hint(f->status, f->example)) &&
         (f->example ? cJSON_AddStringToObject(e, "example", f->example) : cJSON_AddNullToObject(e, "example")) &&
         (ids = cJSON_AddArrayToObject(e, "ids")) != NULL;
    for (int j = 0; ok && j < f->n_ids; j++) {
      cJSON *s = cJSON_CreateString(f->ids[j]);
      ok = s != NULL;
      if (s) cJSON_AddItemToArray(ids, s);
    }
    if (e) cJSON_AddItemToArray(a, e);
  }
  if (!ok) cJSON_Delete(a);
  return ok ? a : NULL;
}

static bool add(cJSON *obj, const char *key, cJSON *item) {
  if (!item) return false;
  cJSON_AddItemToObject(obj, key, item);
  return true;
}

/* {"1": v, "10": v}: pass@k keyed by k. */
static cJSON *by_k(const sq__report *r, const double *v) {
  cJSON *o = cJSON_CreateObject();
  for (int j = 0; o && j < r->n_k; j++) {
    char key[16];
    snprintf(key, sizeof key, "%d", r->k[j]);
    if (!add(o, key, num_or_null(v[j]))) {
      cJSON_Delete(o);
      return NULL;
    }
  }
  return o;
}

static cJSON *task_brief(const sq__report_row *x) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o && cJSON_AddStringToObject(o, "id", x->id) && cJSON_AddStringToObject(o, "task_id", x->task_id) &&
            cJSON_AddStringToObject(o, "status", x->status) &&
            cJSON_AddNumberToObject(o, "total_ms", (double)x->ms[SQ__STAGE_TOTAL]) &&
            cJSON_AddNumberToObject(o, "all_attempts_ms", (double)x->ms[SQ__STAGE_ALL_ATTEMPTS]) &&
            cJSON_AddNumberToObject(o, "attempts", x->attempts) && cJSON_AddNumberToObject(o, "cost_usd", x->cost_usd) &&
            cJSON_AddNumberToObject(o, "tokens", (double)(x->prompt_tokens + x->completion_tokens));
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

static cJSON *build(const sq__report *r) {
  cJSON *root = cJSON_CreateObject(), *a, *o;
  if (!root) return NULL;
  char when[32];
  sq_utc_text(sq_now_wall_ms(), when, sizeof when);
  bool ok = cJSON_AddStringToObject(root, "schema", "sandq.report/1") && cJSON_AddStringToObject(root, "batch", r->batch) &&
            cJSON_AddStringToObject(root, "created", when) && cJSON_AddStringToObject(root, "sandq_version", SQ_VERSION) &&
            cJSON_AddStringToObject(root, "datasets", r->datasets) && cJSON_AddStringToObject(root, "models", r->models) &&
            cJSON_AddStringToObject(root, "temperatures", r->temperatures) &&
            cJSON_AddStringToObject(root, "queue", r->queue) && cJSON_AddNumberToObject(root, "tasks", (double)r->n_rows) &&
            cJSON_AddNumberToObject(root, "problems", (double)r->n_problems) &&
            cJSON_AddBoolToObject(root, "finished", r->finished);
  /* the batch's own counts: a report of a batch still running is not final */
  if (ok && r->batch_tasks >= 0)
    ok = cJSON_AddNumberToObject(root, "batch_tasks", (double)r->batch_tasks) &&
         cJSON_AddNumberToObject(root, "batch_results", (double)r->batch_results);
  else if (ok)
    ok = cJSON_AddNullToObject(root, "batch_tasks") && cJSON_AddNullToObject(root, "batch_results");
  /* counts by status: every known status, 0 included, so readers need no defaults */
  if (ok && (ok = (o = cJSON_AddObjectToObject(root, "status_counts")) != NULL)) {
    for (int s = 0; ok && s < SQ_STATUS__COUNT; s++)
      ok = cJSON_AddNumberToObject(o, sq_status_name((sq_status)s), (double)r->status_counts[s]) != NULL;
    if (ok && r->other_statuses) ok = cJSON_AddNumberToObject(o, "other", (double)r->other_statuses) != NULL;
  }
  if (ok && (ok = (o = cJSON_AddObjectToObject(root, "judge")) != NULL))
    ok = cJSON_AddNumberToObject(o, "isolated", (double)r->judge_isolated) &&
         cJSON_AddNumberToObject(o, "in_process", (double)r->judge_in_process);
  int64_t passed = r->status_counts[SQ_STATUS_PASSED];
  /* the samples pass@k counts, and those it leaves out (docs/evaluation.md, "Samples without a verdict") */
  ok = ok && cJSON_AddNumberToObject(root, "verdicts", (double)r->n_verdict);
  if (ok && (ok = (o = cJSON_AddObjectToObject(root, "no_verdict")) != NULL))
    ok = cJSON_AddNumberToObject(o, "count", (double)(r->n_missing + r->batch_dead)) &&
         cJSON_AddNumberToObject(o, "unreadable", (double)r->n_bad) &&
         cJSON_AddNumberToObject(o, "dead_letter", (double)r->batch_dead) && add(o, "groups", missing_groups(r));
  ok = ok && add(root, "pass_rate", sq__json_float(r->n_verdict ? (double)passed / (double)r->n_verdict : 0));
  ok = ok && add(root, "pass_at_k", by_k(r, r->pass_at_k));
  if (ok && r->tiered) { /* evalplus: the plus tier is the tasks' status */
    cJSON *tiers = cJSON_AddObjectToObject(root, "tiers"), *t;
    ok = tiers && (t = cJSON_AddObjectToObject(tiers, "base")) && add(t, "pass_at_k", by_k(r, r->pass_at_k_base)) &&
         (t = cJSON_AddObjectToObject(tiers, "plus")) && add(t, "pass_at_k", by_k(r, r->pass_at_k));
  }
  if (ok && r->n_languages > 1) {
    cJSON *langs = cJSON_AddObjectToObject(root, "languages"), *l;
    for (int i = 0; ok && i < r->n_languages; i++)
      ok = langs && (l = cJSON_AddObjectToObject(langs, r->languages[i])) &&
           cJSON_AddNumberToObject(l, "problems", (double)r->problems_language[i]) &&
           add(l, "pass_at_k", by_k(r, r->pass_at_k_language[i]));
  }
  if (ok && (ok = (o = cJSON_AddObjectToObject(root, "pass_at_k_problems")) != NULL))
    for (int j = 0; ok && j < r->n_k; j++) {
      char key[16];
      snprintf(key, sizeof key, "%d", r->k[j]);
      ok = cJSON_AddNumberToObject(o, key, (double)r->pass_at_k_problems[j]) != NULL;
    }
  if (ok && (ok = (a = cJSON_AddArrayToObject(root, "per_problem")) != NULL))
    for (size_t i = 0; ok && i < r->n_problems; i++) {
      const sq__report_problem *p = &r->problems[i];
      cJSON *e = cJSON_CreateObject();
      ok = e && cJSON_AddStringToObject(e, "task_id", p->task_id) && cJSON_AddNumberToObject(e, "n", (double)p->n) &&
           cJSON_AddNumberToObject(e, "c", (double)p->c) && cJSON_AddNumberToObject(e, "missing", (double)p->missing) &&
           add(e, "pass_at_k", by_k(r, p->pass_at_k));
      cJSON *sc = ok ? cJSON_AddObjectToObject(e, "status_counts") : NULL; /* the statuses it has, no zeros */
      ok = ok && sc;
      for (int s = 0; ok && s < SQ_STATUS__COUNT; s++)
        if (p->status_counts[s])
          ok = cJSON_AddNumberToObject(sc, sq_status_name((sq_status)s), (double)p->status_counts[s]) != NULL;
      if (e) cJSON_AddItemToArray(a, e);
    }
  if (ok && (ok = (a = cJSON_AddArrayToObject(root, "failures")) != NULL))
    for (size_t i = 0; ok && i < r->n_failures; i++) {
      const sq__report_failure *f = &r->failures[i];
      cJSON *e = cJSON_CreateObject(), *ids;
      ok = e && cJSON_AddStringToObject(e, "status", f->status) && cJSON_AddStringToObject(e, "kind", f->kind) &&
           cJSON_AddNumberToObject(e, "count", (double)f->count) &&
           (f->example ? cJSON_AddStringToObject(e, "example", f->example) : cJSON_AddNullToObject(e, "example")) &&
           (ids = cJSON_AddArrayToObject(e, "ids")) != NULL;
      for (int j = 0; ok && j < f->n_ids; j++) {
        cJSON *s = cJSON_CreateString(f->ids[j]);
        ok = s != NULL;
        if (s) cJSON_AddItemToArray(ids, s);
      }
      if (e) cJSON_AddItemToArray(a, e);
    }
  if (ok && r->has_cases) ok = sq__report_cases_json(r, root);
  if (ok && (ok = (o = cJSON_AddObjectToObject(root, "latency_ms")) != NULL))
    for (int s = 0; ok && s < SQ__STAGE_COUNT; s++) {
      const sq__report_latency *l = &r->latency[s];
      cJSON *e = cJSON_AddObjectToObject(o, sq__stage_name((sq__stage)s));
      ok = e && cJSON_AddNumberToObject(e, "count", (double)l->count) &&
           cJSON_AddNumberToObject(e, "p50", (double)l->p50) && cJSON_AddNumberToObject(e, "p90", (double)l->p90) &&
           cJSON_AddNumberToObject(e, "p99", (double)l->p99) && cJSON_AddNumberToObject(e, "max", (double)l->max) &&
           cJSON_AddNumberToObject(e, "mean", l->mean);
    }
  if (ok && (ok = (a = cJSON_AddArrayToObject(root, "llm")) != NULL))
    for (size_t i = 0; ok && i < r->n_llm; i++) {
      const sq__report_llm *g = &r->llm[i];
      cJSON *e = cJSON_CreateObject();
      ok = e && cJSON_AddStringToObject(e, "provider", g->provider) && cJSON_AddStringToObject(e, "model", g->model) &&
           cJSON_AddNumberToObject(e, "tasks", (double)g->tasks) &&
           cJSON_AddNumberToObject(e, "prompt_tokens", (double)g->prompt_tokens) &&
           cJSON_AddNumberToObject(e, "completion_tokens", (double)g->completion_tokens) &&
           cJSON_AddNumberToObject(e, "cost_usd", g->cost_usd);
      if (e) cJSON_AddItemToArray(a, e);
    }
  const struct {
    const char *key;
    const size_t *idx;
    size_t n;
  } tops[] = {{"slowest", r->slowest, r->n_slowest}, {"costliest", r->costliest, r->n_costliest}};
  for (size_t t = 0; ok && t < 2; t++) {
    ok = (a = cJSON_AddArrayToObject(root, tops[t].key)) != NULL;
    for (size_t i = 0; ok && i < tops[t].n; i++) {
      cJSON *e = task_brief(&r->rows[tops[t].idx[i]]);
      ok = e != NULL;
      if (e) cJSON_AddItemToArray(a, e);
    }
  }
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

int sq__report_json(const sq__report *r, sq_buf *out) {
  cJSON *root = build(r);
  char *text = root ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  if (!text) return SQ_ENOMEM;
  int rc = sq_buf_appendf(out, "%s\n", text);
  free(text);
  return rc ? SQ_ENOMEM : 0;
}
