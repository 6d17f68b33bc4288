/* extract.c: a program out of an LLM reply's text (markdown fences).
 *
 * Fences follow CommonMark loosely: a line of optional indentation then 3+
 * backticks or tildes opens a block, a line of the same character, at least
 * as long, closes it. Known limitation: the scanner does not understand the
 * language, so a line holding only ``` inside a multi-line string literal
 * closes the block early. */
#include "extract.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errors.h"
#include "util.h"

typedef enum { BLOCK_WANTED, BLOCK_BARE, BLOCK_OTHER } block_kind;

/* What models write after the fence for each language, by its wire name
 * (language.h); a name not listed is matched by itself alone. */
static const struct {
  const char *language;
  const char *words[6];
} fence_words[] = {
    {"python", {"python", "py", "python3", "py3"}},
    {"bash", {"bash", "sh", "shell", "zsh"}},
    {"javascript", {"javascript", "js", "node", "nodejs", "mjs"}},
    {"typescript", {"typescript", "ts"}},
    {"c", {"c", "h"}},
    {"cpp", {"cpp", "c++", "cxx", "cc", "hpp"}},
    {"go", {"go", "golang"}},
    {"rust", {"rust", "rs"}},
    {"java", {"java"}},
    {"ruby", {"ruby", "rb"}},
    {"php", {"php"}},
    {"lua", {"lua"}},
    {"perl", {"perl", "pl"}},
};

static bool word_is(const char *w, size_t n, const char *name) {
  return strlen(name) == n && strncasecmp(w, name, n) == 0;
}

/* Whether an info string's first word (w, n bytes) names language. */
static bool names_language(const char *w, size_t n, const char *language) {
  for (size_t i = 0; i < sizeof fence_words / sizeof fence_words[0]; i++) {
    if (strcmp(fence_words[i].language, language) != 0) continue;
    for (size_t k = 0; k < 6 && fence_words[i].words[k]; k++)
      if (word_is(w, n, fence_words[i].words[k])) return true;
    return false;
  }
  return word_is(w, n, language);
}

/* An open fence. */
typedef struct {
  char ch;       /* '`' or '~' */
  size_t len;    /* run length of the opening fence */
  size_t indent; /* spaces before it; stripped from body lines */
  block_kind kind;
} fence;

static bool is_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isspace((unsigned char)s[i])) return false;
  return true;
}

static size_t leading_spaces(const char *s, size_t n) {
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t'))
    i++;
  return i;
}

/* Length of the run of c at s (bounded by n). */
static size_t run_of(const char *s, size_t n, char c) {
  size_t i = 0;
  while (i < n && s[i] == c)
    i++;
  return i;
}

static block_kind classify(const char *info, size_t n, const char *language) {
  size_t i = leading_spaces(info, n);
  size_t start = i;
  while (i < n && !isspace((unsigned char)info[i]) && info[i] != '{' && info[i] != ':')
    i++;
  size_t wlen = i - start;
  if (wlen == 0) return BLOCK_BARE;
  return names_language(info + start, wlen, language) ? BLOCK_WANTED : BLOCK_OTHER;
}

/* Whether line (n bytes, no newline) opens a fence; fills f if so. */
static bool fence_opens(const char *line, size_t n, const char *language, fence *f) {
  size_t ind = leading_spaces(line, n);
  char ch = ind < n ? line[ind] : '\0';
  if (ch != '`' && ch != '~') return false;
  size_t run = run_of(line + ind, n - ind, ch);
  if (run < 3) return false;
  const char *info = line + ind + run;
  size_t info_len = n - ind - run;
  /* CommonMark: a backtick fence's info string holds no backtick, which
   * keeps inline ```code``` on one line from opening a block. */
  if (ch == '`' && memchr(info, '`', info_len)) return false;
  f->ch = ch;
  f->len = run;
  f->indent = ind;
  f->kind = classify(info, info_len, language);
  return true;
}

static bool fence_closes(const char *line, size_t n, const fence *f) {
  size_t ind = leading_spaces(line, n);
  size_t run = run_of(line + ind, n - ind, f->ch);
  return run >= f->len && is_blank(line + ind + run, n - ind - run);
}

/* Appends a finished block's body (trailing blank lines dropped, ending in
 * one newline) to dst unless it is blank. */
static int flush_block(sq_buf *dst, sq_buf *body) {
  int rc = 0;
  size_t n = body->len;
  while (n > 0 && (body->data[n - 1] == '\n' || body->data[n - 1] == ' ' || body->data[n - 1] == '\t'))
    n--;
  if (n > 0 && !is_blank(body->data, n)) {
    if (sq_buf_append(dst, body->data, n) != 0 || sq_buf_append(dst, "\n", 1) != 0) rc = SQ_ENOMEM;
  }
  body->len = 0;
  return rc;
}

/* content with CRLF and lone CR turned into LF, malloc'd; NULL on ENOMEM. */
static char *normalize_newlines(const char *content) {
  size_t n = strlen(content);
  char *s = malloc(n + 1);
  if (!s) return NULL;
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    if (content[i] != '\r') s[j++] = content[i];
    else if (content[i + 1] != '\n') s[j++] = '\n'; /* a lone CR ends a line too (old Mac) */
  }
  s[j] = '\0';
  return s;
}

int sq_extract_code(const char *content, const char *language, char **code, char *err, size_t errlen) {
  int rc = 0;
  sq_buf wanted = {0}, other = {0}, body = {0};
  char *text = NULL;
  if (!code || !language) return SQ_EINVAL;
  *code = NULL;
  if (!content || is_blank(content, strlen(content))) {
    snprintf(err, errlen, "empty reply");
    return SQ_ELLM_REPLY;
  }
  text = normalize_newlines(content);
  if (!text) {
    rc = SQ_ENOMEM;
    goto out;
  }

  bool in_block = false, any_fence = false;
  fence f = {0};
  for (const char *line = text; *line;) {
    const char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) : strlen(line);
    if (!in_block) {
      if (fence_opens(line, n, language, &f)) in_block = any_fence = true;
    } else if (fence_closes(line, n, &f)) {
      in_block = false;
      if ((rc = flush_block(f.kind == BLOCK_OTHER ? &other : &wanted, &body)) != 0) goto out;
    } else {
      size_t strip = leading_spaces(line, n);
      if (strip > f.indent) strip = f.indent;
      if (sq_buf_append(&body, line + strip, n - strip) != 0 || sq_buf_append(&body, "\n", 1) != 0) {
        rc = SQ_ENOMEM;
        goto out;
      }
    }
    line += n + (nl ? 1 : 0);
  }
  /* An unterminated fence runs to the end of the text. */
  if (in_block && (rc = flush_block(f.kind == BLOCK_OTHER ? &other : &wanted, &body)) != 0) goto out;

  if (!any_fence) {
    *code = text;
    text = NULL;
  } else if (wanted.len > 0) {
    *code = wanted.data;
    wanted.data = NULL;
  } else if (other.len > 0) {
    /* Only blocks tagged with another language: the model may have
     * mislabelled its code; running it lets the verdict say what it is. */
    *code = other.data;
    other.data = NULL;
  } else {
    snprintf(err, errlen, "empty code block");
    rc = SQ_ELLM_REPLY;
  }

out:
  if (rc == SQ_ENOMEM) snprintf(err, errlen, "out of memory");
  free(text);
  sq_buf_clear(&wanted);
  sq_buf_clear(&other);
  sq_buf_clear(&body);
  return rc;
}
