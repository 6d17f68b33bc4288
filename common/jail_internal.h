/* jail_internal.h: what the jail's files share and nobody else sees: the
 * child's checklist input, the compiled seccomp filter, the harness and the
 * exit codes the parent reads back. */
#ifndef SQ_JAIL_INTERNAL_H
#define SQ_JAIL_INTERNAL_H

#include <linux/filter.h>
#include <stdbool.h>

#include "jail.h"

/* Exit codes the harness uses (jail_harness.c) and the setup code the
 * child uses when a containment step fails before exec (jail_contain.c).
 * Unusual on purpose: a program exiting with one of them by hand is only
 * misreported against itself. */
#define SQ__JAIL_EXIT_ASSERTION 97 /* uncaught AssertionError */
#define SQ__JAIL_EXIT_MEMORY 98    /* uncaught MemoryError */
#define SQ__JAIL_EXIT_SETUP 125    /* a containment step failed; see the status pipe */

#define SQ__JAIL_UID 65534 /* nobody/nogroup: used when the jail runs as root */

/* Everything the child needs, prepared by the parent before fork so the
 * child only makes async-signal-safe calls. */
typedef struct {
  const char *python_path;
  const char *scratch_dir;
  char *const *argv;
  char *const *envp;
  int stdout_fd;  /* write ends of the parent's pipes */
  int stderr_fd;
  int status_fd;  /* close-on-exec; a message here means setup failed */
  const sq_jail_limits *lim;
  bool drop_uid;
  const struct sock_fprog *seccomp;
} sq__jail_child;

/* The child side: runs the containment checklist and execs the interpreter.
 * Never returns; on a failed step it writes why to status_fd and stderr_fd
 * and exits SQ__JAIL_EXIT_SETUP. */
_Noreturn void sq__jail_contain(const sq__jail_child *c);

/* Compiles the filter with libseccomp into a BPF program (owned by *prog;
 * release with sq__jail_seccomp_free). Returns 0, SQ_ENOMEM or SQ_EJAIL. */
int sq__jail_seccomp_build(struct sock_fprog *prog);
void sq__jail_seccomp_free(struct sock_fprog *prog);
/* Installs a compiled filter in the calling thread; async-signal-safe.
 * Requires no_new_privs (or CAP_SYS_ADMIN). Returns 0 or -1 with errno. */
int sq__jail_seccomp_install(const struct sock_fprog *prog);

/* The Python harness, passed to the interpreter with -c. */
extern const char sq__jail_harness_py[];

#endif
