/* write_all.c: write(2) until done. A file of its own: the warm zygote's
 * loop (common/jail/zygote_loop.c), a shared object built apart from the
 * libraries, compiles it too; it is async-signal-safe (the jail's children
 * call it between clone and exec). */
#include <errno.h>
#include <unistd.h>

#include "util.h"

int sq_write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}
