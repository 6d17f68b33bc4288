/* jail_internal.h: what the jail's files share and nobody else sees: the
 * child's checklist input, the compiled seccomp filter, the zygote loop, the
 * cgroup handle, the supervision loop and the exit codes the parent reads
 * back. */
#ifndef SQ_JAIL_INTERNAL_H
#define SQ_JAIL_INTERNAL_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "jail.h"
#include "jail_plan.h"    /* a run's limits worked out once, the fixed rlimits */
#include "jail_seccomp_install.h" /* sq__jail_seccomp_install, sq__jail_seccomp_narrow */
#include "zygote_proto.h" /* the warm zygote's protocol; and sq__jail_send_fds, sq__jail_recv_fds */

/* The exit code a child uses when a containment step fails before exec
 * (jail_contain.c). Never read as a signal: a program may exit with any
 * status. Setup failures travel out of band (the status pipe in spawn mode,
 * an "e" or "x" message from a warm zygote). The program itself runs as
 * `python3 -I -S /scratch/main.py`: an uncaught exception is exit status 1
 * and its traceback on stderr (jail.c reads AssertionError and MemoryError
 * from there). */
#define SQ__JAIL_EXIT_SETUP 125


/* Each concurrent run (or pool zygote) holds one slot; slot s runs as host
 * uid/gid sq__jail_slot_uid(s): SQ__JAIL_UID_BASE + this process's uid block
 * (held with an flock, unique on the host) * SQ__JAIL_MAX_SLOTS + s, so
 * RLIMIT_NPROC (counted per real uid) never collides across concurrent jails,
 * in this process or another. Without namespaces (not root) the run keeps
 * the caller's uid. */
#define SQ__JAIL_UID_BASE 3500000u
#define SQ__JAIL_MAX_SLOTS 64

#define SQ_JAIL_STR_(x) #x
#define SQ_JAIL_STR(x) SQ_JAIL_STR_(x)

/* Paths inside the jail's own root. */
#define SQ__JAIL_SCRATCH SQ__ZYGOTE_SCRATCH_DIR
#define SQ__JAIL_HOSTNAME "sandq"

/* The scratch and cgroup sizes (the rlimits are in jail_plan.h). */
#define SQ__JAIL_SCRATCH_MIB 64           /* tmpfs size= of the scratch dir */
#define SQ__JAIL_SCRATCH_INODES 4096      /* tmpfs nr_inodes= of the scratch dir */
#define SQ__JAIL_CGROUP_SLACK_MIB 64      /* cgroup memory above memory_mib (tmpfs, page cache) */

/* The interpreter's files copied into a tmpfs with large pages
 * (jail_interp.c): the python binary and the shared objects its loader
 * lists, each bound read-only over its own path in every new root. A
 * zeroed one with fd -1 is "none": roots use the host's files. */
#define SQ__JAIL_INTERP_MAX 16
typedef struct {
  int fd;       /* the detached tmpfs (close-on-exec; read-only once filled), or -1 */
  int n;        /* path[i] is the host file copied there as "i", and where roots bind it */
  char path[SQ__JAIL_INTERP_MAX][256];
  long long bytes;
} sq__jail_interp;

/* What a profile changes in every root (jail_profile.c): host directories
 * bound read-only at their own path, and host directories covered by an
 * empty read-only tmpfs. NULL-terminated; owned by the runner. */
#define SQ__JAIL_BINDS_MAX 32
typedef struct {
  char *show[SQ__JAIL_BINDS_MAX + 1];
  char *hide[SQ__JAIL_BINDS_MAX + 1];
} sq__jail_binds;

/* Everything the child needs, prepared by the parent before clone so the
 * child only makes async-signal-safe calls. */
