/* code_prompt.c: the system prompt and the repair request in the task's
 * language (code_prompt.h). */
#include "code_prompt.h"

#include <string.h>

#include "errors.h"

/* Per language: the name a model knows it by, and what its runner needs of
 * the program's shape (language.c: Java runs class Problem from
 * Problem.java; Go builds one file of package main). */
static const struct {
  const char *title;
  const char *shape; /* NULL: no constraint */
} words[SQ_LANGUAGE__COUNT] = {
    [SQ_LANGUAGE_PYTHON] = {"Python 3", NULL},
    [SQ_LANGUAGE_BASH] = {"Bash", NULL},
    [SQ_LANGUAGE_JAVASCRIPT] = {"JavaScript (Node.js)", NULL},
    [SQ_LANGUAGE_TYPESCRIPT] = {"TypeScript (Node.js)", NULL},
    [SQ_LANGUAGE_C] = {"C (C11)", "The program is one file with a main function."},
    [SQ_LANGUAGE_CPP] = {"C++ (C++17)", "The program is one file with a main function."},
    [SQ_LANGUAGE_GO] = {"Go", "The program is one file of package main with a main function."},
    [SQ_LANGUAGE_RUST] = {"Rust (edition 2021)", "The program is one file with a main function, no crates."},
    [SQ_LANGUAGE_JAVA] = {"Java 17", "The class holding main is named Problem (file Problem.java)."},
    [SQ_LANGUAGE_RUBY] = {"Ruby", NULL},
    [SQ_LANGUAGE_PHP] = {"PHP", NULL},
    [SQ_LANGUAGE_LUA] = {"Lua 5.4", NULL},
    [SQ_LANGUAGE_PERL] = {"Perl 5", NULL},
};

static const char *fence_of(sq_language_id lang) {
  const sq_language *l = sq_language_get(lang);
  return l ? l->name : "python";
}

int sq__code_prompt_system(const char *tmpl, sq_language_id lang, sq_buf *out) {
  const char *title = lang < SQ_LANGUAGE__COUNT ? words[lang].title : words[SQ_LANGUAGE_PYTHON].title;
  const char *shape = lang < SQ_LANGUAGE__COUNT ? words[lang].shape : NULL;
  for (const char *p = tmpl;;) { /* the first append terminates out, even for "" */
    const char *brace = strchr(p, '{');
    size_t n = brace ? (size_t)(brace - p) : strlen(p);
    if (sq_buf_append(out, p, n) != 0) return SQ_ENOMEM;
    if (!brace) break;
    int rc;
    if (strncmp(brace, "{language}", 10) == 0) {
      rc = sq_buf_append(out, title, strlen(title));
      p = brace + 10;
    } else if (strncmp(brace, "{fence}", 7) == 0) {
      rc = sq_buf_append(out, fence_of(lang), strlen(fence_of(lang)));
      p = brace + 7;
    } else {
      rc = sq_buf_append(out, "{", 1);
      p = brace + 1;
    }
    if (rc != 0) return SQ_ENOMEM;
  }
  if (shape && sq_buf_appendf(out, " %s", shape) != 0) return SQ_ENOMEM;
  return 0;
}

int sq__code_prompt_repair(sq_language_id lang, const char *status, const char *prompt, const char *code,
                           const char *err, size_t err_len, sq_buf *out) {
  const char *fence = fence_of(lang);
  return sq_buf_appendf(out,
                        "Your previous program failed (status %s).\n\nTask:\n%s\n\nProgram:\n```%s\n%s\n```\n\n"
                        "Error output (trimmed):\n%.*s\n\nReply with the complete fixed program in one ```%s block.",
                        status, prompt, fence, code, (int)err_len, err, fence) != 0
             ? SQ_ENOMEM
             : 0;
}
