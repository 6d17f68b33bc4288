/* reply.h: what we need out of an LLM reply's text.
 *
 * Knows nothing of HTTP or the jail: input is the message content. */
#ifndef SQ_REPLY_H
#define SQ_REPLY_H

#include <stddef.h>

/* Extracts Python code from content: the fenced blocks (```python, ```py
 * or bare ```), joined in order; prose around them is dropped; CRLF becomes
 * LF; an unterminated fence runs to the end. A reply without a fence is
 * taken whole when it is not empty. Returns 0 and a malloc'd string in
 * *code (the caller frees), or SQ_ELLM_REPLY with err saying why (empty
 * reply, empty block). */
int sq_reply_extract_code(const char *content, char **code, char *err, size_t errlen);

#endif
