/* task.h: a task off the wire (one JSON object) into a plain struct.
 *
 * Knows nothing of Redis, HTTP or the jail. The wire format is documented in
 * docs/formats.md. */
#ifndef SQ_TASK_H
#define SQ_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "language.h"
#include "run.h"

#define SQ_TASK_ID_MAX 128 /* bytes in an id or batch name */
/* The batch of results for payloads whose own batch cannot be read (not a
 * JSON object, or no valid id): docs/formats.md. */
#define SQ_TASK_INVALID_BATCH "_invalid"
#define SQ_TASK_IDEM_MAX 256 /* bytes in an idempotency_key */
/* The least limits.memory_mib a task may ask for (the config's floor too:
 * Python does not start in less). */
#define SQ_TASK_MEMORY_MIB_MIN 16

/* Files in and out of a task (docs/formats.md, "Files in and out"). */
#define SQ_TASK_FILES_MAX 256               /* files a task may carry in */
#define SQ_TASK_FILES_BYTES_MAX (8u << 20)  /* their decoded bytes, all together */
#define SQ_TASK_FILE_NAME_MAX 255           /* bytes in a file's relative name or a fetch glob */
#define SQ_TASK_FETCH_MAX 32                /* globs in fetch_files */
#define SQ_TASK_FETCH_FILES_MAX 256         /* files a result carries out; more are listed as truncated */
#define SQ_TASK_FETCH_BYTES_MAX (1u << 20)  /* their bytes, all together; past it a file is cut and listed */
/* The name the program itself takes in scratch: no task file may use it. */
#define SQ_TASK_PROGRAM_NAME "main.py"

/* The language of code: python (the default) or one of language.h's. */
typedef sq_language_id sq_task_language;
#define SQ_TASK_PYTHON SQ_LANGUAGE_PYTHON
#define SQ_TASK_BASH SQ_LANGUAGE_BASH

/* One file a task carries into scratch: its content stays base64 (the
 * program that writes it decodes it inside the jail). */
typedef struct {
  char *name;      /* relative path, checked: no "..", no ".", not absolute, not main.py */
  char *base64;    /* RFC 4648 with padding, checked */
  size_t bytes;    /* decoded size */
} sq_task_file;

/* Cases: one program, many inputs (docs/formats.md, "Cases"). */
#define SQ_TASK_CASES_MAX 10000 /* cases in one task */

/* One case: the program's stdin and the stdout it must print. */
typedef struct {
  char *stdin_text;      /* may be "" */
  char *expected_stdout;
} sq_task_case;

/* How a case's stdout is compared with its expected_stdout. */
typedef enum {
  SQ_CHECKER_TOKENS = 0, /* the default: white-space separated tokens equal */
  SQ_CHECKER_EXACT,      /* the bytes equal */
  SQ_CHECKER_FLOAT       /* tokens equal, or both numbers within tolerance */
} sq_checker_kind;

typedef struct {
  sq_checker_kind kind;
  double tolerance; /* SQ_CHECKER_FLOAT: |got - want| <= tolerance * max(1, |want|) */
} sq_task_checker;

/* Which list a task waits in; the queue claims high before normal before low. */
typedef enum { SQ_TASK_NORMAL = 0, SQ_TASK_HIGH, SQ_TASK_LOW } sq_task_priority;