typedef struct {
  const char *python_path;
  const char *scratch_dir;   /* host dir (no-namespace mode only) */
  const char *root_dir;      /* empty host dir the new root is mounted on */
  const char *program;       /* written to main.py inside the jail (namespace mode) */
  size_t program_len;
  int program_fd;            /* or a memfd holding it (>= 0: used instead of program) */
  bool has_input;            /* the payload's fd 0 is input_fd (a memfd), not /dev/null */
  int input_fd;
  bool root_prepared;        /* the slot's holder built the root: mount scratch only */
  char *const *argv;
  char *const *envp;
  int stdout_fd;  /* write ends of the parent's pipes */
  int stderr_fd;
  int status_fd;  /* close-on-exec; a message here means setup failed */
  int sync_fd;    /* read end: one byte once the parent has placed us in cgroups; -1: born there */
  int result_fd;  /* init writes its sq__jail_init_report here */
  int notify_sock;/* the payload sends its seccomp listener here (SCM_RIGHTS) */
  const sq__jail_plan *plan; /* the run's; NULL for a warm zygote (its tasks' come with each task) */
  uint32_t layers;      /* SQ_JAIL_LAYER_* the child must set up */
  unsigned uid;         /* the run's uid and gid when drop_uid */
  unsigned zygote_uid;  /* warm: the zygote's real and saved uid (sq__jail_zygote_uid) */
  bool drop_uid;
  bool warm;            /* payload execs the zygote loop, no rlimits/filter */
  const struct sock_fprog *seccomp;
  const sq__jail_interp *interp; /* or NULL: the copies a root it builds binds */
  const sq__jail_binds *binds;   /* or NULL: the profile's binds in a root it builds */
  const struct sq__jail_cgroup_s *self_cg; /* or NULL: cgroups (v1) the child enters itself
                                              before it waits for the parent (who then attaches nothing) */
} sq__jail_child;

/* What a run's init writes on result_fd once the payload has ended and
 * everything it left was killed and reaped. */
typedef struct {
  int status;          /* the payload's wait status */
  struct rusage ru;    /* RUSAGE_CHILDREN of the init: the whole tree */
  int64_t reaped_ms;   /* when the init reaped the payload (CLOCK_MONOTONIC) */
} sq__jail_init_report;

/* The child side: runs the containment checklist and execs the interpreter.
 * Never returns; on a failed step it writes why to status_fd and stderr_fd
 * and exits SQ__JAIL_EXIT_SETUP. With namespaces the child is the pid
 * namespace's init: it sets up the root, forks the payload, reaps, and
 * writes an sq__jail_init_report to result_fd. */
_Noreturn void sq__jail_contain(const sq__jail_child *c);

/* A standby init (spawn mode's holders, jail_slot.c): cloned into the
 * run's fresh namespaces before there is a run, it runs every step that
 * needs no descriptor of the run (a failure is kept for the run's status
 * pipe), then waits on sock for the run: an sq__jail_hold_req with the
 * python path after it, and the SQ__JAIL_RUN_FDS descriptors [stdout,
 * stderr, status, result, ctl, program memfd, input memfd]. c holds the rest (root
 * prepared, uid, layers, argv, envp, seccomp). Never returns. */
typedef struct {
  uint32_t layers;
  unsigned uid;
  sq__jail_plan plan;
} sq__jail_hold_req;
#define SQ__JAIL_RUN_FDS 7
#define SQ__JAIL_PATH_MAX 4096
_Noreturn void sq__jail_standby(sq__jail_child *c, int sock);

/* Receives one run message (sq__jail_hold_req + a path; descriptors
 * close-on-exec) into buf, NUL-terminated, and its SQ__JAIL_RUN_FDS
 * descriptors into fds. Returns the length, 0 on EOF, or -1 (a short or
 * truncated message: whatever descriptors came are closed). AS-safe. */
ssize_t sq__jail_recv_run(int sock, char *buf, size_t cap, int *fds);

/* Where sq__jail_die writes (-1: nowhere), and the death itself:
 * "sandq-jail: <step> failed: <ERRNAME> (errno N); hint" on both, then
 * exit SQ__JAIL_EXIT_SETUP. Async-signal-safe. */
void sq__jail_die_to(int status_fd, int stderr_fd);
_Noreturn void sq__jail_die(const char *step, int err, const char *hint);

/* A close-on-exec memfd holding program (len bytes), for a run whose
 * program cannot travel otherwise (a holder's root cannot see host files; a
 * warm task message has a size cap). Returns the descriptor or -1. */
