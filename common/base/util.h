/* util.h: small helpers shared by every module: clocks, files, strings. */
#ifndef SQ_UTIL_H
#define SQ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC (durations) and CLOCK_REALTIME (stamps). */
int64_t sq_now_mono_ms(void);
int64_t sq_now_wall_ms(void);

/* Reads a whole file ("-": standard input) into a NUL-terminated buffer the caller frees.
 * Returns 0, SQ_EIO (errno kept) or SQ_ETOOBIG when larger than max_bytes. */
int sq_file_read(const char *path, size_t max_bytes, char **out, size_t *len);

/* Formats a message into err (errlen bytes; err may be NULL) and returns
 * code: the one way modules report "what was wrong" next to an SQ_E* code. */
int sq_errf(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* strdup that returns NULL for NULL. */
char *sq_strdup(const char *s);

/* Parses a whole decimal integer in [min,max]; returns 0 or SQ_EINVAL. */
int sq_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

/* write(2) until all n bytes are written (EINTR retried). 0, or -1 with
 * errno set. Async-signal-safe (base/write_all.c). */
int sq_write_all(int fd, const void *data, size_t n);

/* Removes a directory tree (no symlink following). Returns 0 or SQ_EIO. */
int sq_rmtree(const char *path);

/* A growable byte buffer. Always NUL-terminated after a successful append. */
typedef struct {
  char *data;
  size_t len;
  size_t cap;
} sq_buf;

int sq_buf_append(sq_buf *b, const void *p, size_t n);
int sq_buf_appendf(sq_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees the data and zeroes the buffer. */
void sq_buf_clear(sq_buf *b);

#endif
