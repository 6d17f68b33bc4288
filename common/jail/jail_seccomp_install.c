/* jail_seccomp_install.c: loads a compiled filter (jail_seccomp_install.h).
 * libc only: compiled into the jail library and the zygote loop alike. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail_seccomp_install.h"

int sq__jail_seccomp_install_listener(const struct sock_fprog *prog) {
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
}

int sq__jail_seccomp_install(const struct sock_fprog *prog) {
  int fd = sq__jail_seccomp_install_listener(prog);
  if (fd >= 0) return fd;
  if (errno != EINVAL) return -1;
  /* No listener support: the filter's notify actions then fail ENOSYS, so
   * this path is only taken when the filter was built without them. */
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) == 0 ? 0 : -1;
}

int sq__jail_seccomp_narrow(const struct sock_fprog *prog) {
  if (!prog) return 0;
  return (int)syscall(SYS_seccomp, (unsigned long)SECCOMP_SET_MODE_FILTER, 0UL, prog);
}
