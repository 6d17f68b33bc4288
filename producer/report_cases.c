/* report_cases.c: the report's failing cases: for results of tasks with
 * `cases`, how often each (problem, case) did not pass, folded one result
 * at a time. Memory is bounded: at most SQ__REPORT_CASE_PAIRS_MAX distinct
 * (problem, case) pairs are counted; failures of pairs past that are
 * counted as untracked. The top SQ__REPORT_TOP pairs go into the report. */
#include <bson/bson.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "eval.h"
#include "strmap.h"
#include "util.h"

struct sq__report_cases {
  sq_strmap *pair_of; /* "task_id\ncase" -> index into pairs */
  sq__report_case_failure *pairs;
  size_t n, cap;
};

int sq__report_cases_begin(sq__report *r) {
  if (!(r->cases_acc = calloc(1, sizeof *r->cases_acc)) || !(r->cases_acc->pair_of = sq_strmap_new()))
    return SQ_ENOMEM;
  return 0;
}

/* Counts one failing case of task_id (case_no 1-based). */
static int count_failure(sq__report *r, const char *task_id, int64_t case_no) {
  struct sq__report_cases *a = r->cases_acc;
  sq_buf key = {0};
  size_t at;
  int rc = sq_buf_appendf(&key, "%s\n%lld", task_id, (long long)case_no);
  if (rc) return SQ_ENOMEM;
  if (sq_strmap_get(a->pair_of, key.data, &at)) {
    a->pairs[at].failed++;
  } else if (a->n >= SQ__REPORT_CASE_PAIRS_MAX) {
    r->case_failures_untracked++;
  } else {
    char *id = NULL;
    if (a->n == a->cap) {
      size_t cap = a->cap ? a->cap * 2 : 64;
      sq__report_case_failure *p = realloc(a->pairs, cap * sizeof *p);
      if (p) a->pairs = p, a->cap = cap;
    }
    if (a->n < a->cap && (id = strdup(task_id)) && sq_strmap_add(a->pair_of, key.data, a->n, NULL) == 0)
      a->pairs[a->n++] = (sq__report_case_failure){.task_id = id, .case_no = case_no, .failed = 1};
    else
      free(id), rc = SQ_ENOMEM;
  }
  sq_buf_clear(&key);
  return rc;
}

int sq__report_cases_add(sq__report *r, const char *task_id, const uint8_t *bson, size_t len) {
  bson_t doc;
  bson_iter_t it, arr, c;
  if (!r->cases_acc || !bson_init_static(&doc, bson, len) || !bson_iter_init_find(&it, &doc, "cases") ||
      !BSON_ITER_HOLDS_ARRAY(&it) || !bson_iter_recurse(&it, &arr))
    return 0;
  r->has_cases = true;
  for (int64_t i = 1; bson_iter_next(&arr); i++) {
    if (!BSON_ITER_HOLDS_DOCUMENT(&arr) || !bson_iter_recurse(&arr, &c) || !bson_iter_find(&c, "status") ||
        !BSON_ITER_HOLDS_UTF8(&c) || strcmp(bson_iter_utf8(&c, NULL), "passed") == 0)
      continue;
    int rc = count_failure(r, task_id, i);
    if (rc) return rc;
  }
  return 0;
}

/* Most failures first, then by problem (natural order) and case. */
static int cmp_pair(const void *pa, const void *pb) {
  const sq__report_case_failure *a = pa, *b = pb;
  if (a->failed != b->failed) return a->failed > b->failed ? -1 : 1;
  int c = sq__natural_cmp(a->task_id, b->task_id);
  return c ? c : (a->case_no > b->case_no) - (a->case_no < b->case_no);
}

static int cmp_problem_id(const void *key, const void *p) {
  return strcmp(key, ((const sq__report_problem *)p)->task_id);
}

void sq__report_cases_end(sq__report *r) {
  struct sq__report_cases *a = r->cases_acc;
  if (!a) return;
  if (a->n) qsort(a->pairs, a->n, sizeof *a->pairs, cmp_pair);
  r->n_case_failures = a->n < SQ__REPORT_TOP ? a->n : SQ__REPORT_TOP;
  for (size_t i = r->n_case_failures; i < a->n; i++)
    free(a->pairs[i].task_id);
  r->case_failures = a->pairs; /* the top, moved; the problems are sorted by task_id by now */
  for (size_t i = 0; i < r->n_case_failures; i++) {
    const sq__report_problem *p =
        bsearch(r->case_failures[i].task_id, r->problems, r->n_problems, sizeof *r->problems, cmp_problem_id);
    r->case_failures[i].samples = p ? p->n : 0;
  }
  a->pairs = NULL, a->n = 0;
  sq__report_cases_free(r);
}

void sq__report_cases_free(sq__report *r) {
  struct sq__report_cases *a = r->cases_acc;
  if (a) {
    for (size_t i = 0; i < a->n; i++)
      free(a->pairs[i].task_id);
    free(a->pairs);
    sq_strmap_free(a->pair_of);
    free(a);
    r->cases_acc = NULL;
  }
}

bool sq__report_cases_json(const sq__report *r, void *root) {
  cJSON *a = cJSON_AddArrayToObject(root, "case_failures");
  bool ok = a != NULL;
  for (size_t i = 0; ok && i < r->n_case_failures; i++) {
    const sq__report_case_failure *f = &r->case_failures[i];
    cJSON *e = cJSON_CreateObject();
    ok = e && cJSON_AddStringToObject(e, "task_id", f->task_id) &&
         cJSON_AddNumberToObject(e, "case", (double)f->case_no) &&
         cJSON_AddNumberToObject(e, "failed", (double)f->failed) &&
         cJSON_AddNumberToObject(e, "samples", (double)f->samples);
    if (e) cJSON_AddItemToArray(a, e);
  }
  if (ok && r->case_failures_untracked)
    ok = cJSON_AddNumberToObject(root, "case_failures_untracked", (double)r->case_failures_untracked) != NULL;
  return ok;
}

int sq__report_cases_text(const sq__report *r, sq_buf *b) {
  int rc = sq_buf_appendf(b, "\ncases failing most\n  %-24s %6s %8s %8s\n", "problem", "case", "failed",
                          "samples");
  for (size_t i = 0; !rc && i < r->n_case_failures; i++) {
    const sq__report_case_failure *f = &r->case_failures[i];
    rc = sq_buf_appendf(b, "  %-24.24s %6lld %8lld %8lld\n", f->task_id, (long long)f->case_no,
                        (long long)f->failed, (long long)f->samples);
  }
  if (!rc && r->case_failures_untracked)
    rc = sq_buf_appendf(b, "  and %lld failure(s) of cases past the first %d (problem, case) pairs\n",
                        (long long)r->case_failures_untracked, SQ__REPORT_CASE_PAIRS_MAX);
  return rc ? SQ_ENOMEM : 0;
}