int sq__jail_program_memfd(const char *program, size_t len);

/* In the worker, once: makes the copies of python's files (owned by *ip:
 * release with sq__jail_interp_release) and tries a bind of one in a mount
 * namespace of a child's own. Returns 0, or -1 with why (ip is then none:
 * the roots use the host's files). */
int sq__jail_interp_prepare(sq__jail_interp *ip, const char *python, char *why, size_t why_len);
void sq__jail_interp_release(sq__jail_interp *ip);
/* Whether a new root shows the host's path (it lies below a directory the
 * root binds from the host). */
bool sq__jail_mnt_shows(const char *path);

/* Builds the new root on root_dir (an empty host directory) in the
 * calling process's own mount namespace and pivots into it. With
 * with_scratch the scratch tmpfs at SQ__JAIL_SCRATCH (owned by uid) is
 * mounted too; without, SQ__JAIL_SCRATCH is left an empty directory for
 * sq__jail_mnt_scratch. With with_zygote the zygote's Python and its loop's
 * shared object are written to SQ__ZYGOTE_PY and SQ__ZYGOTE_SO. interp (or NULL) names the interpreter's
 * copies, whose tmpfs the caller holds on descriptor interp_fd: each is
 * bound read-only over its path (one that cannot be keeps the host's
 * file, which is the same file). binds (or NULL): the profile's
 * directories shown and hidden. Async-signal-safe. Returns 0 or -1 with
 * errno. */
int sq__jail_mnt_build(const char *root_dir, unsigned uid, bool with_scratch, bool with_zygote,
                       const sq__jail_interp *interp, int interp_fd, const sq__jail_binds *binds);
/* Mounts a fresh scratch tmpfs (size and inode caps, mode 0700, owned by
 * uid) at root + SQ__JAIL_SCRATCH; root is "" inside a built root.
 * Async-signal-safe. Returns 0 or -1 with errno. */
int sq__jail_mnt_scratch(const char *root, unsigned uid);

/* Compiles the filter with libseccomp into a BPF program (owned by *prog;
 * release with sq__jail_seccomp_free). Returns 0, SQ_ENOMEM or SQ_EJAIL.
 * Installed with sq__jail_seccomp_install (jail_seccomp_install.h). */
int sq__jail_seccomp_build(struct sock_fprog *prog);
void sq__jail_seccomp_free(struct sock_fprog *prog);
/* Reads one pending notification from listener fd: the call's name
 * (resolved for its architecture), its id, and the widening it belongs to
 * (SQ_JAIL_WIDEN_*; 0: a call that kills). Returns 0, or -1 when nothing
 * was read. */
int sq__jail_seccomp_read(int fd, char *name, size_t name_len, uint64_t *id, uint32_t *widening);
/* Answers a widening's call (notification id): it runs, or fails with
 * EPERM. 0, or -1 with errno (ENOENT: its caller is gone). */
int sq__jail_seccomp_answer(int fd, uint64_t id, bool run);
/* Whether kernel and libseccomp support user notification. */
bool sq__jail_seccomp_notify_supported(void);
/* The narrowings, for a filter whose listener cannot let a call run (it
 * then allows every widening's calls): for each set of widenings a run
 * keeps (SQ_JAIL_WIDEN_*), a small filter that gives the other widenings'
 * calls EPERM. Built once per process (thread-safe; 0, SQ_ENOMEM or
 * SQ_EJAIL) before any run, kept for its life. sq__jail_seccomp_narrowing
 * returns the one for kept, NULL when the run keeps them all (or none was
 * built); sq__jail_seccomp_spawn_narrowing the same, or NULL when the
 * listener answers those calls: what a spawn run's payload stacks. Both
 * async-signal-safe. */
int sq__jail_seccomp_narrowings_build(void);
const struct sock_fprog *sq__jail_seccomp_narrowing(uint32_t kept);
const struct sock_fprog *sq__jail_seccomp_spawn_narrowing(uint32_t kept);
/* Whether the kernel can install a filter (probe for `check`). */
bool sq__jail_seccomp_probe(const struct sock_fprog *prog, char *detail, size_t len);

