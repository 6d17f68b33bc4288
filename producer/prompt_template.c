/* prompt_template.c: placeholders into a prompt (prompt_template.h). One
 * scanner serves the check and the rendering, so they agree on what is a
 * placeholder. */
#include "prompt_template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "util.h"

static const char *const names[] = {"prompt", "tests", "entry_point", "task_id"};
#define N_NAMES (sizeof names / sizeof names[0])
#define KNOWN "{prompt}, {tests}, {entry_point}, {task_id}"

static bool ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* At s[0] == '{': the length of a {name} placeholder (name: letters,
 * digits, _), else 0. */
static size_t placeholder_len(const char *s) {
  size_t n = 1;
  while (ident_char(s[n])) n++;
  return n > 1 && s[n] == '}' ? n + 1 : 0;
}

/* The index of the placeholder at s (length n) in names, or -1. */
static int name_index(const char *s, size_t n) {
  for (size_t i = 0; i < N_NAMES; i++)
    if (strlen(names[i]) == n - 2 && memcmp(s + 1, names[i], n - 2) == 0) return (int)i;
  return -1;
}

/* The index of the word s (length n, no braces) in names, or -1. */
static int name_index_word(const char *s, size_t n) {
  for (size_t i = 0; i < N_NAMES; i++)
    if (strlen(names[i]) == n && memcmp(s, names[i], n) == 0) return (int)i;
  return -1;
}

int sq__prompt_template_check(const char *text, size_t len, bool has_entry_point, bool has_tests, char *err,
                              size_t errlen) {
  if (len == 0 || !text[strspn(text, " \t\r\n")]) return snprintf(err, errlen, "is empty"), -1;
  if (len > SQ__PROMPT_TEMPLATE_MAX_BYTES)
    return snprintf(err, errlen, "is larger than %d bytes", SQ__PROMPT_TEMPLATE_MAX_BYTES), -1;
  if (memchr(text, '\0', len)) return snprintf(err, errlen, "holds a NUL character"), -1;
  if (!sq_utf8_clean(text, len)) return snprintf(err, errlen, "is not valid UTF-8"), -1;
  bool prompt = false;
  for (size_t i = 0; i < len; i++) {
    if (text[i] != '{' || (i + 1 < len && text[i + 1] == '{')) {
      i += text[i] == '{' || (text[i] == '}' && i + 1 < len && text[i + 1] == '}');
      continue;
    }
    size_t n = placeholder_len(text + i);
    if (!n) {
      /* {name with no } after it: a known name, or a word the line or the
       * text ends on, is a placeholder left open (it would be sent as
       * text in every prompt); other braces ({x y}, {'a': 1}) stay text. */
      size_t w = 1;
      while (i + w < len && ident_char(text[i + w])) w++;
      bool open_end = i + w == len || text[i + w] == '\n' || text[i + w] == '\r';
      if (w > 1 && (open_end || name_index_word(text + i + 1, w - 1) >= 0))
        return snprintf(err, errlen, "unclosed placeholder %.*s: a } is missing (known: " KNOWN "; {{ and }} for "
                        "literal braces)", (int)(w > 64 ? 64 : w), text + i), -1;
      continue;
    }
    int k = name_index(text + i, n);
    if (k < 0)
      return snprintf(err, errlen, "unknown placeholder %.*s (known: " KNOWN "; {{ and }} for literal braces)",
                      (int)(n > 64 ? 64 : n), text + i), -1;
    if (k == 2 && !has_entry_point)
      return snprintf(err, errlen, "{entry_point}: this dataset's problems have none (it is HumanEval's)"), -1;
    if (k == 1 && !has_tests)
      return snprintf(err, errlen, "{tests}: this dataset's tests are built around its reference solution, which a "
                      "prompt must not show"), -1;
    prompt = prompt || k == 0;
    i += n - 1;
  }
  if (!prompt) return snprintf(err, errlen, "does not use {prompt}: every task would ask the same thing"), -1;
  return 0;
}

char *sq__prompt_template_render(const char *tpl, const sq__prompt_fields *f) {
  const char *value[N_NAMES] = {f->prompt, f->tests, f->entry_point, f->task_id};
  sq_buf b = {0};
  int rc = sq_buf_append(&b, "", 0);
  for (const char *s = tpl; *s && !rc;) {
    size_t n = *s == '{' && s[1] != '{' ? placeholder_len(s) : 0;
    int k = n ? name_index(s, n) : -1;
    if (k >= 0) { /* a checked template has only known ones */
      rc = sq_buf_append(&b, value[k] ? value[k] : "", value[k] ? strlen(value[k]) : 0);
      s += n;
    } else if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
      rc = sq_buf_append(&b, s, 1);
      s += 2;
    } else {
      rc = sq_buf_append(&b, s, 1);
      s++;
    }
  }
  if (rc) {
    sq_buf_clear(&b);
    return NULL;
  }
  return b.data;
}
