/* status.h: the task statuses. Their names are a contract with every reader
 * of results (docs/formats.md); never rename one. */
#ifndef SQ_STATUS_H
#define SQ_STATUS_H

#define SQ_STATUS_MAP(X)                                                       \
  X(PASSED, "passed")                                                          \
  X(FAILED, "failed")                                                          \
  X(OK, "ok")                                                                  \
  X(RUNTIME_ERROR, "runtime_error")                                            \
  X(TIMEOUT, "timeout")                                                        \
  X(CPU_LIMIT, "cpu_limit")                                                    \
  X(MEMORY_LIMIT, "memory_limit")                                              \
  X(OUTPUT_LIMIT, "output_limit")                                              \
  X(POLICY_VIOLATION, "policy_violation")                                      \
  X(BLOCKED, "blocked")                                                        \
  X(LLM_ERROR, "llm_error")                                                    \
  X(INVALID_TASK, "invalid_task")                                              \
  X(CANCELLED, "cancelled")                                                    \
  X(COMPILE_ERROR, "compile_error")

typedef enum {
#define X(name, str) SQ_STATUS_##name,
  SQ_STATUS_MAP(X)
#undef X
  SQ_STATUS__COUNT
} sq_status;

/* Returns the wire name ("passed"); never NULL. */
const char *sq_status_name(sq_status s);
/* Parses a wire name; returns 0 or SQ_EINVAL. */
int sq_status_parse(const char *name, sq_status *out);

#endif
