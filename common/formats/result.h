/* result.h: a task's verdict and its figures into one BSON document.
 *
 * Knows nothing of Redis or HTTP. The document layout is a contract,
 * documented in docs/formats.md. */
#ifndef SQ_RESULT_H
#define SQ_RESULT_H

#include <bson/bson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "precheck.h"
#include "status.h"

typedef struct {
  bool called;                 /* false: no "llm" sub-document */
  const char *provider;
  const char *model;
  int64_t prompt_tokens;
  int64_t completion_tokens;
  double cost_usd;
  bool usage_estimated;        /* any call's usage was estimated */
  int calls;                   /* code + risk + repair calls; tokens and cost are their totals */
  double temperature;          /* of the code and repair requests (the task's, else 0) */
  const char *reply;           /* the code request's raw reply (reply_len bytes; store_llm_reply), or NULL: none kept */
  size_t reply_len;
  bool reply_truncated;        /* reply holds its first SQ_RESULT_LLM_REPLY_MAX bytes only */
} sq_result_llm;

/* The most of an LLM reply a result keeps (llm.reply). */
#define SQ_RESULT_LLM_REPLY_MAX (16 * 1024)

/* The risk verdict (risk.h) as the result stores it; strings borrowed. */
typedef struct {
  const char *level, *action, *reason;
  double confidence;           /* < 0: written as null */
  const char *source;          /* model, fallback or cache */
  const char *decision;        /* block, warn or allow */
} sq_result_risk;

/* One self-repair round (docs/llm.md); strings borrowed. */
typedef struct {
  int round;                   /* 1.. */
  const char *code;            /* the repaired code (before tests are appended) */
  const char *status;          /* what the round's run ended as */
  int64_t prompt_tokens, completion_tokens;
} sq_result_repair;

#define SQ_RESULT_MAX_LAYERS 32
typedef struct {
  bool ran;                  /* false: no "jail" sub-document (the program did not run) */
  const char *mode;          /* "spawn" or "warm" */
  const char *layers[SQ_RESULT_MAX_LAYERS + 1]; /* names of the layers in force, NULL-terminated */
  bool oom_killed;           /* the memory cgroup's OOM killer fired */
  bool standby;              /* the program ran in a runtime started before its task (written only when true) */
} sq_result_jail;

/* One file a program left in scratch that the task fetched (fetch_files). */
typedef struct {
  char *name;          /* relative to scratch; may be invalid UTF-8 (stored sanitized) */
  unsigned char *data; /* len bytes */
  size_t len;
  bool truncated;      /* cut at the fetch budget (docs/formats.md, "Files in and out") */
} sq_result_file;

/* One case of a task with cases, as it ran (docs/formats.md, "Cases"). */
typedef struct {
  sq_status status;
  int64_t wall_ms;
} sq_result_case;

/* Borrowed pointers throughout: the result owns nothing. NULL strings are
 * written as BSON null (or omitted where docs/formats.md says so). */
typedef struct {
  const char *id;
  const char *batch;
  sq_status status;
  const char *reason;          /* why, for every status but passed and ok; may be NULL */
  const char *language;        /* the task's language ("python"); NULL: not written (it never got that far) */
  bool compile_step;           /* the language compiles: compile_cached is written */
  bool compile_cached;         /* the run placed the worker's cached build instead of compiling */
  const char *judge;           /* "isolated" or "in_process": how the tests ran; NULL: not written */
  const char *judge_reason;    /* in_process: why; may be NULL */
  int exit_code;               /* -1 when the program did not exit normally or did not run */
  int signal;                  /* 0 when none */
  const char *stdout_buf;
  size_t stdout_len;
  bool stdout_truncated;
  const char *stderr_buf;
  size_t stderr_len;
  bool stderr_truncated;
  const char *code;            /* the program that ran; may be NULL */
  int64_t queue_ms, llm_ms, exec_ms, total_ms;
  int attempts;                /* the queue's attempt this result came from (1..max_attempts); < 1: 1 */
  int64_t all_attempts_ms;     /* wall time from the first attempt's claim to this result (written as at least total_ms) */
  int64_t cpu_ms, memory_kib;  /* from the jail; 0 when it did not run */
  int64_t cpu_wait_ms;         /* how long the run waited for a CPU (credited to its wall clock) */
  const char *blocked_syscall; /* may be NULL */
  sq_result_jail jail;         /* how the program ran: mode and layers */
  const char *profile;         /* the interpreter profile it ran in; NULL: not written (did not run) */
  sq_result_llm llm;
  const char *worker;
  int64_t finished_at_ms;      /* wall clock, ms since the epoch */
  const char *metadata_json;   /* copied in as a sub-document; may be NULL */

  /* The static pre-check's report: a "findings" array. NULL when the check
   * did not run (invalid_task, llm_error): the array is then left out. */
  const sq_precheck_report *findings;
  const sq_result_risk *risk;  /* NULL: no "risk" sub-document */
  const sq_result_repair *repairs; /* n_repairs rounds; "repairs" only when n_repairs > 0 */
  int n_repairs;
  bool fetched;                /* the task had fetch_files: "files" and "files_truncated" are written */
  const sq_result_file *files; /* n_files of them */
  size_t n_files;
  const sq_result_case *cases; /* the cases that ran, in order: "cases" when the task had any */
  size_t n_cases;
  size_t n_cases_total;        /* the task's cases (the rest did not run: stop_on_failure) */
  bool tiered;                 /* the task had plus_tests: "tiers" is written */
  sq_status tier_base, tier_plus; /* each tier's status (plus: base's when base did not pass) */
} sq_result;

/* Appends r's fields to doc (an initialised, empty bson_t the caller owns).
 * Text goes through sq_utf8_sanitize (utf8.h): invalid UTF-8 and NUL are
 * replaced, never dropped. Metadata that BSON cannot hold is stored as null
 * and note (notelen bytes; may be NULL) says why, for the caller to log;
 * note is "" otherwise. Returns 0, SQ_EBSON or SQ_ENOMEM. */
int sq_result_to_bson(const sq_result *r, bson_t *doc, char *note, size_t notelen);

/* The same in the form Redis stores (sq:{Q}:results:<batch>, field: the
 * task id), which holds nothing twice: no _id and no batch (the field and
 * the key hold them), and jail.layers as an int32 bit mask (bit i: run.h's
 * i-th layer, the order docs/formats.md lists; names only ever added at the
 * end). An id or batch that needs sanitizing, or a layer name not in the
 * list, gives the full form instead. Every reader of Redis turns it back
 * with sq_result_from_stored. Returns as sq_result_to_bson. */
int sq_result_to_stored_bson(const sq_result *r, bson_t *doc, char *note, size_t notelen);

/* A stored result (len bytes, borrowed) in full into out (initialised
 * here; the caller destroys it on 0): _id (the field id) and batch first,
 * jail.layers as names. A document stored in full (its first key is _id:
 * an older sandq's, or one sq_result_to_stored_bson kept whole) is copied
 * as it is, byte for byte. Returns 0, or SQ_EBSON when stored is not a
 * valid BSON document (out untouched). */
int sq_result_from_stored(const char *id, const char *batch, const uint8_t *stored, size_t len, bson_t *out);

#endif
