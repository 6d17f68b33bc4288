/* checker.c: a case's output against what it should be. See checker.h. */
#include "checker.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOW_MAX 40 /* bytes of a token shown in why */

static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* The next token of [*p, end): its start in *tok and length; false at the end. */
static bool next_token(const char **p, const char *end, const char **tok, size_t *len) {
  while (*p < end && space(**p)) (*p)++;
  if (*p == end) return false;
  *tok = *p;
  while (*p < end && !space(**p)) (*p)++;
  *len = (size_t)(*p - *tok);
  return true;
}

/* A whole token as a finite number (strtod's syntax), into *out. */
static bool number(const char *tok, size_t len, double *out) {
  char buf[64];
  if (len == 0 || len >= sizeof buf) return false;
  memcpy(buf, tok, len);
  buf[len] = '\0';
  char *end = NULL;
  double d = strtod(buf, &end);
  if (end != buf + len || !isfinite(d)) return false;
  *out = d;
  return true;
}

static bool token_equal(const sq_task_checker *c, const char *a, size_t alen, const char *b, size_t blen) {
  if (alen == blen && memcmp(a, b, alen) == 0) return true;
  double x, y;
  return c->kind == SQ_CHECKER_FLOAT && number(a, alen, &x) && number(b, blen, &y) &&
         fabs(x - y) <= c->tolerance * fmax(1.0, fabs(y));
}

/* A token for why: at most SHOW_MAX bytes, control bytes as '?'. */
static void show(char *dst, size_t dstlen, const char *tok, size_t len) {
  size_t n = len < SHOW_MAX ? len : SHOW_MAX, k = 0;
  for (size_t i = 0; i < n && k + 1 < dstlen; i++)
    dst[k++] = (unsigned char)tok[i] < 0x20 || tok[i] == 0x7f ? '?' : tok[i];
  if (n < len && k + 3 < dstlen) {
    memcpy(dst + k, "...", 3);
    k += 3;
  }
  dst[k] = '\0';
}

static bool exact(const char *got, size_t got_len, const char *want, char *why, size_t why_len) {
  size_t want_len = strlen(want), i = 0;
  while (i < got_len && i < want_len && got[i] == want[i]) i++;
  if (i == got_len && i == want_len) return true;
  if (why) {
    char g[SHOW_MAX + 4], w[SHOW_MAX + 4];
    show(g, sizeof g, got + i, got_len - i);
    show(w, sizeof w, want + i, want_len - i);
    snprintf(why, why_len, "at byte %zu expected `%s`, got `%s`", i, w, g);
  }
  return false;
}

bool sq_checker_match(const sq_task_checker *c, const char *got, size_t got_len, const char *want, char *why,
                      size_t why_len) {
  if (why && why_len) why[0] = '\0';
  if (!got) got = "", got_len = 0;
  if (c->kind == SQ_CHECKER_EXACT) return exact(got, got_len, want, why, why_len);
  const char *gp = got, *gend = got + got_len, *wp = want, *wend = want + strlen(want);
  char g[SHOW_MAX + 4], w[SHOW_MAX + 4];
  for (;;) {
    const char *gt = NULL, *wt = NULL;
    size_t gl = 0, wl = 0;
    bool has_g = next_token(&gp, gend, &gt, &gl), has_w = next_token(&wp, wend, &wt, &wl);
    if (!has_g && !has_w) return true;
    if (has_g && has_w && token_equal(c, gt, gl, wt, wl)) continue;
    if (why) {
      if (has_g) show(g, sizeof g, gt, gl);
      if (has_w) show(w, sizeof w, wt, wl);
      if (!has_w) snprintf(why, why_len, "got `%s` past the expected end", g);
      else if (!has_g) snprintf(why, why_len, "expected `%s`, got the end of output", w);
      else snprintf(why, why_len, "expected `%s`, got `%s`", w, g);
    }
    return false;
  }
}
