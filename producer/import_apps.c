/* import_apps.c: APPS's and TACO's rows into problems: stdin/stdout cases,
 * or, for a row with fn_name, call-based tests the judge runs
 * (docs/evaluation.md). */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"
#include "json_scan.h"
#include "log.h"

/* A string field of obj that holds JSON (APPS keeps its lists so), parsed;
 * NULL with FILE:LINE: FIELD: why on stderr. */
static cJSON *json_field(const cJSON *obj, const char *field, const char *path, size_t lineno) {
  const char *text = sq__import_need_string(obj, field, path, lineno);
  if (!text) return NULL;
  cJSON *v = cJSON_Parse(text);
  if (!v) fprintf(stderr, "%s:%zu: %s: not valid JSON text\n", path, lineno, field);
  return v;
}

/* Whether member m of obj (parsed from text) held a NUL character. */
static bool member_nul(const char *text, const cJSON *obj, const cJSON *m) {
  bool nul[64] = {0};
  size_t i = 0;
  for (const cJSON *c = obj->child; c && c != m; c = c->next)
    i++;
  if (i >= sizeof nul / sizeof *nul) return false;
  sq_json_nul_members(text, strlen(text), nul, sizeof nul / sizeof *nul);
  return nul[i];
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

/* Python's keywords (3.11, keyword.kwlist): never a function's name. */
static const char *const PY_KEYWORDS[] = {
    "False", "None",   "True",    "and",      "as",       "assert", "async", "await",  "break",
    "class", "continue", "def",   "del",      "elif",     "else",   "except", "finally", "for",
    "from",  "global", "if",      "import",   "in",       "is",     "lambda", "nonlocal", "not",
    "or",    "pass",   "raise",   "return",   "try",      "while",  "with",   "yield"};

/* Whether fn is a name a call can take as it is: an ASCII Python
 * identifier, not a keyword. fn_name is pasted into the tests, so anything
 * else (an expression, `class`) would judge the candidate by code the
 * dataset row wrote. */
static bool py_identifier(const char *fn) {
  size_t len = strlen(fn);
  if (!len || len > 128 || (fn[0] >= '0' && fn[0] <= '9')) return false;
  for (size_t i = 0; i < len; i++) {
    char c = fn[i];
    if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  }
  for (size_t i = 0; i < sizeof PY_KEYWORDS / sizeof *PY_KEYWORDS; i++)
    if (strcmp(fn, PY_KEYWORDS[i]) == 0) return false;
  return true;
}

/* Call-based APPS (fn_name): the argument lists and expected values become
 * tests the isolated judge runs, calling the candidate's function by name
 * (through an instance of Solution when the starter code defines that
 * class, as LeetCode does: the judge then runs the tests in-process, as it
 * does for every test that constructs a class of the candidate's). As APPS's own checker: a tuple is compared
 * as a list, and an expected value wrapped in a one-element list also matches unwrapped. */
static char *apps_call_tests(const char *fn, const cJSON *io, const char *starter) {
  cJSON *pairs = cJSON_CreateArray(), *lit = NULL;
  const cJSON *ins = cJSON_GetObjectItemCaseSensitive(io, "inputs"),
              *outs = cJSON_GetObjectItemCaseSensitive(io, "outputs");
  char *text = NULL, *lit_text = NULL;
  for (int i = 0; pairs && i < cJSON_GetArraySize(ins); i++) {
    cJSON *pair = cJSON_CreateArray();
    cJSON_AddItemToArray(pairs, pair);
    cJSON_AddItemToArray(pair, cJSON_Duplicate(cJSON_GetArrayItem(ins, i), 1));
    cJSON_AddItemToArray(pair, cJSON_Duplicate(cJSON_GetArrayItem(outs, i), 1));
  }
  char *json = pairs ? cJSON_PrintUnformatted(pairs) : NULL;
  if (json && (lit = cJSON_CreateString(json)))
    lit_text = cJSON_PrintUnformatted(lit); /* a Python str literal too */
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
int sq__import_apps_problem(const cJSON *o, sq__import_problem *p, const sq__import_opts *opts,
                            const char *path, size_t lineno) {
  const char *question = sq__import_need_string(o, "question", path, lineno);
  const cJSON *starter = cJSON_GetObjectItemCaseSensitive(o, "starter_code");
  const char *start = cJSON_IsString(starter) ? starter->valuestring : "";
  cJSON *io = question ? json_field(o, "input_output", path, lineno) : NULL;
  int rc = -1;
  if (!io) return -1;
  const cJSON *ins = cJSON_GetObjectItemCaseSensitive(io, "inputs"),
              *outs = cJSON_GetObjectItemCaseSensitive(io, "outputs");
  const cJSON *fn = cJSON_GetObjectItemCaseSensitive(io, "fn_name");
  bool fn_nul = fn && member_nul(cJSON_GetObjectItemCaseSensitive(o, "input_output")->valuestring, io, fn);
  int n = cJSON_GetArraySize(ins);
  if (!cJSON_IsArray(ins) || !cJSON_IsArray(outs) || n == 0 || n != cJSON_GetArraySize(outs)) {
    fprintf(stderr,
            "%s:%zu: input_output: must hold \"inputs\" and \"outputs\", two non-empty lists of one length\n",
            path, lineno);
    goto out;
  }
  if (opts->max_cases && n > opts->max_cases) { /* the first max_cases, said per row */
    fprintf(stderr, "%s:%zu: input_output: kept the first %lld of %d cases (--max-cases)\n", path, lineno,
            (long long)opts->max_cases, n);
    for (; n > opts->max_cases; n--) {
      cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(io, "inputs"), n - 1);
      cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(io, "outputs"), n - 1);
    }
  }
  if (fn && !(cJSON_IsString(fn) && fn->valuestring[0])) {
    fprintf(stderr, "%s:%zu: input_output: fn_name must be a non-empty string\n", path, lineno);
    goto out;
  }
  if (fn_nul) {
    fprintf(stderr, "%s:%zu: input_output: fn_name: %s\n", path, lineno, sq_json_nul_reason);
    goto out;
  }
  if (fn && !py_identifier(fn->valuestring)) {
    char esc[4 * 64 + 1];
    fprintf(stderr, "%s:%zu: input_output: fn_name '%s' must be a Python identifier (letters, digits, _; not a "
            "keyword)\n", path, lineno, sq_log_escape(fn->valuestring, esc, sizeof esc));
    goto out;
  }
  for (int i = 0; fn && i < n; i++) {
    if (!cJSON_IsArray(cJSON_GetArrayItem(ins, i))) {
      fprintf(stderr, "%s:%zu: input_output: inputs[%d] must be a list of the arguments of %s (one list per "
              "call)\n", path, lineno, i, fn->valuestring);
      goto out;
    }
  }
  if (opts->mode == MODE_CANONICAL) {
    cJSON *sols = json_field(o, "solutions", path, lineno);
    const cJSON *first = cJSON_GetArrayItem(sols, 0);
    if (cJSON_IsString(first))
      p->canonical = strdup(first->valuestring);
    else if (sols)
      fprintf(stderr, "%s:%zu: solutions: no solution to import with --canonical\n", path, lineno);
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
      bool ok =
          c && cJSON_AddStringToObject(c, "stdin", in) && cJSON_AddStringToObject(c, "expected_stdout", want);
      free(in);
      free(want);
      if (!ok) {
        fprintf(stderr,
                "%s:%zu: input_output: case %d: inputs and outputs must be strings or lists of strings\n",
                path, lineno, i + 1);
        goto out;
      }
    }
  }
  p->prefix = strdup("");
  p->gen_prompt = sq__import_cat3(
      fn ? "Solve the following problem in Python. Reply with the whole program in one ```python "
           "block, starting from this code:\n\n"
         : "Solve the following problem in Python: read the input from standard input and write "
           "the answer to standard output. Reply with the whole program in one ```python block.\n\n",
      fn ? start : question, fn ? "" : "");
  if (fn && p->gen_prompt) {
    char *q = sq__import_cat3(question, "\n\n", p->gen_prompt);
    free(p->gen_prompt);
    p->gen_prompt = q;
  }
  if (p->prefix && p->gen_prompt && (p->cases || p->tests)) rc = 0;
out:
  cJSON_Delete(io);
  return rc;
}
