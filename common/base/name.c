/* name.c: the name alphabet of Redis-key components (name.h). */
#include "name.h"

#include <string.h>

bool sq_name_char_ok(int c) {
  /* no isalnum(): it follows the locale, and a name must mean the same bytes everywhere */
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         (c != '\0' && strchr("._:-", c) != NULL);
}

bool sq_name_ok(const char *s, size_t max) {
  if (!s) return false;
  size_t n = 0;
  for (; s[n]; n++)
    if (n >= max || !sq_name_char_ok((unsigned char)s[n])) return false;
  return n > 0;
}
