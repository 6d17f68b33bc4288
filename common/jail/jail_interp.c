/* jail_interp.c: the interpreter's files in large pages. Every task is a
 * fresh copy of an interpreter (a warm zygote's fork, or a spawn's exec),
 * and most of what that copy costs is the kernel's per-page work: faulting
 * in the interpreter's code and read-only data, and unmapping it all at
 * exit. That work is per folio, not per page, where the file's page cache
 * is made of large folios; where it is made of single pages (a file read
 * before the filesystem had large folios, on a filesystem without them, or
 * cached in any other way the host happened to read it) every task pays
 * for each 4 KiB page (docs/jail-performance.md, "The interpreter in large
 * pages").
 *
 * So the worker copies, once, the interpreter and the shared objects its
 * loader lists into a tmpfs of its own with huge=within_size: the copies'
 * page cache is then large folios whatever the host's is. The tmpfs is a
 * detached mount (fsopen/fsmount): nothing appears in the host's mount
 * table, and it goes when its last descriptor closes. Each new root binds
 * the copies, read-only, over the same paths (jail_mnt.c), so a task sees
 * the same files at the same paths, only faster. When any step fails the
 * runs use the host's files, as before, and the worker says why. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail_internal.h"
#include "util.h"

#define INTERP_MAX_BYTES (128ll << 20) /* more than this to copy: the host's files are used */
#define TRACE_MAX_BYTES (16 << 10)     /* the loader's list of shared objects */

/* why = the message (with ": strerror(err)" when err); returns -1. */
__attribute__((format(printf, 4, 5))) static int fail(char *why, size_t why_len, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(why, why_len, fmt, ap);
  va_end(ap);
  if (err && n >= 0 && (size_t)n < why_len) snprintf(why + n, why_len - (size_t)n, ": %s", strerror(err));
  return -1;
}

/* Adds the real path of path to ip (once), when the jail's root shows it
 * (below a directory it binds from the host); others are left alone. */
static void add(sq__jail_interp *ip, const char *path) {
  char real[PATH_MAX];
  if (ip->n >= SQ__JAIL_INTERP_MAX || !realpath(path, real) || !sq__jail_mnt_shows(real) ||
      strlen(real) >= sizeof ip->path[0])
    return;
  for (int i = 0; i < ip->n; i++)
    if (strcmp(ip->path[i], real) == 0) return;
  snprintf(ip->path[ip->n++], sizeof ip->path[0], "%s", real);
}

/* The shared objects python's loader maps, as its own trace lists them
 * (LD_TRACE_LOADED_OBJECTS, what ldd runs): "\tNAME => /path (0x...)" or
 * "\t/path (0x...)". A python that is not dynamically linked ignores the
 * variable and runs an empty program: no objects. */
static int trace_objects(sq__jail_interp *ip, const char *python, char *why, size_t why_len) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return fail(why, why_len, errno, "%s", "pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  char *argv[] = {(char *)python, "-I", "-S", "-c", "", NULL};
  char *envp[] = {"LD_TRACE_LOADED_OBJECTS=1", NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, python, &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return fail(why, why_len, rc, "running %s for its list of shared objects", python);
  }
  char *buf = malloc(TRACE_MAX_BYTES + 1);
  size_t len = 0;
  ssize_t n = 0;
  while (buf && len < TRACE_MAX_BYTES && ((n = read(out[0], buf + len, TRACE_MAX_BYTES - len)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) len += (size_t)n;
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!buf) return fail(why, why_len, ENOMEM, "%s", "the list of shared objects");
  buf[len] = '\0';
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    free(buf);
    return fail(why, why_len, 0, "%s did not list its shared objects (LD_TRACE_LOADED_OBJECTS)", python);
  }
  for (char *line = buf, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char *path = strstr(line, "=> ");
    path = path ? path + 3 : line + strspn(line, " \t");
    char *end = strstr(path, " (0x");
    if (path[0] != '/' || !end) continue; /* the vDSO, "not found", anything else */
    *end = '\0';
    add(ip, path);
  }
  free(buf);
  return 0;
}

/* Copies src (a regular file) into the tmpfs as name; adds its size to
 * *bytes. The file is sized first: huge=within_size gives large folios to
 * the part of a file its size covers. */
