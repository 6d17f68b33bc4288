/* test_pytok.c: the pre-check's tokenizer: every token kind, strings of
 * every prefix, f-string fields, continuation lines, positions, and a
 * deterministic random-input run proving it never crashes or loops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pytok.h"

#define MAX_TOKS 256

typedef struct {
  sq_token t[MAX_TOKS];
  int n;
} toks;

/* Tokenizes src fully; comments and NL kept. */
static void lex(const char *src, toks *out) {
  sq_pytok tz;
  sq_pytok_init(&tz, src, strlen(src));
  out->n = 0;
  while (out->n < MAX_TOKS && sq_pytok_next(&tz, &out->t[out->n]) != SQ_TOK_END) out->n++;
}

static char text_buf[4096];
static const char *text(const sq_token *t) {
  snprintf(text_buf, sizeof text_buf, "%.*s", (int)t->len, t->text);
  return text_buf;
}

/* "kind:text kind:text ..." of src, NEWLINE/NL as just their kind. */
static char shape_buf[8192];
static const char *shape(const char *src) {
  toks ts;
  lex(src, &ts);
  size_t n = 0;
  shape_buf[0] = '\0';
  for (int i = 0; i < ts.n && n < sizeof shape_buf; i++) {
    const sq_token *t = &ts.t[i];
    if (t->kind == SQ_TOK_NEWLINE || t->kind == SQ_TOK_NL)
      n += (size_t)snprintf(shape_buf + n, sizeof shape_buf - n, "%s%s", i ? " " : "", sq_pytok_kind_name(t->kind));
    else
      n += (size_t)snprintf(shape_buf + n, sizeof shape_buf - n, "%s%s:%.*s", i ? " " : "",
                            sq_pytok_kind_name(t->kind), (int)t->len, t->text);
  }
  return shape_buf;
}

/* Collects f-string fields as "expr@line:col|..." */
static char fields_buf[1024];
static int collect(void *ctx, const char *expr, size_t len, int line, int col) {
  size_t n = strlen(fields_buf);
  snprintf(fields_buf + n, sizeof fields_buf - n, "%.*s@%d:%d|", (int)len, expr, line, col);
  return ctx ? 1 : 0;
}
static const char *fields(const char *src) {
  toks ts;
  lex(src, &ts);
  fields_buf[0] = '\0';
  for (int i = 0; i < ts.n; i++) sq_pytok_fstring_fields(&ts.t[i], collect, NULL);
  return fields_buf;
}

static void test_kinds(void) {
  CHECK_STR(shape("x = 1\n"), "name:x op:= number:1 newline");
  CHECK_STR(shape("a.b(c, *d, **e)  # hi\n"),
            "name:a op:. name:b op:( name:c op:, op:* name:d op:, op:** name:e op:) comment:# hi newline");
  CHECK_STR(shape("x //= 2 ** -3 >>= y := z -> ... != @ @="),
            "name:x op://= number:2 op:** op:- number:3 op:>>= name:y op::= name:z op:-> op:... op:!= op:@ op:@= "
            "newline");
  CHECK_STR(shape("0x1F 0o17 0b1_0 1_000.5e-3 .5 1e10j 3J 7."),
            "number:0x1F number:0o17 number:0b1_0 number:1_000.5e-3 number:.5 number:1e10j number:3J number:7. "
            "newline");
  CHECK_STR(shape("\n# only a comment\n\nx\n"), "nl comment:# only a comment nl nl name:x newline");
  CHECK_STR(shape("$ ?"), "error:$ error:? newline");
  CHECK_STR(shape("é_ñ = 1"), "name:é_ñ op:= number:1 newline");
  CHECK_STR(shape(""), "");
  CHECK_STR(shape("x"), "name:x newline"); /* NEWLINE at the end without a line break */
  CHECK_STR(shape("a\r\nb\rc"), "name:a newline name:b newline name:c newline");
}

