/* json_scan.h: what cJSON hides about JSON text. cJSON hands strings out
 * NUL-terminated, so "a\u0000b" reads as "a" and the rest is lost without a
 * word; callers that must not lose bytes find such strings here first and
 * refuse them (docs/formats.md, "Strings"). */
#ifndef SQ_JSON_SCAN_H
#define SQ_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* Scans text (len bytes, need not be NUL-terminated) that cJSON accepted as
 * an object and sets nul[i] for each top-level member i (in document order,
 * which is the order cJSON keeps them in; only i < n are set) whose name or
 * value, nested values included, holds a NUL character, raw or written
 * \u0000. Entries of nul for clean members are left as they are. Returns how
 * many members hold one (counting those past n too). Text that is not valid
 * JSON gives a meaningless but bounded answer. */
size_t sq_json_nul_members(const char *text, size_t len, bool *nul, size_t n);

/* Why a string holding NUL is refused, for "FIELD: <reason>" messages. */
extern const char sq_json_nul_reason[];

/* Whether anything but JSON white space (space, tab, CR, LF) follows the
 * one value a parser read from text (len bytes): end is where it stopped
 * (cJSON_ParseWithLengthOpts's return_parse_end; NULL counts as len).
 * Returns the offset of the first trailing byte, or len when there is none.
 * Every reader of one JSON value per line or per file refuses trailing
 * bytes: "{...}{...}" would otherwise lose its second object without a word. */
size_t sq_json_trailing_at(const char *text, size_t len, const char *end);

#endif
