/* import_mbpp.c: MBPP's rows into problems (docs/evaluation.md): the
 * setup code goes before the program, the test_imports and asserts are the
 * tests, the problems are taken from one split. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"
#include "prompt_template.h"

/* MBPP's splits by problem number (Austin et al. 2021): what papers report
 * is test, the default. */
const sq__import_split sq__import_mbpp_splits[] = {
    {"test", 11, 510}, {"validation", 511, 600},       {"train", 601, 974},
    {"prompt", 1, 10}, {"all", 0, 1000000000000000LL}, {NULL, 0, 0}};

/* The problem's text of an MBPP row: `text` (the original MBPP), else
 * `prompt` (MBPP-sanitized); NULL with FILE:LINE: FIELD: why on stderr. */
static const char *mbpp_text(const cJSON *o, const char *path, size_t lineno) {
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(o, "text"),
              *prompt = cJSON_GetObjectItemCaseSensitive(o, "prompt");
  if (text) return sq__import_need_string(o, "text", path, lineno);
  if (prompt) return sq__import_need_string(o, "prompt", path, lineno);
  fprintf(stderr, "%s:%zu: text: missing (a string is required; MBPP-sanitized's rows have it as prompt)\n",
          path, lineno);
  return NULL;
}

/* One MBPP row: its text (or prompt), code, test_list, test_setup_code and
 * test_imports. The test_imports lines open the tests: what the asserts
 * take from them (MBPP-sanitized's `from math import isclose`) is the
 * tests' own, never the candidate's. */
int sq__import_mbpp_problem(const cJSON *o, sq__import_problem *p, const sq__import_opts *opts,
                            const char *path, size_t lineno) {
  const char *text = mbpp_text(o, path, lineno), *code = sq__import_need_string(o, "code", path, lineno);
  const cJSON *tl = cJSON_GetObjectItemCaseSensitive(o, "test_list");
  const cJSON *setup = cJSON_GetObjectItemCaseSensitive(o, "test_setup_code");
  const cJSON *imports = cJSON_GetObjectItemCaseSensitive(o, "test_imports");
  if (!text || !code) return -1;
  if (!cJSON_IsArray(tl) || cJSON_GetArraySize(tl) == 0) {
    fprintf(stderr, "%s:%zu: test_list: %s\n", path, lineno,
            tl ? "must be a non-empty array of strings" : "missing");
    return -1;
  }
  if (setup && !cJSON_IsString(setup)) {
    fprintf(stderr, "%s:%zu: test_setup_code: must be a string\n", path, lineno);
    return -1;
  }
  if (imports && !cJSON_IsArray(imports)) {
    fprintf(stderr, "%s:%zu: test_imports: must be an array of strings\n", path, lineno);
    return -1;
  }
  sq_buf tests = {0}, asserts = {0}, prompt = {0};
  const cJSON *t;
  int i = 0;
  cJSON_ArrayForEach(t, imports) {
    if (!cJSON_IsString(t)) {
      fprintf(stderr, "%s:%zu: test_imports[%d]: must be a string\n", path, lineno, i);
      sq_buf_clear(&tests);
      return -1;
    }
    sq_buf_appendf(&tests, "%s\n", t->valuestring);
    i++;
  }
  i = 0;
  cJSON_ArrayForEach(t, tl) {
    if (!cJSON_IsString(t)) {
      fprintf(stderr, "%s:%zu: test_list[%d]: must be a string\n", path, lineno, i);
      sq_buf_clear(&tests);
      sq_buf_clear(&asserts);
      return -1;
    }
    sq_buf_appendf(&asserts, "%s\n", t->valuestring);
    i++;
  }
  sq_buf_appendf(&tests, "%s", asserts.data ? asserts.data : "");
  /* The prompt of the MBPP paper: the problem, then the tests the code must pass. */
  sq_buf_appendf(&prompt,
                 "%s Your code should pass these tests:\n\n%s\nReply with the whole program in one "
                 "```python block.",
                 text, asserts.data ? asserts.data : "");
  sq_buf_clear(&asserts);
  p->tests = tests.data;
  p->gen_prompt = prompt.data;
  if (opts->prompt_template && p->tests) {
    free(p->gen_prompt);
    p->gen_prompt =
        sq__prompt_template_render(opts->prompt_template, &(sq__prompt_fields){text, p->tests, NULL, p->id});
  }
  p->prefix = strdup(setup ? setup->valuestring : "");
  p->canonical = strdup(code);
  return p->tests && p->gen_prompt && p->prefix && p->canonical ? 0 : -1;
}
