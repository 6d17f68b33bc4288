/* json_scan.c: a lexer just deep enough to tell which member of a JSON
 * object holds a NUL character inside a string (see json_scan.h). */
#include "json_scan.h"

#include <string.h>

/* Skips the string opening at text[i] (a '"'); returns the index after its
 * closing quote (or len) and sets *nul when it holds a NUL. */
static size_t skip_string(const char *text, size_t len, size_t i, bool *nul) {
  *nul = false;
  for (i++; i < len && text[i] != '"'; i++) {
    if (text[i] == '\0') {
      *nul = true;
    } else if (text[i] == '\\') {
      if (i + 5 < len && text[i + 1] == 'u' && memcmp(text + i + 2, "0000", 4) == 0) *nul = true;
      i++; /* the escaped character; \uXXXX's hex digits are ordinary characters */
    }
  }
  return i < len ? i + 1 : len;
}

size_t sq_json_nul_members(const char *text, size_t len, bool *nul, size_t n) {
  size_t depth = 0, hits = 0, member = 0;
  bool in_member = false; /* a top-level member has started */
  bool counted = false;   /* the current member is already counted in hits */
  for (size_t i = 0; i < len;) {
    char c = text[i];
    if (c == '"') {
      bool has_nul;
      if (depth == 1 && !in_member) in_member = true, counted = false; /* a member's name */
      i = skip_string(text, len, i, &has_nul);
      if (has_nul && depth >= 1 && in_member && !counted) {
        if (member < n) nul[member] = true;
        hits++;
        counted = true;
      }
      continue;
    }
    if (c == '{' || c == '[') depth++;
    else if ((c == '}' || c == ']') && depth > 0) depth--;
    else if (c == ',' && depth == 1 && in_member) in_member = false, member++;
    i++;
  }
  return hits;
}

const char sq_json_nul_reason[] =
    "holds a NUL character (\\u0000); refused rather than cut short (Python source cannot hold NUL)";

size_t sq_json_trailing_at(const char *text, size_t len, const char *end) {
  if (!end || end < text || end > text + len) return len;
  size_t i = (size_t)(end - text);
  while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) i++;
  return i;
}
