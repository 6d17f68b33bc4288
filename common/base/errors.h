/* errors.h: every sandq error code, negative, from one X-macro list.
 *
 * Functions return 0 on success or one of these codes. Foreign errors
 * (CURLcode, hiredis err, bson_error_t, a NULL from cJSON) are converted at
 * the module boundary and logged there once. */
#ifndef SQ_ERRORS_H
#define SQ_ERRORS_H

#define SQ_ERRNO_MAP(X)                                                        \
  X(NOMEM, "out of memory")                                                    \
  X(INVAL, "invalid argument")                                                 \
  X(CONFIG, "invalid configuration")                                           \
  X(IO, "input/output error")                                                  \
  X(SYS, "system call failed")                                                 \
  X(TOOBIG, "input too large")                                                 \
  X(PARSE, "malformed input")                                                  \
  X(TASK, "invalid task")                                                      \
  X(REDIS, "redis command failed")                                             \
  X(REDIS_CONN, "cannot connect to redis")                                     \
  X(TIMEOUT, "timed out")                                                      \
  X(EMPTY, "nothing available")                                                \
  X(EXISTS, "already exists")                                                  \
  X(FENCED, "lease lost: another worker holds the task now")                   \
  X(FULL, "queue is full (max_queue_len)")                                     \
  X(EXHAUSTED, "no attempts left")                                             \
  X(NOTFOUND, "not found")                                                     \
  X(HTTP, "http request failed")                                               \
  X(LLM, "llm request failed")                                                 \
  X(LLM_REPLY, "llm reply unusable")                                           \
  X(JAIL, "jail setup failed")                                                 \
  X(BSON, "bson encoding failed")                                              \
  X(UNSUPPORTED, "not supported on this host")                                 \
  X(INTERRUPTED, "interrupted")                                                \
  X(CONFLICT, "changed by someone else meanwhile")                             \
  X(REDIS_AUTH, "redis refused the credentials or the ACL user's rights")

typedef enum {
  SQ_OK = 0,
  SQ__ERR_BASE = -100,
#define X(name, msg) SQ_E##name,
  SQ_ERRNO_MAP(X)
#undef X
  SQ__ERR_END
} sq_err;

/* Returns a static message for code; never NULL. */
const char *sq_strerror(int code);

#endif
