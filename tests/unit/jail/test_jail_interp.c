/* test_jail_interp.c: the interpreter's files in large pages
 * (jail_interp.c). The copies of /usr/bin/python3's real file and of the
 * shared objects its loader lists are byte for byte the host's, read-only,
 * mounted nowhere on the host, and (where the kernel shows page flags) in
 * large folios; every root a runner builds, a warm zygote's and a spawn
 * slot's, shows them at the host's paths; a runner for one run makes none.
 *
 * Needs root (the tmpfs and the namespaces), python3, and a kernel with the
 * mount API and transparent huge pages (5.12 and later; the test says SKIP
 * without them, as the worker then uses the host's files). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "jail.h"
#include "jail_internal.h"

#define PY "/usr/bin/python3"

static char scratch_root[64];

/* The whole of path into a malloc'd buffer (*len bytes), or NULL. */
static char *slurp(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  char *b = malloc((size_t)st.st_size + 1);
  size_t off = 0;
  while (b && off < (size_t)st.st_size) {
    ssize_t n = read(fd, b + off, (size_t)st.st_size - off);
    if (n <= 0) break;
    off += (size_t)n;
  }
  close(fd);
  *len = off;
  return b;
}

/* How many of path's pages, mapped and touched here, are part of a large
 * folio (compound), by /proc/self/pagemap and /proc/kpageflags; -1 when
 * those cannot be read. */
static long compound_pages(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC), pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC),
      kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
  struct stat st;
  long found = -1;
  if (fd < 0 || pm < 0 || kf < 0 || fstat(fd, &st) != 0) goto out;
  size_t pages = ((size_t)st.st_size + 4095) / 4096;
  volatile const char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) goto out;
  found = 0;
  for (size_t i = 0; i < pages; i++) {
    (void)m[i * 4096];
    uint64_t e = 0, flags = 0;
    if (pread(pm, &e, sizeof e, (off_t)((((uintptr_t)m >> 12) + i) * 8)) != 8 || !(e >> 63)) continue;
    uint64_t pfn = e & ((1ull << 55) - 1);
    if (pfn == 0) { /* no page frame numbers for us: not readable here */
      found = -1;
      break;
    }
    if (pread(kf, &flags, sizeof flags, (off_t)(pfn * 8)) == 8 && (flags & (3ull << 15))) found++;
  }
  munmap((void *)m, (size_t)st.st_size);
out:
  if (fd >= 0) close(fd);
  if (pm >= 0) close(pm);
  if (kf >= 0) close(kf);
  return found;
}

static void test_copies(void) {
  sq__jail_interp ip;
  char why[300];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = sq__jail_interp_prepare(&ip, PY, why, sizeof why);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc != 0) fprintf(stderr, "prepare: %s\n", why);
  CHECK_EQ(rc, 0);
  if (rc != 0) return;
  fprintf(stderr, "%d files, %.1f MiB, in %.1f ms\n", ip.n, (double)ip.bytes / (1 << 20),
          (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
  char real[PATH_MAX];
  CHECK(realpath(PY, real) != NULL);
  CHECK_STR(ip.path[0], real);
  CHECK(ip.n >= 2);
  bool libc = false;
  for (int i = 0; i < ip.n; i++) {
    libc |= strstr(ip.path[i], "/libc.so") != NULL;
    char copy[64];
    snprintf(copy, sizeof copy, "/proc/self/fd/%d/%d", ip.fd, i);
    size_t a = 0, b = 0;
    char *host = slurp(ip.path[i], &a), *mine = slurp(copy, &b);
    CHECK(host && mine);
    CHECK_EQ(b, a);
    CHECK(host && mine && a == b && memcmp(host, mine, a) == 0);
    free(host);
    free(mine);
    struct stat hs, cs;
    CHECK(stat(ip.path[i], &hs) == 0 && stat(copy, &cs) == 0 && (cs.st_mode & 0777) == (hs.st_mode & 0555));
    int w = open(copy, O_WRONLY | O_CLOEXEC);
    CHECK_EQ(w, -1);
    CHECK_EQ(errno, EROFS);
    if (w >= 0) close(w);
  }
  CHECK(libc);
  /* Nothing on the host's mount table. */
  size_t len = 0;
  char *mi = slurp("/proc/self/mountinfo", &len);
  CHECK(mi != NULL);
  if (mi) {
    mi[len] = '\0';
    CHECK(strstr(mi, "huge=within_size") == NULL);
    free(mi);
  }
  char copy[64];
  snprintf(copy, sizeof copy, "/proc/self/fd/%d/0", ip.fd);
  long big = compound_pages(copy);
  if (big < 0)
    sq_check_skip("large folios", "/proc/kpageflags or page frame numbers are not readable here");
  else {
    fprintf(stderr, "%ld of the interpreter copy's pages in large folios\n", big);
    CHECK(big > 0);
  }
  sq__jail_interp_release(&ip);
  CHECK_EQ(ip.fd, -1);
  CHECK_EQ(ip.n, 0);
  /* An interpreter the roots would not show is refused, and why. */
  CHECK_EQ(sq__jail_interp_prepare(&ip, "/tmp", why, sizeof why), -1);
  CHECK_CONTAINS(why, "not below a directory");
  CHECK_EQ(ip.fd, -1);
}

/* Another thread forking meanwhile (a pool restarting a zygote while a
 * second runner starts, say): its children hold a copy of every descriptor
 * for a moment, a copy being written among them, and the tmpfs cannot be
 * made read-only while they do. The copies are made anyway. */
static volatile int forking;

static void *forker(void *unused) {
  (void)unused;
  while (forking) {
    pid_t p = fork();
    if (p == 0) {
      usleep(3000);
      _exit(0);
    }
    usleep(500);
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
  }
  while (waitpid(-1, NULL, 0) > 0) {
  }
  return NULL;
}

static void test_beside_forks(void) {
  forking = 1;
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, forker, NULL), 0);
  usleep(5000);
  for (int i = 0; i < 5; i++) {
    sq__jail_interp ip;
    char why[300];
    int rc = sq__jail_interp_prepare(&ip, PY, why, sizeof why);
    if (rc != 0) fprintf(stderr, "prepare %d beside forks: %s\n", i, why);
    CHECK_EQ(rc, 0);
    sq__jail_interp_release(&ip);
  }
  forking = 0;
  pthread_join(t, NULL);
}

