/* utf8.c: UTF-8 validation and replacement for outgoing text (utf8.h). */
#include "utf8.h"

#include "errors.h"

/* Length of the valid sequence at p (at most n bytes) other than NUL, or 0. */
static size_t seq_len(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  size_t len;
  unsigned min;
  if (c == 0) return 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) len = 2, min = 0x80;
  else if ((c & 0xF0) == 0xE0) len = 3, min = 0x800;
  else if ((c & 0xF8) == 0xF0) len = 4, min = 0x10000;
  else return 0;
  if (len > n) return 0;
  unsigned cp = c & (0xFFu >> (len + 1));
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool sq_utf8_clean(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0, k; i < len; i += k)
    if ((k = seq_len(p + i, len - i)) == 0) return false;
  return true;
}

int sq_utf8_sanitize(const char *s, size_t len, sq_buf *out) {
  const unsigned char *p = (const unsigned char *)s;
  if (sq_buf_append(out, "", 0) != 0) return SQ_ENOMEM; /* an empty text is "" too */
  size_t i = 0;
  while (i < len) {
    /* the longest valid run in one append */
    size_t start = i, k;
    while (i < len && (k = seq_len(p + i, len - i)) > 0) i += k;
    if (i > start && sq_buf_append(out, p + start, i - start) != 0) return SQ_ENOMEM;
    if (i < len) {
      if (sq_buf_append(out, "\xEF\xBF\xBD", 3) != 0) return SQ_ENOMEM;
      i++;
    }
  }
  return 0;
}
