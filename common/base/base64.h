/* base64.h: RFC 4648 base64 (padded, no line breaks) into a buffer and back,
 * for programs and files that travel inside Python source and on stderr. */
#ifndef SQ_BASE64_H
#define SQ_BASE64_H

#include <stddef.h>

#include "util.h"

/* Appends len bytes of p to b in base64. Returns 0 or SQ_ENOMEM. */
int sq_base64_append(sq_buf *b, const void *p, size_t len);

/* Decodes n characters of strict base64 at s into out (room for n / 4 * 3
 * bytes; out may be s itself, decoding in place). Returns the decoded
 * length, or -1 when s is not padded base64 without white space. */
long sq_base64_decode(const char *s, size_t n, unsigned char *out);

#endif
