/* workspace.h: the program the jail runs for a task with files, fetch_files
 * or a language other than Python, and the files it sends back on stderr.
 *
 * workspace.py (embedded at build time) runs inside the jail: it writes the
 * task's files into scratch, runs the program (Python, or bash), then
 * writes the files that match fetch_files and are new or changed as a
 * block on stderr between marks holding a nonce it drew before anything
 * of the task ran ("sandq-files:NONCE:begin" first, then ":out" ...
 * ":end"). The jail sees a Python program and its output, nothing more
 * (docs/formats.md, "Files in and out"; docs/security.md).
 *
 * Knows nothing of the jail beyond its outcome; pure functions, no I/O. */
#ifndef SQ_WORKSPACE_H
#define SQ_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>

#include "result.h"
#include "run.h"
#include "task.h"

/* Output the worker adds to a run's output_kib when the task fetches files:
 * the block of SQ_TASK_FETCH_BYTES_MAX bytes in base64 with its names and
 * marks. The program's own output is held to the task's cap afterwards
 * (sq_workspace_take_files). */
#define SQ_WORKSPACE_OUTPUT_KIB 1600

/* One file back from a run (result.h's, past SQ_TASK_FETCH_FILES_MAX
 * listed truncated without bytes); owned by sq_workspace_files. */
typedef sq_result_file sq_workspace_file;

/* A compile step's products: the new files at the top of scratch, as the
 * compiler left them, before the program ran (workspace.py send_build).
 * Owns its names and bytes: release with sq_workspace_build_clear. */
typedef struct {
  char *name;
  unsigned char *data;
  size_t len;
  bool executable;
} sq_workspace_build_file;

typedef struct {
  sq_workspace_build_file *files;
  size_t n;
  size_t bytes; /* the files' lengths, summed */
} sq_workspace_build;

/* How a compiled language's run gets its build (sq_workspace_program). */
typedef struct {
  const sq_workspace_build *cached; /* place these files and skip the compile (NULL: compile) */
  size_t emit_max_bytes;            /* after a compile that succeeds, send the products back when
                                       at most this many bytes together (0: never) */
} sq_workspace_build_use;

typedef struct {
  bool sent;              /* the block arrived whole (false: the program ended before it) */
  bool compile_error;     /* the compiler refused the program (its mark was on stderr): it never ran */
  bool standby;           /* the program ran in a standby runtime started before its task (its mark) */
  sq_workspace_file *files;
  size_t n;
  sq_workspace_build build; /* the compile step's products, when it sent them (n == 0: it did not) */
} sq_workspace_files;

/* Whether t runs through workspace.py: files, fetch_files, or bash. */
bool sq_workspace_applies(const sq_task *t);

/* Assembles the program for t around inner (what would run otherwise: for
 * Python the listing or the harness program, for the other languages the
 * listing, code then tests). run: the program's own limits (a compiled
 * language's run is held to them after the compiler's step; NULL: only the
 * jail's). build: a compiled language's cached build or the request to
 * send one back (NULL: compile, send nothing). prelude: the run may find
 * sq_workspace_source() loaded as the jail's prelude
 * (sq_jail_prelude_in_force): the program calls that copy when it is
 * there, else loads its own (compiled.h). Returns 0 and a malloc'd
 * NUL-terminated string in *out (caller frees), or SQ_ENOMEM. */
int sq_workspace_program(const sq_task *t, const char *inner, const sq_jail_limits *run,
                         const sq_workspace_build_use *build, bool prelude, char **out);

/* The standby request of t's run (sq_jail_run_opts.standby): the runtime a
 * warm slot starts ahead for the next such run, with its limits, for
 * languages whose table entry has a standby command; the same text goes
 * into the program, which takes a standby only
 * when its request is this one (docs/jail-performance.md, "Standby
 * runtimes"). run: as for sq_workspace_program. Writes it NUL-terminated
 * into buf (len bytes) and returns its length, 0 when there is none (or
 * it does not fit), or SQ_ENOMEM. */
#define SQ_WORKSPACE_STANDBY_MAX 2048
int sq_workspace_standby(const sq_task *t, const sq_jail_limits *run, char *buf, size_t len);

/* workspace.py's source: the jail's prelude on a warm worker
 * (sq_jail_config.prelude; its rehearse() runs in each full zygote). Static. */
const char *sq_workspace_source(void);

/* The first diagnostic of a compile_error run's stderr (the first line
 * naming an error, else the first line that is not blank), at most len - 1
 * bytes into buf (always NUL-terminated when len > 0). */
void sq_workspace_compile_reason(const sq_jail_outcome *o, char *buf, size_t len);

/* Takes the block off o's stderr (stderr updated, still NUL-terminated) and
 * fills f with the files in it (release with sq_workspace_files_clear).
 * A build block is taken only where workspace.py writes it, right after
 * the begin mark, which is before the program starts: nothing the program
 * writes can stand in for it (f->build).
 * A stderr that does not begin with the begin mark is left as it is (f
 * empty). Then holds stdout and stderr to output_kib (the task's own cap,
 * before SQ_WORKSPACE_OUTPUT_KIB was added): output past it is cut, marked
 * truncated, and a run that ended otherwise normally becomes
 * SQ_JAIL_OUTPUT_LIMIT. Returns 0 or SQ_ENOMEM. */
int sq_workspace_take_files(sq_jail_outcome *o, int64_t output_kib, sq_workspace_files *f);

/* Frees f's files and build and zeroes it; safe on a zeroed one. */
void sq_workspace_files_clear(sq_workspace_files *f);

/* Frees b's files and zeroes it; safe on a zeroed one. */
void sq_workspace_build_clear(sq_workspace_build *b);

#endif
