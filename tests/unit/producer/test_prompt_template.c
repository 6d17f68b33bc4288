/* test_prompt_template.c: `import --prompt-template` (producer/
 * prompt_template.c): what a template may hold and what is refused with a
 * reason; the rendering of each placeholder, of {{ }} and of other braces. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "prompt_template.h"

static int check(const char *t, bool ep, char *err) {
  err[0] = '\0';
  return sq__prompt_template_check(t, strlen(t), ep, true, err, 256);
}

static void test_check(void) {
  char err[256];
  CHECK_EQ(check("{prompt}", true, err), 0);
  CHECK_EQ(check("Solve {task_id} ({entry_point}):\n{prompt}\n{tests}\n", true, err), 0);
  CHECK_EQ(check("{prompt} then code: def f(): return {'a': 1} {x y} { } {}", false, err), 0); /* other braces are text */
  CHECK_EQ(check("", true, err), -1);
  CHECK(strstr(err, "empty") != NULL);
  CHECK_EQ(check(" \n\t", true, err), -1);
  CHECK_EQ(check("write it", true, err), -1);
  CHECK(strstr(err, "does not use {prompt}") != NULL);
  CHECK_EQ(check("{{prompt}}", true, err), -1); /* literal braces: no placeholder */
  CHECK_EQ(check("{prompt} {promt}", true, err), -1);
  CHECK(strstr(err, "unknown placeholder {promt}") != NULL && strstr(err, "{tests}") != NULL);
  /* a placeholder left open was sent as text in every prompt */
  CHECK_EQ(check("{prompt}\n{tests", true, err), -1);
  CHECK(strstr(err, "unclosed placeholder {tests: a } is missing") != NULL);
  CHECK_EQ(check("{prompt} {task_id, please", true, err), -1);
  CHECK(strstr(err, "unclosed placeholder {task_id") != NULL);
  CHECK_EQ(check("{prompt\nmore", true, err), -1);
  CHECK(strstr(err, "unclosed placeholder {prompt") != NULL);
  CHECK_EQ(check("{prompt} {tset\n", true, err), -1); /* a word the line ends on */
  CHECK(strstr(err, "unclosed placeholder {tset") != NULL);
  CHECK_EQ(check("{prompt} {{tests and {x: 1 for x in y} {a, b}", true, err), 0); /* literal, and code */
  CHECK_EQ(check("{prompt} {entry_point}", false, err), -1);
  CHECK(strstr(err, "{entry_point}") != NULL);
  CHECK_EQ(sq__prompt_template_check("{prompt} {tests}", 16, true, false, err, sizeof err), -1);
  CHECK(strstr(err, "{tests}") != NULL && strstr(err, "reference") != NULL);
  CHECK_EQ(sq__prompt_template_check("{prompt} {task_id}", 18, true, false, err, sizeof err), 0);
  CHECK_EQ(sq__prompt_template_check("{prompt}\0x", 10, true, true, err, sizeof err), -1);
  CHECK(strstr(err, "NUL") != NULL);
  CHECK_EQ(check("{prompt} \xff", true, err), -1);
  CHECK(strstr(err, "UTF-8") != NULL);
  size_t big = SQ__PROMPT_TEMPLATE_MAX_BYTES + 1;
  char *t = malloc(big + 1);
  CHECK(t != NULL);
  if (!t) return;
  memset(t, 'a', big);
  memcpy(t, "{prompt}", 8);
  t[big] = '\0';
  CHECK_EQ(check(t, true, err), -1);
  CHECK(strstr(err, "larger than") != NULL);
  t[big - 1] = '\0';
  CHECK_EQ(check(t, true, err), 0);
  free(t);
}

static void test_render(void) {
  sq__prompt_fields f = {.prompt = "def add(a, b):\n", .tests = "assert add(1, 2) == 3\n", .entry_point = "add",
                         .task_id = "HumanEval/0"};
  char *s = sq__prompt_template_render("[{task_id}] {entry_point}: {prompt}--\n{tests}{{x}} }} {y} {", &f);
  CHECK_STR(s, "[HumanEval/0] add: def add(a, b):\n--\nassert add(1, 2) == 3\n{x} } {y} {");
  free(s);
  s = sq__prompt_template_render("{{{prompt}}}", &f); /* as Python's str.format reads it */
  CHECK_STR(s, "{def add(a, b):\n}");
  free(s);
  f.entry_point = NULL;
  s = sq__prompt_template_render("{prompt}{entry_point}", &f);
  CHECK_STR(s, "def add(a, b):\n");
  free(s);
}

int main(void) {
  test_check();
  test_render();
  return sq_check_done("test_prompt_template");
}
