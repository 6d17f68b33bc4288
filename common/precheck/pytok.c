/* pytok.c: the Python 3.11 tokenizer of the static pre-check, and the walk
 * over an f-string's replacement fields. Linear in its input, no
 * allocation, no recursion except a bounded one for nested format specs. */
#include "pytok.h"

#include <string.h>

#define FSTRING_SPEC_LEVELS 4 /* Python allows 2; deeper garbage is skipped */

static bool is_alpha(unsigned char c) { return (unsigned)((c | 0x20) - 'a') < 26u; }
static bool is_digit(unsigned char c) { return (unsigned)(c - '0') < 10u; }
static bool is_name_start(unsigned char c) { return c == '_' || is_alpha(c) || c >= 0x80; }
static bool is_name_char(unsigned char c) { return is_name_start(c) || is_digit(c); }
static bool is_hex(unsigned char c) { return is_digit(c) || (unsigned)((c | 0x20) - 'a') < 6u; }
static bool is_eol(char c) { return c == '\n' || c == '\r'; }

const char *sq_pytok_kind_name(sq_tok_kind k) {
  switch (k) {
  case SQ_TOK_END: return "end";
  case SQ_TOK_NAME: return "name";
  case SQ_TOK_NUMBER: return "number";
  case SQ_TOK_STRING: return "string";
  case SQ_TOK_OP: return "op";
  case SQ_TOK_COMMENT: return "comment";
  case SQ_TOK_NEWLINE: return "newline";
  case SQ_TOK_NL: return "nl";
  case SQ_TOK_ERROR: return "error";
  }
  return "unknown";
}

void sq_pytok_init_at(sq_pytok *t, const char *src, size_t len, int line, int col) {
  memset(t, 0, sizeof *t);
  t->p = src;
  t->end = src + len;
  t->line_start = src;
  t->line = line > 0 ? line : 1;
  t->col0 = col > 1 ? col - 1 : 0;
  t->at_bol = col <= 1;
}

void sq_pytok_init(sq_pytok *t, const char *src, size_t len) { sq_pytok_init_at(t, src, len, 1, 1); }

/* Consumes the line break at *pp ("\n", "\r\n" or "\r") and starts a line. */
static void take_eol(sq_pytok *t, const char **pp) {
  const char *p = *pp;
  if (*p == '\r' && p + 1 < t->end && p[1] == '\n') p++;
  p++;
  t->line++;
  t->line_start = p;
  t->col0 = 0;
  *pp = p;
}

static void begin(const sq_pytok *t, sq_token *tok, sq_tok_kind kind) {
  memset(tok, 0, sizeof *tok);
  tok->kind = kind;
  tok->text = t->p;
  tok->line = t->line;
  tok->col = (int)(t->p - t->line_start) + 1 + t->col0;
  tok->depth = t->depth;
  tok->indent = t->indent;
}

static sq_tok_kind finish(sq_pytok *t, sq_token *tok, const char *end) {
  tok->len = (size_t)(end - tok->text);
  t->p = end;
  return tok->kind;
}

static sq_tok_kind fail(sq_pytok *t, sq_token *tok, const char *end, const char *why) {
  tok->kind = SQ_TOK_ERROR;
  tok->error = why;
  return finish(t, tok, end);
}

/* Flags of a string prefix of n bytes at s, or -1 when it is not one. */
static int prefix_flags(const char *s, size_t n) {
  unsigned f = 0;
  if (n > 2) return -1;
  for (size_t i = 0; i < n; i++) {
    unsigned bit;
    switch (s[i] | 0x20) {
    case 'r': bit = SQ_STR_RAW; break;
    case 'b': bit = SQ_STR_BYTES; break;
    case 'f': bit = SQ_STR_F; break;
    case 'u': bit = 16; break;
    default: return -1;
    }
    if (f & bit) return -1;
    f |= bit;
  }
  /* u combines with nothing; b not with f */
  if ((f & 16) && n > 1) return -1;
  if ((f & SQ_STR_BYTES) && (f & SQ_STR_F)) return -1;
  return (int)(f & ~16u);
}

