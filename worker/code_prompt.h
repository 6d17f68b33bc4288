/* code_prompt.h: what the worker asks a model for, in the task's language:
 * the system prompt (the configured one, its {language} and {fence}
 * filled in) and a repair round's request.
 *
 * Text only: knows the language table's names, nothing of HTTP or Redis. */
#ifndef SQ_WORKER_CODE_PROMPT_H
#define SQ_WORKER_CODE_PROMPT_H

#include "language.h"
#include "util.h"

/* Appends tmpl to out with each {language} replaced by the language's
 * human name ("Python 3", "JavaScript (Node.js)") and each {fence} by its
 * code fence tag ("python", "javascript"); for a language whose runner
 * needs a shape (Java's class Problem, Go's package main) one sentence
 * saying so follows. Returns 0 or SQ_ENOMEM. */
int sq__code_prompt_system(const char *tmpl, sq_language_id lang, sq_buf *out);

/* Appends a repair round's request to out: the status, the task's prompt,
 * the failed program in the language's fence and the tail of its error
 * output (err_len bytes). Returns 0 or SQ_ENOMEM. */
int sq__code_prompt_repair(sq_language_id lang, const char *status, const char *prompt, const char *code,
                           const char *err, size_t err_len, sq_buf *out);

#endif
