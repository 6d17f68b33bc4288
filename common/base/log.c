/* log.c: stderr logger. One write(2) per line so lines from concurrent
 * workers sharing a terminal do not interleave; control characters in a
 * message are escaped, so no task id, field name or provider text can forge
 * a line or drive the terminal. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"

static sq_log_level g_min = SQ_LOG_INFO;
static const char *g_prog = "sandq";

void sq_log_init(const char *prog, sq_log_level min_level) {
  if (prog) g_prog = prog;
  g_min = min_level;
}

int sq_log_level_parse(const char *s, sq_log_level *out) {
  static const char *names[] = {"debug", "info", "warn", "error"};
  for (int i = 0; i < 4; i++) {
    if (s && strcasecmp(s, names[i]) == 0) {
      *out = (sq_log_level)i;
      return 0;
    }
  }
  return SQ_EINVAL;
}

const char *sq_log_escape(const char *s, char *dst, size_t dstlen) {
  size_t o = 0;
  if (!dstlen) return dst;
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    char esc[8];
    const char *add = esc;
    size_t k;
    if (*p == '\n') add = "\\n";
    else if (*p == '\r') add = "\\r";
    else if (*p == '\t') add = "\\t";
    else if (*p < 0x20 || *p == 0x7f) snprintf(esc, sizeof esc, "\\x%02x", *p);
    else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) snprintf(esc, sizeof esc, "\\u%04x", *++p); /* C1 */
    else esc[0] = (char)*p, esc[1] = '\0';
    k = strlen(add);
    if (o + k >= dstlen) break;
    memcpy(dst + o, add, k);
    o += k;
  }
  dst[o] = '\0';
  return dst;
}

void sq_log_write(sq_log_level lvl, const char *func, int line, const char *task, int with_errno,
                  const char *fmt, ...) {
  static const char *tags[] = {"DEBUG", "INFO", "WARN", "ERROR"};
  if (lvl < g_min) return;
  int saved = errno;
  char buf[4096], msg[4096];
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  int n = snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %-5s %s:%d ",
                   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                   ts.tv_nsec / 1000000, g_prog, (int)getpid(), tags[lvl], func, line);
  int m = task ? snprintf(msg, sizeof msg, "task=%s ", task) : 0;
  if (m < (int)sizeof msg) {
    va_list ap;
    va_start(ap, fmt);
    m += vsnprintf(msg + m, sizeof msg - m, fmt, ap);
    va_end(ap);
  }
  if (with_errno && m < (int)sizeof msg) snprintf(msg + m, sizeof msg - m, ": %s", strerror(saved));
  if (n < (int)sizeof buf - 2) {
    sq_log_escape(msg, buf + n, sizeof buf - 1 - (size_t)n); /* room for the newline */
    n += (int)strlen(buf + n);
  } else {
    n = (int)sizeof buf - 2;
  }
  buf[n++] = '\n';
  ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
  (void)w;
  errno = saved;
}
