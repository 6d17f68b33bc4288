/* reason.c: the one-line "reason" of a failing status, read out of the jail's
 * outcome: the traceback on stderr (its innermost frame in main.py and the
 * exception), the first line where stdout differs from expected_stdout, or
 * the limit that was hit. Pure: no I/O, no allocation. */
#include "reason.h"

#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define QUOTE_MAX 120 /* bytes of a quoted line or message kept in a reason */

/* Copies n bytes of s into dst (dstlen > 0), control characters as '?',
 * cut at max bytes on a UTF-8 boundary with "..." appended when cut. */
static void clip_raw(char *dst, size_t dstlen, const char *s, size_t n, size_t max) {
  if (!dst || !dstlen) return;
  bool cut = false;
  if (n > max) n = max, cut = true;
  if (n + 4 > dstlen) n = dstlen > 4 ? dstlen - 4 : 0, cut = true;
  if (cut)
    while (n && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* not inside a UTF-8 sequence */
  size_t w = 0;
  for (size_t i = 0; i < n; i++) dst[w++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
  if (cut && w + 3 < dstlen) memcpy(dst + w, "...", 3), w += 3;
  dst[w] = 0;
}

/* clip_raw with white space trimmed at both ends. */
static void clip(char *dst, size_t dstlen, const char *s, size_t n, size_t max) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  clip_raw(dst, dstlen, s, n, max);
}

/* Appends printf output to buf at *at, never past len (always terminated). */
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...) {
  if (*at + 1 >= len) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *at, len - *at, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  *at = (size_t)n >= len - *at ? len - 1 : *at + (size_t)n;
}

/* The last occurrence of needle in [h, h+n), or NULL. */
static const char *last_of(const char *h, size_t n, const char *needle) {
  size_t k = strlen(needle);
  const char *found = NULL;
  for (const char *p = h; n >= k && (size_t)(p - h) <= n - k;) {
    const char *q = memmem(p, n - (size_t)(p - h), needle, k);
    if (!q) break;
    found = q;
    p = q + 1;
  }
  return found;
}

/* One line of [p, end): sets *next past its newline; returns its length. */
static size_t line_at(const char *p, const char *end, const char **next) {
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  *next = nl ? nl + 1 : end;
  size_t n = (size_t)((nl ? nl : end) - p);
  if (n && p[n - 1] == '\r') n--;
  return n;
}

/* Whether [p, p+n) is only spaces and the markers Python puts under a frame's line. */
static bool is_marker_line(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strchr(" ^~", p[i])) return false;
  return true;
}

/* Parses `  File "NAME", line N[, in F]`: sets *line and whether NAME ends in main.py. */
static bool frame_line(const char *p, size_t n, int *line, bool *is_main) {
  static const char head[] = "  File \"";
  if (n < sizeof head || memcmp(p, head, sizeof head - 1) != 0) return false;
  const char *name = p + sizeof head - 1, *end = p + n;
  const char *q = memchr(name, '"', (size_t)(end - name));
  if (!q || (size_t)(end - q) < 8 || memcmp(q, "\", line ", 8) != 0) return false;
  *is_main = (size_t)(q - name) >= 7 && memcmp(q - 7, "main.py", 7) == 0;
  *line = 0;
  for (const char *d = q + 8; d < end && isdigit((unsigned char)*d) && *line < 100000000; d++)
    *line = *line * 10 + (*d - '0');
  return true;
}

/* Whether [p, p+n) starts like an exception line: Name or dotted.Name, then ':' or the end. */
static size_t exception_name(const char *p, size_t n) {
  size_t i = 0;
  if (!n || !(isalpha((unsigned char)p[0]) || p[0] == '_')) return 0;
  while (i < n && (isalnum((unsigned char)p[i]) || p[i] == '_' || p[i] == '.')) i++;
  return i == n || p[i] == ':' ? i : 0;
}

