/* calls.c: the tests of another language split into calls and expected
 * values, the two programs built from them, the records taken back and
 * compared (calls.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "calls.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "util.h"
#include "workspace.h"

/* ---- matching one line against a pattern ---- */

enum { CAP_C, CAP_E, CAP_N, CAP__COUNT };

typedef struct {
  const char *at[CAP__COUNT];
  size_t len[CAP__COUNT];
} captures;

static bool is_blank(char c) { return c == ' ' || c == '\t'; }
static bool name_start(char c) { return isalpha((unsigned char)c) || c == '_' || c == '$'; }
static bool name_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

/* The end of the string literal opened at s[0] (one past its closing
 * quote), or NULL when the line ends first. */
static const char *skip_string(const char *s, const char *end) {
  char q = *s++;
  while (s < end && *s != q) s += *s == '\\' && s + 1 < end ? 2 : 1;
  return s < end ? s + 1 : NULL;
}

static bool match_at(const char *p, const char *s, const char *end, const char *quotes, captures *c);

/* Tries every balanced capture s[0..k) (non-empty) for which the rest of
 * the pattern matches the rest of the line. */
static bool match_balanced(int slot, const char *p, const char *s, const char *end, const char *quotes,
                           captures *c) {
  int depth = 0;
  const char *q = s;
  while (q < end) {
    char ch = *q;
    if (ch && strchr(quotes, ch)) {
      q = skip_string(q, end);
      if (!q) return false;
    } else {
      if (ch == '(' || ch == '[' || ch == '{') depth++;
      else if (ch == ')' || ch == ']' || ch == '}') {
        if (--depth < 0) return false;
      }
      q++;
    }
    if (depth == 0) {
      /* s..q is balanced: trailing white space belongs to the pattern */
      const char *e = q;
      while (e > s && is_blank(e[-1])) e--;
      if (e > s) {
        c->at[slot] = s;
        c->len[slot] = (size_t)(e - s);
        if (match_at(p, q, end, quotes, c)) return true;
      }
    }
  }
  return false;
}

static bool match_at(const char *p, const char *s, const char *end, const char *quotes, captures *c) {
  for (;;) {
    if (*p == ' ') {
      while (*p == ' ') p++;
      while (s < end && is_blank(*s)) s++;
      continue;
    }
    if (!*p) {
      while (s < end && is_blank(*s)) s++;
      return s == end;
    }
    if (p[0] == '@' && (p[1] == 'C' || p[1] == 'E')) {
      while (s < end && is_blank(*s)) s++;
      return match_balanced(p[1] == 'C' ? CAP_C : CAP_E, p + 2, s, end, quotes, c);
    }
    if (p[0] == '@' && p[1] == 'N') {
      if (s >= end || !name_start(*s)) return false;
      const char *e = s + 1;
      while (e < end && name_char(*e)) e++;
      c->at[CAP_N] = s;
      c->len[CAP_N] = (size_t)(e - s);
      p += 2;
      s = e;
      continue;
    }
    if (s >= end || *s != *p) return false;
    s++;
    p++;
  }
}

/* Whether line [s, end) matches pattern, white space around it ignored. */
static bool line_matches(const char *pattern, const char *s, const char *end, const char *quotes, captures *c) {
  while (s < end && is_blank(*s)) s++;
  while (end > s && (is_blank(end[-1]) || end[-1] == '\r')) end--;
  memset(c, 0, sizeof *c);
  return match_at(pattern, s, end, quotes, c);
}

/* Appends template t to b with the captures and index filled in (NULL:
 * the line itself). */
