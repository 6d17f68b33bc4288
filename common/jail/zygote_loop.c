/* zygote_loop.c: the warm zygote's loop and each task's setup, in C: the
 * Python extension module sandq_zygote. Built as a shared object of its
 * own, embedded into the jail library, written into each zygote's root by
 * its init (SQ__JAIL_ZYGOTE_SO) and imported by zygote.py (the GIL held
 * throughout).
 *
 * Why C: a process forked from the interpreter pays a copy-on-write fault
 * (about 2 µs in this VM) for every page either side writes while both
 * live. The same loop in Python wrote hundreds of pages per task, in the
 * zygote (its loop, its reference counts) and in the child (the socket
 * module, resource, the setup's objects); this one writes a few, and
 * Python runs only the task's own program (docs/benchmarks.md).
 *
 * An extension rather than a library called through ctypes: ctypes and
 * libffi were a fifth of a lean zygote's memory and ten of its mappings,
 * all copied at each fork and torn down at each exit. Built on Python's
 * stable ABI (3.7 and later), so one build serves any CPython 3 the jail's
 * `python` names.
 *
 * The protocol with the supervisor (jail_zygote.c) is zygote.py's; its
 * header comment is the reference. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x03070000
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/seccomp.h>
#include <linux/filter.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h" /* sq_write_all (base/write_all.c, compiled into this module too) */

#ifndef __WALL
#define __WALL 0x40000000
#endif
#define ZL_MAX_FILTER 4096 /* instructions: the kernel's own BPF_MAXINSNS */
#define ZL_MAX_FDS 4

/* The loop's state; in a child, what take() needs. */
static struct {
  int ctl, init, took_w;
  char scratch[240], main_py[256]; /* copies: the caller's strings go when it returns */
  size_t inline_max;
  struct {
    int res;
    rlim_t soft, hard;
  } limits[RLIM_NLIMITS];
  int n_limits;
  struct rlimit fsize; /* each task's, set by its child once main.py is written */
  bool have_fsize;
  struct statfs fresh; /* the scratch as its init mounted it (fresh_scratch) */
  bool have_fresh;
  uid_t uid; /* ours, which never change (no capabilities): looked up once */
  gid_t gid;
  char *msg; /* take()'s buffer for the task, inline_max + 256 bytes: allocated by the zygote, untouched there */
} zl;

PyMODINIT_FUNC PyInit_sandq_zygote(void);

static void die(const char *what) {
  char m[160];
  int n = snprintf(m, sizeof m, "sandq-jail: zygote: %s: %s\n", what, strerror(errno));
  if (n > 0 && write(2, m, (size_t)n) < 0) { /* nothing left to tell */
  }
  _exit(1);
}

static void ctl_send(const char *msg, size_t len) {
  ssize_t n;
  do n = send(zl.ctl, msg, len, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)len) die("send to the supervisor");
}