int sq_reason_traceback(const char *err, size_t err_len, char *type, size_t type_len, char *msg, size_t msg_len,
                        int *line, char *src, size_t src_len) {
  if (type && type_len) type[0] = 0;
  if (msg && msg_len) msg[0] = 0;
  if (src && src_len) src[0] = 0;
  if (line) *line = 0;
  if (!err || !err_len) return 0;
  const char *end = err + err_len;
  const char *p = last_of(err, err_len, "Traceback (most recent call last):");
  if (!p) p = last_of(err, err_len, "  File \""); /* a SyntaxError has no header */
  if (!p) return 0;
  while (p > err && p[-1] != '\n') p--;
  int best_line = 0, cur_line = 0;
  bool best_main = false, cur_main = false, seen_frame = false;
  const char *best_src = NULL, *exc = NULL;
  size_t best_src_n = 0, exc_n = 0;
  for (const char *next; p < end && !exc; p = next) {
    size_t n = line_at(p, end, &next);
    if (frame_line(p, n, &cur_line, &cur_main)) {
      seen_frame = true;
      /* the innermost frame in main.py wins; else the innermost of all */
      if (cur_main || !best_main) {
        best_line = cur_line, best_main = cur_main;
        best_src = NULL, best_src_n = 0;
        const char *after;
        size_t m = next < end ? line_at(next, end, &after) : 0;
        if (m > 4 && memcmp(next, "    ", 4) == 0 && !is_marker_line(next, m)) best_src = next, best_src_n = m;
      }
    } else if (seen_frame && n && p[0] != ' ' && exception_name(p, n)) {
      exc = p, exc_n = n;
    }
  }
  if (!exc) return 0;
  size_t tn = exception_name(exc, exc_n);
  clip(type, type_len, exc, tn, QUOTE_MAX);
  if (tn < exc_n) clip(msg, msg_len, exc + tn + 1, exc_n - tn - 1, QUOTE_MAX);
  if (line) *line = best_line;
  if (best_src) clip(src, src_len, best_src, best_src_n, QUOTE_MAX);
  return 1;
}

/* The first line where got and want differ (trailing white space of the
 * whole texts ignored, as the verdict does). */
static void stdout_diff(const char *got, size_t got_len, const char *want, char *buf, size_t len, size_t *at) {
  size_t want_len = strlen(want);
  while (got_len && isspace((unsigned char)got[got_len - 1])) got_len--;
  while (want_len && isspace((unsigned char)want[want_len - 1])) want_len--;
  const char *g = got, *ge = got + got_len, *w = want, *we = want + want_len;
  for (int lineno = 1;; lineno++) {
    bool g_end = g >= ge, w_end = w >= we;
    if (g_end && w_end) {
      put(buf, len, at, "stdout differs from expected_stdout in white space only");
      return;
    }
    const char *gn = g, *wn = w;
    size_t gl = g_end ? 0 : line_at(g, ge, &gn), wl = w_end ? 0 : line_at(w, we, &wn);
    if (g_end || w_end || gl != wl || memcmp(g, w, gl) != 0) {
      char a[QUOTE_MAX + 8], b[QUOTE_MAX + 8];
      clip_raw(a, sizeof a, w, wl, QUOTE_MAX);
      clip_raw(b, sizeof b, g, gl, QUOTE_MAX);
      put(buf, len, at, "stdout differs at line %d: expected ", lineno);
      put(buf, len, at, w_end ? "(end of output)" : "\"%s\"", a);
      put(buf, len, at, ", got ");
      put(buf, len, at, g_end ? "(end of output)" : "\"%s\"", b);
      return;
    }
    g = gn, w = wn;
  }
}

