/* import_humaneval.c: HumanEval's rows into problems (docs/evaluation.md):
 * the completion continues the row's prompt. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"
#include "prompt_template.h"

/* What a model is asked for a function's prompt: the --prompt-template's
 * text, or the whole program. malloc'd. */
char *sq__import_humaneval_prompt(const sq__import_opts *opts, const char *prompt, const char *tests,
                                  const char *entry_point, const char *id) {
  if (opts->prompt_template)
    return sq__prompt_template_render(opts->prompt_template,
                                      &(sq__prompt_fields){prompt, tests, entry_point, id});
  return sq__import_cat3("Complete the following Python function. Reply with the whole program (its imports "
                         "and the complete function, signature included) in one ```python block.\n\n",
                         prompt, "");
}

/* One HumanEval row: its prompt, canonical solution, test and entry point. */
int sq__import_humaneval_problem(const cJSON *o, sq__import_problem *p, const sq__import_opts *opts,
                                 const char *path, size_t lineno) {
  const char *prompt = sq__import_need_string(o, "prompt", path, lineno),
             *sol = sq__import_need_string(o, "canonical_solution", path, lineno),
             *test = sq__import_need_string(o, "test", path, lineno),
             *ep = sq__import_need_string(o, "entry_point", path, lineno);
  if (!prompt || !sol || !test || !ep) return -1;
  if (!prompt[strspn(prompt, " \t\r\n")]) {
    fprintf(stderr, "%s:%zu: prompt: must not be blank\n", path, lineno);
    return -1;
  }
  p->prefix = strdup(prompt);
  p->canonical = strdup(sol);
  p->tests = strdup(test);
  p->entry_point = strdup(ep);
  p->gen_prompt = sq__import_humaneval_prompt(opts, prompt, test, ep, p->id);
  return p->prefix && p->canonical && p->tests && p->entry_point && p->gen_prompt ? 0 : -1;
}