/* A string whose opening quote is at q (prefix already in tok->text). */
static sq_tok_kind scan_string(sq_pytok *t, sq_token *tok, const char *q, unsigned flags) {
  char quote = *q;
  bool triple = q + 2 < t->end && q[1] == quote && q[2] == quote;
  const char *p = q + (triple ? 3 : 1);
  tok->kind = SQ_TOK_STRING;
  tok->str_flags = flags | (triple ? SQ_STR_TRIPLE : 0);
  tok->body = p;
  while (p < t->end) {
    char c = *p;
    if (c == '\\') {
      p++;
      if (p < t->end && is_eol(*p)) take_eol(t, &p);
      else if (p < t->end) p++;
      continue;
    }
    if (c == quote && (!triple || (p + 2 < t->end && p[1] == quote && p[2] == quote))) {
      tok->body_len = (size_t)(p - tok->body);
      return finish(t, tok, p + (triple ? 3 : 1));
    }
    if (is_eol(c)) {
      if (!triple) {
        tok->body_len = (size_t)(p - tok->body);
        return fail(t, tok, p, "unterminated string");
      }
      take_eol(t, &p);
      continue;
    }
    p++;
  }
  tok->body_len = (size_t)(p - tok->body);
  return fail(t, tok, p, triple ? "unterminated triple-quoted string" : "unterminated string");
}

static const char *scan_number(const char *p, const char *end) {
  if (*p == '0' && p + 1 < end && p[1] && strchr("xXoObB", p[1])) {
    p += 2;
    while (p < end && (is_hex((unsigned char)*p) || *p == '_')) p++;
    return p;
  }
  while (p < end && (is_digit((unsigned char)*p) || *p == '_')) p++;
  if (p < end && *p == '.') {
    p++;
    while (p < end && (is_digit((unsigned char)*p) || *p == '_')) p++;
  }
  if (p < end && (*p | 0x20) == 'e') {
    const char *e = p + 1;
    if (e < end && (*e == '+' || *e == '-')) e++;
    if (e < end && is_digit((unsigned char)*e)) {
      p = e;
      while (p < end && (is_digit((unsigned char)*p) || *p == '_')) p++;
    }
  }
  if (p < end && (*p | 0x20) == 'j') p++;
  return p;
}

static size_t op_len(const char *p, const char *end) {
  static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", "..."};
  static const char *const ops2[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=",
                                     "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="};
  size_t room = (size_t)(end - p);
  for (size_t i = 0; room >= 3 && i < sizeof ops3 / sizeof *ops3; i++)
    if (memcmp(p, ops3[i], 3) == 0) return 3;
  for (size_t i = 0; room >= 2 && i < sizeof ops2 / sizeof *ops2; i++)
    if (memcmp(p, ops2[i], 2) == 0) return 2;
  return *p && strchr("()[]{},:;.+-*/%&|^~<>=@!", *p) ? 1 : 0;
}

sq_tok_kind sq_pytok_next(sq_pytok *t, sq_token *tok) {
  for (;;) {
    if (t->at_bol) {
      int col = 0;
      while (t->p < t->end && (*t->p == ' ' || *t->p == '\t' || *t->p == '\f')) {
        col = *t->p == ' ' ? col + 1 : *t->p == '\t' ? (col / 8 + 1) * 8 : 0;
        t->p++;
      }
      t->bol_indent = col;
      t->at_bol = false;
    }
    while (t->p < t->end && (*t->p == ' ' || *t->p == '\t' || *t->p == '\f')) t->p++;
    if (t->p >= t->end) {
      begin(t, tok, t->line_has_tokens ? SQ_TOK_NEWLINE : SQ_TOK_END);
      t->line_has_tokens = false;
      return tok->kind;
    }
    const char *p = t->p;
    unsigned char c = (unsigned char)*p;
    if (is_eol((char)c)) {
      bool logical = t->depth == 0 && t->line_has_tokens;
      begin(t, tok, logical ? SQ_TOK_NEWLINE : SQ_TOK_NL);
      take_eol(t, &p);
      if (logical) t->line_has_tokens = false;
      t->at_bol = t->depth == 0 && !t->line_has_tokens;
      return finish(t, tok, p);
    }
    if (c == '#') {
      begin(t, tok, SQ_TOK_COMMENT);
      while (p < t->end && !is_eol(*p)) p++;
      return finish(t, tok, p);
    }
    if (c == '\\') {
      if (p + 1 < t->end && is_eol(p[1])) { /* explicit continuation: no token */
        p++;
        take_eol(t, &p);
        t->p = p;
        continue;
      }
      begin(t, tok, SQ_TOK_ERROR);
      return fail(t, tok, p + 1, "stray backslash");
    }

    /* a significant token: the first one fixes the logical line's indent */
    if (!t->line_has_tokens) t->indent = t->bol_indent;
    begin(t, tok, SQ_TOK_NAME);
    tok->first = !t->line_has_tokens;
    t->line_has_tokens = true;

    if (is_name_start(c)) {
      const char *e = p;
      while (e < t->end && is_name_char((unsigned char)*e)) e++;
      int flags = e < t->end && (*e == '\'' || *e == '"') ? prefix_flags(p, (size_t)(e - p)) : -1;
      if (flags >= 0) return scan_string(t, tok, e, (unsigned)flags);
      return finish(t, tok, e);
    }
    if (c == '\'' || c == '"') return scan_string(t, tok, p, 0);
    if (is_digit(c) || (c == '.' && p + 1 < t->end && is_digit((unsigned char)p[1]))) {
      tok->kind = SQ_TOK_NUMBER;
      return finish(t, tok, scan_number(p, t->end));
    }
    size_t n = op_len(p, t->end);
    if (n == 0) return fail(t, tok, p + 1, "unexpected character");
    tok->kind = SQ_TOK_OP;
    if (n == 1 && strchr("([{", c)) t->depth++;
    else if (n == 1 && strchr(")]}", c) && t->depth > 0) t->depth--;
    return finish(t, tok, p + n);
  }
}