/* A run's cgroups (v1 memory and pids hierarchies, or one v2 group). A
 * zeroed one is "not made": destroying it does nothing. */
typedef struct sq__jail_cgroup_s {
  bool made;       /* by sq__jail_cgroup_create (its descriptors are ours only then) */
  char mem[256];   /* directory, or "" when the controller is unavailable */
  char pids[256];
  bool v2;
  int64_t oom_kills_before;
  int64_t limit_mib;   /* the memory limit last written (memory_mib asked for) */
  char cpu[256];   /* the CPU accounting group (v1 cpuacct; v2: mem's group), or "" */
  int peak_fd;         /* open while mem[0]: the peak file (v1: reset by writing 0) */
  bool peak_per_run;   /* the peak can be reset per run (v1; v2 from Linux 6.12): else it is unused */
  int oom_fd;          /* and the file that counts OOM kills */
  int cpu_fd;          /* open while cpu[0]: cpuacct.usage (v1, ns) or cpu.stat (v2, usage_usec) */
  int lock_fd[3];      /* each directory held open with an flock: its owner is alive */
} sq__jail_cgroup;

/* The layers a run's cgroups give. */
#define SQ__JAIL_CGROUP_LAYERS (SQ_JAIL_LAYER_CGROUP_MEMORY | SQ_JAIL_LAYER_CGROUP_PIDS | SQ_JAIL_LAYER_CGROUP_CPU)
/* Which controllers this host offers to us (of SQ__JAIL_CGROUP_LAYERS);
 * detail says why one is missing. */
uint32_t sq__jail_cgroup_probe(char *detail, size_t len);
/* Creates the run's cgroups named name (unique per slot) and sets the
 * limits. Missing controllers leave the field empty. Returns the layers
 * that are in force. */
uint32_t sq__jail_cgroup_create(sq__jail_cgroup *cg, const char *name, int64_t memory_mib, int pids_max);
/* Before each run on a group that outlives runs (a warm zygote's, a spawn
 * slot's), once the last run's processes are gone and its memory is
 * uncharged: sets memory_mib's limit, read back to verify it, and resets
 * the peak. Returns 0, or -1 (errno) when the limit is not in force (the
 * kernel refuses a limit below the memory still charged: EBUSY): the
 * caller replaces the group and what runs in it, never runs under the
 * old limit. */
int sq__jail_cgroup_reset(sq__jail_cgroup *cg, int64_t memory_mib);
/* Tests only: how many of the next limit writes of sq__jail_cgroup_reset
 * fail (EBUSY, as when memory still charged is above the new limit). 0,
 * and never changed, in a worker. */
extern _Atomic int sq__jail_cgroup_reset_failures;
/* Moves pid into the cgroups; 0 or -1. */
int sq__jail_cgroup_attach(const sq__jail_cgroup *cg, pid_t pid);
/* Whether a new single-threaded child can move itself into cg
 * (sq__jail_cgroup_enter): cgroup v1, where a thread that writes "0" to a
 * group's tasks file moves itself without the kernel's global lock on
 * every thread group, whose taking waits out an RCU grace period (several
 * ms, every CPU of the machine idle meanwhile when all are waiting). An
 * attach by pid (cgroup.procs) takes that lock. */
bool sq__jail_cgroup_self_enterable(const sq__jail_cgroup *cg);
/* The calling thread (the child's only one) into every group of cg;
 * async-signal-safe. 0 or -1 with errno. */
int sq__jail_cgroup_enter(const sq__jail_cgroup *cg);
/* Peak memory in KiB since create/reset (0 when unknown, or when this
 * kernel cannot reset it per run: the caller keeps the run's own peak RSS)
 * and whether the OOM killer fired since create/reset. */
int64_t sq__jail_cgroup_peak_kib(const sq__jail_cgroup *cg);
bool sq__jail_cgroup_oom_fired(const sq__jail_cgroup *cg);
/* CPU time used by everything in the group so far, in microseconds (-1
 * when there is no CPU accounting). */
