/* eval.h: what the producer's evaluation commands share:
 * `import` (import.c), `results` (results_cmd.c) and `report`
 * (report_cmd.c, report_model.c, report_json.c, report_html.c): a batch's
 * stored results read back, output files written whole or not at all, and
 * the report's model. Private to the producer. */
#ifndef SQ_PRODUCER_EVAL_H
#define SQ_PRODUCER_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "config.h"
#include "queue.h"
#include "status.h"
#include "util.h"

/* ---- results read back (results_cmd.c) ---- */

typedef struct {
  char *id;
  uint8_t *bson; /* the stored document, as stored */
  size_t len;
} sq__result_doc;

typedef struct {
  sq__result_doc *docs; /* each id once */
  size_t n;
} sq__result_set;

/* Whether a stored result is a BSON document a reader can decode (the one
 * rule of push --out, results and report): what fails it is named and left
 * out of any file, and the command exits SQ_EXIT_BAD_RESULT. */
bool sq__result_bson_ok(const uint8_t *bson, size_t len);

/* Whether path can be written (report.c): a regular file or a new path,
 * where a file of a unique name (mkstemp) can be created beside it and
 * removed again; no other file is opened or removed. Explains a failure on
 * stderr and returns SQ_EINVAL (a link, FIFO, directory or device) or
 * SQ_EIO; 0 when writable. */
int sq__out_check(const char *path);
/* Writes data to path whole (a temporary file in its directory, fsync, a
 * rename: a reader sees the old file or the whole new one; an existing
 * file keeps its mode; a link, FIFO, directory or device is refused), or to
 * stdout when path is NULL or "-". Explains failures on stderr; returns 0,
 * SQ_EINVAL (not a regular file or a new path) or SQ_EIO. One writer for
 * push --out, results --out and report --html (report.c). */
int sq__out_write(const char *path, const void *data, size_t len);
/* The same, written as it comes: sq__out_open starts the temporary file
 * (or stdout for NULL or "-"), sq__out_put appends (buffered; the first
 * error sticks and is returned again), sq__out_commit flushes, fsyncs and
 * renames it over path, sq__out_abort removes it (a no-op once committed
 * or after a failed open). Each explains a failure on stderr and returns 0,
 * SQ_EINVAL or SQ_EIO. Memory: one stdio buffer, whatever the size. */
typedef struct {
  FILE *f;
  char *path, *tmp; /* owned; NULL for stdout */
  int err;
} sq__out;
int sq__out_open(const char *path, sq__out *o);
int sq__out_put(sq__out *o, const void *data, size_t len);
int sq__out_commit(sq__out *o);
void sq__out_abort(sq__out *o);

/* ---- the report's model (report_model.c) ---- */

#define SQ__REPORT_MAX_K 16
#define SQ__REPORT_TOP 10
#define SQ__REPORT_FAILING 100 /* failing tasks kept one by one (the HTML page's table) */

typedef enum { SQ__STAGE_QUEUE, SQ__STAGE_LLM, SQ__STAGE_EXEC, SQ__STAGE_TOTAL, SQ__STAGE_ALL_ATTEMPTS,
               SQ__STAGE_COUNT } sq__stage;
/* "queue", "llm", "exec", "total", "all_attempts" */
const char *sq__stage_name(sq__stage s);

/* One result, as far as the report reads it. Owned strings. */
typedef struct {
  char *id, *task_id; /* task_id: metadata.task_id, else the id */
  char *status;       /* "?" when absent */
  char *reason;       /* NULL when none */
  bool passed;
  bool has_llm, ran;  /* an LLM was called; the program ran in the jail */
  char *judge;        /* "isolated", "in_process", or NULL (no tests, or an older result) */
  char *provider, *model;
  int attempts;
  int64_t ms[SQ__STAGE_COUNT];
  int64_t prompt_tokens, completion_tokens;
  double cost_usd;
  char *dataset;      /* metadata.dataset; NULL when absent */
  double temperature; /* llm.temperature; < 0 when absent */
  char *llm_reply;    /* a failing row's llm.reply (store_llm_reply), its first SQ__REPORT_REPLY_MAX bytes; or NULL */
  bool llm_reply_cut; /* shortened here or by the worker */
  bool tiered;        /* the result has tiers (evalplus): base_passed is its base tier's */
  bool base_passed;
  char *language;     /* the result's language; NULL when absent (python) */
  bool verdict;       /* its status is a verdict on the code (sq__status_has_verdict) */
  bool bad_bson;      /* the stored value is not a BSON document (status "(bad bson)") */
} sq__report_row;

