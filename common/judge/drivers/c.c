/* c.c: the record writer of the C judge (calls.h), placed before the
 * candidate's code. __sq_emit(i, v) writes "\x1esandq-call I TEXT\n", TEXT
 * v's canonical encoding (docs/formats.md, "Call results"), chosen by v's
 * type with _Generic. As C's == does, _Bool and char are integers (true is
 * 1, 'a' is 97); a char pointer is its string (a NULL one null), compared
 * by content where == would compare addresses; any other type (a struct,
 * another pointer) writes "!type", never equal to a value's text. Only
 * <stdio.h> is included: a candidate's own read() or floor() must not clash
 * with a header the tests alone brought in. */
#include <stdio.h>

/* Starts record i; __sq_end finishes and flushes it, so a later exit or
 * crash loses nothing. */
static void __sq_begin(long i) { fprintf(stdout, "\x1esandq-call %ld ", i); }
static void __sq_end(void) {
  fputc('\n', stdout);
  fflush(stdout);
}

__attribute__((unused)) static void __sq_emit_ll(long i, long long v) {
  __sq_begin(i);
  fprintf(stdout, "%lld", v);
  __sq_end();
}

__attribute__((unused)) static void __sq_emit_ull(long i, unsigned long long v) {
  __sq_begin(i);
  fprintf(stdout, "%llu", v);
  __sq_end();
}

/* float widened to double first; integral values below 2^53 as integers,
 * else %.17g (C has no shortest round-trip format; this one round-trips) */
__attribute__((unused)) static void __sq_emit_double(long i, double x) {
  __sq_begin(i);
  if (x != x) fputs("NaN", stdout);
  else if (x > 1.7976931348623157e308) fputs("Infinity", stdout);
  else if (x < -1.7976931348623157e308) fputs("-Infinity", stdout);
  else if (x > -9007199254740992.0 && x < 9007199254740992.0 && (double)(long long)x == x)
    fprintf(stdout, "%lld", (long long)x);
  else fprintf(stdout, "%.17g", x);
  __sq_end();
}

__attribute__((unused)) static void __sq_emit_str(long i, const char *s) {
  __sq_begin(i);
  if (!s) {
    fputs("null", stdout);
    __sq_end();
    return;
  }
  fputc('"', stdout);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '"': fputs("\\\"", stdout); break;
    case '\\': fputs("\\\\", stdout); break;
    case '\b': fputs("\\b", stdout); break;
    case '\f': fputs("\\f", stdout); break;
    case '\n': fputs("\\n", stdout); break;
    case '\r': fputs("\\r", stdout); break;
    case '\t': fputs("\\t", stdout); break;
    default:
      if (c < 0x20) fprintf(stdout, "\\u%04x", c);
      else fputc(c, stdout);
    }
  }
  fputc('"', stdout);
  __sq_end();
}

/* a value of a type with no encoding: never read */
__attribute__((unused)) static void __sq_emit_other(long i, ...) {
  __sq_begin(i);
  fputs("!type", stdout);
  __sq_end();
}

#define __sq_emit(i, v)                                                                                     \
  _Generic((v), _Bool: __sq_emit_ll, char: __sq_emit_ll, signed char: __sq_emit_ll, short: __sq_emit_ll,   \
           int: __sq_emit_ll, long: __sq_emit_ll, long long: __sq_emit_ll, unsigned char: __sq_emit_ull,     \
           unsigned short: __sq_emit_ull, unsigned: __sq_emit_ull, unsigned long: __sq_emit_ull,             \
           unsigned long long: __sq_emit_ull, float: __sq_emit_double, double: __sq_emit_double,             \
           long double: __sq_emit_double, char *: __sq_emit_str, const char *: __sq_emit_str,                \
           default: __sq_emit_other)(i, v)