int64_t sq__jail_cgroup_cpu_us(const sq__jail_cgroup *cg);
/* How long the group's threads have waited for a CPU while runnable, in
 * microseconds, a counter to take differences of (-1 when unknown): v2's
 * cpu.pressure "some" total where the kernel keeps it, else the run delay
 * of every thread now in the group summed (/proc/TID/schedstat; a thread
 * that has exited takes its part with it, and two waiting at once count
 * twice). The wall clock credits a run with it (sq__jail_supervise). */
int64_t sq__jail_cgroup_wait_us(const sq__jail_cgroup *cg);
/* Kills what is left inside and removes the directories; nothing for one
 * never made. */
void sq__jail_cgroup_destroy(sq__jail_cgroup *cg);
/* cgroup v2: enables the controllers want[0..n) for the groups made below
 * base (the cgroup this process was in), the delegatee's part of a
 * delegation (systemd's Delegate=yes makes them available, no more). The
 * kernel lets a non-root group hand controllers down only while it holds no
 * process of its own, so when base holds this process alone, the process
 * first moves into a leaf below it, base/sandq-self-PID, which it keeps
 * locked in *self_lock (-1 when it did not move) for as long as it lives.
 * Returns 0 (enabled, or already), or -1 with why: a controller base does
 * not offer, other processes in base, or the kernel's refusal. */
int sq__jail_cgroup2_delegate(const char *base, const char *const *want, int n, int *self_lock, char *why,
                              size_t why_len);
/* Removes the run cgroups (beside ours) whose owner is gone, killing what
 * is left inside: a worker killed with SIGKILL cannot remove its own. The
 * owner holds an flock on each of its directories for as long as it lives,
 * which works whatever PID namespace either of us is in (a group whose name
 * carries a pid alive here is left too: an owner from before the locks).
 * Returns how many. */
int sq__jail_cgroup_sweep(void);

/* Supervision of one run: the wall clock, the output caps, the seccomp
 * listener. The caller started the run; its end is found by end_check. */
typedef struct {
  int out_fd, err_fd;  /* read ends; closed by sq__jail_supervise */
  int ctl_fd;          /* SOCK_SEQPACKET with SO_PASSCRED, zygote_proto.h's
                          messages: NEXT (a spawn payload's carries a seccomp
                          listener; its sender's pid is the task's) starts the
                          run; others go to end_check. Not closed. */
  int done_fd;         /* readable when the run may have ended (pidfd), or -1 */
  int notify_fd;       /* the run's seccomp listener, owned by the caller (a warm
                          zygote's, loaded once for all its tasks), or -1: it
                          comes with a NEXT message (spawn), ours then */
  pid_t kill_pid;      /* SIGKILL target: the payload (spawn without namespaces),
                          0 until the task's first message names it (warm), or
                          -1: always kill_fallback (a holder's run: its init's pidfd) */
  bool kill_group;     /* kill -kill_pid as well (spawn: the payload's session; a
                          warm zygote kills what its task left itself) */
  /* Called when done_fd is readable, on every tick without done_fd (msg
   * NULL then), and with each other message on ctl_fd, decoded (kind
   * SQ__ZYGOTE_BAD: malformed); returns true when the run has ended
   * (status and ru filled). */
  bool (*end_check)(void *arg, const sq__zygote_msg *msg, int *status, struct rusage *ru);
  void (*kill_fallback)(void *arg); /* when there is nothing else to kill */
  /* Or NULL. Called when stdout and stderr are both at EOF before the end
   * (again, later: again true), with kill_pid and a pidfd of it opened when
   * kill_pid was learned; returns true when the kernel shows the run ended
   * (status and ru filled). */
  bool (*early_check)(void *arg, pid_t pid, int pidfd, int *status, struct rusage *ru, bool again);
  void *arg;
  int64_t start_ms;    /* when the run started; 0: when the first NEXT arrives (a warm
                          child that took the task), set then */
  int64_t take_timeout_ms; /* start_ms 0: how long the first NEXT may take */
  int64_t sent_ms;     /* start_ms 0: when the task was sent. A NEXT that says when it was sent
                          ("n MONOTONIC_MS", the warm child's) starts the clock at the later of
                          the two: the child takes the task then, however late we read it */
  bool never_started;  /* set: no NEXT within take_timeout_ms (nothing was killed) */
  bool pid_learned;    /* set: kill_pid came with a NEXT (killed by a pidfd, never by number) */
  pid_t cont_pid;      /* > 0: SIGCONT after every kill (a warm zygote a task may have stopped) */
  const sq__jail_cgroup *cg; /* or NULL: the tree's CPU time and its cpu_ms limit, and its
                                wait for a CPU, credited to the wall clock */
  int64_t cpu_wait_ms; /* set: how long the tree waited for a CPU (sq__jail_cgroup_wait_us) */
  bool starved;        /* set: the wall backstop ended it, not its own wall_ms */
  const sq_jail_limits *lim; /* the run's (its plan's): wall, CPU, output */
  uint32_t widenings;  /* the plan's: the listener lets these SQ_JAIL_WIDEN_* calls run */
  const atomic_int *stop; /* or NULL: the caller's stop flag (sq_jail_run_opts.stop) */
} sq__jail_watch;

