/* jail.h: run one program under limits and report what happened. Every
 * language's task runs here: the interpreter runs the program's text, and
 * a task in another language comes as a Python program that compiles and
 * runs it with its toolchain (common/judge/workspace.py).
 *
 * The jail takes a program, limits and a scratch root, and nothing else: it
 * knows nothing of Redis, HTTP, the LLM or the task format, so it can be
 * tested, fuzzed and benchmarked alone. The containment steps live in
 * jail_contain.c and run in order from one function that reads as a
 * checklist. */
#ifndef SQ_JAIL_H
#define SQ_JAIL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run.h"

/* What sq_jail_probe found for one layer. */
typedef struct {
  uint32_t layer;
  bool ok;
  char detail[400]; /* why not, or how */
} sq_jail_probe_line;

/* An interpreter profile: what its runs see besides the standard library
 * (jail_profile.c). Every string is copied by sq_jail_new. Lists are
 * NULL-terminated; NULL is an empty list. */
#define SQ_JAIL_PROFILE_LIST_MAX 16 /* entries in each list */
typedef struct {
  const char *const *packages; /* host directories put on sys.path, in order, and shown read-only in the
                                  root (absolute; a venv's site-packages, a Debian dist-packages) */
  const char *const *preload;  /* modules a warm zygote imports before it forks (the lean ones import none) */
  const char *const *env;      /* "NAME=VALUE" added to every run's environment */
} sq_jail_profile;

typedef struct {
  const char *python_path; /* interpreter, e.g. /usr/bin/python3 */
  const sq_jail_profile *profile; /* or NULL: the standard library only (`python3 -I -S`) */
  const char *scratch_root; /* per-run scratch dirs (and the roots' mount point) below it */
  sq_jail_mode mode;        /* default for runs */
  int pool_size;            /* warm zygotes with the common modules imported (0: none started; warm
                               runs then fail), started when the first run asks for one; as many
                               lean ones, within 32 in all, start with the pool */
  bool one_run;             /* the runner serves one run (a command line's): no zygote is started
                               for runs to come, so a program that imports runs on a lean one and
                               freeing the runner waits for no start */
  const char *prelude;      /* or NULL. Python source each full warm zygote runs once, before its
                               first fork, as the module sandq_prelude, then its rehearse(DIR),
                               when defined, with a scratch directory of its own. A run whose
                               program names sandq_prelude goes to a full zygote, where it finds
                               the module in sys.modules as the fork left it (zygote.py); on a lean
                               one (the full ones starting or down) it does not, and must carry
                               its own. A zygote whose prelude fails does not start. Copied. */
} sq_jail_config;

typedef struct sq_jail sq_jail;

/* What a run asks of the jail besides its limits (sq_jail_run_task): none
 * of it is a limit, none is set in configuration, none is filled or
 * clamped by sq_jail_limits_apply. A zeroed one, or NULL, asks nothing. */
typedef struct {
  /* The system calls beyond Python's this run's filter keeps
   * (SQ_JAIL_WIDEN_* bits, its language's: sq_language_widenings; 0:
   * none). */
  uint32_t widenings;
  /* The run's standby request (NUL-terminated, at most 2 KiB; NULL: none),
   * from its language (sq_workspace_standby): on a warm pool, the slot's
   * next child starts that runtime before its task is known, and a later
   * run with the same request takes it instead of starting its own
   * (docs/jail-performance.md, "Standby runtimes"). Owned by the caller
   * for the run. */
  const char *standby;
  /* The caller's stop flag (NULL: none). Once *stop is non-zero the run's
   * tree is killed within about 100 ms (the outcome shows a kill); the
   * flag must outlive the run. */
  const atomic_int *stop;
} sq_jail_run_opts;

/* Creates a jail runner. cfg strings are copied. Probes which layers the
 * host enforces and logs a warning naming each missing one. In warm mode
 * starts cfg->pool_size zygotes: each is started by execve with the fixed
 * environment, so it carries nothing of the caller's memory or secrets;
 * still, create the runner before loading secrets where you can.
 * Whatever the profile, Debian's package directories (dist-packages) not
 * among its packages are hidden under an empty read-only directory.
 * Returns 0, SQ_ENOMEM, SQ_EINVAL (a bad profile: logged, naming the
 * entry), or SQ_EJAIL (scratch root unusable, or the pool could not
 * start). */
int sq_jail_new(const sq_jail_config *cfg, sq_jail **out);
/* Frees the runner; NULL is a no-op. */
void sq_jail_free(sq_jail *j);