/* msg with one descriptor (SCM_RIGHTS). */
static void send_with_fd(const char *msg, size_t len, int fd) {
  union {
    char b[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  ssize_t n;
  do n = sendmsg(zl.ctl, &m, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)len) die("send to the supervisor");
}

/* "RES:SOFT:HARD,..." (-1 unlimited) into zl.limits. */
static int parse_limits(const char *s) {
  while (*s && zl.n_limits < RLIM_NLIMITS) {
    char *end;
    long long v[3];
    for (int i = 0; i < 3; i++) {
      errno = 0;
      v[i] = strtoll(s, &end, 10);
      if (errno || end == s || (*end != (i < 2 ? ':' : ',') && !(i == 2 && *end == '\0'))) return -1;
      s = *end ? end + 1 : end;
    }
    zl.limits[zl.n_limits].res = (int)v[0];
    zl.limits[zl.n_limits].soft = v[1] < 0 ? RLIM_INFINITY : (rlim_t)v[1];
    zl.limits[zl.n_limits].hard = v[2] < 0 ? RLIM_INFINITY : (rlim_t)v[2];
    zl.n_limits++;
  }
  return *s ? -1 : 0;
}

/* Reaps every child that has ended; returns whether any is still running. */
static bool reap(void) {
  pid_t p;
  while ((p = waitpid(-1, NULL, WNOHANG | __WALL)) > 0) {
  }
  return p == 0;
}

/* Everything the last task left gone. The zygote is its tasks' subreaper,
 * so whatever a task leaves running is its child (an orphan's parent is
 * the nearest subreaper above it, whatever its session): once the task is
 * reaped, no child left means nothing left, which is the common case and
 * costs one waitpid. Otherwise every process of the namespace but its init
 * (root) and us is killed (kill -1: it walks every process on the host,
 * so only then) and reaped, until no child is left. */
static void gone(void) {
  struct timespec half_ms = {0, 500000};
  for (int i = 0; i < 2000 && reap(); i++) {
    if (kill(-1, SIGKILL) != 0 && errno != ESRCH) die("kill -1");
    nanosleep(&half_ms, NULL);
  }
}

/* Whether the scratch is back to what a fresh mount was, once main.py is
 * unlinked, with no mount: the kernel's own count of the tmpfs's free
 * inodes and blocks equal to the fresh mount's (so nothing the task made,
 * under any name, at any depth, linked or open, is left), the root
 * directory as mounted (mode, owner, no subdirectory) and without extended
 * attributes or ACLs (the filter refuses setting them anyway). A task
 * cannot change what statfs reports but by leaving something behind, and
 * no process of it is left (gone()). Anything else: a fresh mount. This
 * saves the init's umount and mount per task, and with them an expedited
 * RCU grace period, which stops every CPU (docs/benchmarks.md). */
static bool scratch_as_fresh(void) {
  if (!zl.have_fresh || unlink(zl.main_py) != 0) return false;
  struct statfs now;
  struct stat st;
  char x;
  return statfs(zl.scratch, &now) == 0 && now.f_ffree == zl.fresh.f_ffree && now.f_bfree == zl.fresh.f_bfree &&
         now.f_files == zl.fresh.f_files && now.f_blocks == zl.fresh.f_blocks && lstat(zl.scratch, &st) == 0 &&
         st.st_mode == (S_IFDIR | 0700) && st.st_nlink == 2 && st.st_uid == zl.uid && st.st_gid == zl.gid &&
         listxattr(zl.scratch, &x, 1) == 0;
}

static void fresh_scratch(void) {
  if (scratch_as_fresh()) return;
  char k[16];
  ssize_t n;
  do n = send(zl.init, "w", 1, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  do n = n == 1 ? recv(zl.init, k, sizeof k, 0) : -1;
  while (n < 0 && errno == EINTR);
  if (n != 1) _exit(0); /* the init is gone: the pool is stopping (or the worker died) */
  if (k[0] != 'k') {
    static const char m[] = "sandq-jail: the init could not mount a fresh scratch\n";
    if (write(2, m, sizeof m - 1) < 0) { /* exiting anyway */
    }
    _exit(0);
  }
  zl.have_fresh = statfs(zl.scratch, &zl.fresh) == 0;
}

/* Receives the filter ("f" + BPF) and loads it with a listener, which it
 * returns (-1 on failure). */
static int load_filter(void) {
  size_t cap = 1 + ZL_MAX_FILTER * sizeof(struct sock_filter);
  char *buf = malloc(cap);
  if (!buf) return -1;
  ssize_t n;
  do n = recv(zl.ctl, buf, cap, 0);
  while (n < 0 && errno == EINTR);
  int listener = -1;
  if (n < 1 + (ssize_t)sizeof(struct sock_filter) || buf[0] != 'f' || (n - 1) % sizeof(struct sock_filter)) {
    errno = EPROTO;
  } else {
    memmove(buf, buf + 1, (size_t)(n - 1)); /* aligned, as malloc gave it */
    struct sock_fprog prog = {.len = (unsigned short)((size_t)(n - 1) / sizeof(struct sock_filter)),
                              .filter = (struct sock_filter *)(void *)buf};
    listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  }
  free(buf);
  return listener;
}

/* Whether [from, to) shares a page with a writable PT_LOAD segment of info. */
static bool near_writable(const struct dl_phdr_info *info, uintptr_t from, uintptr_t to, uintptr_t page) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
    uintptr_t a = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
    uintptr_t b = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
    if (a < to && from < b) return true;
  }
  return false;
}

