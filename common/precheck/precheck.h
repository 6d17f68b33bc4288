/* precheck.h: the static pre-check. Tokenizes a program (pytok.h) and reports
 * findings, each with a kind, a position and a detail; a policy decides per
 * kind whether a finding is only recorded or blocks the task before the
 * jail runs it.
 *
 * The pre-check is a tripwire for the obvious, not a sandbox: the jail is
 * what contains a program. It knows nothing of Redis, HTTP or the jail. */
#ifndef SQ_PRECHECK_H
#define SQ_PRECHECK_H

#include <stdbool.h>
#include <stddef.h>

/* Finding kinds: enum name, wire name, default action. Wire names are a
 * contract (docs/formats.md); never rename one. */
#define SQ_FINDING_MAP(X)                                                      \
  X(IMPORT, "import", SQ_PRECHECK_RECORD)                                        \
  X(DYNAMIC_IMPORT, "dynamic_import", SQ_PRECHECK_BLOCK)                         \
  X(EVAL, "eval", SQ_PRECHECK_RECORD)                                            \
  X(PROCESS, "process", SQ_PRECHECK_BLOCK)                                       \
  X(DUNDER, "dunder", SQ_PRECHECK_BLOCK)                                         \
  X(ENDLESS_LOOP, "endless_loop", SQ_PRECHECK_RECORD)                            \
  X(SYNTAX, "syntax", SQ_PRECHECK_RECORD)                                        \
  X(UNICODE_NAME, "unicode_name", SQ_PRECHECK_RECORD)                            \
  X(ENCODING, "encoding", SQ_PRECHECK_BLOCK)                                     \
  X(MODULE_WALK, "module_walk", SQ_PRECHECK_BLOCK)                               \
  X(GETATTR, "getattr", SQ_PRECHECK_BLOCK)

typedef enum {
#define X(name, str, dflt) SQ_FINDING_##name,
  SQ_FINDING_MAP(X)
#undef X
  SQ_FINDING__COUNT
} sq_finding_kind;

typedef enum { SQ_PRECHECK_RECORD = 0, SQ_PRECHECK_BLOCK = 1 } sq_precheck_action;

#define SQ_PRECHECK_ALLOWLIST_BYTES 2048

/* Plain data; part of sq_config. */
typedef struct {
  /* module names separated by commas (spaces allowed); "a" also allows
   * "a.b". An import of anything else is an "import" finding. */
  char import_allowlist[SQ_PRECHECK_ALLOWLIST_BYTES];
  sq_precheck_action action[SQ_FINDING__COUNT];
} sq_precheck_config;

/* The default allowlist: pure-computation standard modules. Under it and the
 * default actions, no HumanEval canonical solution is blocked. */
#define SQ_PRECHECK_DEFAULT_ALLOWLIST                                                                  \
  "__future__, abc, array, base64, binascii, bisect, calendar, cmath, collections, copy, "          \
  "dataclasses, datetime, decimal, difflib, enum, fractions, functools, hashlib, heapq, itertools, " \
  "json, math, numbers, operator, random, re, statistics, string, struct, sys, textwrap, time, "    \
  "typing, unicodedata"

/* Fills p with the default allowlist and actions. */
void sq_precheck_defaults(sq_precheck_config *p);

/* Wire name of a kind; never NULL. */
const char *sq_precheck_kind_name(sq_finding_kind k);
/* Parse wire names; return 0 or SQ_EINVAL. */
int sq_precheck_kind_parse(const char *name, sq_finding_kind *out);
int sq_precheck_action_parse(const char *name, sq_precheck_action *out);

/* Checks that the allowlist is names of [A-Za-z0-9_.] separated by commas
 * and spaces; returns 0 or SQ_EINVAL. */
int sq_precheck_allowlist_validate(const char *list);

#define SQ_PRECHECK_MAX_FINDINGS 64
#define SQ_PRECHECK_DETAIL_BYTES 96

typedef struct {
  sq_finding_kind kind;
  int line, col; /* 1-based, in the checked program */
  char detail[SQ_PRECHECK_DETAIL_BYTES];
} sq_precheck_finding;

/* Plain data, nothing to free. At most SQ_PRECHECK_MAX_FINDINGS are kept
 * (blocking ones before recorded ones); n_total counts all of them. */
typedef struct {
  sq_precheck_finding items[SQ_PRECHECK_MAX_FINDINGS];
  size_t n;
  size_t n_total;
  bool blocked; /* some finding's kind has the action block */
} sq_precheck_report;

/* Checks src (len bytes; any bytes are accepted) under cfg and fills out,
 * findings sorted by position. Linear in len, allocates nothing. Returns 0
 * or SQ_EINVAL on a NULL argument. */
int sq_precheck_check(const sq_precheck_config *cfg, const char *src, size_t len, sq_precheck_report *out);

/* Writes why rep blocks ("static pre-check: process 'os.system' at 3:5;
 * ..."), naming the blocking findings, into buf (truncated to len). */
void sq_precheck_reason(const sq_precheck_config *cfg, const sq_precheck_report *rep, char *buf, size_t len);

#endif
