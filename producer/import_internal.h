/* import_internal.h: what the files of `sandq-producer import` share: the
 * options, a dataset's problems, the line reader and the task writer
 * (import_read.c, import_emit.c), and one reader per dataset format
 * (import_humaneval.c: HumanEval and MBPP; import_apps.c; import_evalplus.c;
 * import_multiple.c). Private to import; the command is import_cmd.c.
 * Every function explains a refusal on stderr (FILE:LINE: field: why). */
#ifndef SQ_PRODUCER_IMPORT_INTERNAL_H
#define SQ_PRODUCER_IMPORT_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "run.h"
#include "strmap.h"
#include "util.h"

#define SQ__IMPORT_IDEMPOTENCY_KEY_MAX 256 /* bytes (docs/formats.md) */
#define SQ__IMPORT_MAX_INPUT_BYTES ((size_t)1 << 30)

typedef enum {
  DS_HUMANEVAL,
  DS_MBPP,
  DS_APPS,
  DS_HUMANEVAL_PLUS,
  DS_MBPP_PLUS,
  DS_MULTIPLE
} sq__import_dataset;
typedef enum { MODE_SAMPLES, MODE_CANONICAL, MODE_COMPLETIONS } sq__import_mode;

typedef struct {
  sq__import_mode mode;
  int64_t samples;
  double temperature; /* < 0: not set */
  const char *model;
  const char *ds_name;
  size_t max_task_bytes; /* push's limit on a stamped task (the default max_task_kib); 0: none */
  const char *batch;     /* --batch: the batch the tasks are for (their idempotency keys); NULL: no keys */
  sq_jail_limits limits; /* written into every task; 0 fields: left to the worker's default_limits */
  int split;             /* sq__import_mbpp_splits[split]: the MBPP problems imported */
  char *prompt_template; /* --prompt-template's text (checked); NULL: the built-in prompts */
  int64_t max_cases;     /* --max-cases (apps): the cases kept of a row, its first; 0: all */
} sq__import_opts;

/* One problem of the dataset, as the task builder needs it. Owned strings. */
typedef struct {
  char *id;             /* "HumanEval/0", "Mbpp/2" */
  char *gen_prompt;     /* what a generating LLM is asked */
  char *prefix;         /* HumanEval: the prompt (the completion continues it); MBPP: test_setup_code */
  char *canonical;      /* the reference solution */
  char *tests;          /* HumanEval: test; MBPP: the asserts, one per line */
  char *entry_point;    /* HumanEval only */
  cJSON *cases;         /* APPS stdin/stdout: the task's "cases" array; NULL otherwise */
  char *plus_tests;     /* evalplus: the plus tier's tests (tests holds the base tier's) */
  const char *language; /* MultiPL-E: the task's language (static); NULL: python */
  cJSON *stop_tokens;   /* MultiPL-E: where a completion is cut (an array of strings) */
  int64_t samples;      /* tasks written so far (the next sample index) */
  size_t lineno;        /* its line in the dataset */
} sq__import_problem;

typedef struct {
  sq__import_dataset ds;
  const char *path;
  sq__import_problem *p;
  size_t n;
  sq_strmap *by_id; /* id -> index, once every problem is read */
  const sq__import_opts *o;
} sq__import_set;

/* ---- reading (import_read.c) ---- */

/* Frees every problem of ps and its index; ps itself is the caller's. */
void sq__import_problems_free(sq__import_set *ps);
/* Reads a whole file ("-": standard input), gunzipping it when it is gzip
 * (zlib reads plain files as they are). Returns 0 and a NUL-terminated
 * malloc'd buffer (the caller frees), or -1 with the reason on stderr. */
int sq__import_read_input(const char *path, char **out, size_t *len);
/* Calls fn on each non-blank line of path (lineno 1-based) until it fails. */
typedef int (*sq__import_line_fn)(const char *path, size_t lineno, const char *line, size_t len, void *ud);
int sq__import_each_line(const char *path, sq__import_line_fn fn, void *ud);
/* A required string field of obj (owned by obj), or NULL with FILE:LINE: FIELD: why on stderr. */
const char *sq__import_need_string(const cJSON *obj, const char *field, const char *path, size_t lineno);
/* One line as one JSON object (the caller frees), or NULL with FILE:LINE:
 * why on stderr (trailing bytes, strings holding NUL). */
cJSON *sq__import_parse_line(const char *path, size_t lineno, const char *line, size_t len);
/* A problem id from a dataset or samples line, malloc'd; NULL with the reason on stderr. */
char *sq__import_problem_id(sq__import_dataset ds, const cJSON *obj, const char *path, size_t lineno);
/* Indexes ps's problems by id, refusing an id seen twice. 0, or -1. */
int sq__import_index(sq__import_set *ps);
/* The problem of that id (owned by ps), or NULL. */
sq__import_problem *sq__import_find(sq__import_set *ps, const char *id);
/* a, b and c joined, malloc'd; NULL when out of memory. */
char *sq__import_cat3(const char *a, const char *b, const char *c);
/* One dataset line into ps->p[ps->n] (an sq__import_line_fn; ud: the set). */
int sq__import_add_problem(const char *path, size_t lineno, const char *line, size_t len, void *ud);

/* ---- the readers: one dataset row into p (0, or -1 after saying why) ---- */

/* MBPP's splits by problem number (import_humaneval.c). */
typedef struct {
  const char *name;
  long long lo, hi;
} sq__import_split;
extern const sq__import_split sq__import_mbpp_splits[];
extern const size_t sq__import_n_mbpp_splits;
/* Whether an MBPP problem id ("Mbpp/N") is in the split asked for. */
bool sq__import_in_split(const char *id, int split);
int sq__import_humaneval_problem(const cJSON *o, sq__import_problem *p, const sq__import_opts *opts,
                                 const char *path, size_t lineno);
int sq__import_mbpp_problem(const cJSON *o, sq__import_problem *p, const sq__import_opts *opts,
                            const char *path, size_t lineno);
int sq__import_apps_problem(const cJSON *o, sq__import_problem *p, const sq__import_opts *opts,
                            const char *path, size_t lineno);
int sq__import_evalplus_problem(const cJSON *o, sq__import_problem *p, const char *path, size_t lineno);
int sq__import_multiple_problem(const cJSON *o, sq__import_problem *p, const char *path, size_t lineno);
/* A MultiPL-E completion cut at the first of p's stop tokens; malloc'd. */
char *sq__import_multiple_cut(const sq__import_problem *p, const char *completion);

/* ---- writing (import_emit.c) ---- */

/* One task line for problem p with code (NULL: prompt-only) into out,
 * checked as push will check it; a refusal names path:lineno (the line the
 * task came from). Returns 0 or an SQ_E* code. */
int sq__import_emit(sq_buf *out, sq__import_problem *p, const sq__import_set *ps, const char *code,
                    const char *source, const char *path, size_t lineno);
/* The program text for a problem's code (body): malloc'd. */
char *sq__import_program_code(const sq__import_set *ps, const sq__import_problem *p, const char *body);
/* The canonical or sampled tasks of every problem, one at a time: checked
 * only (f NULL), or written to f as each is made. *tasks gets how many.
 * Returns 0 or an SQ_E* code after saying why. */
int sq__import_generate(sq__import_set *ps, const sq__import_opts *o, FILE *f, size_t *tasks);

#endif
