/* prompt_template.h: `import --prompt-template FILE`: the text a
 * prompt-only task asks the LLM, built from a template with the problem's
 * fields in placeholders (docs/evaluation.md, "Prompt templates"):
 * {prompt}, {tests}, {entry_point}, {task_id}; {{ and }} for literal braces;
 * any other brace is text. Knows nothing of datasets' files or of Redis. */
#ifndef SQ_PRODUCER_PROMPT_TEMPLATE_H
#define SQ_PRODUCER_PROMPT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#define SQ__PROMPT_TEMPLATE_MAX_BYTES (64 * 1024)

/* A problem's fields; NULL: the dataset has none (MBPP: entry_point). */
typedef struct {
  const char *prompt;      /* HumanEval: prompt; MBPP: text */
  const char *tests;       /* HumanEval: test; MBPP: the asserts of test_list, one a line */
  const char *entry_point; /* HumanEval only */
  const char *task_id;
} sq__prompt_fields;

/* Checks template text (len bytes): valid UTF-8 without NUL, at most
 * SQ__PROMPT_TEMPLATE_MAX_BYTES, {prompt} used, every {name} known,
 * {entry_point} only when has_entry_point, {tests} only when has_tests.
 * Returns 0, or -1 with err (errlen bytes) saying what is wrong and what is
 * valid. */
int sq__prompt_template_check(const char *text, size_t len, bool has_entry_point, bool has_tests, char *err,
                              size_t errlen);

/* The prompt for f from a checked template: malloc'd (the caller frees),
 * or NULL when out of memory. */
char *sq__prompt_template_render(const char *tpl, const sq__prompt_fields *f);

#endif
