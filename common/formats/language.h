/* language.h: the languages a task may be written in, as one declared
 * table: each one's names, source file, compile and run commands, the
 * compiler's own budget on top of the program's limits, and the toolchain
 * files a worker probes for (docs/formats.md, "Languages").
 *
 * Pure data and a probe of the host's files (access, realpath); knows
 * nothing of the jail, Redis or HTTP. The table is static; the probe fills
 * a static copy of the resolved commands, once, before any thread starts. */
#ifndef SQ_LANGUAGE_H
#define SQ_LANGUAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run.h"

/* The languages, in table order (python first: the default). */
typedef enum {
  SQ_LANGUAGE_PYTHON = 0,
  SQ_LANGUAGE_BASH,
  SQ_LANGUAGE_JAVASCRIPT,
  SQ_LANGUAGE_TYPESCRIPT,
  SQ_LANGUAGE_C,
  SQ_LANGUAGE_CPP,
  SQ_LANGUAGE_GO,
  SQ_LANGUAGE_RUST,
  SQ_LANGUAGE_JAVA,
  SQ_LANGUAGE_RUBY,
  SQ_LANGUAGE_PHP,
  SQ_LANGUAGE_LUA,
  SQ_LANGUAGE_PERL,
  SQ_LANGUAGE__COUNT
} sq_language_id;

#define SQ_LANGUAGE_ARGV_MAX 24 /* words in a compile or run command, NULL included */
#define SQ_LANGUAGE_ENV_MAX 6   /* NAME=VALUE entries a language adds, NULL included */

/* One language. Commands are argv vectors (NULL-terminated) run in the
 * task's scratch; argv[0] is the host's path before the probe and its real
 * path after (so a symlink through /etc/alternatives needs no bind). */
typedef struct {
  const char *name;        /* wire name, "javascript" */
  const char *aliases[3];  /* other accepted names ("js", "node"), NULL-terminated */
  const char *source_name; /* the file the program is written to, "main.js" */
  const char *compile[SQ_LANGUAGE_ARGV_MAX]; /* empty ({NULL}): interpreted */
  const char *run[SQ_LANGUAGE_ARGV_MAX];
  /* The runtime started ahead of its task, the run's standby (empty: none;
   * argv[0] is run's after the probe): it starts as run would, then reads
   * the source file's name from descriptor 3 and runs that file as run
   * runs it (docs/jail-performance.md, "Standby runtimes"). */
  const char *standby[SQ_LANGUAGE_ARGV_MAX];
  const char *env[SQ_LANGUAGE_ENV_MAX];     /* added to the steps' environment */
  const char *version_flag;   /* the compiler prints its version with this (its identity in the
                                 worker's compile cache); NULL: interpreted */
  int64_t compile_wall_ms;    /* added to the run's wall clock when it compiles */
  int64_t compile_cpu_ms;     /* added to its CPU time */
  int64_t compile_memory_mib; /* the run's memory is at least this much while it compiles */
  int64_t address_space_mib;  /* RLIMIT_AS for every step (0: the memory limit); a runtime that
                                 reserves far more than it uses (the JVM) is held by the cgroup */
  uint32_t widenings;         /* SQ_JAIL_WIDEN_*: system calls beyond Python's its runs keep
                                 (docs/security.md, "Languages"); the others get EPERM */
} sq_language;

/* The entry for id; NULL when id is out of range. Before sq_language_probe
 * the commands name the host's paths; after it, their real paths. */
const sq_language *sq_language_get(sq_language_id id);

/* Finds a language by its name or an alias (exact, case-sensitive).
 * Returns 0 and *out, or SQ_EINVAL. */
int sq_language_find(const char *name, sq_language_id *out);

/* Every wire name and alias, comma-separated, for messages ("python, bash,
 * sh, ..."); static. */
const char *sq_language_all_names(void);

/* Resolves every language's commands to real paths and notes which ones
 * this host can run (python is always taken as found: the jail needs it
 * anyway). Idempotent; call once at start, before threads. Returns how many
 * were found. */
int sq_language_probe(void);

/* Whether the probe found id's toolchain (false before the probe but for
 * python). */
bool sq_language_available(sq_language_id id);

/* The names of the languages found, comma-separated, into buf (always
 * NUL-terminated when len > 0). */
void sq_language_found_names(char *buf, size_t len);

/* The jail's limits for a run of id: lim (the program's own, already
 * filled and clamped) plus the compiler's budget when id compiles, and the
 * language's address-space rule. */
void sq_language_limits(sq_language_id id, sq_jail_limits *lim);
/* The filter's widenings a run of id keeps (SQ_JAIL_WIDEN_*, for
 * sq_jail_run_opts.widenings); 0 for an id out of range. */
uint32_t sq_language_widenings(sq_language_id id);

#endif