/* One loaded object's mappings made fewer (dl_iterate_phdr): its
 * relocation read-only data (PT_GNU_RELRO) writable again, and its
 * read-only segments (headers, constants) executable, so each merges with
 * its neighbour of the same file: the data, the code. */
static int merge_object(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  uintptr_t page = *(const uintptr_t *)arg;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
    if (ph->p_type == PT_GNU_RELRO) {
      uintptr_t from = start & ~(page - 1), to = end & ~(page - 1); /* as the loader protected it */
      if (to > from) (void)mprotect((void *)from, to - from, PROT_READ | PROT_WRITE);
    } else if (ph->p_type == PT_LOAD && (ph->p_flags & (PF_R | PF_W | PF_X)) == PF_R) {
      uintptr_t from = start & ~(page - 1), to = (end + page - 1) & ~(page - 1);
      if (to > from && !near_writable(info, from, to, page))
        (void)mprotect((void *)from, to - from, PROT_READ | PROT_EXEC);
    }
  }
  return 0;
}

/* Every object the interpreter loaded is mapped in five parts: its
 * headers, code and constants (read-only, executable, read-only), and its
 * writable data in two, the part the loader made read-only after
 * relocating it (RELRO) and the rest. Each becomes two, code and data:
 * 14 mappings fewer, of about 40, each of which every task's fork copies
 * and its exit tears down (about 1-2 us of CPU apiece per task,
 * docs/benchmarks.md). RELRO and non-executable constants harden a
 * process against exploits of its own memory bugs; a task's process runs
 * the attacker's code by design and may call mprotect on any of it itself
 * (the filter allows mprotect and mmap: an interpreter needs them), and
 * the zygote runs none of a task's code, so they guard nothing here: the
 * boundary is the kernel's (docs/security.md). A failure changes nothing
 * but the count. */
static void merge_mappings(void) {
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t p = page > 0 ? (uintptr_t)page : 4096;
  dl_iterate_phdr(merge_object, &p);
}

/* serve(ctl, init, scratch, inline_max, limits): the zygote. Answers
 * "ready", then forks one child per task, ahead of it, and reports each
 * child's end. Returns only in a child (None), which goes on with take(); a
 * failure of the loop ends the zygote (the supervisor starts another). */