static void test_strings(void) {
  /* every prefix, either case; the keyword-looking names are not names */
  const char *prefixed[] = {"r'a'", "u'a'", "R'a'", "b'a'", "B'a'", "br'a'", "Rb'a'", "rB'a'", "f'a'",
                            "F'a'", "fr'a'", "Rf'a'", "fR'a'", "U\"a\""};
  for (size_t i = 0; i < sizeof prefixed / sizeof *prefixed; i++) {
    toks ts;
    lex(prefixed[i], &ts);
    CHECK_EQ(ts.t[0].kind, SQ_TOK_STRING);
    CHECK_EQ(ts.t[0].len, strlen(prefixed[i]));
    CHECK_EQ(ts.t[0].body_len, 1);
  }
  toks ts;
  lex("rb'x' f'y' b'z' r'w'", &ts);
  CHECK_EQ(ts.t[0].str_flags, SQ_STR_RAW | SQ_STR_BYTES);
  CHECK_EQ(ts.t[1].str_flags, SQ_STR_F);
  CHECK_EQ(ts.t[2].str_flags, SQ_STR_BYTES);
  CHECK_EQ(ts.t[3].str_flags, SQ_STR_RAW);
  /* not prefixes: a name followed by a string */
  CHECK_STR(shape("ub'x'"), "name:ub string:'x' newline");
  CHECK_STR(shape("bf'x'"), "name:bf string:'x' newline");
  CHECK_STR(shape("rr'x'"), "name:rr string:'x' newline");
  /* escapes, raw quotes, quotes of the other kind */
  CHECK_STR(shape("'it\\'s' \"a'b\" r'\\'' 'import os'"),
            "string:'it\\'s' string:\"a'b\" string:r'\\'' string:'import os' newline");
  /* triple quotes over lines, with quotes inside; positions after them */
  lex("s = '''one ' two ''\nimport os\n''' ; eval\n\"\"\"x\"\"\"\n", &ts);
  CHECK_EQ(ts.t[2].kind, SQ_TOK_STRING);
  CHECK(ts.t[2].str_flags & SQ_STR_TRIPLE);
  CHECK_STR(text(&ts.t[4]), "eval");
  CHECK_EQ(ts.t[4].line, 3);
  CHECK_EQ(ts.t[4].col, 7);
  CHECK_EQ(ts.t[6].kind, SQ_TOK_STRING);
  CHECK_EQ(ts.t[6].line, 4);
  /* a backslash-newline inside a single-quoted string continues it */
  CHECK_STR(shape("'a\\\nb' c"), "string:'a\\\nb' name:c newline");
  /* unterminated: an error token, then tokenizing goes on */
  CHECK_STR(shape("'abc\nx"), "error:'abc newline name:x newline");
  CHECK_STR(shape("'''abc\nx"), "error:'''abc\nx newline");
  /* 3.11 tokenizes an f-string like any string: a bad field is the parser's business */
  CHECK_STR(shape("f'{x'"), "string:f'{x' newline");
}

static void test_fstrings(void) {
  CHECK_STR(fields("f'a {x} b {{lit}} {y!r} {z:>{w}} {q=}'"), "x@1:6|y@1:20|z@1:26|w@1:30|q=@1:35|");
  /* 3.11: nested quotes of the other kind, nested brackets, dicts and strings holding braces */
  CHECK_STR(fields("f\"{d['k']} {[1, {2: 3}][0]} {'}'} {a != b}\""),
            "d['k']@1:4|[1, {2: 3}][0]@1:13|'}'@1:30|a != b@1:36|");
  CHECK_STR(fields("f'{(lambda v: v)(1)}'"), "(lambda v: v)(1)@1:4|");
  /* \\N{...} is an escape outside raw strings, a field inside them */
  CHECK_STR(fields("f'\\N{BULLET} {x}' rf'\\N{y}'"), "x@1:15|y@1:25|");
  /* a literal backslash before a field */
  CHECK_STR(fields("f'\\\\{x}'"), "x@1:6|");
  /* triple-quoted f-string: positions on later lines */
  CHECK_STR(fields("x = f'''\n  {a}\n{b:{c}}'''"), "a@2:4|b@3:2|c@3:5|");
  /* a nested f-string of the other quote is one field; its own fields come from tokenizing it */
  CHECK_STR(fields("f'{f\"{inner}\"}'"), "f\"{inner}\"@1:4|");
  /* non f-strings have no fields; a callback's non-zero return stops the walk */
  CHECK_STR(fields("'{x}' b'{y}'"), "");
  toks ts;
  lex("f'{a}{b}'", &ts);
  fields_buf[0] = '\0';
  CHECK_EQ(sq_pytok_fstring_fields(&ts.t[0], collect, (void *)1), 1);
  CHECK_STR(fields_buf, "a@1:4|");
}

