/* pytok.h: a Python 3.11 tokenizer for the static pre-check: names,
 * numbers, strings of every prefix (f-strings whole, as 3.11 does), comments,
 * operators, logical and physical line ends, explicit and implicit line
 * continuation.
 *
 * It never allocates, never fails and never loops: every call to
 * sq_pytok_next consumes at least one byte or returns SQ_TOK_END, and bytes
 * that are not Python come back as SQ_TOK_ERROR tokens, so any input (also
 * arbitrary bytes) tokenizes in time linear in its length. */
#ifndef SQ_PYTOK_H
#define SQ_PYTOK_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
  SQ_TOK_END = 0, /* end of input; returned again on every later call */
  SQ_TOK_NAME,    /* identifier or keyword (bytes >= 0x80 count as letters) */
  SQ_TOK_NUMBER,
  SQ_TOK_STRING,  /* a whole string literal, prefix and quotes included */
  SQ_TOK_OP,      /* operator or delimiter, longest match */
  SQ_TOK_COMMENT, /* from '#' to the end of the line, newline excluded */
  SQ_TOK_NEWLINE, /* end of a logical line */
  SQ_TOK_NL,      /* a line break inside brackets, or of a blank/comment line */
  SQ_TOK_ERROR,   /* bytes that are not Python; error says why */
} sq_tok_kind;

/* String prefix and shape flags (sq_token.str_flags). */
#define SQ_STR_RAW 1u
#define SQ_STR_BYTES 2u
#define SQ_STR_F 4u
#define SQ_STR_TRIPLE 8u

typedef struct {
  sq_tok_kind kind;
  const char *text; /* borrowed from the source; len bytes, not NUL-terminated */
  size_t len;
  int line, col;    /* 1-based, col in bytes */
  int depth;        /* bracket nesting before this token */
  int indent;       /* indentation (columns, tabs to multiples of 8) of its logical line */
  bool first;       /* first token of its logical line */
  unsigned str_flags;   /* SQ_STR_* for SQ_TOK_STRING */
  const char *body;     /* SQ_TOK_STRING: between the quotes */
  size_t body_len;
  const char *error;    /* SQ_TOK_ERROR: a static message */
} sq_token;

/* Tokenizer state; plain data, no resources (nothing to free). */
typedef struct {
  const char *p, *end;
  const char *line_start; /* where column 1 of the current line is */
  int line;
  int col0;               /* extra columns of the first line (sub-ranges) */
  int depth;
  int indent;             /* of the current logical line */
  int bol_indent;         /* measured at the start of the current physical line */
  bool at_bol;            /* at the start of a physical line that starts a logical one */
  bool line_has_tokens;   /* the current logical line has a significant token */
  bool continued;         /* the previous line ended with a backslash */
} sq_pytok;

/* Starts tokenizing src (len bytes, borrowed for the tokenizer's life). */
void sq_pytok_init(sq_pytok *t, const char *src, size_t len);
/* Same, for a piece of a larger source that starts at line/col (1-based). */
void sq_pytok_init_at(sq_pytok *t, const char *src, size_t len, int line, int col);

/* Fills tok with the next token and returns its kind. Never fails. */
sq_tok_kind sq_pytok_next(sq_pytok *t, sq_token *tok);

/* Stable lower-case name of a kind ("name", "string", ...); never NULL. */
const char *sq_pytok_kind_name(sq_tok_kind k);

/* Called for each replacement-field expression of an f-string, format-spec
 * fields included: expr/len point into the token's text, line/col where it
 * starts. A non-zero return stops the walk and is returned. */
typedef int (*sq_pytok_field_fn)(void *ctx, const char *expr, size_t len, int line, int col);

/* Walks the replacement fields of an f-string token by Python 3.11 rules
 * ('{{' and '}}' are literal, '\N{...}' is an escape outside raw strings,
 * nested brackets and strings in the expression, '!r' conversions, ':'
 * format specs with nested fields). Returns 0 at once for other tokens. */
int sq_pytok_fstring_fields(const sq_token *tok, sq_pytok_field_fn fn, void *ctx);

#endif