static int put_template(sq_buf *b, const char *t, const char *line, size_t line_len, const captures *c, size_t index) {
  if (!t) return sq_buf_append(b, line, line_len) || sq_buf_append(b, "\n", 1) ? SQ_ENOMEM : 0;
  if (!*t) return 0;
  for (const char *p = t; *p; p++) {
    int rc = 0;
    if (p[0] == '@' && (p[1] == 'C' || p[1] == 'E' || p[1] == 'N')) {
      int slot = p[1] == 'C' ? CAP_C : p[1] == 'E' ? CAP_E : CAP_N;
      rc = sq_buf_append(b, c->at[slot] ? c->at[slot] : "", c->len[slot]);
      p++;
    } else if (p[0] == '@' && p[1] == 'I') {
      rc = sq_buf_appendf(b, "%zu", index);
      p++;
    } else {
      rc = sq_buf_append(b, p, 1);
    }
    if (rc) return SQ_ENOMEM;
  }
  return sq_buf_append(b, "\n", 1) ? SQ_ENOMEM : 0;
}

static bool is_closer(const sq_calls_rule *r, const char *s, const char *end) {
  while (s < end && is_blank(*s)) s++;
  while (end > s && (is_blank(end[-1]) || end[-1] == '\r')) end--;
  for (int i = 0; i < 3 && r->closers[i]; i++)
    if (strlen(r->closers[i]) == (size_t)(end - s) && memcmp(r->closers[i], s, (size_t)(end - s)) == 0) return true;
  return false;
}

static bool blank_line(const char *s, const char *end) {
  while (s < end && (is_blank(*s) || *s == '\r')) s++;
  return s == end;
}

/* Where the line at l ends: its first newline outside a string literal
 * (NULL: at the end of the text). */
static const char *logical_line_end(const char *l, const char *end, const char *quotes) {
  for (const char *q = l; q < end; q++) {
    if (*q == '\n') return q;
    if (strchr(quotes, *q)) {
      const char *close = skip_string(q, end);
      if (!close) return memchr(q, '\n', (size_t)(end - q)); /* never closed: the line is what it is */
      q = close - 1;
    }
  }
  return NULL;
}

