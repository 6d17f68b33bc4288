/* import_internal.h: what the files of `sandq-producer import` share: the
 * options, a dataset's problems, the table of datasets (import_datasets.c),
 * the line reader and the task writer (import_read.c, import_emit.c), and
 * one reader per dataset format: import_humaneval.c, import_mbpp.c,
 * import_apps.c, import_plus.c (humaneval+ and mbpp+) and import_multiple.c
 * (multipl-e). Private to import; the command is import_cmd.c. Every
 * function explains a refusal on stderr (FILE:LINE: field: why). */
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

typedef enum { MODE_SAMPLES, MODE_CANONICAL, MODE_COMPLETIONS } sq__import_mode;

typedef struct {
  sq__import_mode mode;
  int64_t samples;
  double temperature; /* < 0: not set */
  const char *model;
  size_t max_task_bytes; /* push's limit on a stamped task (the default max_task_kib); 0: none */
  const char *batch;     /* --batch: the batch the tasks are for (their idempotency keys); NULL: no keys */
  sq_jail_limits limits; /* written into every task; 0 fields: left to the worker's default_limits */
  int split;             /* the dataset's splits[split]: the problems imported (MBPP's) */
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
  char *plus_tests;     /* humaneval+, mbpp+: the plus tier's tests (tests holds the base tier's) */
  const char *language; /* MultiPL-E: the task's language (static); NULL: python */
  cJSON *stop_tokens;   /* MultiPL-E: where a completion is cut (an array of strings) */
  int64_t samples;      /* tasks written so far (the next sample index) */
  size_t lineno;        /* its line in the dataset */
} sq__import_problem;

/* ---- the datasets (import_datasets.c) ---- */

/* The datasets, in table order (the order messages list them). A dataset
 * has one name: on the command line, here (upper case, `+` as _PLUS), and
 * in its reader (import_NAME.c, sq__import_NAME_problem; humaneval+ and
 * mbpp+ share import_plus.c, multipl-e is import_multiple.c). */
typedef enum {
  SQ__DS_HUMANEVAL = 0,
  SQ__DS_MBPP,
  SQ__DS_APPS,
  SQ__DS_HUMANEVAL_PLUS,
  SQ__DS_MBPP_PLUS,
  SQ__DS_MULTIPLE,
  SQ__DS__COUNT
} sq__import_dataset_id;

/* A dataset's flags. */
enum {
  SQ__DS_CONTINUES = 1u << 0, /* its program is the row's prompt and then the code (else: its setup
                                 code, a newline when there is any, then the code) */
  SQ__DS_MAX_CASES = 1u << 1, /* --max-cases applies: its rows hold stdin/stdout cases */
  SQ__DS_TPL_TESTS = 1u << 2, /* --prompt-template may show {tests} */
  SQ__DS_TPL_ENTRY = 1u << 3  /* --prompt-template may show {entry_point} */
};

/* One of a dataset's splits, by problem number (MBPP's). */
typedef struct {
  const char *name;
  long long lo, hi;
} sq__import_split;

/* A dataset row into p, whose id is set: 0, or -1 after saying why. */
typedef int (*sq__import_reader)(const cJSON *row, sq__import_problem *p, const sq__import_opts *opts,
                                 const char *path, size_t lineno);

/* One dataset: all that import does differently for it. Static. */
typedef struct {
  const char *name;      /* on the command line, in metadata.dataset and in idempotency keys */
  const char *title;     /* as messages write it: "MBPP" */
  const char *id_field;  /* where a row's and a sample's id is, as refusals name it: "task_id" */
  const char *id_prefix; /* numbered ids: "Mbpp/" (2, "2" and "Mbpp/2" are "Mbpp/2"); NULL: a
                            non-empty string, as it is */
  /* A row's or sample's id that is not one field's (multipl-e's (name, language)): malloc'd, or
   * NULL with the reason on stderr. NULL: id_field's. */
  char *(*read_id)(const cJSON *row, const char *path, size_t lineno);
  sq__import_reader read;
  unsigned modes;                 /* the modes it takes: 1u << sq__import_mode */
  const char *modes_why;          /* why it takes no other */
  const char *template_refused;   /* why --prompt-template does not apply; NULL: it does */
  unsigned flags;                 /* SQ__DS_* */
  const sq__import_split *splits; /* --split's, the first the default, {NULL}-terminated; NULL: none */
  /* A completion as its program takes it (multipl-e's: cut at the first stop token), malloc'd;
   * NULL: as it is. */
  char *(*cut)(const sq__import_problem *p, const char *completion);
  /* What a refusal of a task names, {task field, row field} pairs ending in {NULL}: metadata is
   * named as id, code from a completion "completion", any other field as it is. */
  const char *fields[8][2];
} sq__import_dataset;

/* The dataset of that command-line name (exact), or NULL. */
const sq__import_dataset *sq__import_dataset_find(const char *name);
/* The dataset id names (id < SQ__DS__COUNT). */
const sq__import_dataset *sq__import_dataset_get(sq__import_dataset_id id);

typedef struct {
  const sq__import_dataset *ds;
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
char *sq__import_problem_id(const sq__import_dataset *ds, const cJSON *obj, const char *path, size_t lineno);
/* Whether a numbered problem id (ds->id_prefix, then N) is in ds's splits[split]. */
bool sq__import_in_split(const sq__import_dataset *ds, const char *id, int split);
/* Indexes ps's problems by id, refusing an id seen twice. 0, or -1. */
int sq__import_index(sq__import_set *ps);
/* The problem of that id (owned by ps), or NULL. */
sq__import_problem *sq__import_find(sq__import_set *ps, const char *id);
/* a, b and c joined, malloc'd; NULL when out of memory. */
char *sq__import_cat3(const char *a, const char *b, const char *c);
/* One dataset line into ps->p[ps->n] (an sq__import_line_fn; ud: the set). */
int sq__import_add_problem(const char *path, size_t lineno, const char *line, size_t len, void *ud);

/* ---- the readers (sq__import_reader), one file each ---- */

int sq__import_humaneval_problem(const cJSON *row, sq__import_problem *p, const sq__import_opts *opts,
                                 const char *path, size_t lineno);
/* What a model is asked for a function's prompt (HumanEval's, humaneval+'s,
 * mbpp+'s): --prompt-template's text with these fields (tests NULL: none),
 * or the whole program; malloc'd (import_humaneval.c). */
char *sq__import_humaneval_prompt(const sq__import_opts *opts, const char *prompt, const char *tests,
                                  const char *entry_point, const char *id);
extern const sq__import_split sq__import_mbpp_splits[]; /* import_mbpp.c */
int sq__import_mbpp_problem(const cJSON *row, sq__import_problem *p, const sq__import_opts *opts,
                            const char *path, size_t lineno);
int sq__import_apps_problem(const cJSON *row, sq__import_problem *p, const sq__import_opts *opts,
                            const char *path, size_t lineno);
/* humaneval+ and mbpp+ */
int sq__import_plus_problem(const cJSON *row, sq__import_problem *p, const sq__import_opts *opts,
                            const char *path, size_t lineno);
int sq__import_multiple_problem(const cJSON *row, sq__import_problem *p, const sq__import_opts *opts,
                                const char *path, size_t lineno);
/* A MultiPL-E problem's id, "LANGUAGE/NAME" of its language and name fields. */
char *sq__import_multiple_id(const cJSON *row, const char *path, size_t lineno);
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