/* What a run sees: its interpreter and libc on a filesystem of their own
 * (the copies' tmpfs), not the one os.py is on, at the host's paths, as
 * long as the host's file, and not writable. */
static void test_roots(void) {
  sq_jail_config cfg = {.python_path = PY, .scratch_root = scratch_root, .mode = SQ_JAIL_MODE_WARM, .pool_size = 1};
  sq_jail *j = NULL;
  CHECK_EQ(sq_jail_new(&cfg, &j), 0);
  if (!j) return;
  const sq__jail_interp *ip = &sq__jail_common_of(j)->interp;
  CHECK(ip->n >= 2);
  int libc = -1;
  for (int i = 0; i < ip->n; i++)
    if (strstr(ip->path[i], "/libc.so")) libc = i;
  CHECK(libc >= 0);
  if (ip->n < 2 || libc < 0) {
    sq_jail_free(j);
    return;
  }
  struct stat pst, lst;
  CHECK(stat(ip->path[0], &pst) == 0 && stat(ip->path[libc], &lst) == 0);
  char prog[1024], want[128];
  snprintf(prog, sizeof prog,
           "import os\n"
           "lib = os.stat(os.__file__).st_dev\n"
           "for p in ('/usr/bin/python3', '%s'):\n"
           "    s = os.stat(p)\n"
           "    try:\n"
           "        open(p, 'ab')\n"
           "        refused = False\n"
           "    except OSError:\n"
           "        refused = True\n"
           "    print(s.st_dev != lib, s.st_size, refused)\n",
           ip->path[libc]);
  snprintf(want, sizeof want, "True %lld True\nTrue %lld True\n", (long long)pst.st_size, (long long)lst.st_size);
  sq_jail_limits lim = {.wall_ms = 10000, .cpu_ms = 5000, .memory_mib = 256, .output_kib = 64};
  static const sq_jail_mode modes[] = {SQ_JAIL_MODE_WARM, SQ_JAIL_MODE_SPAWN};
  for (size_t m = 0; m < 2; m++) {
    sq_jail_outcome o;
    int rc = sq_jail_run_mode(j, modes[m], prog, strlen(prog), &lim, "interp", &o);
    CHECK_EQ(rc, 0);
    if (rc != 0 || !o.stdout_buf) fprintf(stderr, "%s: %s %s\n", m ? "spawn" : "warm", o.error, o.stderr_buf ? o.stderr_buf : "");
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", want);
    sq_jail_outcome_clear(&o);
  }
  sq_jail_free(j);
  /* A runner for one run makes no copies. */
  cfg.one_run = true;
  CHECK_EQ(sq_jail_new(&cfg, &j), 0);
  if (j) CHECK_EQ(sq__jail_common_of(j)->interp.fd, -1);
  sq_jail_free(j);
}

/* The mount API (5.2), mount_setattr (5.12) and huge pages in tmpfs: where
 * the kernel lacks them the worker uses the host's files. */
static const char *kernel_lacks(void) {
  struct utsname u;
  int major = 0, minor = 0;
  if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2) return "its version is unknown";
  if (major < 5 || (major == 5 && minor < 12)) return "it is older than 5.12 (mount_setattr)";
  if (access("/sys/kernel/mm/transparent_hugepage/shmem_enabled", F_OK) != 0)
    return "it has no transparent huge pages for tmpfs";
  return NULL;
}

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  if (access(PY, X_OK) != 0) {
    fprintf(stderr, "SKIP: " PY " is not installed\n");
    return 77;
  }
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: the copies' tmpfs and the roots need root\n");
    return 77;
  }
  const char *lacks = kernel_lacks();
  if (lacks) {
    fprintf(stderr, "SKIP: this kernel cannot hold the interpreter in large pages: %s\n", lacks);
    return 77;
  }
  snprintf(scratch_root, sizeof scratch_root, "/tmp/sandq-jail-interp.%d", (int)getpid());
  fprintf(stderr, "copies\n");
  test_copies();
  fprintf(stderr, "beside forks\n");
  test_beside_forks();
  fprintf(stderr, "roots\n");
  test_roots();
  char roots[96];
  snprintf(roots, sizeof roots, "%s/root", scratch_root);
  rmdir(roots);
  rmdir(scratch_root);
  return sq_check_done("test_jail_interp");
}