/* The largest program the jail runs (main.py in a scratch tmpfs of 64 MiB,
 * under RLIMIT_FSIZE 16 MiB): a larger one fails with SQ_ETOOBIG before
 * anything starts, the limit named in outcome->error. */
#define SQ_JAIL_PROGRAM_MAX_BYTES (16 << 20)

/* Runs program (Python source, program_len bytes) under lim, in the
 * runner's mode. Thread-safe: several threads may call it at once on one
 * runner (each run takes a slot: its own uid, cgroups and, in warm mode,
 * its own zygote); at most 64 runs at once (more fail with SQ_EJAIL);
 * warm runs beyond pool_size wait for a zygote. The outcome's buffers are
 * owned by the caller: release with sq_jail_outcome_clear.
 * Returns 0 when the program ran (whatever its end), or a negative SQ_E*
 * code (outcome->end is then SQ_JAIL_SETUP_ERROR and outcome->error says
 * why): SQ_ETOOBIG for a program over SQ_JAIL_PROGRAM_MAX_BYTES, SQ_EINVAL
 * for a bad argument (both the caller's), anything else (SQ_EJAIL,
 * SQ_ENOMEM) when the host could not set the jail up. Nothing a program
 * does makes a run fail: whatever it does to its warm zygote is its own
 * verdict (the zygote is replaced). task_id is used for logging only and
 * may be NULL. */
int sq_jail_run(sq_jail *j, const char *program, size_t program_len, const sq_jail_limits *lim,
                const char *task_id, sq_jail_outcome *outcome);
/* Same, for a program that wraps a task's own text (source, source_len:
 * the test harness around the code and its tests). The warm pool keeps two
 * kinds of zygote, with the common modules imported and without (a lean
 * one forks cheaper); the jail reads source, or program when source is
 * NULL, to choose: text that never says "import" takes a lean one. Only
 * the cost differs: a module imported on a lean zygote is imported then.
 * input (NULL: none), when given, is the program's stdin (fd 0, a memfd
 * read from its start; at most SQ_JAIL_PROGRAM_MAX_BYTES, else SQ_ETOOBIG);
 * it is never written where the program's files are: the test harness
 * passes the tests to its judge this way (common/judge/judge.py). Without
 * input, stdin is /dev/null. opts (NULL: nothing asked) is the caller's
 * and read while the call lasts. */
int sq_jail_run_task(sq_jail *j, const char *program, size_t program_len, const char *source, size_t source_len,
                     const char *input, size_t input_len, const sq_jail_limits *lim, const sq_jail_run_opts *opts,
                     const char *task_id, sq_jail_outcome *outcome);
/* Same as sq_jail_run, in the mode given (warm needs a pool: pool_size > 0),
 * asking nothing besides lim (as sq_jail_run). */
int sq_jail_run_mode(sq_jail *j, sq_jail_mode mode, const char *program, size_t program_len,
                     const sq_jail_limits *lim, const char *task_id, sq_jail_outcome *outcome);

/* Layers this runner enforces (spawn mode). */
uint32_t sq_jail_layers(const sq_jail *j);

/* The mode runs take (sq_jail_run): the configured one, or spawn when warm
 * mode was asked for on a host without pid and mount namespaces (not root,
 * or root without CAP_SYS_ADMIN: docs/security.md, "Without root"). Then
 * *why (when not NULL) says so; else it is set to NULL. */
sq_jail_mode sq_jail_mode_in_force(const sq_jail *j, const char **why);

/* Whether runs (sq_jail_run, sq_jail_run_task) that name sandq_prelude
 * may find cfg->prelude loaded: a prelude was given and runs take warm
 * zygotes (see sq_jail_config.prelude for when they do not). */
bool sq_jail_prelude_in_force(const sq_jail *j);

/* Why this host gives no namespaces, for messages: "not root", "root
 * without CAP_SYS_ADMIN (...)", or NULL when it does. */
const char *sq_jail_ns_missing_reason(void);

/* Probes each layer on this host for `sandq-worker check`: fills up to max
 * lines (one per layer, SQ_JAIL_LAYER_COUNT suffices) and returns how many.
 * python_path is used to try a real run of the interpreter's needs. */
int sq_jail_probe(const char *python_path, sq_jail_probe_line *lines, int max);

/* Kills what runs in every cgroup this process made for its runs and
 * removes them, and makes none from then on: for a process about to end at
 * once (_exit), which would otherwise leave them to the next worker's
 * start-up sweep. Any thread. */
void sq_jail_cgroups_remove(void);


#endif