static int copy_one(int mnt, const char *src, const char *name, long long *bytes, char *why, size_t why_len) {
  int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, ret = -1;
  struct stat st;
  if (in < 0 || fstat(in, &st) != 0) {
    fail(why, why_len, errno, "opening %s", src);
    goto out;
  }
  if (!S_ISREG(st.st_mode) || *bytes + st.st_size > INTERP_MAX_BYTES) {
    fail(why, why_len, 0, "%s is not a regular file, or the files are over 128 MiB", src);
    goto out;
  }
  out = openat(mnt, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 0555);
  if (out < 0 || ftruncate(out, st.st_size) != 0) {
    fail(why, why_len, errno, "creating the copy of %s", src);
    goto out;
  }
  /* From a mapping, in one write: the tmpfs then fills each large folio
   * whole, where a copy in smaller pieces (sendfile's) has it zero the
   * rest of the folio first. */
  void *map = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, in, 0) : NULL;
  if (map == MAP_FAILED || (map && sq_write_all(out, map, (size_t)st.st_size) != 0)) {
    fail(why, why_len, errno, "copying %s", src);
    if (map != MAP_FAILED) munmap(map, (size_t)st.st_size);
    goto out;
  }
  if (map) munmap(map, (size_t)st.st_size);
  *bytes += st.st_size;
  ret = 0;
out:
  if (in >= 0) close(in);
  if (out >= 0 && close(out) != 0 && ret == 0) ret = fail(why, why_len, errno, "writing the copy of %s", src);
  return ret;
}

/* The detached tmpfs: huge=within_size, sized for bytes in n files. */
static int make_tmpfs(long long bytes, int n, char *why, size_t why_len) {
  int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0) return fail(why, why_len, errno, "%s", "fsopen(tmpfs)");
  char size[32];
  snprintf(size, sizeof size, "%lld", bytes + (long long)(n + 1) * (2 << 20));
  int mnt = -1;
  if (fsconfig(fs, FSCONFIG_SET_STRING, "huge", "within_size", 0) != 0)
    fail(why, why_len, errno, "%s", "tmpfs huge=within_size (a kernel without transparent huge pages?)");
  else if (fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) != 0 ||
           fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "64", 0) != 0 ||
           fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) != 0 ||
           fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0)
    fail(why, why_len, errno, "%s", "fsconfig(tmpfs)");
  else if ((mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
    fail(why, why_len, errno, "%s", "fsmount(tmpfs)");
  close(fs);
  return mnt;
}

/* Whether a new mount namespace can bind a copy from the detached tmpfs
 * (what every root does, jail_mnt.c): tried once, in a child of our own,
 * over the host path in that child's namespace only. 0 or an errno. */
static int try_bind(const sq__jail_interp *ip) {
  char src[64];
  snprintf(src, sizeof src, "/proc/self/fd/%d/0", ip->fd);
  long pid = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, 0);
  if (pid < 0) return errno;
  if (pid == 0) {
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) _exit(errno & 0xff);
    _exit(mount(src, ip->path[0], NULL, MS_BIND, NULL) == 0 ? 0 : errno & 0xff);
  }
  int st = 0;
  while (waitpid((pid_t)pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

int sq__jail_interp_prepare(sq__jail_interp *ip, const char *python, char *why, size_t why_len) {
  *ip = (sq__jail_interp){.fd = -1};
  why[0] = '\0';
  add(ip, python);
  if (ip->n == 0) return fail(why, why_len, 0, "%s is not below a directory the jail's root binds", python);
  if (trace_objects(ip, python, why, why_len) != 0) goto fail;
  long long need = 0;
  for (int i = 0; i < ip->n; i++) {
    struct stat st;
    if (stat(ip->path[i], &st) == 0) need += st.st_size;
  }
  if ((ip->fd = make_tmpfs(need, ip->n, why, why_len)) < 0) goto fail;
  for (int i = 0; i < ip->n; i++) {
    char name[16];
    snprintf(name, sizeof name, "%d", i);
    if (copy_one(ip->fd, ip->path[i], name, &ip->bytes, why, why_len) != 0) goto fail;
  }
  /* Read-only, which the kernel refuses (EBUSY) while anything holds a
   * copy open for writing: a child another thread of this process cloned
   * meanwhile holds a copy of every descriptor until it closes them or
   * execs (a moment). */
  struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
  int ro_rc, tries = 0;
  while ((ro_rc = mount_setattr(ip->fd, "", AT_EMPTY_PATH, &ro, sizeof ro)) != 0 && errno == EBUSY && ++tries < 50)
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  if (ro_rc != 0) {
    fail(why, why_len, errno, "%s", "making the copies read-only");
    goto fail;
  }
  int err = try_bind(ip);
  if (err) {
    fail(why, why_len, err, "%s", "binding a copy in a new mount namespace");
    goto fail;
  }
  return 0;
fail:
  sq__jail_interp_release(ip);
  return -1;
}

void sq__jail_interp_release(sq__jail_interp *ip) {
  if (ip->fd >= 0) close(ip->fd);
  *ip = (sq__jail_interp){.fd = -1};
}
