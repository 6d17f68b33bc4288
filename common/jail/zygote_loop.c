/* zygote_loop.c: the warm zygote's loop and each task's setup, in C: the
 * Python extension module sandq_zygote. Built as a shared object of its
 * own, embedded into the jail library, written into each zygote's root by
 * its init (SQ__ZYGOTE_SO) and imported by zygote.py (the GIL held
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
 * The protocol with the supervisor (jail_zygote.c, jail_supervise.c) is
 * zygote_proto.h's, encoded and decoded by zygote_proto.c, which is
 * compiled into this module too. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x03070000
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
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

#include "jail_plan.h" /* sq__jail_rlimits_set (jail_plan.c, compiled into this module too) */
#include "jail_seccomp_install.h" /* the jail's installer (jail_seccomp_install.c, compiled in too) */
#include "util.h" /* sq_write_all (base/write_all.c, compiled into this module too) */
#include "zygote_proto.h"

#ifndef __WALL
#define __WALL 0x40000000
#endif
#define ZL_MAIN_PY SQ__ZYGOTE_SCRATCH_DIR "/main.py"

/* The loop's state; in a child, what take() needs. */
static struct {
  int ctl, init, took_w;
  sq__zygote_rlimit fsize; /* each task's, set by its child once main.py is written */
  bool have_fsize;
  struct statfs fresh; /* the scratch as its init mounted it (fresh_scratch) */
  struct timespec fresh_times[2]; /* and its root directory's atime and mtime then */
  bool have_fresh;
  uid_t uid; /* the slot's: our effective uid, each task's in all three (serve) */
  gid_t gid;
  char *msg; /* take()'s buffer for the task, TASK_CAP bytes: allocated by the zygote, untouched there */
  /* The standby request the last task passed on (its TASK's), for the
   * child forked next: standby_request() (docs/jail-performance.md). */
  char standby[SQ__ZYGOTE_STANDBY_MAX];
  size_t standby_len;
} zl;

/* What a child writes to its zygote once it took its task: "t", its own
 * CPU time so far (user, system: int64 µs each), then the standby request. */
#define TOOK_HEAD (1 + 2 * sizeof(int64_t))

/* A TASK message at its largest: the header and an inline program. */
#define TASK_CAP (SQ__ZYGOTE_TASK_HEAD_MAX + SQ__ZYGOTE_INLINE_MAX)

PyMODINIT_FUNC PyInit_sandq_zygote(void);

static void die(const char *what) {
  char m[160];
  int n = snprintf(m, sizeof m, "sandq-jail: zygote: %s: %s\n", what, strerror(errno));
  if (n > 0 && write(2, m, (size_t)n) < 0) { /* nothing left to tell */
  }
  _exit(1);
}

static void ctl_send(const char *msg, size_t len, const int *fds, int nfds) {
  if (sq__jail_send_fds(zl.ctl, msg, len, fds, nfds) != 0) die("send to the supervisor");
}

/* The LIMITS message (zygote_proto.h) received and applied: every limit
 * but CPU, AS and FSIZE is the same for every task and set here, once:
 * each task's child inherits it (a task cannot change ours: the filter
 * allows prlimit64 on the caller only), and sets only those three (take):
 * CPU and AS come with the task, and FSIZE applies once main.py, as large
 * as a task may be, is written. The loop itself never nears any of them. */