/* Whether a status is a verdict on the code, from its tests or its run
 * (passed, failed, ok, runtime_error, the limits, policy_violation,
 * blocked, compile_error), which pass@k counts; llm_error, invalid_task,
 * cancelled, an unknown or absent status and an unreadable result are
 * not: such a sample never reached a model or a test, and pass@k leaves
 * it out (the report sets it apart, with its reason). */
bool sq__status_has_verdict(const char *status);

/* report's exit code when some samples have no verdict (and
 * --allow-missing was not given): the figures cover the others only. */
#define SQ__EXIT_MISSING 3

/* The most languages the report tells apart (the rest count as the last). */
#define SQ__REPORT_MAX_LANGUAGES 16

/* The most of a failing task's LLM reply the report keeps (and shows). */
#define SQ__REPORT_REPLY_MAX 2048

/* Reads one stored document into row (zeroed first). A document that is not
 * BSON gives status "(bad bson)". Returns 0 or SQ_ENOMEM; clear with
 * sq__report_row_clear. */
int sq__report_row_read(const sq__result_doc *d, sq__report_row *row);
void sq__report_row_clear(sq__report_row *row);

typedef struct {
  char *task_id;
  int64_t n, c;                    /* samples with a verdict, passed */
  int64_t missing;                 /* samples without a verdict (not in n) */
  int64_t c_base;                  /* samples whose base tier passed (tiered results) */
  int language;                    /* its first sample's, an index into the report's languages */
  double pass_at_k[SQ__REPORT_MAX_K]; /* < 0: fewer than k samples */
  int64_t status_counts[SQ_STATUS__COUNT]; /* its samples by status */
} sq__report_problem;

typedef struct {
  char *status, *kind, *example; /* kind: sq_reason_kind of the reason */
  int64_t count;
  char *ids[5];                  /* the first few */
  int n_ids;
} sq__report_failure;

typedef struct {
  int64_t count, p50, p90, p99, max;
  double mean;
} sq__report_latency;

typedef struct {
  char *provider, *model;
  int64_t tasks, prompt_tokens, completion_tokens;
  double cost_usd;
} sq__report_llm;

struct sq__report_acc; /* the fold's state between sq__report_begin and sq__report_end */
struct sq__report_cases; /* report_cases.c's part of it */

/* A (problem, case) whose runs failed: case_no is 1-based, as reasons
 * number cases; samples is the problem's n. */
typedef struct {
  char *task_id;
  int64_t case_no, failed, samples;
} sq__report_case_failure;

/* The most distinct (problem, case) pairs the report counts failures of. */
#define SQ__REPORT_CASE_PAIRS_MAX 65536