/* Runs the loop until the run has ended and the pipes drained (or the
 * drain timed out). Fills o's buffers, figures (except memory) and end
 * (without the cgroup's OOM evidence: the caller adds it). With a cgroup
 * that accounts CPU, the whole tree's CPU time is measured there, reported
 * in cpu_ms (when more than the rusage figure) and limited: past
 * lim->cpu_ms the tree is killed (*killed_for SQ_JAIL_CPU_LIMIT). Returns
 * 0, or SQ_ENOMEM, or SQ_EJAIL when the run never reported an end (or never
 * started: w->never_started). */
int sq__jail_supervise(sq__jail_watch *w, sq_jail_outcome *o, sq_jail_end *killed_for, int *status);

/* After sq__jail_supervise: the run judged by when its payload was reaped
 * (reaped_ms, CLOCK_MONOTONIC, by the process that reaped it: a zygote or
 * a run's init; 0 when unknown), not by when the supervisor looked. A
 * supervisor that looks late (a busy machine) sees the deadline and the end
 * in the wrong order: it may kill, and call a timeout, a run that had ended
 * before its deadline, or find ended, and let pass, one that ran past it.
 * A reap comes after the exit, never early: a timeout is a run not reaped
 * by its deadline, and the wall time lasts until the reaping when that is
 * earlier than the supervisor saw the end. */
void sq__jail_judge_by_reap(const sq__jail_watch *w, int64_t reaped_ms, sq_jail_outcome *o, sq_jail_end *killed_for);

/* The warm pool (jail_pool.c; one zygote: jail_zygote.h). */
typedef struct sq__jail_pool sq__jail_pool;
/* one_run: the full zygotes never start (sq_jail_config.one_run). */
int sq__jail_pool_new(sq_jail *j, int size, bool one_run, sq__jail_pool **out);
void sq__jail_pool_free(sq__jail_pool *p);
/* lean: the program imports nothing (sq_jail_run_task), so a lean zygote
 * suits it. */
int sq__jail_pool_run(sq__jail_pool *p, const char *program, size_t len, const char *input, size_t input_len,
                      bool lean, const sq__jail_plan *plan, const sq_jail_run_opts *opts, const char *task_id,
                      sq_jail_outcome *o);
/* A memfd holding len bytes of input, its offset at 0: a run's stdin
 * (sq_jail_run_task); for NULL input, /dev/null. Close-on-exec; -1 with
 * errno. */
int sq__jail_input_memfd(const char *input, size_t len);

