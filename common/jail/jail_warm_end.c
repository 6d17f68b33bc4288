/* jail_warm_end.c: a warm task's end read from the kernel (/proc) the
 * moment its output closes, before the zygote has reaped it: a run ends
 * when the kernel shows its child exiting; its next task waits for the
 * reaping (jail_zygote.c). Only the status and CPU time come from here;
 * the memory peak is the cgroup's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "jail_zygote.h"

#define EARLY_LOOKS 2     /* looks at a task that closed its output, ... */
#define EARLY_AGAIN_US 50 /* ... this far apart: from its last line to its exit */

/* Whether the process behind pidfd is still there to read about (running,
 * or exited but not reaped): signal 0 reaches it until it is reaped (ESRCH
 * after), so a pid read before this check named it. */
static bool pidfd_unreaped(int pidfd) { return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0; }

/* Reads the flags, virtual size, CPU ticks (with waited-for children) and
 * exit status of pid from /proc/PID/stat, checking afterwards that pidfd (of
 * the same process) shows it not yet reaped (a zombie will do), so the pid
 * named it. */
static bool proc_stat(pid_t pid, int pidfd, unsigned long *flags, long long *vsize, long long *ticks,
                      int *exit_code) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0 || !pidfd_unreaped(pidfd)) return false; /* reaped: the pid may name another process */
  buf[n] = '\0';
  char *p = strrchr(buf, ')');
  if (!p) return false;
  /* Fields from 3 (state): 9 flags, 14-17 utime stime cutime cstime, 23 vsize, 52 exit_code. */
  long long v[53] = {0};
  int field = 3;
  char *save = NULL;
  for (char *tok = strtok_r(p + 1, " \n", &save); tok && field <= 52; tok = strtok_r(NULL, " \n", &save), field++)
    if (field > 3) v[field] = strtoll(tok, NULL, 10);
  if (field <= 52) return false;
  *flags = (unsigned long)v[9];
  *vsize = v[23];
  *ticks = v[14] + v[15] + v[16] + v[17];
  *exit_code = (int)v[52];
  return true;
}

/* The task closed its stdout and stderr, as its last act does: if the
 * kernel shows it exiting (PF_EXITING) and past setting its exit status (its
 * memory already detached: do_exit sets exit_code before exit_mm), the run
 * has ended with that status, without waiting for the teardown and the
 * zygote's report. Otherwise the zygote's report ends it. At the
 * output's EOF, looked at twice, EARLY_AGAIN_US apart (its last line to
 * its exit); the caller asks only while the pool's runs fit the cores
 * (jail_zygote.c, look_early): the early end saves a run the teardown's
 * latency (about 0.2 ms) when a core is there to look, and costs the tasks
 * CPU when every core is busy with them (docs/benchmarks.md). Again (no report 10 ms later, say from a
 * zygote its task stopped): looked at once, however busy the pool. */
bool sq__jail_warm_end_early(pid_t pid, int pidfd, bool again, int *status, struct rusage *ru) {
  if (pid <= 0) return false;
  unsigned long flags;
  long long vsize, ticks;
  int exit_code;
  for (int look = 0;; look++) {
    if (!proc_stat(pid, pidfd, &flags, &vsize, &ticks, &exit_code)) return false;
    if ((flags & 0x4 /* PF_EXITING */) && vsize == 0) break;
    if (again || look == EARLY_LOOKS - 1) return false;
    struct timespec t = {0, EARLY_AGAIN_US * 1000};
    nanosleep(&t, NULL);
  }
  long tck = sysconf(_SC_CLK_TCK);
  long long us = ticks * 1000000 / (tck > 0 ? tck : 100);
  *status = exit_code;
  memset(ru, 0, sizeof *ru);
  ru->ru_utime.tv_sec = (time_t)(us / 1000000);
  ru->ru_utime.tv_usec = (suseconds_t)(us % 1000000);
  return true;
}
