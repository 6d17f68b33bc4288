/* extract.h: what we need out of a model's text: the code and the risk verdict.
 *
 * Knows nothing of HTTP or the jail: input is the message content. */
#ifndef SQ_EXTRACT_H
#define SQ_EXTRACT_H

#include <stddef.h>

#include "options.h"

/* Extracts the program in language (a wire name from language.h,
 * "python", "javascript", ...) from content: the fenced blocks tagged with
 * that language (its usual spellings too: ```py, ```js, ```c++) or bare ```,
 * joined in order; prose around them is dropped; blocks tagged with another
 * language are taken only when there is nothing else (a mislabelled block
 * runs, and its verdict says what it is); CRLF becomes LF (a lone CR too);
 * an unterminated fence runs to the end. A reply without a fence is taken
 * whole when it is not empty. Returns 0 and a malloc'd string in *code
 * (the caller frees), or SQ_ELLM_REPLY with err saying why (empty reply,
 * empty block). */
int sq_extract_code(const char *content, const char *language, char **code, char *err, size_t errlen);

/* A risk verdict as the model gave it (its level and action types, with
 * their names, are in options.h). */
typedef struct {
  sq_risk_level level;
  sq_risk_action action;
  double confidence; /* 0..1; -1 when the model gave none */
  char reason[256];
} sq_risk_verdict;

/* Finds the verdict object {level, reason, action, confidence} in a reply:
 * the whole text, a fenced block, or the first object with a "level" or
 * "action" key amid prose. Lenient on types: a level or action in any case,
 * a level as 0..4, confidence as a string or a percentage (clamped to
 * 0..1), a reason of another type stringified; a missing action follows
 * the level (critical/high: block, medium: warn, else allow), a missing
 * level follows the action. Returns 0, or SQ_ELLM_REPLY with err saying
 * why (no object, neither level nor action usable). */
int sq_extract_risk(const char *content, sq_risk_verdict *out, char *err, size_t errlen);

#endif