/* Shared by spawn and warm (jail.c). */
typedef struct {
  char *python_path;
  char *scratch_root;
  char *root_dir;   /* mount point of the new roots: <scratch_root>/root */
  uint32_t layers;  /* what this host enforces */
  struct sock_fprog seccomp;
  sq__jail_interp interp; /* the interpreter's files in large pages, or none */
  /* The profile (jail_profile.c): what the roots show and hide, and the
   * interpreter's flags and environment; all owned here. */
  unsigned long id;  /* unique to this runner in the process (never 0) */
  sq__jail_binds binds;
  bool packages;    /* packages on sys.path: `-s -S -P` with PYTHONPATH, not `-I -S` */
  char *env[SQ_JAIL_PROFILE_LIST_MAX + 2]; /* the profile's NAME=VALUE, then PYTHONPATH=...; NULL-terminated */
  char *preload;    /* "SANDQ_PRELOAD=a,b" for the full zygotes (zygote.py), or NULL */
  char *prelude;    /* "SANDQ_PRELUDE=<source>" for every zygote (sq_jail_config.prelude), or NULL */
  char *spawn_argv[8];  /* a spawn run's command line (main.py in its cwd) */
  char *spawn_envp[SQ_JAIL_PROFILE_LIST_MAX + 10]; /* and environment (HOME the scratch) */
} sq__jail_common;

/* Fills c's profile fields from p (NULL: the default profile) after
 * checking it; why says what is wrong. Returns 0, SQ_ENOMEM or SQ_EINVAL. */
int sq__jail_profile_init(sq__jail_common *c, const sq_jail_profile *p, char *why, size_t why_len);
void sq__jail_profile_release(sq__jail_common *c);
/* argv for the interpreter (at most 8 entries with the NULL): "python3",
 * the profile's flags, script, then a1 and a2 when not NULL. */
void sq__jail_argv(const sq__jail_common *c, char **argv, const char *script, const char *a1, const char *a2);
/* envp (cap entries with the NULL): base (NULL-terminated), then the
 * profile's environment, then extra when not NULL. Returns 0, or -1 when
 * it does not fit. Pointers only: async-signal-safe. */
int sq__jail_envp(const sq__jail_common *c, const char *const *base, const char *extra, char **envp, size_t cap);
const sq__jail_common *sq__jail_common_of(const sq_jail *j);

/* Spawn mode with namespaces (jail_slot.c): runs program through slot's
 * holder, started (in cg) on first use or when it died. layers are the
 * run's (the caller put them in o->layers); opts (not NULL) the run's.
 * Fills o like sq_jail_run. Returns 0, SQ_ENOMEM or SQ_EJAIL (o->error
 * says why). */
int sq__jail_slot_run(const sq__jail_common *c, int slot, sq__jail_cgroup *cg, uint32_t layers, const char *program,
                      size_t len, const char *input, size_t input_len, const sq__jail_plan *plan,
                      const sq_jail_run_opts *opts, sq_jail_outcome *o);
/* Stops slot's holder, if any (the slot must not be in use). */
void sq__jail_slot_stop(int slot);
/* Reads a status pipe until EOF (the write ends close at exec or death):
 * the first line of what was written, empty when the child exec'd. msg
 * holds cap bytes; returns the length read. */
size_t sq__jail_read_status(int fd, char *msg, size_t cap);
/* Takes a free slot (blocks never; -1 when all are taken) / gives it back. */
int sq__jail_slot_take(void);
void sq__jail_slot_give(int slot);
/* The host uid/gid slot runs as (see SQ__JAIL_UID_BASE). */
unsigned sq__jail_slot_uid(int slot);
/* A warm slot's zygote's real and saved uid: no task's uid, of any slot
 * or process (a range of its own above theirs), so no task can signal its
 * zygote (the kernel lets a process signal another only when their real
 * or saved uids meet); its effective uid is the slot's, with which it
 * kills what a task left and hands its child the slot's uid. */
unsigned sq__jail_zygote_uid(int slot);
/* Maps a wait status plus what the supervisor did to an end; a SIGKILL
 * past the plan's CPU soft limit is the CPU limit's. */
sq_jail_end sq__jail_map_end(const sq_jail_outcome *o, int status, sq_jail_end killed_for,
                             const sq__jail_plan *plan, bool oom_killed);

/* The zygote's Python (zygote.py, embedded; NUL-terminated), written into
 * each warm root as SQ__ZYGOTE_PY with the loop's shared object as
 * SQ__ZYGOTE_SO (both read-only from the task's side like the rest of it). */
extern const char sq__jail_zygote_py[];
extern const char sq__jail_zygote_so[]; /* zygote_loop.c built; sq__jail_zygote_so_size bytes */
extern const unsigned long sq__jail_zygote_so_size;

#endif
