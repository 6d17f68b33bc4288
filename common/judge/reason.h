/* reason.h: why a run ended as it did, in one line for a result's "reason":
 * the failing assertion's line and message, the first line where stdout
 * differs from expected_stdout, the limit that was hit, the exception's type
 * and message. A pure function of the jail's outcome, the task's
 * expectation and the limits in force: no I/O. docs/formats.md lists the
 * forms. */
#ifndef SQ_REASON_H
#define SQ_REASON_H

#include <stddef.h>

#include "run.h"
#include "status.h"

/* Largest useful reason buffer: longer reasons are cut (at a UTF-8 boundary). */
#define SQ_REASON_MAX 512

/* Writes the reason for status (as decided by sq_verdict_decide from o) into
 * buf (len > 0; always NUL-terminated). Statuses that need none (passed, ok,
 * and those the jail never gives: blocked, llm_error, invalid_task) give "".
 * o is required; lim (the limits the run had) and expected_stdout may be
 * NULL. Returns the length written. */
size_t sq_reason_build(sq_status status, const sq_jail_outcome *o, const sq_jail_limits *lim,
                       const char *expected_stdout, char *buf, size_t len);

/* The exception a Python traceback on stderr ended in: copies its type
 * ("ZeroDivisionError") into type, its message's first line into msg, and
 * the line number of the innermost frame in a file named "main.py" (else the
 * innermost frame) into *line (0 when there is none), with that frame's
 * source line into src. Returns 1 when a traceback was found, else 0 (the
 * outputs then empty). Any output buffer may be NULL with a 0 length. */
int sq_reason_traceback(const char *err, size_t err_len, char *type, size_t type_len, char *msg, size_t msg_len,
                        int *line, char *src, size_t src_len);

/* The kind of a reason, for grouping failures: the reason up to its first
 * ": ", " at line", " (" or " after " ("ZeroDivisionError", "assertion
 * failed", "stdout differs", "wall-clock limit of 2000 ms reached", "llm"),
 * into buf (len > 0; always terminated). NULL or "" gives "". A case's
 * reason ("case 3: ...") gives the kind of what follows, "wrong output"
 * for the checker's. */
void sq_reason_kind(const char *reason, char *buf, size_t len);

#endif
