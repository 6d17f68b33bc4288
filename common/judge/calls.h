/* calls.h: the judge for every language but Python (docs/security.md,
 * "The judge in other languages").
 *
 * A task in another language with tests never runs them in the candidate's
 * process. The tests are read line by line against the language's rule
 * (calls_rules.c): each line is an assertion of the language's fixed form,
 * "compare CALL with EXPECTED" (MultiPL-E's templates), or one of the
 * template's structure lines; any other line makes the task invalid, named.
 * From them come two programs:
 *
 *  - the candidate's: its code, then the tests with each assertion replaced
 *    by "write the value of CALL as result I" (the language's driver,
 *    calls/<language>.*): the expected values are in no text of it;
 *  - the reference: the tests' structure with each assertion replaced by
 *    "write the value of EXPECTED as result I", and no code of the
 *    candidate's (Rust gets the candidate function's signature, with a body
 *    that never runs, for the type of a bare None or vec![]). It runs once
 *    per program text, in the jail like any program (worker/expected.c).
 *
 * Both write each value as one record on stdout, "\x1esandq-call I TEXT\n",
 * TEXT the value's canonical encoding (docs/formats.md, "Call results"):
 * one line of JSON-like text the same driver writes for equal values of
 * the language's test equality. The worker, not the candidate, compares:
 * `passed` needs every call's record, once, with the reference's text.
 *
 * A line is read to its end outside string literals: a string that holds a
 * raw newline (MultiPL-E writes some so) joins the lines it spans.
 *
 * Pure functions, no I/O. */
#ifndef SQ_CALLS_H
#define SQ_CALLS_H

#include <stdbool.h>
#include <stddef.h>

#include "language.h"
#include "run.h"

#define SQ_CALLS_MAX 4096          /* assertions in one test file */
#define SQ_CALLS_MARK "\x1esandq-call " /* a record's first bytes */

/* One line of a language's rule. pattern matches a whole line (leading and
 * trailing white space ignored; a space in it matches any run of spaces and
 * tabs, none too); "@C" captures the call, "@E" the expected value, each a
 * non-empty text balanced in (), [] and {} outside the language's string
 * literals, and "@N" a name ([A-Za-z_$][A-Za-z0-9_$]*). cand and ref are
 * what the line becomes in each program, "@C", "@E", "@N" and "@I" (the
 * assertion's index) filled in; NULL keeps the line as it is. */
typedef struct {
  const char *pattern;
  const char *cand;
  const char *ref;
} sq_calls_line;

#define SQ_CALLS_LINES_MAX 24

typedef struct {
  sq_language_id language;
  const sq_calls_line asserts[6];               /* the assertion forms (pattern NULL ends) */
  const sq_calls_line lines[SQ_CALLS_LINES_MAX]; /* the structure lines (pattern NULL ends) */
  /* Lines before the first structure line that only close the candidate's
   * code ("}"): kept in the candidate's program, dropped from the reference. */
  const char *closers[3];
  const char *quotes;        /* the characters that open a string literal ("\"'`") */
  const char *driver;        /* defines the record writer (calls/<language>.*) */
  bool driver_first;         /* the driver comes before the code (C, C++, Ruby, Lua, bash) */
  const char *ref_head;      /* the reference's first text ("class Problem {\n"), or NULL */
  const char *cand_tail;     /* after the candidate's tests, or NULL */
  const char *ref_tail;      /* after the reference's tests, or NULL */
  bool rust_signature;       /* the reference gets the candidate function's signature */
  bool go_package_main;      /* the code's "package X_test" becomes "package main", and the
                                candidate's program gets "func main() {}" when the code has none */
} sq_calls_rule;

/* The rule of language id, or NULL when it has none (Python: judge.py). */
const sq_calls_rule *sq_calls_rule_of(sq_language_id id);

/* The two programs of a task in language id with code and tests. */
typedef struct {
  char *candidate; /* the code and the driver's calls (malloc'd) */
  char *reference; /* the driver's expected values, none of the code's (malloc'd) */
  size_t n_calls;  /* records each must write */
} sq_calls_plan;

/* Builds p. Returns 0; SQ_EINVAL with a message naming the first line that
 * fits no form of the rule (err, len bytes, always NUL-terminated), or when
 * the tests hold no assertion; SQ_ENOMEM. On failure p is zeroed. */
int sq_calls_plan_build(sq_language_id id, const char *code, const char *tests, sq_calls_plan *p, char *err,
                        size_t len);
void sq_calls_plan_clear(sq_calls_plan *p);

/* The records of one run, taken off its stdout. */
typedef struct {
  char **text;    /* text[i]: result i's encoding (malloc'd), or NULL when none came */
  size_t n;       /* the calls expected */
  size_t written; /* records found for an index < n */
  bool twice;     /* some index came more than once (its first text kept) */
  bool stray;     /* a record for an index >= n, or one that does not parse */
} sq_calls_results;

/* Removes every record from buf (len updated, still NUL-terminated) and
 * fills r with those for indexes below n. Returns 0 or SQ_ENOMEM. */
int sq_calls_take(char *buf, size_t *len, size_t n, sq_calls_results *r);
void sq_calls_results_clear(sq_calls_results *r);

/* The reference's values as one text (a record per line, "I TEXT"), for
 * the worker's cache; NULL (SQ_EINVAL into *rc) when the reference did not
 * write every record exactly once, or out of memory (SQ_ENOMEM). */
char *sq_calls_results_pack(const sq_calls_results *r, int *rc);
/* The inverse: r from a packed text. Returns 0, SQ_EINVAL or SQ_ENOMEM. */
int sq_calls_results_unpack(const char *packed, size_t n, sq_calls_results *r);

/* The reference run's outcome o (workspace.py's blocks still on its
 * stderr: they are taken off) into its packed values (malloc'd); NULL with
 * why when it did not compile, did not exit 0, or did not write each of
 * its n records once. */
char *sq_calls_reference_take(sq_jail_outcome *o, size_t n, char *why, size_t len);

/* Compares the candidate's records with the reference's: true when every
 * call wrote exactly the reference's text, once, and nothing stray. Else
 * false and why into why (len bytes): the first call that differs with
 * both texts (cut), the first missing one, a record written twice. */
bool sq_calls_judge(const sq_calls_results *cand, const sq_calls_results *ref, char *why, size_t len);

#endif