typedef struct {
  char *id;              /* required */
  char *batch;           /* set by the producer; "default" when absent */
  char *prompt;          /* may be NULL when code is set */
  char *code;            /* may be NULL when prompt is set */
  char *tests;           /* may be NULL */
  char *entry_point;     /* may be NULL */
  char *expected_stdout; /* may be NULL */
  sq_jail_limits limits; /* 0 fields: worker default */
  char *metadata_json;   /* the metadata object as JSON text, or NULL */
  int64_t enqueued_at_ms;/* set by the producer; 0 when absent */
  sq_task_priority priority; /* "priority": "high" | "normal" | "low" */
  char *idempotency_key; /* NULL when absent; deduplicated by the producer's push */
  double temperature;    /* sampling temperature in [0, 2] for the LLM; < 0 when absent (0 is sent) */
  char *model;           /* the model to ask for instead of the provider's; NULL when absent */
  sq_task_language language; /* "language"; python when absent */
  sq_task_file *files;   /* "files": n_files of them, NULL when absent */
  size_t n_files;
  char **fetch_files;    /* "fetch_files": n_fetch globs, NULL when absent */
  size_t n_fetch;
  sq_task_case *cases;   /* "cases": n_cases of them, NULL when absent */
  size_t n_cases;
  sq_task_checker checker; /* "checker"; tokens when absent */
  bool stop_on_failure;  /* "stop_on_failure"; true when absent */
  char *plus_tests;      /* "plus_tests": the plus tier's tests (evalplus), run when tests pass; may be NULL */
  char *profile;         /* "profile": the interpreter profile's name; NULL when absent ("default") */
} sq_task;

/* Parses and validates one task of len bytes (need not be NUL-terminated).
 * Returns 0 and a task in *out, or:
 *   SQ_ETOOBIG  len > max_bytes (when max_bytes > 0)
 *   SQ_EPARSE   not a JSON object
 *   SQ_ETASK    a field is unknown, of the wrong type, out of range, or a
 *               string holds a NUL character (raw or \u0000: refused, never
 *               cut short)
 * On error err names the field and the reason, and *out is still set when
 * at least the id could be recovered (with batch and metadata when valid, so
 * the error can be reported against the task; a task over max_bytes is read
 * for them too, up to 64 MiB); otherwise *out is NULL. The caller frees *out
 * with sq_task_free. */
int sq_task_parse(const char *buf, size_t len, size_t max_bytes, sq_task **out, char *err,
                  size_t errlen);

/* Whether name (NUL-terminated) is a file name a task may carry or fetch:
 * 1-SQ_TASK_FILE_NAME_MAX bytes of valid UTF-8 without control characters,
 * relative, no empty, "." or ".." component. Pure; for the parser and its
 * tests. */
bool sq_task_relative_name_ok(const char *name);

/* Frees a task; NULL is a no-op. */
void sq_task_free(sq_task *t);

/* For a payload sq_task_parse refused without a task (no valid id, too
 * large): the id and batch its result is filed under, so the batch that
 * counted it still finishes. id gets its "id" when valid, else "";
 * batch its "batch" when valid, "default" when absent, else
 * SQ_TASK_INVALID_BATCH; an id or batch holding a NUL character is never
 * taken. Returns 0, SQ_ENOMEM, SQ_EPARSE (not a JSON object) or
 * SQ_ETOOBIG (over SQ_TASK_SALVAGE_MAX bytes, not parsed); both leave id ""
 * and batch SQ_TASK_INVALID_BATCH. */
#define SQ_TASK_SALVAGE_MAX ((size_t)64 << 20)
int sq_task_salvage(const char *buf, size_t len, char id[SQ_TASK_ID_MAX + 1], char batch[SQ_TASK_ID_MAX + 1]);

/* Rewrites one task line for the wire: sets "batch" and "enqueued_at_ms"
 * (every earlier member of those names goes). The input must be a JSON
 * object (it is not otherwise validated). The output may be longer than
 * the input (the stamp, and numbers printed again): check its size against
 * max_task_kib after stamping. Returns 0 and a malloc'd NUL-terminated
 * string in *out, or SQ_EPARSE (not one JSON object: trailing bytes after
 * it count as not one, since printing it again would drop them), SQ_ETASK (a string
 * holds a NUL character, which printing again would lose) or SQ_ENOMEM. */
int sq_task_stamp(const char *buf, size_t len, const char *batch, int64_t now_ms, char **out);

/* Assembles the program that runs: code, then tests, then
 * check(<entry_point>) when entry_point is set. Returns 0 and a malloc'd
 * string in *out (caller frees), or SQ_ENOMEM. */
int sq_task_program(const sq_task *t, const char *code, char **out);

#endif
