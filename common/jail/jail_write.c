/* jail_write.c: write(2) until done, for the jail library and for the
 * zygote loop's shared object (zygote_loop.c), which is built apart. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <unistd.h>

#include "jail_internal.h"

int sq__jail_write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}
