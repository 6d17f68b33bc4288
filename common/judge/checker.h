/* checker.h: a case's stdout against its expected_stdout, by the task's
 * checker (docs/formats.md, "Cases"): exact bytes, white-space separated
 * tokens, or tokens with numbers compared within a tolerance.
 *
 * Pure functions, no I/O. */
#ifndef SQ_CHECKER_H
#define SQ_CHECKER_H

#include <stdbool.h>
#include <stddef.h>

#include "task.h"

/* Whether got (got_len bytes, may hold NULs) matches want under c. When it
 * does not, why (why_len bytes, NUL-terminated) says where: "expected `7`,
 * got `-7`" for the first differing token (each cut to a few dozen bytes),
 * "got `x` past the expected end" or "expected `x`, got the end of output".
 * why may be NULL. */
bool sq_checker_match(const sq_task_checker *c, const char *got, size_t got_len, const char *want, char *why,
                      size_t why_len);

#endif
