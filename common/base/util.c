/* util.c: clocks, files, strings and the growable buffer. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"

static int64_t clock_ms(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sq_now_mono_ms(void) { return clock_ms(CLOCK_MONOTONIC); }
int64_t sq_now_wall_ms(void) { return clock_ms(CLOCK_REALTIME); }

void sq_utc_text(int64_t wall_ms, char *out, size_t len) {
  time_t t = (time_t)(wall_ms / 1000);
  struct tm tm;
  if (!len) return;
  if (!gmtime_r(&t, &tm) || !strftime(out, len, "%Y-%m-%d %H:%M UTC", &tm)) snprintf(out, len, "?");
}

int sq_file_read(const char *path, size_t max_bytes, char **out, size_t *len) {
  sq_buf b = {0};
  /* "-": standard input (a dup, so closing it below leaves fd 0 alone) */
  int fd = strcmp(path, "-") == 0 ? fcntl(0, F_DUPFD_CLOEXEC, 3) : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SQ_EIO;
  char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      sq_buf_clear(&b);
      errno = e;
      return SQ_EIO;
    }
    if (n == 0) break;
    if (b.len + (size_t)n > max_bytes) {
      close(fd);
      sq_buf_clear(&b);
      return SQ_ETOOBIG;
    }
    if (sq_buf_append(&b, chunk, (size_t)n) != 0) {
      close(fd);
      sq_buf_clear(&b);
      return SQ_ENOMEM;
    }
  }
  close(fd);
  if (!b.data && sq_buf_append(&b, "", 0) != 0) return SQ_ENOMEM;
  *out = b.data;
  if (len) *len = b.len;
  return 0;
}

int sq_errf(char *err, size_t errlen, int code, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

char *sq_strdup(const char *s) { return s ? strdup(s) : NULL; }

int sq_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out) {
  /* strtoll skips leading white space; trailing is refused: refuse both */
  if (!s || !*s || isspace((unsigned char)*s)) return SQ_EINVAL;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < min || v > max) return SQ_EINVAL;
  *out = v;
  return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (flag == FTW_DP) return rmdir(p) == 0 || errno == ENOENT ? 0 : -1;
  return unlink(p) == 0 || errno == ENOENT ? 0 : -1;
}

int sq_rmtree(const char *path) {
  if (nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0) return errno == ENOENT ? 0 : SQ_EIO;
  return 0;
}

static int buf_reserve(sq_buf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p) return SQ_ENOMEM;
  b->data = p;
  b->cap = cap;
  return 0;
}

int sq_buf_append(sq_buf *b, const void *p, size_t n) {
  if (buf_reserve(b, n) != 0) return SQ_ENOMEM;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}

int sq_buf_appendf(sq_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return SQ_EINVAL;
  if (buf_reserve(b, (size_t)n) != 0) return SQ_ENOMEM;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

void sq_buf_clear(sq_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}