/* "<type>: <msg> (line N: <src>)" from the traceback, or false. */
static bool exception_text(const sq_jail_outcome *o, bool assertion, char *buf, size_t len, size_t *at) {
  char type[QUOTE_MAX + 8], msg[QUOTE_MAX + 8], src[QUOTE_MAX + 8];
  int line = 0;
  if (!sq_reason_traceback(o->stderr_buf, o->stderr_len, type, sizeof type, msg, sizeof msg, &line, src,
                           sizeof src))
    return false;
  if (assertion && strcmp(type, "AssertionError") == 0) {
    put(buf, len, at, "assertion failed");
    if (line) put(buf, len, at, " at line %d", line);
    if (src[0]) put(buf, len, at, ": %s", src);
    if (msg[0]) put(buf, len, at, " (%s)", msg);
    return true;
  }
  put(buf, len, at, "%s", type);
  if (msg[0]) put(buf, len, at, ": %s", msg);
  if (line) put(buf, len, at, " at line %d", line);
  if (src[0]) put(buf, len, at, ": %s", src);
  return true;
}

/* The last non-blank line of stderr, clipped. */
static void last_stderr_line(const sq_jail_outcome *o, char *dst, size_t dstlen) {
  dst[0] = 0;
  const char *s = o->stderr_buf;
  size_t n = o->stderr_len;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  if (!s || !n) return;
  size_t b = n;
  while (b && s[b - 1] != '\n') b--;
  clip(dst, dstlen, s + b, n - b, QUOTE_MAX);
}

void sq_reason_kind(const char *reason, char *buf, size_t len) {
  if (!buf || !len) return;
  buf[0] = 0;
  if (!reason) return;
  /* A task with cases: the kind of its first failing case's reason; the
   * checker's own ("expected `7`, got `-7`", checker.c) is a wrong output. */
  unsigned case_n = 0;
  int skip = 0;
  if (sscanf(reason, "case %u: %n", &case_n, &skip) == 1 && skip > 0) reason += skip;
  if (skip > 0 && (strncmp(reason, "expected `", 10) == 0 || strncmp(reason, "got `", 5) == 0 ||
                   strncmp(reason, "at byte ", 8) == 0)) {
    clip(buf, len, "wrong output", strlen("wrong output"), QUOTE_MAX);
    return;
  }
  static const char *const stops[] = {": ", " at line", " (", " after "};
  size_t n = strlen(reason);
  for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
    const char *p = strstr(reason, stops[i]);
    if (p && (size_t)(p - reason) < n) n = (size_t)(p - reason);
  }
  clip(buf, len, reason, n, QUOTE_MAX);
}

/* The line of stderr that says why a program in another language failed:
 * the first one, not indented (a stack frame, a quoted source line), that
 * names an error, an exception, a panic or an assertion, as runtimes print
 * them (Java, node, Rust, Go, C's assert, Lua, Ruby, PHP); else the last
 * non-blank line. Clipped. */
static void failure_line(const sq_jail_outcome *o, char *dst, size_t dstlen) {
  static const char *const words[] = {"Error", "Exception", "panic", "Assertion", "assertion failed", "Fatal"};
  const char *s = o->stderr_buf ? o->stderr_buf : "", *end = s + o->stderr_len;
  for (const char *p = s; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    for (size_t i = 0; n && !isspace((unsigned char)p[0]) && i < sizeof words / sizeof *words; i++)
      if (memmem(p, n, words[i], strlen(words[i]))) {
        clip(dst, dstlen, p, n, QUOTE_MAX);
        return;
      }
    p += n + 1;
  }
  last_stderr_line(o, dst, dstlen);
}

/* "exited with status N: WHY" (or the signal), WHY from failure_line. */
static void exit_text(const sq_jail_outcome *o, char *buf, size_t len, size_t *at) {
  char last[QUOTE_MAX + 8];
  failure_line(o, last, sizeof last);
  if (o->end == SQ_JAIL_SIGNALED) put(buf, len, at, "killed by signal %d", o->signal);
  else put(buf, len, at, "exited with status %d", o->exit_code);
  if (last[0]) put(buf, len, at, ": %s", last);
}

