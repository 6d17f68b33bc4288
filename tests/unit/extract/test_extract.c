/* test_extract.c: sq_extract_code over a table of reply shapes, in Python
 * and in the other languages a task may ask for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "extract.h"

typedef struct {
  const char *name;
  const char *content;
  int want_rc;
  const char *want; /* the code on success, a substring of err on failure */
} reply_case;

static const reply_case cases[] = {
    {"python fence with prose", "Sure! Here it is:\n```python\nprint(1)\n```\nHope it helps.", 0,
     "print(1)\n"},
    {"py tag", "```py\nx = 2\nprint(x)\n```", 0, "x = 2\nprint(x)\n"},
    {"python3 tag, upper case", "```Python3\nprint(3)\n```", 0, "print(3)\n"},
    {"bare fence", "```\nprint('bare')\n```", 0, "print('bare')\n"},
    {"tilde fence", "~~~python\nprint('tilde')\n~~~\n", 0, "print('tilde')\n"},
    {"info string after the tag", "```python title=main.py\nprint(4)\n```", 0, "print(4)\n"},
    {"several blocks joined in order",
     "First:\n```python\nimport sys\n```\nThen:\n```python\nprint(sys.argv)\n```\nDone.", 0,
     "import sys\nprint(sys.argv)\n"},
    {"python and bare blocks both kept", "```python\na = 1\n```\n```\nprint(a)\n```", 0, "a = 1\nprint(a)\n"},
    {"other languages skipped when python exists",
     "Install:\n```bash\npip install nothing\n```\n```python\nprint(5)\n```\n```text\noutput: 5\n```", 0,
     "print(5)\n"},
    {"only another language: taken as a fallback", "```text\nprint(6)\n```", 0, "print(6)\n"},
    {"lone CR ends a line", "```python\rprint(1)\r```\r", 0, "print(1)\n"},
    {"CRLF becomes LF", "```python\r\nif True:\r\n    print(7)\r\n```\r\n", 0, "if True:\n    print(7)\n"},
    {"unterminated fence runs to the end", "Here:\n```python\nprint(8)\nprint(9)", 0, "print(8)\nprint(9)\n"},
    {"fence indented by spaces, body de-indented",
     "1. Run this:\n   ```python\n   def f():\n       return 10\n   print(f())\n   ```\n", 0,
     "def f():\n    return 10\nprint(f())\n"},
    {"longer closing fence closes", "````python\nprint(11)\n`````\nafter", 0, "print(11)\n"},
    {"shorter backtick run inside a 4-tick fence is body", "````python\ns = '''\n```\n'''\nprint(s)\n````", 0,
     "s = '''\n```\n'''\nprint(s)\n"},
    {"tilde fence holds backtick lines", "~~~python\nprint('```')\n```\nx = 1\n~~~", 0,
     "print('```')\n```\nx = 1\n"},
    {"inline triple backticks are not a fence", "Use ```print(12)``` like that", 0,
     "Use ```print(12)``` like that"},
    {"no fence: whole text", "print(13)\nprint(14)\n", 0, "print(13)\nprint(14)\n"},
    {"no fence, CRLF normalised", "print(15)\r\n", 0, "print(15)\n"},
    {"trailing blank lines of a block dropped", "```python\nprint(16)\n\n\n```", 0, "print(16)\n"},
    {"empty blocks skipped among full ones", "```python\n```\n```python\nprint(17)\n```", 0, "print(17)\n"},
    {"empty reply", "", SQ_ELLM_REPLY, "empty reply"},
    {"blank reply", "  \n\t\r\n ", SQ_ELLM_REPLY, "empty reply"},
    {"empty code block", "```python\n```", SQ_ELLM_REPLY, "empty code block"},
    {"blank code block", "```python\n   \n\n```\n", SQ_ELLM_REPLY, "empty code block"},
    {"empty block with prose around", "Here you go:\n```\n```\nThat is all.", SQ_ELLM_REPLY,
     "empty code block"},
    {"unterminated empty fence", "```python\n", SQ_ELLM_REPLY, "empty code block"},
    /* Accepted limitation: the scanner does not parse Python, so a bare ```
     * line inside a triple-quoted string in a 3-tick fence ends the block. */
    {"``` inside a python string closes the block (limitation)",
     "```python\ns = \"\"\"\n```\n\"\"\"\nprint(s)\n```", 0, "s = \"\"\"\n"},
};

/* Other languages: their own blocks win over a Python one. */
static const struct {
  const char *language, *name, *content, *want;
} lang_cases[] = {
    {"javascript", "js tag, python block skipped", "```python\nprint(1)\n```\n```js\nconsole.log(1);\n```",
     "console.log(1);\n"},
    {"cpp", "c++ tag", "```C++\nint main() {}\n```", "int main() {}\n"},
    {"bash", "shell tag, bare block kept", "```shell\necho a\n```\n```\necho b\n```", "echo a\necho b\n"},
    {"go", "golang tag", "```golang\npackage main\n```", "package main\n"},
    {"c", "a cpp block is another language", "```cpp\nint x;\n```\n```c\nint y;\n```", "int y;\n"},
    {"rust", "only a python block: the fallback", "```python\nprint(2)\n```", "print(2)\n"},
    {"cobol", "no usual spellings: its name", "```cobol\nX\n```\n```text\nY\n```", "X\n"},
};

int main(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const reply_case *c = &cases[i];
    char *code = NULL;
    char err[128] = "";
    int rc = sq_extract_code(c->content, "python", &code, err, sizeof err);
    if (rc != c->want_rc || (rc == 0 ? !code || strcmp(code, c->want) != 0 : !strstr(err, c->want)))
      fprintf(stderr, "case '%s':\n", c->name);
    CHECK_EQ(rc, c->want_rc);
    if (c->want_rc == 0) {
      CHECK_STR(code, c->want);
    } else {
      CHECK(code == NULL);
      CHECK_CONTAINS(err, c->want);
    }
    free(code);
  }

  for (size_t i = 0; i < sizeof lang_cases / sizeof lang_cases[0]; i++) {
    char *code = NULL;
    char err[128] = "";
    int rc = sq_extract_code(lang_cases[i].content, lang_cases[i].language, &code, err, sizeof err);
    if (rc != 0 || !code || strcmp(code, lang_cases[i].want) != 0)
      fprintf(stderr, "case %s, '%s':\n", lang_cases[i].language, lang_cases[i].name);
    CHECK_EQ(rc, 0);
    CHECK_STR(code, lang_cases[i].want);
    free(code);
  }

  /* NULL content is an empty reply, not a crash. */
  char *code = (char *)"untouched";
  char err[64] = "";
  CHECK_EQ(sq_extract_code(NULL, "python", &code, err, sizeof err), SQ_ELLM_REPLY);
  CHECK(code == NULL);
  CHECK_CONTAINS(err, "empty reply");
  CHECK_EQ(sq_extract_code("x", NULL, &code, err, sizeof err), SQ_EINVAL);
  return sq_check_done("test_extract");
}
