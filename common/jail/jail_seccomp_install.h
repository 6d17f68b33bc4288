/* jail_seccomp_install.h: installing a compiled seccomp filter, the one
 * place that does, shared by the jail library (a spawn run's payload) and
 * the warm zygote's loop (zygote_loop.c compiles jail_seccomp_install.c in:
 * it links nothing but libc). Compiling a filter needs libseccomp and stays
 * in jail_seccomp.c. Every call here is async-signal-safe and needs
 * no_new_privs. */
#ifndef SQ_JAIL_SECCOMP_INSTALL_H
#define SQ_JAIL_SECCOMP_INSTALL_H

#include <linux/filter.h>

/* Installs prog in the calling thread with a user-notification listener.
 * Returns the listener descriptor, or -1 with errno (EINVAL: the kernel
 * has no listener support). */
int sq__jail_seccomp_install_listener(const struct sock_fprog *prog);
/* Same, or, when the kernel has no listener support, without one: returns
 * the listener descriptor, 0 when installed without one, or -1 with errno. */
int sq__jail_seccomp_install(const struct sock_fprog *prog);
/* Stacks prog (no listener) on the caller's filters; NULL: nothing. 0, or
 * -1 with errno. */
int sq__jail_seccomp_narrow(const struct sock_fprog *prog);

#endif
