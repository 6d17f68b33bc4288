/* test_code_prompt.c: the system prompt and repair request in the task's
 * language (code_prompt.h): the default reads as it did for Python, names
 * the language and its fence otherwise, adds the runner's shape (Java's
 * class Problem), leaves unknown braces alone. */
#include "code_prompt.h"

#include <string.h>

#include "check.h"
#include "config.h"

static char *system_for(const char *tmpl, sq_language_id lang, sq_buf *b) {
  b->len = 0;
  CHECK_EQ(sq__code_prompt_system(tmpl, lang, b), 0);
  return b->data ? b->data : "";
}

int main(void) {
  sq_config cfg;
  sq_config_defaults(&cfg);
  sq_buf b = {0};
  CHECK_STR(system_for(cfg.system_prompt, SQ_LANGUAGE_PYTHON, &b),
            "You write Python 3 programs. Reply with one complete program in a single ```python code block, "
            "with no explanation.");
  CHECK_STR(system_for(cfg.system_prompt, SQ_LANGUAGE_JAVASCRIPT, &b),
            "You write JavaScript (Node.js) programs. Reply with one complete program in a single ```javascript "
            "code block, with no explanation.");
  CHECK_CONTAINS(system_for(cfg.system_prompt, SQ_LANGUAGE_JAVA, &b),
                 "```java code block, with no explanation. The class holding main is named Problem");
  CHECK_CONTAINS(system_for(cfg.system_prompt, SQ_LANGUAGE_GO, &b), "package main");
  /* A configured prompt: its own braces stay; each placeholder is filled. */
  CHECK_STR(system_for("{x} {language}/{fence} {language", SQ_LANGUAGE_LUA, &b), "{x} Lua 5.4/lua {language");
  CHECK_STR(system_for("", SQ_LANGUAGE_PYTHON, &b), "");

  b.len = 0;
  CHECK_EQ(sq__code_prompt_repair(SQ_LANGUAGE_RUBY, "failed", "sum two numbers", "puts 1\n", "boom", 4, &b), 0);
  CHECK_CONTAINS(b.data, "Your previous program failed (status failed).");
  CHECK_CONTAINS(b.data, "Program:\n```ruby\nputs 1\n");
  CHECK_CONTAINS(b.data, "Error output (trimmed):\nboom\n");
  CHECK_CONTAINS(b.data, "in one ```ruby block.");
  sq_buf_clear(&b);
  return sq_check_done("test_code_prompt");
}