typedef struct {
  char *batch, *queue;
  /* The rows slowest, costliest and failing name (n_held of them). */
  sq__report_row *rows;
  size_t n_held;
  size_t n_rows;                    /* results read */
  int64_t n_verdict;                /* of them, with a verdict (sq__status_has_verdict): what pass@k counts */
  int64_t n_missing;                /* the others (n_rows - n_verdict), unreadable ones included */
  int64_t n_bad;                    /* results that are not BSON (in n_missing; named by missing's group) */
  sq__report_failure *missing;      /* the samples without a verdict, by status and reason kind, most first */
  size_t n_missing_groups;
  int64_t status_counts[SQ_STATUS__COUNT];
  int64_t other_statuses;           /* results whose status is not a known name */
  int64_t judge_isolated, judge_in_process; /* results by their "judge" (the rest had no tests) */
  int k[SQ__REPORT_MAX_K];
  int n_k;
  double pass_at_k[SQ__REPORT_MAX_K];   /* mean over problems with n >= k; < 0 when none */
  int64_t pass_at_k_problems[SQ__REPORT_MAX_K];
  /* Tiered results (evalplus): pass@k of the base tier; pass_at_k above is
   * the plus tier's, which is the tasks' status. */
  bool tiered;
  double pass_at_k_base[SQ__REPORT_MAX_K];
  /* pass@k per language, when the problems are in more than one (their
   * first sample's; "python" for results without one). */
  char languages[SQ__REPORT_MAX_LANGUAGES][16];
  int n_languages;
  double pass_at_k_language[SQ__REPORT_MAX_LANGUAGES][SQ__REPORT_MAX_K];
  int64_t problems_language[SQ__REPORT_MAX_LANGUAGES];
  sq__report_problem *problems;     /* sorted by task_id */
  size_t n_problems;
  sq__report_failure *failures;     /* by count, most first */
  size_t n_failures;
  sq__report_latency latency[SQ__STAGE_COUNT];
  sq__report_llm *llm;              /* by cost, then tokens */
  size_t n_llm;
  char datasets[160], models[160], temperatures[96]; /* distinct values, comma-separated ("" when none) */
  size_t *by_name;                  /* problem indexes in natural order of task_id (sq__natural_cmp) */
  size_t *by_rate;                  /* problem indexes, lowest pass rate (c / n) first, then by_name's order */
  size_t slowest[SQ__REPORT_TOP], n_slowest;     /* row indexes, by total_ms */
  size_t costliest[SQ__REPORT_TOP], n_costliest; /* row indexes, by cost_usd (> 0 only) */
  /* The first SQ__REPORT_FAILING failing tasks (neither passed nor ok) in
   * natural order of their ids (sq__natural_cmp, then bytes): row indexes;
   * n_failing counts every failing task. */
  size_t failing[SQ__REPORT_FAILING], n_failing_shown;
  int64_t n_failing;
  /* The batch's counters (set by the caller after sq__report_build): a
   * report of a batch still running is not final, and says so. */
  bool finished;
  int64_t batch_tasks;   /* tasks pushed into the batch; -1 when the counters could not be read */
  int64_t batch_results; /* of them, with a result so far */
  int64_t batch_dead;    /* of them, in the dead letter without a result (no verdict either); 0 when unknown */
  /* Results with cases (report_cases.c): the (problem, case) pairs that
   * failed most, up to SQ__REPORT_TOP; failures of pairs past
   * SQ__REPORT_CASE_PAIRS_MAX are only counted. */
  bool has_cases;
  sq__report_case_failure *case_failures;
  size_t n_case_failures;
  int64_t case_failures_untracked;
  struct sq__report_acc *acc;
  struct sq__report_cases *cases_acc;
} sq__report;

/* The report as a fold, one stored result at a time, in any order: memory
 * grows with the distinct problems (metadata.task_id), failure kinds and
 * models, not with the results (it keeps at most 2 * SQ__REPORT_TOP +
 * SQ__REPORT_FAILING rows, each reply cut to SQ__REPORT_REPLY_MAX).
 * sq__report_begin starts *out for the given k values (each >= 1, at most
 * SQ__REPORT_MAX_K); sq__report_add takes one result (an
 * sq_queue_result_fn: report is the sq__report; id and bson borrowed);
 * sq__report_end sums up. The numbers equal sorting every row first:
 * percentiles come from sq_stats_hist (exact to the millisecond below
 * 262,144 ms), ties are broken by id, costs are summed exactly. Each
 * returns 0 or SQ_ENOMEM; free with sq__report_free (also after an error). */
int sq__report_begin(sq__report *out, const char *batch, const char *queue, const int *k, int n_k);
int sq__report_add(const char *id, const uint8_t *bson, size_t len, void *report);
int sq__report_end(sq__report *r);

/* The failing cases' part of the fold (report_cases.c), called by the
 * above: _begin (0 or SQ_ENOMEM), _add with one stored result (borrowed;
 * one that is not BSON, or has no cases, adds nothing), _end once the
 * problems are sorted (fills case_failures), _free (also after an error). */
int sq__report_cases_begin(sq__report *r);
int sq__report_cases_add(sq__report *r, const char *task_id, const uint8_t *bson, size_t len);
void sq__report_cases_end(sq__report *r);
void sq__report_cases_free(sq__report *r);
/* "case_failures" (and "case_failures_untracked" when some were) into the
 * report's JSON object root; false when out of memory. */
bool sq__report_cases_json(const sq__report *r, void *root);
/* The text report's section on them; 0 or SQ_ENOMEM. */
int sq__report_cases_text(const sq__report *r, sq_buf *b);

/* The fold over a set read whole. Returns 0 or
 * SQ_ENOMEM; free with sq__report_free (also after an error). */
int sq__report_build(const sq__result_set *rs, const char *batch, const char *queue, const int *k, int n_k,
                     sq__report *out);
void sq__report_free(sq__report *r);

/* The report as text (a terminal), JSON (docs/evaluation.md's schema) and a
 * self-contained HTML page with inline SVG plots; each appended to out.
 * Return 0 or SQ_ENOMEM. */
int sq__report_text(const sq__report *r, sq_buf *out);
/* One line: when the report was made, the sandq version, the batch's
 * datasets, models and temperatures (those it has). */