static void test_lines(void) {
  /* implicit continuation: NL inside brackets, one logical line */
  toks ts;
  lex("x = (1,\n     2)\ny\n", &ts);
  CHECK_STR(shape("x = (1,\n     2)\ny\n"),
            "name:x op:= op:( number:1 op:, nl number:2 op:) newline name:y newline");
  CHECK_EQ(ts.t[5].kind, SQ_TOK_NL);
  CHECK_EQ(ts.t[6].depth, 1);
  CHECK(!ts.t[6].first);
  CHECK(ts.t[9].first);
  /* explicit continuation: no token at all */
  CHECK_STR(shape("a = 1 + \\\n    2\n"), "name:a op:= number:1 op:+ number:2 newline");
  CHECK_STR(shape("a \\ b"), "name:a error:\\ name:b newline");
  /* indentation of logical lines; tabs to multiples of 8; blank lines ignored */
  lex("if x:\n    y\n\n  # c\n\tz\nw\n", &ts);
  int seen = 0;
  for (int i = 0; i < ts.n; i++) {
    const sq_token *t = &ts.t[i];
    if (t->kind != SQ_TOK_NAME) continue;
    if (!strcmp(text(t), "if")) {
      CHECK_EQ(t->indent, 0);
      seen++;
    } else if (!strcmp(text(t), "y")) {
      CHECK_EQ(t->indent, 4);
      CHECK(t->first);
      seen++;
    } else if (!strcmp(text(t), "z")) {
      CHECK_EQ(t->indent, 8);
      seen++;
    } else if (!strcmp(text(t), "w")) {
      CHECK_EQ(t->indent, 0);
      CHECK_EQ(t->line, 6);
      CHECK_EQ(t->col, 1);
      seen++;
    }
  }
  CHECK_EQ(seen, 4);
  /* a sub-range starts at the given position */
  sq_pytok tz;
  sq_token t;
  sq_pytok_init_at(&tz, "a.b", 3, 7, 12);
  sq_pytok_next(&tz, &t);
  sq_pytok_next(&tz, &t);
  sq_pytok_next(&tz, &t);
  CHECK_EQ(t.line, 7);
  CHECK_EQ(t.col, 14);
}

/* Tokenizes buf and checks progress: never more tokens than bytes + lines
 * + 2 (each NEWLINE at the end is zero-length), every token inside buf,
 * END sticky. */
static void robust(const char *buf, size_t len) {
  sq_pytok tz;
  sq_token t;
  sq_pytok_init(&tz, buf, len);
  size_t n = 0, limit = 2 * len + 4;
  while (sq_pytok_next(&tz, &t) != SQ_TOK_END && n <= limit) {
    if (t.text < buf || t.text + t.len > buf + len) {
      CHECK(!"token outside the input");
      return;
    }
    n++;
    sq_pytok_fstring_fields(&t, collect, NULL);
    fields_buf[0] = '\0';
  }
  CHECK(n <= limit);
  CHECK_EQ(sq_pytok_next(&tz, &t), SQ_TOK_END);
}

static void test_random(void) {
  static const char *const pieces[] = {"f'", "'''", "\"", "{", "}", "\\", "\n", "(", ")", "rb", "#", "'", "\\N{",
                                       "{{", "!r", ":", "\t", "\r", "x", "1e", "0x", "\"\"\"", "[", "]", "fr\"",
                                       " ", "import", "while True:", "\x00", "\xff"};
  unsigned seed = 12345;
  char buf[512];
  for (int iter = 0; iter < 20000; iter++) {
    size_t len = 0;
    int mode = iter % 2;
    while (len < sizeof buf - 16) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 8;
      if (r % 97 == 0) break;
      if (mode == 0) {
        buf[len++] = (char)(r & 0xff);
      } else {
        const char *p = pieces[r % (sizeof pieces / sizeof *pieces)];
        size_t pl = strlen(p) ? strlen(p) : 1;
        memcpy(buf + len, p, pl);
        len += pl;
      }
    }
    robust(buf, len);
  }
}

int main(void) {
  test_kinds();
  test_strings();
  test_fstrings();
  test_lines();
  test_random();
  return sq_check_done("test_pytok");
}