static PyObject *zl_serve(PyObject *self, PyObject *args) {
  int ctl, init;
  const char *scratch, *limits;
  long inline_max;
  if (!PyArg_ParseTuple(args, "iisls", &ctl, &init, &scratch, &inline_max, &limits)) return NULL;
  zl.ctl = ctl;
  zl.init = init;
  zl.uid = getuid();
  zl.gid = getgid();
  zl.inline_max = inline_max > 0 ? (size_t)inline_max : 0;
  if ((size_t)snprintf(zl.scratch, sizeof zl.scratch, "%s", scratch) >= sizeof zl.scratch ||
      (size_t)snprintf(zl.main_py, sizeof zl.main_py, "%s/main.py", scratch) >= sizeof zl.main_py) {
    errno = ENAMETOOLONG;
    die("scratch path");
  }
  if (parse_limits(limits) != 0) {
    errno = EINVAL;
    die("rlimits argument");
  }
  /* Each child's buffer for its task, made here once: the child finds it
   * mapped (the zygote never writes it, so it only faults in the pages the
   * task fills) instead of mapping 256 KiB itself (docs/benchmarks.md). */
  if (!(zl.msg = malloc(zl.inline_max + 256 + 1))) die("memory for the task buffer");
  /* Every limit but CPU, AS and FSIZE is the same for every task and set
   * here, once: each task's child inherits it (a task cannot change ours:
   * the filter allows prlimit64 on the caller only), and sets only those
   * three (take): CPU and AS come with the task, and FSIZE applies once
   * main.py, as large as a task may be, is written. The loop itself never
   * nears any of them. */
  for (int i = 0; i < zl.n_limits; i++) {
    int res = zl.limits[i].res;
    struct rlimit rl = {zl.limits[i].soft, zl.limits[i].hard};
    if (res == RLIMIT_FSIZE) zl.fsize = rl, zl.have_fsize = true;
    if (res == RLIMIT_CPU || res == RLIMIT_AS || res == RLIMIT_FSIZE) continue;
    if (setrlimit(res, &rl) != 0) die("setrlimit");
  }
  if (chdir("/") != 0) die("chdir /"); /* never in a scratch that is about to be replaced */
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) die("PR_SET_CHILD_SUBREAPER"); /* gone() */
  merge_mappings();
  /* The filter, once: this loop and every task's child run under it from
   * here on (the loop's calls are all on its allowlist). One load per
   * zygote instead of one per task: at each load the kernel converts and
   * compiles the filter and runs it for every call number (its action
   * cache), about 0.05 ms (docs/benchmarks.md). Its listener goes to the
   * supervisor with "ready". */
  int listener = load_filter();
  if (listener < 0) die("loading the seccomp filter with a listener");
  send_with_fd("ready", 5, listener);
  close(listener);
  for (;;) {
    fresh_scratch();
    int took[2];
    if (pipe2(took, O_CLOEXEC) != 0) die("pipe");
    PyOS_BeforeFork();
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      PyOS_AfterFork_Child();
      close(took[0]);
      zl.took_w = took[1];
      Py_RETURN_NONE;
    }
    PyOS_AfterFork_Parent();
    close(took[1]);
    int status = 0;
    struct rusage ru;
    pid_t w;
    /* Any child: what the task orphans is ours to reap as it goes (a
     * zombie would count against the task's process limits). */
    do w = wait4(-1, &status, __WALL, &ru);
    while ((w < 0 && errno == EINTR) || (w > 0 && w != pid));
    if (w != pid) die("wait4");
    /* When it was reaped, for the supervisor: a task is judged by this, not
     * by when the supervisor, late on a busy machine, looked (a timeout is a
     * task not reaped by its deadline: jail_supervise.c,
     * sq__jail_judge_by_reap). */
    struct timespec reaped;
    clock_gettime(CLOCK_MONOTONIC, &reaped);
    char t;
    ssize_t n;
    do n = read(took[0], &t, 1);
    while (n < 0 && errno == EINTR);
    close(took[0]);
    if (n != 1) { /* it died before it took a task */
      send(zl.ctl, "x", 1, MSG_NOSIGNAL);
      _exit(0);
    }
    char r[128];
    int rl = snprintf(r, sizeof r, "r %d %lld %lld %ld %lld", status,
                      (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
                      (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss,
                      (long long)reaped.tv_sec * 1000 + reaped.tv_nsec / 1000000);
    ctl_send(r, (size_t)rl);
    gone();
  }
}

/* A child's failure to set its task up: "e MESSAGE" to the supervisor
 * (none of the task's code ran; it replaces the zygote), then exit. */
static void refuse(const char *what) {
  char m[200];
  int n = snprintf(m, sizeof m, "e %s: %s", what, strerror(errno));
  if (n > 0) send(zl.ctl, m, (size_t)n < sizeof m ? (size_t)n : sizeof m - 1, MSG_NOSIGNAL);
  _exit(1);
}

/* The program from its memfd (pread: the offset is shared with the
 * supervisor's copy). */
