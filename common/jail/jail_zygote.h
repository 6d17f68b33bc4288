/* jail_zygote.h: one warm zygote, shared by the pool that holds them
 * (jail_pool.c), the code that starts a zygote and runs a task on it
 * (jail_zygote.c) and the early end of a warm task (jail_warm_end.c). */
#ifndef SQ_JAIL_ZYGOTE_H
#define SQ_JAIL_ZYGOTE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "jail_internal.h"

/* One zygote and its slot. busy and taken are the pool's, under its lock;
 * look_early is set by the pool as a run takes the zygote; the rest is the
 * holding run's. */
typedef struct {
  int slot;           /* uid and cgroup name; -1 when none */
  pid_t init;         /* host pid of the namespace's init; 0 when not running */
  int pidfd;          /* of init */
  int ctl;            /* our end of the control socket */
  int result_fd;      /* init's report (unused; kept open so init never blocks) */
  int notify;         /* the seccomp listener of the zygote's filter (every task runs under it), or -1 */
  sq__jail_cgroup cg;
  uint32_t layers;
  pid_t zpid;         /* host pid of the interpreter (continued after each kill) */
  bool busy;
  bool reap_pending; /* the last task ended early: its "r" report is still to come */
  bool look_early;   /* this run: the pool's runs fit the cores, so its early end is looked for (jail_warm_end.c) */
  bool lean;         /* without the common modules imported (zygote.py) */
  uint64_t taken;    /* when a run last took it (the pool's count of takes) */
  /* The standby request of the last run sent (empty: none): the child for
   * the next run has that runtime started (docs/jail-performance.md,
   * "Standby runtimes"). */
  char standby[SQ__ZYGOTE_STANDBY_MAX + 1];
} sq__jail_zygote;

/* Starts z (its slot is already held; c is its runner's): clone into
 * namespaces, contain, exec the zygote loop, send the rlimits and the
 * filter, wait for "ready". Returns 0, or SQ_EJAIL (z is then stopped). */
int sq__jail_zygote_start(const sq__jail_common *c, sq__jail_zygote *z);
/* Kills z's init (and with it the namespace), closes its descriptors and
 * destroys its cgroups; z keeps its slot. Nothing for one not running. */
void sq__jail_zygote_stop(sq__jail_zygote *z);
/* Makes z ready for a task: alive (else started anew) and its last task
 * reaped (else replaced). Returns 0, or SQ_EJAIL when no zygote can start
 * (a host failure; o->error says so). */
int sq__jail_zygote_ready(const sq__jail_common *c, sq__jail_zygote *z, const char *task_id, sq_jail_outcome *o);

/* sq__jail_zygote_run: none of the task's code ran; the zygote was stopped. */
#define SQ__JAIL_ZYGOTE_TRY_AGAIN 1
/* One try of the task on z (ready: sq__jail_zygote_ready): program inline,
 * or in prog_fd (>= 0); its stdin in in_fd (>= 0, else /dev/null); the
 * standby request in opts only where the prelude (workspace.py) is loaded
 * (prelude_loaded, on a full zygote). Fills o like sq_jail_run. Returns 0
 * (it ran, whatever its end), SQ__JAIL_ZYGOTE_TRY_AGAIN (why, why_len
 * bytes, says why), or SQ_ENOMEM / SQ_EJAIL (a host failure). */
int sq__jail_zygote_run(sq__jail_zygote *z, bool prelude_loaded, const char *program, size_t len, int prog_fd,
                        int in_fd, const sq__jail_plan *plan, const sq_jail_run_opts *opts, sq_jail_outcome *o,
                        char *why, size_t why_len);

/* A warm task (pid, with pidfd a descriptor of the same process) closed
 * its stdout and stderr, as its last act does: true, with its status and
 * CPU time in *status and *ru, when the kernel shows it exiting past
 * setting its exit status, before the teardown and the zygote's report
 * (jail_warm_end.c). Looked at twice, a little apart; again (asked
 * before for this run): once. */
bool sq__jail_warm_end_early(pid_t pid, int pidfd, bool again, int *status, struct rusage *ru);

#endif
