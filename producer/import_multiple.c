/* import_multiple.c: MultiPL-E's records into problems in their language:
 * the program is the prompt, the completion cut at its first stop token,
 * and the tests (docs/evaluation.md). */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"
#include "log.h"

/* MultiPL-E's language codes and the task languages they are
 * (docs/formats.md, "Languages"); the others have no toolchain here. */
static const struct {
  const char *code, *language;
} multiple_languages[] = {{"py", "python"}, {"js", "javascript"}, {"ts", "typescript"}, {"cpp", "cpp"},
                          {"go", "go"},     {"rs", "rust"},       {"java", "java"},     {"rb", "ruby"},
                          {"php", "php"},   {"lua", "lua"},       {"pl", "perl"},       {"sh", "bash"}};

/* One MultiPL-E record: the program is the prompt, the completion (cut at
 * its first stop token, as MultiPL-E does) and the tests, in the record's
 * language. */
int sq__import_multiple_problem(const cJSON *o, sq__import_problem *p, const sq__import_opts *opts,
                                const char *path, size_t lineno) {
  (void)opts; /* --completions only: no prompt to build, no cases to keep */
  const char *lang = sq__import_need_string(o, "language", path, lineno),
             *prompt = sq__import_need_string(o, "prompt", path, lineno),
             *tests = sq__import_need_string(o, "tests", path, lineno);
  if (!lang || !prompt || !tests) return -1;
  for (size_t i = 0; i < sizeof multiple_languages / sizeof *multiple_languages && !p->language; i++)
    if (strcmp(lang, multiple_languages[i].code) == 0) p->language = multiple_languages[i].language;
  if (!p->language) {
    char shown[64];
    fprintf(stderr,
            "%s:%zu: language: '%s' is not one sandq runs (it runs MultiPL-E's py, js, ts, cpp, go, rs, "
            "java, rb, php, lua, pl, sh)\n",
            path, lineno, sq_log_escape(lang, shown, sizeof shown));
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

/* A MultiPL-E problem is (name, language): its id is "LANGUAGE/NAME". */
char *sq__import_multiple_id(const cJSON *row, const char *path, size_t lineno) {
  const char *name = sq__import_need_string(row, "name", path, lineno),
             *lang = name ? sq__import_need_string(row, "language", path, lineno) : NULL;
  if (!name || !lang) return NULL;
  sq_buf b = {0};
  return sq_buf_appendf(&b, "%s/%s", lang, name) == 0 ? b.data : NULL;
}

/* A MultiPL-E completion cut at the first of p's stop tokens; malloc'd. */
char *sq__import_multiple_cut(const sq__import_problem *p, const char *completion) {
  size_t n = strlen(completion);
  const cJSON *st;
  cJSON_ArrayForEach(st, p->stop_tokens) {
    const char *at = strstr(completion, st->valuestring);
    if (at && (size_t)(at - completion) < n) n = (size_t)(at - completion);
  }
  return strndup(completion, n);
}