/* Whether some line of text starts with prefix. */
static bool has_line_starting(const char *text, const char *prefix) {
  size_t n = strlen(prefix);
  for (const char *l = text; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
    if (strncmp(l, prefix, n) == 0) return true;
  return false;
}

/* ---- Rust: the signature of the function the tests bind ---- */

/* Appends the code's `use` lines and `fn NAME(...) -> T { unimplemented!() }`
 * for NAME's first definition at the start of a line; nothing when the code
 * has none (the reference then fails to compile, naming it). */
static int rust_signature(sq_buf *b, const char *code, const char *name, size_t name_len) {
  for (const char *l = code; *l;) {
    const char *nl = strchr(l, '\n');
    const char *e = nl ? nl : l + strlen(l);
    const char *s = l;
    while (s < e && is_blank(*s)) s++;
    if (e - s > 4 && strncmp(s, "use ", 4) == 0 && e[-1] == ';') {
      if (sq_buf_append(b, s, (size_t)(e - s)) || sq_buf_append(b, "\n", 1)) return SQ_ENOMEM;
    }
    l = nl ? nl + 1 : e;
  }
  for (const char *l = code; *l;) {
    const char *nl = strchr(l, '\n');
    const char *e = nl ? nl : l + strlen(l);
    const char *s = l;
    while (s < e && is_blank(*s)) s++;
    if (strncmp(s, "pub ", 4) == 0) s += 4;
    if (strncmp(s, "fn ", 3) == 0) {
      const char *n = s + 3;
      while (is_blank(*n)) n++;
      if (strncmp(n, name, name_len) == 0 && !name_char(n[name_len])) {
        /* the signature runs to the first '{' outside brackets, over lines */
        int depth = 0;
        const char *q = s;
        for (; *q; q++) {
          if (*q == '(' || *q == '[' || *q == '<') depth++;
          else if (*q == ')' || *q == ']' || (*q == '>' && q[-1] != '-')) depth--;
          else if (*q == '{' && depth <= 0) break;
          else if (*q == ';' && depth <= 0) return 0;
        }
        if (!*q) return 0;
        if (sq_buf_append(b, s, (size_t)(q - s)) || sq_buf_appendf(b, "{ unimplemented!() }\n")) return SQ_ENOMEM;
        return 0;
      }
    }
    l = nl ? nl + 1 : e;
  }
  return 0;
}

/* ---- the plan ---- */

void sq_calls_plan_clear(sq_calls_plan *p) {
  free(p->candidate);
  free(p->reference);
  memset(p, 0, sizeof *p);
}

static void shown_line(const char *s, const char *end, char *out, size_t len) {
  size_t n = (size_t)(end - s), k = 0;
  for (size_t i = 0; i < n && k + 4 < len; i++) {
    unsigned char ch = (unsigned char)s[i];
    out[k++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
  }
  if (n > len - 4 && len > 4) memcpy(out + k, "...", 4);
  else out[k] = '\0';
}

int sq_calls_plan_build(sq_language_id id, const char *code, const char *tests, sq_calls_plan *p, char *err,
                        size_t len) {
  memset(p, 0, sizeof *p);
  if (len) err[0] = '\0';
  const sq_calls_rule *r = sq_calls_rule_of(id);
  const sq_language *lang = sq_language_get(id);
  if (!r || !lang || !tests) {
    snprintf(err, len, "tests: %s has no judge for tests", lang ? lang->name : "this language");
    return SQ_EINVAL;
  }
  if (!code) code = "";
  sq_buf cand = {0}, ref = {0}, sig = {0};
  int rc = 0;
  bool leading = true;
  size_t n = 0, lineno = 0;
  const char *name = NULL;
  size_t name_len = 0;
  if (r->driver_first && sq_buf_appendf(&cand, "%s\n", r->driver)) goto oom;
  if (r->go_package_main && strncmp(code, "package ", 8) == 0) {
    const char *nl = strchr(code, '\n');
    const char *e = nl ? nl : code + strlen(code);
    if (e - code > 13 && memcmp(e - 5, "_test", 5) == 0) {
      if (sq_buf_appendf(&cand, "package main\n")) goto oom;
      code = nl ? nl + 1 : e;
    }
  }
  if (sq_buf_appendf(&cand, "%s\n", code)) goto oom;
  const char *tests_end = tests + strlen(tests);
  for (const char *l = tests; *l;) {
    const char *nl = logical_line_end(l, tests_end, r->quotes);
    const char *e = nl ? nl : tests_end;
    lineno++;
    captures c;
    if (blank_line(l, e)) {
      if (sq_buf_append(&cand, "\n", 1) || sq_buf_append(&ref, "\n", 1)) goto oom;
    } else if (leading && is_closer(r, l, e)) {
      if (sq_buf_append(&cand, l, (size_t)(e - l)) || sq_buf_append(&cand, "\n", 1)) goto oom;
    } else {
      leading = false;
      const sq_calls_line *hit = NULL;
      bool assertion = false;
      for (int i = 0; i < 6 && r->asserts[i].pattern && !hit; i++)
        if (line_matches(r->asserts[i].pattern, l, e, r->quotes, &c)) hit = &r->asserts[i], assertion = true;
      for (int i = 0; i < SQ_CALLS_LINES_MAX && r->lines[i].pattern && !hit; i++)
        if (line_matches(r->lines[i].pattern, l, e, r->quotes, &c)) hit = &r->lines[i];
      if (!hit) {
        char shown[96];
        shown_line(l, e, shown, sizeof shown);
        snprintf(err, len,
                 "tests: line %zu is not a form the %s judge takes (an assertion comparing a call with its "
                 "expected value, or a line of the test template; docs/formats.md, \"Tests in other "
                 "languages\"): %s",
                 lineno, lang->name, shown);
        rc = SQ_EINVAL;
        goto fail;
      }
      if (assertion && n >= SQ_CALLS_MAX) {
        snprintf(err, len, "tests: more than %d assertions", SQ_CALLS_MAX);
        rc = SQ_EINVAL;
        goto fail;
      }
      if (!assertion && c.at[CAP_N] && !name) name = c.at[CAP_N], name_len = c.len[CAP_N];
      if (put_template(&cand, hit->cand, l, (size_t)(e - l), &c, n) ||
          put_template(&ref, hit->ref, l, (size_t)(e - l), &c, n))
        goto oom;
      if (assertion) n++;
    }
    for (const char *q = memchr(l, '\n', (size_t)(e - l)); q; q = memchr(q + 1, '\n', (size_t)(e - q - 1)))
      lineno++; /* a string's own newlines */
    l = nl ? nl + 1 : e;
  }
  if (n == 0) {
    snprintf(err, len, "tests: no assertion of the %s judge's form (docs/formats.md, \"Tests in other languages\")",
             lang->name);
    rc = SQ_EINVAL;
    goto fail;
  }
  if (r->cand_tail && sq_buf_appendf(&cand, "%s", r->cand_tail)) goto oom;
  if (r->go_package_main && !has_line_starting(code, "func main()") && sq_buf_appendf(&cand, "\nfunc main() {}\n"))
    goto oom;
  if (!r->driver_first && sq_buf_appendf(&cand, "\n%s", r->driver)) goto oom;
  /* the reference: its head, the driver, the Rust signature, the tests' values */
  if (r->ref_head && sq_buf_appendf(&sig, "%s", r->ref_head)) goto oom;
  if (r->driver_first && sq_buf_appendf(&sig, "%s\n", r->driver)) goto oom;
  if (r->rust_signature && name && rust_signature(&sig, code, name, name_len)) goto oom;
  if (sq_buf_append(&sig, ref.data ? ref.data : "", ref.len)) goto oom;
  if (r->ref_tail && sq_buf_appendf(&sig, "%s", r->ref_tail)) goto oom;
  if (!r->driver_first && sq_buf_appendf(&sig, "\n%s", r->driver)) goto oom;
  sq_buf_clear(&ref);
  p->candidate = cand.data;
  p->reference = sig.data;
  p->n_calls = n;
  return 0;
oom:
  rc = SQ_ENOMEM;
  snprintf(err, len, "out of memory");
fail:
  sq_buf_clear(&cand);
  sq_buf_clear(&ref);
  sq_buf_clear(&sig);
  return rc;
}

/* ---- records ---- */

void sq_calls_results_clear(sq_calls_results *r) {
  if (r->text)
    for (size_t i = 0; i < r->n; i++) free(r->text[i]);
  free(r->text);
  memset(r, 0, sizeof *r);
}

/* Files one record's index and text into r. */
static int put_record(sq_calls_results *r, const char *s, size_t len) {
  size_t i = 0, k = 0;
  while (k < len && k < 9 && isdigit((unsigned char)s[k])) i = i * 10 + (size_t)(s[k++] - '0');
  if (k == 0 || k >= len || s[k] != ' ' || i >= r->n) {
    r->stray = true;
    return 0;
  }
  if (r->text[i]) {
    r->twice = true;
    return 0;
  }
  if (!(r->text[i] = strndup(s + k + 1, len - k - 1))) return SQ_ENOMEM;
  r->written++;
  return 0;
}

int sq_calls_take(char *buf, size_t *len, size_t n, sq_calls_results *r) {
  memset(r, 0, sizeof *r);
  r->n = n;
  if (n && !(r->text = calloc(n, sizeof *r->text))) return SQ_ENOMEM;
  if (!buf) return 0;
  const size_t mark = strlen(SQ_CALLS_MARK);
  size_t out = 0, at = 0, end = *len;
  while (at < end) {
    const char *m = memmem(buf + at, end - at, SQ_CALLS_MARK, mark);
    size_t upto = m ? (size_t)(m - buf) : end;
    memmove(buf + out, buf + at, upto - at);
    out += upto - at;
    if (!m) break;
    size_t s = upto + mark;
    const char *nl = memchr(buf + s, '\n', end - s);
    size_t e = nl ? (size_t)(nl - buf) : end;
    if (put_record(r, buf + s, e - s) != 0) return SQ_ENOMEM;
    at = nl ? e + 1 : end;
  }
  buf[out] = '\0';
  *len = out;
  return 0;
}

char *sq_calls_results_pack(const sq_calls_results *r, int *rc) {
  *rc = SQ_EINVAL;
  if (r->written != r->n || r->twice || r->stray) return NULL;
  sq_buf b = {0};
  for (size_t i = 0; i < r->n; i++)
    if (sq_buf_appendf(&b, "%zu %s\n", i, r->text[i])) {
      sq_buf_clear(&b);
      *rc = SQ_ENOMEM;
      return NULL;
    }
  *rc = 0;
  return b.data ? b.data : strdup("");
}

int sq_calls_results_unpack(const char *packed, size_t n, sq_calls_results *r) {
  memset(r, 0, sizeof *r);
  r->n = n;
  if (n && !(r->text = calloc(n, sizeof *r->text))) return SQ_ENOMEM;
  for (const char *l = packed; l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t k = nl ? (size_t)(nl - l) : strlen(l);
    if (put_record(r, l, k) != 0) {
      sq_calls_results_clear(r);
      return SQ_ENOMEM;
    }
    l = nl ? nl + 1 : NULL;
  }
  if (r->written != n || r->twice || r->stray) {
    sq_calls_results_clear(r);
    return SQ_EINVAL;
  }
  return 0;
}

/* text cut to at most max bytes for a reason, never inside a UTF-8 sequence */
static int cut(const char *t, int max) {
  int n = (int)strlen(t);
  if (n <= max) return n;
  while (max > 0 && ((unsigned char)t[max] & 0xc0) == 0x80) max--;
  return max;
}

bool sq_calls_judge(const sq_calls_results *cand, const sq_calls_results *ref, char *why, size_t len) {
  if (len) why[0] = '\0';
  for (size_t i = 0; i < ref->n; i++) {
    const char *got = i < cand->n ? cand->text[i] : NULL, *want = ref->text[i];
    if (!got) {
      snprintf(why, len, "call %zu of %zu gave no result (%zu of %zu written: the program ended before it)", i + 1,
               ref->n, cand->written, ref->n);
      return false;
    }
    if (strcmp(got, want) != 0) {
      const char *dots_g = (int)strlen(got) > 120 ? "..." : "", *dots_w = (int)strlen(want) > 120 ? "..." : "";
      snprintf(why, len, "call %zu of %zu: got %.*s%s, expected %.*s%s", i + 1, ref->n, cut(got, 120), got, dots_g,
               cut(want, 120), want, dots_w);
      return false;
    }
  }
  if (cand->twice) {
    snprintf(why, len, "a call's result was written twice (a forged record)");
    return false;
  }
  if (cand->stray) {
    snprintf(why, len, "a result record for no call of the tests (a forged record)");
    return false;
  }
  return true;
}

char *sq_calls_reference_take(sq_jail_outcome *o, size_t n, char *why, size_t len) {
  sq_workspace_files f = {0};
  int rc = sq_workspace_take_files(o, 0, &f);
  bool compile_error = rc == 0 && f.compile_error;
  sq_workspace_files_clear(&f);
  if (rc) {
    snprintf(why, len, "out of memory");
    return NULL;
  }
  if (compile_error) {
    char first[200];
    sq_workspace_compile_reason(o, first, sizeof first);
    snprintf(why, len, "the reference did not compile: %s", first);
    return NULL;
  }
  if (o->end != SQ_JAIL_EXITED_OK) {
    snprintf(why, len, "the reference ended %s", sq_jail_end_name(o->end));
    return NULL;
  }
  sq_calls_results r;
  char *packed = NULL;
  if (sq_calls_take(o->stdout_buf, &o->stdout_len, n, &r) == 0) packed = sq_calls_results_pack(&r, &rc);
  if (!packed)
    snprintf(why, len, "the reference wrote %zu of %zu values%s", r.written, n,
             r.twice || r.stray ? " (and records of no call)" : "");
  sq_calls_results_clear(&r);
  return packed;
}