int sq__report_header(const sq__report *r, sq_buf *out);
int sq__report_json(const sq__report *r, sq_buf *out);
/* A number for the report's JSON that always reads as a float ("1.0", not
 * "1"), in the fewest digits that give the double back; NULL for v < 0
 * (undefined: the caller writes null) and when out of memory. A cJSON *. */
void *sq__json_float(double v);
/* What a status without a verdict means for the reader, in a few words
 * (example: a reason of that group, or NULL). */
const char *sq__missing_hint(const char *status, const char *example);
/* The samples without a verdict in one line ("llm_error 820, cancelled 3"),
 * the dead letter's included; 0 or SQ_ENOMEM. */
int sq__missing_list(const sq__report *r, sq_buf *out);

/* One batch's report as `report` prints it (report_cmd.c): text or JSON on
 * stdout, the HTML page to html (NULL: none); unreadable results named on
 * stderr; samples without a verdict set apart and, unless allow_missing,
 * said on stderr. Returns SQ_EXIT_OK, SQ__EXIT_MISSING, SQ_EXIT_BAD_RESULT
 * or SQ_EXIT_ERROR (explained on stderr). */
typedef struct {
  int k[SQ__REPORT_MAX_K];
  int n_k;
  bool json, allow_missing;
  const char *html;
} sq__report_opts;
int sq__report_batch(const sq_config *cfg, sq_queue *q, const char *batch, const sq__report_opts *o);
/* "1,10,100" into k[0..*n): each in [1, 1000000], at most SQ__REPORT_MAX_K,
 * no repeats. 0, or -1 (the caller says why). */
int sq__report_parse_k(const char *s, int *k, int *n);
int sq__report_html(const sq__report *r, sq_buf *out);

/* ---- two batches compared (report_compare.c) ---- */

/* Orders ids as a person does: runs of digits by their value
 * ("HumanEval/2" before "HumanEval/10"), the rest byte by byte. */
int sq__natural_cmp(const char *a, const char *b);

typedef struct {
  const char *task_id;  /* into one of the reports */
  int64_t a_n, a_c;     /* samples and passed in A; -1: not in A */
  int64_t b_n, b_c;     /* the same in B */
} sq__compare_problem;

typedef struct {
  int k;
  int64_t problems;     /* in both, with at least k samples in each; 0: a, b, delta undefined */
  double a, b;          /* mean pass@k over those problems */
  double delta, ci95[2];/* b - a, and a 95 % paired-bootstrap interval of it */
} sq__compare_k;

typedef struct {
  const sq__report *a, *b;        /* borrowed */
  sq__compare_problem *problems;  /* the union, in natural order of task_id */
  size_t n_problems, common, only_a, only_b;
  sq__compare_k k[SQ__REPORT_MAX_K];
  int n_k;                        /* A's k values */
  double a_cost_usd, b_cost_usd;
} sq__compare;

/* Compares two built reports (which must outlive out). Returns 0 or
 * SQ_ENOMEM; free with sq__compare_free (also after an error). */
int sq__compare_build(const sq__report *a, const sq__report *b, sq__compare *out);
void sq__compare_free(sq__compare *c);
/* Text (the first top differing problems), JSON ("sandq.compare/1") and
 * an HTML page, each appended to out. Return 0 or SQ_ENOMEM. */
int sq__compare_text(const sq__compare *c, size_t top, sq_buf *out);
int sq__compare_json(const sq__compare *c, sq_buf *out);
int sq__compare_html(const sq__compare *c, sq_buf *out);

/* `import`, `results`, `report`, run from main.c's command table: cli
 * their flags (sq_cli_get) and operands; cfg built from the command line
 * (import needs none: NULL). Return an SQ_EXIT_* code. */
int sq__import_run(const sq_config *cfg, const sq_cli *cli);
int sq__results_run(const sq_config *cfg, const sq_cli *cli);
int sq__report_cmd_run(const sq_config *cfg, const sq_cli *cli);
/* `import`'s work (import_cmd.c) for import and evaluate: the dataset and
 * mode of cli (operands DATASET FILE, import's flags) into task JSONL on
 * out, all or nothing; *tasks gets how many (NULL: not wanted). Explains
 * failures on stderr; returns an SQ_EXIT_* code. */
int sq__import_write(const sq_cli *cli, FILE *out, size_t *tasks);
/* `evaluate DATASET FILE ...` (evaluate_cmd.c): import, push, wait and
 * report in one command, on the configured fleet when a Redis is given,
 * else on a private redis-server and local workers it starts and stops. */
int sq__evaluate_run(const sq_config *cfg, const sq_cli *cli);

#endif