size_t sq_reason_build(sq_status status, const sq_jail_outcome *o, const sq_jail_limits *lim,
                       const char *expected_stdout, char *buf, size_t len) {
  size_t at = 0;
  if (!buf || !len) return 0;
  buf[0] = 0;
  sq_jail_limits none = {0};
  if (!lim) lim = &none;
  switch (status) {
  case SQ_STATUS_FAILED:
    if (o->end == SQ_JAIL_EXITED_OK && expected_stdout)
      stdout_diff(o->stdout_buf ? o->stdout_buf : "", o->stdout_len, expected_stdout, buf, len, &at);
    else if (exception_text(o, true, buf, len, &at))
      ;
    else if (o->end == SQ_JAIL_ASSERTION)
      put(buf, len, &at, "assertion failed (no traceback on stderr)");
    else if (o->end == SQ_JAIL_EXITED_ERROR || o->end == SQ_JAIL_SIGNALED)
      exit_text(o, buf, len, &at); /* tests in another language: how it ended, its last word */
    else
      put(buf, len, &at, "failed (the run ended %s)", sq_jail_end_name(o->end));
    break;
  case SQ_STATUS_RUNTIME_ERROR:
    if (o->end == SQ_JAIL_SETUP_ERROR) {
      put(buf, len, &at, "the jail could not run the program: %s", o->error[0] ? o->error : "setup error");
    } else if (o->end == SQ_JAIL_SIGNALED) {
      const char *name = o->signal > 0 ? sigabbrev_np(o->signal) : NULL;
      put(buf, len, &at, "killed by signal %d", o->signal);
      if (name) put(buf, len, &at, " (SIG%s)", name);
    } else if (!exception_text(o, false, buf, len, &at)) {
      char last[QUOTE_MAX + 8];
      last_stderr_line(o, last, sizeof last);
      put(buf, len, &at, "exited with status %d", o->exit_code);
      if (last[0]) put(buf, len, &at, ": %s", last);
    }
    break;
  case SQ_STATUS_TIMEOUT:
    put(buf, len, &at, "wall-clock limit");
    if (lim->wall_ms > 0) put(buf, len, &at, " of %lld ms", (long long)lim->wall_ms);
    put(buf, len, &at, " reached (ran %lld ms", (long long)o->wall_ms);
    if (o->cpu_wait_ms > 0) put(buf, len, &at, ", %lld ms of it waiting for a CPU", (long long)o->cpu_wait_ms);
    put(buf, len, &at, ")");
    if (o->starved) put(buf, len, &at, ": the host was too busy to run it");
    break;
  case SQ_STATUS_CPU_LIMIT:
    put(buf, len, &at, "CPU-time limit");
    if (lim->cpu_ms > 0) put(buf, len, &at, " of %lld ms", (long long)lim->cpu_ms);
    put(buf, len, &at, " reached (used %lld ms)", (long long)o->cpu_ms);
    break;
  case SQ_STATUS_MEMORY_LIMIT: {
    put(buf, len, &at, "memory limit");
    if (lim->memory_mib > 0) put(buf, len, &at, " of %lld MiB", (long long)lim->memory_mib);
    put(buf, len, &at, " reached");
    char type[64];
    int line = 0;
    if (o->oom_killed)
      put(buf, len, &at, " (killed by the OOM killer)");
    else if (sq_reason_traceback(o->stderr_buf, o->stderr_len, type, sizeof type, NULL, 0, &line, NULL, 0))
      put(buf, len, &at, line ? " (%s at line %d)" : " (%s)", type, line);
    break;
  }
  case SQ_STATUS_OUTPUT_LIMIT:
    put(buf, len, &at, "output limit");
    if (lim->output_kib > 0) put(buf, len, &at, " of %lld KiB", (long long)lim->output_kib);
    put(buf, len, &at, " reached on %s",
        o->stdout_truncated && o->stderr_truncated ? "stdout and stderr"
        : o->stderr_truncated                      ? "stderr"
                                                   : "stdout");
    break;
  case SQ_STATUS_POLICY_VIOLATION:
    put(buf, len, &at, "killed by the seccomp policy%s%s", o->blocked_syscall[0] ? ": " : "", o->blocked_syscall);
    break;
  default: break;
  }
  return at;
}