static char *read_memfd(int fd, size_t *len) {
  struct stat st;
  if (fstat(fd, &st) != 0) return NULL;
  size_t cap = (size_t)st.st_size, off = 0;
  char *buf = malloc(cap + 1);
  if (!buf) return NULL;
  for (;;) {
    if (off == cap) {
      char *nb = realloc(buf, (cap = cap * 2 + 4096) + 1);
      if (!nb) break;
      buf = nb;
    }
    ssize_t n = pread(fd, buf + off, cap - off, (off_t)off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (n == 0) {
      *len = off;
      return buf;
    }
    off += (size_t)n;
  }
  free(buf);
  return NULL;
}

/* "n MS" into out (32 bytes), MS in decimal; its length. Without stdio: in
 * a fresh child, printf's first call writes pages it shares with the
 * zygote, each a copy-on-write fault (docs/benchmarks.md). */
static size_t said_text(char *out, long long ms) {
  char d[24];
  size_t k = 0;
  if (ms < 0) ms = 0;
  do d[k++] = (char)('0' + ms % 10);
  while ((ms /= 10) > 0 && k < sizeof d);
  out[0] = 'n';
  out[1] = ' ';
  for (size_t i = 0; i < k; i++) out[2 + i] = d[k - 1 - i];
  return k + 2;
}

/* The task's header "t CPU_S AS_BYTES NAMES" up to nl: NAMES (at most
 * names_cap - 1 letters) into names. Without sscanf, for the same reason
 * as said_text. Returns whether it is well formed. */
static bool parse_head(const char *msg, const char *nl, long long *cpu_s, long long *as_bytes, char *names,
                       size_t names_cap) {
  const char *p = msg;
  if (p + 2 > nl || p[0] != 't' || p[1] != ' ') return false;
  p += 2;
  long long *v[2] = {cpu_s, as_bytes};
  for (int i = 0; i < 2; i++) {
    char *end;
    errno = 0;
    *v[i] = strtoll(p, &end, 10);
    if (errno || end == p || end >= nl || *end != ' ') return false;
    p = end + 1;
  }
  size_t k = 0;
  while (p < nl && k + 1 < names_cap) names[k++] = *p++;
  names[k] = '\0';
  return p == nl && k > 0;
}

/* take(): the child, under the zygote's filter. Says it is there (the
 * supervisor starts the task's clock on it), then takes the task: "t CPU_S
 * AS_BYTES FDS\n" + program, with the descriptors FDS names. Sets the task
 * up (stdout, stderr, main.py, the scratch as cwd, every rlimit) and
 * returns the program (bytes). Failures never return. */
static PyObject *zl_take(PyObject *self, PyObject *unused) {
  close(zl.init);
  /* "n MONOTONIC_MS": the supervisor starts the task's clock at the later
   * of this and its sending of the task, not when it reads this. */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  char said[32];
  ssize_t said_len = (ssize_t)said_text(said, (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
  ssize_t n;
  do n = send(zl.ctl, said, (size_t)said_len, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != said_len) _exit(1);

  size_t cap = zl.inline_max + 256;
  char *msg = zl.msg;
  struct iovec iov = {.iov_base = msg, .iov_len = cap};
  union {
    char b[CMSG_SPACE(ZL_MAX_FDS * sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
  do n = recvmsg(zl.ctl, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  int fds[ZL_MAX_FDS], nfds = 0;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < k && nfds < ZL_MAX_FDS; i++) memcpy(&fds[nfds++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
    }
  if (n < 1 || msg[0] != 't') _exit(0); /* the supervisor let us go */
  msg[n] = '\0';
  char *nl = memchr(msg, '\n', (size_t)n);
  long long cpu_s = 0, as_bytes = 0;
  char names[ZL_MAX_FDS + 2] = "";
  bool head_ok = nl && parse_head(msg, nl, &cpu_s, &as_bytes, names, sizeof names);
  errno = EPROTO;
  /* "oe", then p (the program's memfd) and i (the task's stdin), each optional, in that order */
  int prog_at = -1, in_at = -1;
  for (int i = 2; i < nfds && head_ok; i++) {
    if (names[i] == 'p' && prog_at < 0 && in_at < 0) prog_at = i;
    else if (names[i] == 'i' && in_at < 0) in_at = i;
    else head_ok = false;
  }
  if (!head_ok || (int)strlen(names) != nfds || strncmp(names, "oe", 2) != 0 || cpu_s < 1 || as_bytes < 1)
    refuse("bad task header");
  if (dup2(fds[0], 1) < 0 || dup2(fds[1], 2) < 0 || (in_at >= 0 && dup2(fds[in_at], 0) < 0)) refuse("dup2");
  char *prog = nl + 1;
  size_t plen = (size_t)(msg + n - prog);
  if (prog_at >= 0) {
    if (!(prog = read_memfd(fds[prog_at], &plen))) refuse("reading the program");
    free(msg);
    msg = NULL;
  }
  for (int i = 0; i < nfds; i++) close(fds[i]);
  int out = open(zl.main_py, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0 || sq_write_all(out, prog, plen) != 0 || close(out) != 0) refuse("writing main.py");
  /* The program as Python will run it, before the task's limits apply. */
  PyObject *program = PyBytes_FromStringAndSize(prog, (Py_ssize_t)plen);
  if (!program) {
    PyErr_Clear();
    errno = ENOMEM;
    refuse("the program as bytes");
  }
  if (chdir(zl.scratch) != 0) refuse("chdir to the scratch");
  /* The task's own limits and FSIZE; every other one it has from the
   * zygote (serve). */
  if (setrlimit(RLIMIT_CPU, &(struct rlimit){(rlim_t)cpu_s, (rlim_t)cpu_s + 1}) != 0 ||
      setrlimit(RLIMIT_AS, &(struct rlimit){(rlim_t)as_bytes, (rlim_t)as_bytes}) != 0 ||
      (zl.have_fsize && setrlimit(RLIMIT_FSIZE, &zl.fsize) != 0))
    refuse("setrlimit");
  do n = write(zl.took_w, "t", 1);
  while (n < 0 && errno == EINTR);
  close(zl.took_w);
  close(zl.ctl);
  return program;
}

/* finish(status): a task's end. Flushes sys.stdout and sys.stderr, as the
 * interpreter's own exit does (a failure is ignored, as there), then closes
 * both outputs in one call (the supervisor sees both at EOF at once) and
 * exits with status. finish(None) flushes only (the rehearsal). */
static PyObject *zl_finish(PyObject *self, PyObject *status) {
  (void)self;
  static const char *const names[] = {"stdout", "stderr"};
  for (int i = 0; i < 2; i++) {
    PyObject *f = PySys_GetObject(names[i]); /* borrowed */
    if (f && f != Py_None) {
      PyObject *r = PyObject_CallMethod(f, "flush", NULL);
      Py_XDECREF(r);
    }
    PyErr_Clear();
  }
  if (status == Py_None) Py_RETURN_NONE;
  long code = PyLong_AsLong(status);
  if (code == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    code = 1;
  }
  if (syscall(SYS_close_range, 1U, 2U, 0U) != 0) {
    close(1);
    close(2);
  }
  _exit((int)(code & 0xff));
}

static PyMethodDef zl_methods[] = {
    {"serve", zl_serve, METH_VARARGS, "serve(ctl, init, scratch, inline_max, limits): the zygote's loop"},
    {"take", zl_take, METH_NOARGS, "take(): the next task, set up; its program"},
    {"finish", zl_finish, METH_O, "finish(status): flush both streams, close them, exit (None: flush only)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef zl_module = {PyModuleDef_HEAD_INIT, "sandq_zygote", NULL, -1, zl_methods,
                                       NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_sandq_zygote(void) { return PyModule_Create(&zl_module); }
