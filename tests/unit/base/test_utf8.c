/* test_utf8.c: the one sanitizer for outgoing text: valid UTF-8 kept byte
 * for byte, each bad byte and each NUL one U+FFFD, the result a C string. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "utf8.h"

#define R "\xEF\xBF\xBD" /* U+FFFD */

/* sanitize(in) must give want (a C string), and clean() must say whether
 * in came through unchanged. */
static void expect(const char *in, size_t len, const char *want) {
  sq_buf b = {0};
  CHECK_EQ(sq_utf8_sanitize(in, len, &b), 0);
  CHECK(b.data != NULL);
  if (b.data && strcmp(b.data, want) != 0) fprintf(stderr, "input of %zu bytes\n", len);
  CHECK_STR(b.data, want);
  CHECK_EQ(b.data ? strlen(b.data) : 0, b.len); /* no NUL inside */
  int unchanged = b.len == len && memcmp(b.data, in, len) == 0;
  CHECK_EQ(sq_utf8_clean(in, len), unchanged);
  sq_buf_clear(&b);
}

#define EXPECT(lit, want) expect(lit, sizeof lit - 1, want)

int main(void) {
  /* valid text, every sequence length, kept as is */
  EXPECT("", "");
  EXPECT("plain ascii\n\t", "plain ascii\n\t");
  EXPECT("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT("\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF",
         "\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF");
  /* the NUL rule: a NUL is replaced like a bad byte */
  EXPECT("a\0b", "a" R "b");
  EXPECT("\0", R);
  /* one U+FFFD per bad byte, the scan resuming at the next byte */
  EXPECT("\xFF\xFE", R R);
  EXPECT("\x80x", R "x");                 /* stray continuation byte */
  EXPECT("\xC3", R);                      /* truncated at the end */
  EXPECT("\xE2\x82x", R R "x");           /* truncated in the middle */
  EXPECT("\xC0\xAF", R R);                /* overlong '/' */
  EXPECT("\xC1\xBF", R R);                /* overlong */
  EXPECT("\xE0\x80\xAF", R R R);          /* overlong in three bytes */
  EXPECT("\xF0\x80\x80\xAF", R R R R);    /* overlong in four bytes */
  EXPECT("\xED\xA0\x80", R R R);          /* a surrogate, U+D800 */
  EXPECT("\xED\xBF\xBF", R R R);          /* U+DFFF */
  EXPECT("\xF4\x90\x80\x80", R R R R);    /* above U+10FFFF */
  EXPECT("\xF5\x80\x80\x80", R R R R);    /* a lead byte that is never valid */
  EXPECT("\xF8\x88\x80\x80\x80", R R R R R);
  EXPECT("ok \xFF\xFE bad, NUL:\0:end", "ok " R R " bad, NUL:" R ":end");
  /* NULL with len 0 is the empty text */
  sq_buf b = {0};
  CHECK_EQ(sq_utf8_sanitize(NULL, 0, &b), 0);
  CHECK_STR(b.data, "");
  /* appends to what the buffer holds */
  CHECK_EQ(sq_utf8_sanitize("\xFF", 1, &b), 0);
  CHECK_STR(b.data, R);
  sq_buf_clear(&b);
  CHECK(sq_utf8_clean(NULL, 0));
  return sq_check_done("test_utf8");
}
