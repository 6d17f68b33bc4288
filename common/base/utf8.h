/* utf8.h: the one sanitizer for text that leaves the process: a program's
 * stdout and stderr, code and reasons going into a result (BSON) or a JSON
 * line (`sandq-worker run`).
 *
 * It keeps text, never drops it: every byte that does not begin a valid
 * UTF-8 sequence becomes U+FFFD. It is for output only; input (task ids,
 * task strings) is refused or kept byte-exact where it is read (task.c),
 * and a comparison of a program's output (expected_stdout) is made on its
 * raw bytes, before this. */
#ifndef SQ_UTF8_H
#define SQ_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* Appends s[0..len) to out as valid UTF-8 with no NUL inside.
 *
 * Valid is RFC 3629: shortest form, no surrogates (U+D800..DFFF), nothing
 * above U+10FFFF. Each byte that does not begin a valid sequence (a stray
 * continuation byte, a truncated or overlong sequence, 0xC0, 0xC1, 0xF5..FF)
 * becomes one U+FFFD (EF BF BD), and the scan resumes at the next byte.
 *
 * The NUL rule: a NUL byte (U+0000) becomes U+FFFD as well. The text is then
 * a C string whose strlen is its length, so every reader sees all of it:
 * cJSON (which ends a string at NUL), BSON readers that take a C string, logs.
 *
 * s may be NULL when len is 0. out is NUL-terminated after success. Returns
 * 0, or SQ_ENOMEM with out holding a prefix (the caller clears it). */
int sq_utf8_sanitize(const char *s, size_t len, sq_buf *out);

/* Whether s[0..len) is already what sq_utf8_sanitize would leave unchanged
 * (valid UTF-8, no NUL): the fast path for the common clean case. */
bool sq_utf8_clean(const char *s, size_t len);

#endif