static void set_limits(void) {
  char buf[RLIM_NLIMITS * SQ__ZYGOTE_LIMIT_MAX + 8];
  int nfds;
  ssize_t n = sq__jail_recv_fds(zl.ctl, buf, sizeof buf, 0, NULL, 0, &nfds, NULL);
  sq__zygote_msg m;
  if (n < 0 || sq__zygote_decode(SQ__ZYGOTE_AT_ZYGOTE, buf, (size_t)n, nfds, &m) != SQ__ZYGOTE_LIMITS) {
    errno = n < 0 ? errno : EPROTO;
    die("the rlimits message");
  }
  sq__zygote_rlimit l;
  for (int i = 0; sq__zygote_limit_at(&m, i, &l); i++) {
    if (l.res == RLIMIT_FSIZE) zl.fsize = l, zl.have_fsize = true;
    if (l.res == RLIMIT_CPU || l.res == RLIMIT_AS || l.res == RLIMIT_FSIZE) continue;
    if (sq__jail_rlimits_set(&l, 1) >= 0) {
      char what[96];
      sq__jail_rlimit_describe("setrlimit ", &l, what, sizeof what);
      die(what);
    }
  }
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
 * so only then; SIGKILL ends a stopped one too) and reaped, until no child
 * is left. None of them can stop us (our real and saved uid are not the
 * task's: serve). Still there after about a second: the zygote exits, and
 * the slot is replaced, rather than a task starting beside them. */
static void gone(void) {
  struct timespec half_ms = {0, 500000};
  for (int i = 0; i < 2000 && reap(); i++) {
    if (kill(-1, SIGKILL) != 0 && errno != ESRCH) die("kill -1");
    nanosleep(&half_ms, NULL);
  }
  if (reap()) {
    errno = EBUSY;
    die("processes of the last task outlived SIGKILL");
  }
}

/* Whether the scratch is back to what a fresh mount was, once main.py is
 * unlinked, with no mount: the kernel's own count of the tmpfs's free
 * inodes and blocks equal to the fresh mount's (so nothing the task made,
 * under any name, at any depth, linked or open, is left), the root
 * directory as mounted (mode, owner, no subdirectory) and without extended
 * attributes or ACLs (the filter refuses setting them anyway). A task
 * cannot change what statfs reports but by leaving something behind, and
 * no process of it is left (gone()). Its root directory's atime and mtime,
 * which a task may set to anything (utime: a 64-bit channel to the next
 * task), are put back to the fresh mount's. Anything else: a fresh mount.
 * This saves the init's umount and mount per task, and with them an
 * expedited RCU grace period, which stops every CPU (docs/benchmarks.md). */
static bool scratch_as_fresh(void) {
  if (!zl.have_fresh || (unlink(ZL_MAIN_PY) != 0 && errno != ENOENT)) return false; /* none: a dropped child */
  struct statfs now;
  struct stat st;
  char x;
  return statfs(SQ__ZYGOTE_SCRATCH_DIR, &now) == 0 && now.f_ffree == zl.fresh.f_ffree &&
         now.f_bfree == zl.fresh.f_bfree && now.f_files == zl.fresh.f_files && now.f_blocks == zl.fresh.f_blocks &&
         lstat(SQ__ZYGOTE_SCRATCH_DIR, &st) == 0 && st.st_mode == (S_IFDIR | 0700) && st.st_nlink == 2 &&
         st.st_uid == zl.uid && st.st_gid == zl.gid && listxattr(SQ__ZYGOTE_SCRATCH_DIR, &x, 1) == 0 &&
         utimensat(AT_FDCWD, SQ__ZYGOTE_SCRATCH_DIR, zl.fresh_times, AT_SYMLINK_NOFOLLOW) == 0;
}

static void fresh_scratch(void) {
  if (scratch_as_fresh()) return;
  char w[SQ__ZYGOTE_SHORT_MAX], k[16];
  size_t wl = sq__zygote_encode_short(SQ__ZYGOTE_SCRATCH, w, sizeof w);
  int nfds;
  ssize_t n = -1;
  if (sq__jail_send_fds(zl.init, w, wl, NULL, 0) == 0)
    n = sq__jail_recv_fds(zl.init, k, sizeof k, 0, NULL, 0, &nfds, NULL);
  if (n < 1) _exit(0); /* the init is gone: the pool is stopping (or the worker died) */
  sq__zygote_msg answer;
  if (sq__zygote_decode(SQ__ZYGOTE_AT_ZYGOTE_INIT, k, (size_t)n, nfds, &answer) != SQ__ZYGOTE_SCRATCH_OK) {
    static const char m[] = "sandq-jail: the init could not mount a fresh scratch\n";
    if (write(2, m, sizeof m - 1) < 0) { /* exiting anyway */
    }
    _exit(0);
  }
  struct stat st;
  zl.have_fresh = statfs(SQ__ZYGOTE_SCRATCH_DIR, &zl.fresh) == 0 && lstat(SQ__ZYGOTE_SCRATCH_DIR, &st) == 0;
  if (zl.have_fresh) {
    zl.fresh_times[0] = st.st_atim;
    zl.fresh_times[1] = st.st_mtim;
  }
}

/* Receives the FILTER message and loads it with a listener, which it
 * returns (-1 on failure). */
static int load_filter(void) {
  size_t cap = 1 + SQ__ZYGOTE_MAX_FILTER * sizeof(struct sock_filter);
  char *buf = malloc(cap);
  if (!buf) return -1;
  int nfds, listener = -1;
  ssize_t n = sq__jail_recv_fds(zl.ctl, buf, cap, 0, NULL, 0, &nfds, NULL);
  sq__zygote_msg m;
  if (n < 0 || sq__zygote_decode(SQ__ZYGOTE_AT_ZYGOTE, buf, (size_t)n, nfds, &m) != SQ__ZYGOTE_FILTER) {
    errno = EPROTO;
  } else {
    size_t bytes = m.u.filter.n * sizeof(struct sock_filter);
    memmove(buf, m.u.filter.insns, bytes); /* aligned, as malloc gave it */
    struct sock_fprog prog = {.len = (unsigned short)m.u.filter.n, .filter = (struct sock_filter *)(void *)buf};
    listener = sq__jail_seccomp_install_listener(&prog);
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

/* serve(): the zygote, on SQ__ZYGOTE_CTL_FD and SQ__ZYGOTE_INIT_FD.
 * Takes LIMITS and FILTER, answers READY, then forks one child per task,
 * ahead of it, and reports each child's end (zygote_proto.h). Returns only
 * in a child (None), which goes on with take(); a failure of the loop ends
 * the zygote (the supervisor starts another). */
static PyObject *zl_serve(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  zl.ctl = SQ__ZYGOTE_CTL_FD;
  zl.init = SQ__ZYGOTE_INIT_FD;
  /* Our real uid is the zygote's own, the effective one the slot's (its
   * tasks'), and the exec made the saved one the effective one: back to
   * the real one, so that no task, whose three are the slot's, can signal
   * us (stop us, say), while we can kill what a task left. Then
   * no_new_privs, which the filter needs (jail_contain.c, warm_identity). */
  if (geteuid() == getuid()) { /* a shell between us and the exec gave up the effective uid */
    errno = EPERM;
    die("the effective uid is the real one (python_path must be the interpreter, or a wrapper that keeps "
        "its effective uid: sh -p)");
  }
  if (syscall(SYS_setresuid, -1, -1, getuid()) != 0) die("setresuid (the saved uid)");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("PR_SET_NO_NEW_PRIVS");
  zl.uid = geteuid(); /* the slot's: the scratch's owner, each task's uid */
  zl.gid = getegid();
  /* Each child's buffer for its task, made here once: the child finds it
   * mapped (the zygote never writes it, so it only faults in the pages the
   * task fills) instead of mapping 256 KiB itself (docs/benchmarks.md). */
  if (!(zl.msg = malloc(TASK_CAP + 1))) die("memory for the task buffer");
  set_limits();
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
  char ready[SQ__ZYGOTE_SHORT_MAX];
  ctl_send(ready, sq__zygote_encode_short(SQ__ZYGOTE_READY, ready, sizeof ready), &listener, 1);
  close(listener);
  for (;;) {
    fresh_scratch();
    int took[2];
    if (pipe2(took, O_CLOEXEC) != 0) die("pipe");
    PyOS_BeforeFork();
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      /* The slot's uid in all three: the task's processes may signal each
       * other, and count against the slot's RLIMIT_NPROC. */
      if (syscall(SYS_setresuid, zl.uid, zl.uid, zl.uid) != 0) _exit(1);
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
    /* What take() wrote in one go before any of the task's code ran (the
     * task never has this pipe): "t", the child's own CPU time until then
     * (its setup, a standby's start among it: never the task's), and the
     * task's standby request. */
    char t[TOOK_HEAD + SQ__ZYGOTE_STANDBY_MAX];
    ssize_t n;
    do n = read(took[0], t, sizeof t);
    while (n < 0 && errno == EINTR);
    close(took[0]);
    if (n == 1 && t[0] == 'd') { /* DROP: a fresh child, no standby, its start never the task's */
      zl.standby_len = 0;
      gone(); /* the standby with it */
      continue;
    }
    if (n < (ssize_t)TOOK_HEAD || t[0] != 't') { /* it died before it took a task */
      char x[SQ__ZYGOTE_SHORT_MAX];
      (void)sq__jail_send_fds(zl.ctl, x, sq__zygote_encode_short(SQ__ZYGOTE_EXITED, x, sizeof x), NULL, 0);
      _exit(0);
    }
    zl.standby_len = (size_t)n - TOOK_HEAD;
    memcpy(zl.standby, t + TOOK_HEAD, zl.standby_len);
    int64_t setup_us[2];
    memcpy(setup_us, t + 1, sizeof setup_us);
    int64_t utime_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec - setup_us[0];
    int64_t stime_us = (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec - setup_us[1];
    char r[SQ__ZYGOTE_REAPED_MAX];
    ctl_send(r,
             sq__zygote_encode_reaped(r, sizeof r, status, utime_us < 0 ? 0 : utime_us, stime_us < 0 ? 0 : stime_us,
                                      ru.ru_maxrss,
                                      (int64_t)reaped.tv_sec * 1000 + reaped.tv_nsec / 1000000),
             NULL, 0);
    gone();
  }
}

/* A child's failure to set its task up: ERROR to the supervisor (none of
 * the task's code ran; it replaces the zygote), then exit. */
static void refuse(const char *what) {
  char m[200];
  size_t n = sq__zygote_encode_error(m, sizeof m, what, strerror(errno));
  (void)sq__jail_send_fds(zl.ctl, m, n, NULL, 0);
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

/* take(): the child, under the zygote's filter. Says it is there (NEXT:
 * the supervisor starts the task's clock on it), then takes the TASK and
 * its descriptors. Sets the task up (stdout, stderr, main.py, the scratch
 * as cwd, every rlimit) and returns the program (bytes). Failures never
 * return. No stdio here: in a fresh child, printf's first call writes
 * pages it shares with the zygote, each a copy-on-write fault
 * (docs/benchmarks.md). */
static PyObject *zl_take(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  if (zl.init >= 0) close(zl.init);
  zl.init = -1;
  /* The supervisor starts the task's clock at the later of this and its
   * sending of the task, not when it reads this. */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  char said[SQ__ZYGOTE_NEXT_MAX];
  size_t said_len = sq__zygote_encode_next(said, sizeof said, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
  if (sq__jail_send_fds(zl.ctl, said, said_len, NULL, 0) != 0) _exit(1);

  char *msg = zl.msg;
  int fds[SQ__ZYGOTE_MAX_FDS], nfds = 0;
  ssize_t n = sq__jail_recv_fds(zl.ctl, msg, TASK_CAP, 0, fds, SQ__ZYGOTE_MAX_FDS, &nfds, NULL);
  if (n == 0) _exit(0); /* the supervisor let us go */
  sq__zygote_msg m;
  sq__zygote_kind kind = n < 0 ? SQ__ZYGOTE_BAD : sq__zygote_decode(SQ__ZYGOTE_AT_ZYGOTE, msg, (size_t)n, nfds, &m);
  if (kind == SQ__ZYGOTE_DROP) { /* the standby suits no task coming: the zygote forks a child without one */
    do n = write(zl.took_w, "d", 1);
    while (n < 0 && errno == EINTR);
    _exit(0);
  }
  if (kind != SQ__ZYGOTE_TASK) {
    errno = EPROTO;
    refuse("bad task message");
  }
  /* stdout, stderr, then the program's memfd and the task's stdin, each when named */
  int in_at = m.u.task.input ? (m.u.task.memfd ? 3 : 2) : -1;
  if (dup2(fds[0], 1) < 0 || dup2(fds[1], 2) < 0 || (in_at >= 0 && dup2(fds[in_at], 0) < 0)) refuse("dup2");
  char *prog = (char *)m.u.task.program;
  size_t plen = m.u.task.program_len;
  if (m.u.task.memfd) {
    if (!(prog = read_memfd(fds[2], &plen))) refuse("reading the program");
    free(msg);
    msg = NULL;
  }
  for (int i = 0; i < nfds; i++) close(fds[i]);
  int out = open(ZL_MAIN_PY, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0 || sq_write_all(out, prog, plen) != 0 || close(out) != 0) refuse("writing main.py");
  /* The program as Python will run it, before the task's limits apply. */
  PyObject *program = PyBytes_FromStringAndSize(prog, (Py_ssize_t)plen);
  if (!program) {
    PyErr_Clear();
    errno = ENOMEM;
    refuse("the program as bytes");
  }
  if (chdir(SQ__ZYGOTE_SCRATCH_DIR) != 0) refuse("chdir to the scratch");
  /* The task's own limits and FSIZE; every other one it has from the
   * zygote (serve). */
  sq__zygote_rlimit own_limits[3];
  sq__jail_task_rlimits(m.u.task.cpu_s, m.u.task.as_bytes, own_limits);
  own_limits[2] = zl.fsize;
  int bad = sq__jail_rlimits_set(own_limits, zl.have_fsize ? 3 : 2);
  if (bad >= 0) {
    char what[96];
    sq__jail_rlimit_describe("setrlimit ", &own_limits[bad], what, sizeof what);
    refuse(what);
  }
  char took[TOOK_HEAD + SQ__ZYGOTE_STANDBY_MAX];
  struct rusage own;
  int64_t setup_us[2] = {0, 0};
  if (getrusage(RUSAGE_SELF, &own) == 0) {
    setup_us[0] = (int64_t)own.ru_utime.tv_sec * 1000000 + own.ru_utime.tv_usec;
    setup_us[1] = (int64_t)own.ru_stime.tv_sec * 1000000 + own.ru_stime.tv_usec;
  }
  took[0] = 't';
  memcpy(took + 1, setup_us, sizeof setup_us);
  memcpy(took + TOOK_HEAD, m.u.task.standby, m.u.task.standby_len);
  do n = write(zl.took_w, took, TOOK_HEAD + m.u.task.standby_len);
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

/* standby_request(): in a child, before take(), the standby request the
 * slot's last task passed on (bytes), or None. */
static PyObject *zl_standby_request(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  if (!zl.standby_len) Py_RETURN_NONE;
  return PyBytes_FromStringAndSize(zl.standby, (Py_ssize_t)zl.standby_len);
}

/* fsize(): the tasks' RLIMIT_FSIZE as (soft, hard), -1 unlimited; None
 * when the supervisor sent none. A standby runtime starts under it. */
static PyObject *zl_fsize(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  if (!zl.have_fsize) Py_RETURN_NONE;
  return Py_BuildValue("(LL)", (long long)zl.fsize.soft, (long long)zl.fsize.hard);
}

static PyMethodDef zl_methods[] = {
    {"standby_request", zl_standby_request, METH_NOARGS, "standby_request(): what to start ahead, or None"},
    {"fsize", zl_fsize, METH_NOARGS, "fsize(): the tasks' RLIMIT_FSIZE (soft, hard), or None"},
    {"serve", zl_serve, METH_NOARGS, "serve(): the zygote's loop"},
    {"take", zl_take, METH_NOARGS, "take(): the next task, set up; its program"},
    {"finish", zl_finish, METH_O, "finish(status): flush both streams, close them, exit (None: flush only)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef zl_module = {PyModuleDef_HEAD_INIT, "sandq_zygote", NULL, -1, zl_methods,
                                       NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_sandq_zygote(void) {
  PyObject *m = PyModule_Create(&zl_module);
  if (m && PyModule_AddStringConstant(m, "MAIN", ZL_MAIN_PY) != 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