/* ---- f-string replacement fields ---- */

typedef struct {
  const char *b;        /* the body */
  size_t n;
  const char *at;       /* position tracker: where line/col were last computed */
  int line, col;
  sq_pytok_field_fn fn;
  void *ctx;
  int rc;
} fscan;

/* Advances the tracker to b + i (positions only move forward). */
static void track(fscan *s, size_t i) {
  const char *to = s->b + i;
  for (; s->at < to; s->at++) {
    if (*s->at == '\n' || (*s->at == '\r' && (s->at + 1 >= to || s->at[1] != '\n'))) {
      s->line++;
      s->col = 1;
    } else if (*s->at != '\r') {
      s->col++;
    }
  }
}

/* Index just past the string literal that opens at i, or n. */
static size_t skip_str(const char *b, size_t n, size_t i) {
  char q = b[i];
  bool triple = i + 2 < n && b[i + 1] == q && b[i + 2] == q;
  for (i += triple ? 3 : 1; i < n; i++) {
    if (b[i] == '\\') {
      i++;
      continue;
    }
    if (b[i] == q && (!triple || (i + 2 < n && b[i + 1] == q && b[i + 2] == q))) return i + (triple ? 3 : 1);
  }
  return n;
}

/* One field whose '{' is just before i; returns the index past its '}'. */
static size_t field(fscan *s, size_t i, int level) {
  const char *b = s->b;
  size_t n = s->n, start = i;
  int depth = 0;
  while (i < n) {
    char c = b[i];
    if (c == '\'' || c == '"') {
      i = skip_str(b, n, i);
      continue;
    }
    if (c == '(' || c == '[' || c == '{') depth++;
    else if ((c == ')' || c == ']') && depth > 0) depth--;
    else if (c == '}') {
      if (depth == 0) break;
      depth--;
    } else if (depth == 0 && (c == ':' || (c == '!' && (i + 1 >= n || b[i + 1] != '=')))) break;
    i++;
  }
  if (s->rc == 0 && i > start) {
    track(s, start);
    s->rc = s->fn(s->ctx, b + start, i - start, s->line, s->col);
  }
  if (i < n && b[i] == '!')
    while (i < n && b[i] != ':' && b[i] != '}') i++;
  if (i < n && b[i] == ':') {
    i++;
    while (i < n && b[i] != '}') {
      if (b[i] == '{' && level < FSTRING_SPEC_LEVELS) i = field(s, i + 1, level + 1);
      else i++;
    }
  }
  return i < n ? i + 1 : n;
}

int sq_pytok_fstring_fields(const sq_token *tok, sq_pytok_field_fn fn, void *ctx) {
  if (tok->kind != SQ_TOK_STRING || !(tok->str_flags & SQ_STR_F) || !tok->body) return 0;
  fscan s = {.b = tok->body, .n = tok->body_len, .at = tok->text, .line = tok->line, .col = tok->col,
             .fn = fn, .ctx = ctx};
  bool raw = tok->str_flags & SQ_STR_RAW;
  size_t i = 0;
  while (i < s.n && s.rc == 0) {
    char c = s.b[i];
    if (c == '\\' && !raw && i + 1 < s.n) {
      if (s.b[i + 1] == 'N' && i + 2 < s.n && s.b[i + 2] == '{') {
        const char *close = memchr(s.b + i, '}', s.n - i);
        i = close ? (size_t)(close - s.b) + 1 : s.n;
      } else {
        i += s.b[i + 1] == '{' || s.b[i + 1] == '}' ? 1 : 2;
      }
    } else if (c == '{' || c == '}') {
      if (i + 1 < s.n && s.b[i + 1] == c) i += 2; /* '{{' and '}}' are literal */
      else if (c == '{') i = field(&s, i + 1, 0);
      else i++;
    } else {
      i++;
    }
  }
  return s.rc;
}
