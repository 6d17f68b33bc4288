/* log.h: the one logger. Levels, the task id where there is one, and the
 * caller's function and line, one line per event on stderr. */
#ifndef SQ_LOG_H
#define SQ_LOG_H

#include <stddef.h>

typedef enum { SQ_LOG_DEBUG = 0, SQ_LOG_INFO, SQ_LOG_WARN, SQ_LOG_ERROR } sq_log_level;

/* Sets the minimum level printed (default INFO) and the program name. */
void sq_log_init(const char *prog, sq_log_level min_level);
/* Parses "debug|info|warn|error"; returns 0 or SQ_EINVAL. */
int sq_log_level_parse(const char *s, sq_log_level *out);

/* task may be NULL. with_errno appends ": strerror(errno)". */
void sq_log_write(sq_log_level lvl, const char *func, int line, const char *task, int with_errno,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Copies s (NULL reads as "") into dst, dstlen bytes, always terminated
 * and cut short to fit, with control characters escaped: \n \r \t as
 * such, other C0 bytes and DEL as \xHH, C1 controls (UTF-8 U+0080-U+009F)
 * as \u00HH. Every log line goes through it; so should terminal output of
 * text from tasks, results or providers. Returns dst. */
const char *sq_log_escape(const char *s, char *dst, size_t dstlen);

#define SQ_LOGT(lvl, task, ...) sq_log_write(lvl, __func__, __LINE__, task, 0, __VA_ARGS__)
#define SQ_DEBUG(...) sq_log_write(SQ_LOG_DEBUG, __func__, __LINE__, NULL, 0, __VA_ARGS__)
#define SQ_INFO(...) sq_log_write(SQ_LOG_INFO, __func__, __LINE__, NULL, 0, __VA_ARGS__)
#define SQ_WARN(...) sq_log_write(SQ_LOG_WARN, __func__, __LINE__, NULL, 0, __VA_ARGS__)
#define SQ_ERROR(...) sq_log_write(SQ_LOG_ERROR, __func__, __LINE__, NULL, 0, __VA_ARGS__)
/* Like SQ_ERROR/SQ_WARN with ": strerror(errno)" appended. */
#define SQ_PERROR(...) sq_log_write(SQ_LOG_ERROR, __func__, __LINE__, NULL, 1, __VA_ARGS__)
#define SQ_PWARN(...) sq_log_write(SQ_LOG_WARN, __func__, __LINE__, NULL, 1, __VA_ARGS__)

#endif
