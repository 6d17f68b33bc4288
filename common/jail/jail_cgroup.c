/* jail_cgroup.c: a run's memory, pids and CPU accounting cgroups, on cgroup
 * v1 (one hierarchy per controller: memory, pids, cpuacct) or v2 (one
 * group), below the cgroup this process already belongs to. The supervisor
 * creates them, moves the run's init in before it starts, reads the peak,
 * the OOM count and the CPU time, and removes them. A missing controller
 * is a missing layer, never an error.
 *
 * Ownership: the creator holds an flock on each directory it made for as
 * long as it lives (the kernel drops it when the process dies, whatever
 * PID namespace it was in), so the start-up sweep removes exactly the
 * groups of dead owners, and two workers whose pids collide (different PID
 * namespaces, one cgroup tree) never share a group. The sweep knows them
 * by name: sandq-{s,z}PID-SLOT (spawn slots, warm zygotes), sandq-probe-PID,
 * sandq-self-PID (v2: the worker's own leaf), each maybe with a -K suffix
 * (a name a live owner of another PID namespace held); any other directory
 * is not ours and is left alone, whatever it is called. A process that
 * ends at once (_exit) removes its groups first (sq_jail_cgroups_remove). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"
#include "jail_internal.h"
#include "log.h"

#define CG_ROOT "/sys/fs/cgroup"

/* value into dir/file in one write; async-signal-safe (no snprintf): a
 * new child entering its groups uses it too (sq__jail_cgroup_enter). */
static int write_file(const char *dir, const char *file, const char *value) {
  char path[512];
  size_t d = strlen(dir), f = strlen(file);
  if (d + 1 + f >= sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(path, dir, d);
  path[d] = '/';
  memcpy(path + d + 1, file, f + 1);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, value, strlen(value));
  int saved = errno;
  close(fd);
  errno = saved;
  return n == (ssize_t)strlen(value) ? 0 : -1;
}

static bool is_v2_only(void) {
  struct stat st;
  return stat(CG_ROOT "/cgroup.controllers", &st) == 0;
}

static int lock_dir(const char *dir);

/* The first of want[0..n) that is not a word of dir/file (a space-separated
 * list, as cgroup.controllers and cgroup.subtree_control are), or NULL. */
static const char *first_missing(const char *dir, const char *file, const char *const *want, int n) {
  char path[512], buf[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  buf[got > 0 ? got : 0] = '\0';
  for (int i = 0; i < n; i++) {
    size_t k = strlen(want[i]);
    bool found = false;
    for (const char *w = buf; *w && !found; w += strcspn(w, " \n"), w += strspn(w, " \n"))
      found = strncmp(w, want[i], k) == 0 && (w[k] == ' ' || w[k] == '\n' || w[k] == '\0');
    if (!found) return want[i];
  }
  return NULL;
}

/* The first process of dir/cgroup.procs other than ours, or 0. */
static pid_t other_process(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  long pid;
  pid_t other = 0;
  while (!other && fscanf(f, "%ld", &pid) == 1)
    if ((pid_t)pid != getpid()) other = (pid_t)pid;
  fclose(f);
  return other;
}

int sq__jail_cgroup2_delegate(const char *base, const char *const *want, int n, int *self_lock, char *why,
                              size_t why_len) {
  *self_lock = -1;
  why[0] = '\0';
  if (!first_missing(base, "cgroup.subtree_control", want, n)) return 0;
  const char *absent = first_missing(base, "cgroup.controllers", want, n);
  if (absent) {
    snprintf(why, why_len, "%s is not handed down to %s (a systemd unit needs Delegate=yes, a container a "
             "cgroup of its own; docs/deploy.md)", absent, base);
    return -1;
  }
  char enable[128] = "";
  for (int i = 0; i < n; i++)
    snprintf(enable + strlen(enable), sizeof enable - strlen(enable), "%s+%s", i ? " " : "", want[i]);
  if (write_file(base, "cgroup.subtree_control", enable) == 0) return 0; /* the root, or no process inside */
  if (errno != EBUSY) {
    snprintf(why, why_len, "enabling %s in %s: %s", enable, base, strerror(errno));
    return -1;
  }
  /* The no-internal-process rule: we move into a leaf of our own, but
   * only when no other process shares base (it would stay in the way). */
  pid_t other = other_process(base);
  if (other) {
    snprintf(why, why_len, "%s holds other processes (pid %d among them), and a cgroup that hands controllers "
             "down holds none: run the worker in a cgroup of its own (a systemd unit with Delegate=yes; "
             "docs/deploy.md)", base, (int)other);
    return -1;
  }
  char self[512], pid[24];
  snprintf(self, sizeof self, "%s/sandq-self-%d", base, (int)getpid());
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  if ((mkdir(self, 0755) != 0 && errno != EEXIST) || (*self_lock = lock_dir(self)) < 0 ||
      write_file(self, "cgroup.procs", pid) != 0) {
    snprintf(why, why_len, "moving this process into %s: %s", self, strerror(errno));
    if (*self_lock >= 0) close(*self_lock);
    *self_lock = -1;
    rmdir(self);
    return -1;
  }
  if (write_file(base, "cgroup.subtree_control", enable) != 0) { /* a process joined base meanwhile */
    snprintf(why, why_len, "enabling %s in %s: %s", enable, base, strerror(errno));
    return -1;
  }
  return 0;
}

/* cgroup v2, once per process: the base (the cgroup this process was in
 * when the jail first looked, which stays the runs' parent after the
 * process moves into its leaf below it) with memory and pids enabled for
 * the runs' groups; why, when they could not be. */
static struct {
  pthread_once_t once;
  char base[200];
  char why[320];
  int self_lock;
} unified = {.once = PTHREAD_ONCE_INIT, .self_lock = -1};

static void v2_setup(void) {
  static const char *const want[] = {"memory", "pids"};
  if (sq_host_cgroup_dir(CG_ROOT, "", unified.base, sizeof unified.base) != 0) {
    snprintf(unified.why, sizeof unified.why, "this process's cgroup is not in /proc/self/cgroup");
    unified.base[0] = '\0';
    return;
  }
  if (geteuid() != 0) return; /* the groups below cannot be made either */
  if (sq__jail_cgroup2_delegate(unified.base, want, 2, &unified.self_lock, unified.why, sizeof unified.why) != 0)
    SQ_WARN("jail: cgroup v2: %s; runs go without the memory and pids cgroup limits", unified.why);
  else if (unified.self_lock >= 0)
    SQ_INFO("jail: cgroup v2: moved into %s/sandq-self-%d and enabled memory and pids for the runs' groups in %s",
            unified.base, (int)getpid(), unified.base);
}

/* Where this process's own cgroup is, per v1 controller: found once (it
 * reads /proc/self/cgroup and /proc/self/mountinfo, and every zygote or
 * slot start asks for three), as the v2 base is. */
static struct {
  pthread_mutex_t lock;
  struct {
    char ctl[16], dir[200];
    bool found;
  } known[4];
  int n;
} v1_bases = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool v1_base(const char *ctl, char *base, size_t len) {
  char mount[64];
  snprintf(mount, sizeof mount, CG_ROOT "/%s", ctl);
  pthread_mutex_lock(&v1_bases.lock);
  int i = 0;
  while (i < v1_bases.n && strcmp(v1_bases.known[i].ctl, ctl) != 0) i++;
  bool found;
  if (i < v1_bases.n) {
    found = v1_bases.known[i].found;
    if (found) snprintf(base, len, "%s", v1_bases.known[i].dir);
  } else if (i < (int)(sizeof v1_bases.known / sizeof *v1_bases.known)) {
    snprintf(v1_bases.known[i].ctl, sizeof v1_bases.known[i].ctl, "%s", ctl);
    found = v1_bases.known[i].found =
        sq_host_cgroup_dir(mount, ctl, v1_bases.known[i].dir, sizeof v1_bases.known[i].dir) == 0;
    v1_bases.n++;
    if (found) snprintf(base, len, "%s", v1_bases.known[i].dir);
  } else { /* more controllers than the cache holds: looked up each time */
    found = sq_host_cgroup_dir(mount, ctl, base, len) == 0;
  }
  pthread_mutex_unlock(&v1_bases.lock);
  return found;
}

/* The directory our runs' cgroups go in, for controller ctl; "" when absent. */
static void base_for(const char *ctl, char *out, size_t len) {
  out[0] = '\0';
  char base[200];
  if (is_v2_only()) {
    pthread_once(&unified.once, v2_setup);
    snprintf(base, sizeof base, "%s", unified.base);
  } else if (!v1_base(ctl, base, sizeof base)) {
    return;
  }
  struct stat st;
  if (base[0] && stat(base, &st) == 0) snprintf(out, len, "%s", base);
}

static void dir_for(const char *ctl, const char *name, char *out, size_t len) {
  char base[200];
  base_for(ctl, base, sizeof base);
  if (base[0]) snprintf(out, len, "%s/sandq-%s", base, name);
  else out[0] = '\0';
}

/* Opens dir and takes its owner lock (non-blocking). Returns the
 * descriptor, or -1 (errno EWOULDBLOCK: a live owner holds it). */
static int lock_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

static void remove_dir(const char *dir);

/* Digits at *p (at most 9) as a number, *p moved past them; -1 if none. */
static long digits(const char **p) {
  long v = 0;
  int n = 0;
  for (; **p >= '0' && **p <= '9' && n < 9; (*p)++, n++) v = v * 10 + (**p - '0');
  return n > 0 && !(**p >= '0' && **p <= '9') ? v : -1;
}

/* The owner's pid in the name of a group this code makes (the file's
 * opening comment lists them), or 0 when name is not one of those. */
static pid_t owner_of(const char *name) {
  static const struct {
    const char *prefix;
    int min_parts, max_parts; /* -N parts after the pid: a slot, then a -K suffix */
  } kinds[] = {{"sandq-s", 1, 2}, {"sandq-z", 1, 2}, {"sandq-probe-", 0, 1}, {"sandq-self-", 0, 1}};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    size_t n = strlen(kinds[k].prefix);
    if (strncmp(name, kinds[k].prefix, n) != 0) continue;
    const char *p = name + n;
    long pid = digits(&p);
    int parts = 0;
    while (pid > 0 && *p == '-' && parts < kinds[k].max_parts) {
      p++;
      if (digits(&p) < 0) break;
      parts++;
    }
    if (pid > 0 && !*p && parts >= kinds[k].min_parts) return (pid_t)pid;
  }
  return 0;
}

/* Every group this process made and has not removed, by its directories,
 * for sq_jail_cgroups_remove; closed once that ran (groups made after it
 * are removed at once). */
typedef struct {
  const sq__jail_cgroup *cg;
  char dirs[3][256];
  int n;
} made_entry;
static struct {
  pthread_mutex_t lock;
  made_entry *e;
  size_t n, cap;
  bool closed;
} made = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Records cg's directories (those it locked). Returns false when the
 * process is ending (sq_jail_cgroups_remove ran): the caller removes them. */
static bool made_add(const sq__jail_cgroup *cg) {
  made_entry me = {.cg = cg};
  const char *dirs[3] = {cg->mem, cg->pids, cg->cpu};
  for (int i = 0; i < 3; i++)
    if (cg->lock_fd[i] >= 0) snprintf(me.dirs[me.n++], sizeof me.dirs[0], "%s", dirs[i]);
  pthread_mutex_lock(&made.lock);
  bool open = !made.closed;
  if (open && made.n == made.cap) {
    size_t cap = made.cap ? made.cap * 2 : 32;
    made_entry *e = realloc(made.e, cap * sizeof *e);
    if (e) made.e = e, made.cap = cap;
  }
  if (open && made.n < made.cap) made.e[made.n++] = me; /* out of memory: left to the next sweep */
  pthread_mutex_unlock(&made.lock);
  return open;
}

/* Takes cg's record out into *out; false when there is none. */
static bool made_take(const sq__jail_cgroup *cg, made_entry *out) {
  bool found = false;
  pthread_mutex_lock(&made.lock);
  for (size_t i = 0; i < made.n && !found; i++)
    if (made.e[i].cg == cg) {
      *out = made.e[i];
      made.e[i] = made.e[--made.n];
      found = true;
    }
  pthread_mutex_unlock(&made.lock);
  return found;
}

void sq_jail_cgroups_remove(void) {
  pthread_mutex_lock(&made.lock);
  made.closed = true;
  for (size_t i = 0; i < made.n; i++)
    for (int d = 0; d < made.e[i].n; d++) remove_dir(made.e[i].dirs[d]);
  made.n = 0;
  pthread_mutex_unlock(&made.lock);
}

int sq__jail_cgroup_sweep(void) {
  const char *ctls[] = {"memory", "pids", "cpuacct"};
  int removed = 0;
  for (int i = 0; i < (is_v2_only() ? 1 : 3); i++) {
    char base[200];
    base_for(ctls[i], base, sizeof base);
    DIR *d = base[0] ? opendir(base) : NULL;
    if (!d) continue;
    for (struct dirent *e; (e = readdir(d));) {
      pid_t pid = owner_of(e->d_name);
      if (pid <= 0) continue; /* not a name of ours: another program's group */
      char path[512];
      snprintf(path, sizeof path, "%s/%s", base, e->d_name);
      /* A live owner holds the lock, whatever its PID namespace. A free lock
       * is a dead owner's, or an owner from before the locks: for that one,
       * its pid must be gone here too (a pid reused in our namespace only
       * keeps a dead owner's group until a later sweep). */
      if (kill(pid, 0) == 0 || errno != ESRCH) continue;
      int fd = lock_dir(path);
      if (fd < 0) continue; /* its owner is alive (or it is gone already) */
      remove_dir(path);     /* kills what a dead owner left, then removes it */
      struct stat st;
      removed += stat(path, &st) != 0;
      close(fd);
    }
    closedir(d);
  }
  return removed;
}

/* The number after "key " in the flat keyed file open at fd (pread from
 * the start: the kernel renders it afresh), or the single number when key
 * is NULL; -1 when unreadable. */
static int64_t pread_num(int fd, const char *key) {
  char buf[1024];
  ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) return -1;
  buf[n] = '\0';
  if (!key) return strtoll(buf, NULL, 10);
  size_t klen = strlen(key);
  for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ') return strtoll(line + klen + 1, NULL, 10);
  return -1;
}

int64_t sq__jail_cgroup_cpu_us(const sq__jail_cgroup *cg) {
  if (!cg->cpu[0] || cg->cpu_fd < 0) return -1;
  if (cg->v2) return pread_num(cg->cpu_fd, "usage_usec");
  int64_t ns = pread_num(cg->cpu_fd, NULL);
  return ns < 0 ? -1 : ns / 1000;
}

/* The run delay (ns waiting on a run queue) of one thread, from
 * /proc/TID/schedstat's third field; -1 when unreadable (gone, or a kernel
 * without scheduler statistics). */
static int64_t thread_wait_ns(long tid) {
  char path[64], buf[128];
  snprintf(path, sizeof path, "/proc/%ld/schedstat", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  unsigned long long run_ns, wait_ns;
  return sscanf(buf, "%llu %llu", &run_ns, &wait_ns) == 2 ? (int64_t)wait_ns : -1;
}

int64_t sq__jail_cgroup_wait_us(const sq__jail_cgroup *cg) {
  if (!cg->cpu[0]) return -1;
  char path[512];
  if (cg->v2) { /* PSI: time at least one thread of the group waited, as the kernel keeps it */
    snprintf(path, sizeof path, "%s/cpu.pressure", cg->cpu);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char buf[256];
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n > 0) {
      buf[n] = '\0';
      const char *t = strncmp(buf, "some ", 5) == 0 ? strstr(buf, "total=") : NULL;
      if (t) return strtoll(t + 6, NULL, 10);
    }
  }
  snprintf(path, sizeof path, "%s/%s", cg->cpu, cg->v2 ? "cgroup.threads" : "tasks");
  FILE *f = fopen(path, "re");
  if (!f) return -1;
  int64_t sum_ns = 0;
  bool any = false;
  long tid;
  while (fscanf(f, "%ld", &tid) == 1) {
    int64_t w = thread_wait_ns(tid);
    if (w >= 0) {
      sum_ns += w;
      any = true;
    }
  }
  fclose(f);
  return any ? sum_ns / 1000 : -1;
}

static int64_t oom_kills(const sq__jail_cgroup *cg) {
  if (!cg->mem[0]) return 0;
  int64_t v = pread_num(cg->oom_fd, "oom_kill");
  return v < 0 ? 0 : v;
}

/* Resets the peak: v1 by writing 0; v2's memory.peak by writing to the
 * descriptor (Linux 6.12 and later: reads through it then start from the
 * usage at the write). Returns whether it was reset. */
static bool reset_peak(const sq__jail_cgroup *cg) {
  if (cg->peak_fd < 0) return false;
  if (cg->v2) return pwrite(cg->peak_fd, "reset\n", 6, 0) == 6;
  return pwrite(cg->peak_fd, "0", 1, 0) == 1 || write_file(cg->mem, "memory.max_usage_in_bytes", "0") == 0;
}

/* Keeps the files read (or reset) on every run open: a run then costs two
 * or three system calls on them, not a path walk and an open each. The
 * peak serves a run only where it can be reset per run: a slot's groups
 * outlive its runs, and a peak since the group was made would give a small
 * task the memory of the largest before it. Before Linux 6.12, v2's
 * memory.peak cannot be reset (not open for writing): each run then
 * reports its own peak RSS (the supervisor's rusage) instead. */
static void open_run_files(sq__jail_cgroup *cg) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", cg->mem, cg->v2 ? "memory.peak" : "memory.max_usage_in_bytes");
  cg->peak_fd = open(path, O_RDWR | O_CLOEXEC);
  if (cg->peak_fd < 0 && cg->v2) cg->peak_fd = open(path, O_RDONLY | O_CLOEXEC);
  cg->peak_per_run = reset_peak(cg);
  snprintf(path, sizeof path, "%s/%s", cg->mem, cg->v2 ? "memory.events" : "memory.oom_control");
  cg->oom_fd = open(path, O_RDONLY | O_CLOEXEC);
}

static int set_mem(const sq__jail_cgroup *cg, int64_t memory_mib) {
  char v[32];
  snprintf(v, sizeof v, "%" PRId64, (memory_mib + SQ__JAIL_CGROUP_SLACK_MIB) << 20);
  if (cg->v2) {
    write_file(cg->mem, "memory.swap.max", "0");
    return write_file(cg->mem, "memory.max", v);
  }
  /* memsw must stay >= the memory limit: raise memory first when growing. */
  if (write_file(cg->mem, "memory.limit_in_bytes", v) != 0) {
    write_file(cg->mem, "memory.memsw.limit_in_bytes", v);
    return write_file(cg->mem, "memory.limit_in_bytes", v);
  }
  write_file(cg->mem, "memory.memsw.limit_in_bytes", v);
  return 0;
}

/* Makes dir (or takes over a dead owner's) and locks it into *lock.
 * Returns 0, or -1: EWOULDBLOCK when a live owner holds that name. */
static int make_owned(const char *dir, int *lock) {
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) return -1;
  int fd = lock_dir(dir);
  if (fd < 0) return -1;
  /* A sweeper may have removed it between our mkdir and our lock. */
  struct stat a, b;
  if (fstat(fd, &a) != 0 || stat(dir, &b) != 0 || a.st_ino != b.st_ino) {
    close(fd);
    errno = EAGAIN;
    return -1;
  }
  *lock = fd;
  return 0;
}

/* The three directories under name; false when one of them is taken by a
 * live owner (a pid of another namespace): the caller tries another name. */
static bool make_dirs(sq__jail_cgroup *cg, const char *name, bool *mem_ok, bool *pids_ok, bool *cpu_ok) {
  dir_for("memory", name, cg->mem, sizeof cg->mem);
  dir_for("pids", name, cg->pids, sizeof cg->pids);
  dir_for("cpuacct", name, cg->cpu, sizeof cg->cpu);
  if (cg->v2) {
    snprintf(cg->pids, sizeof cg->pids, "%s", cg->mem);
    snprintf(cg->cpu, sizeof cg->cpu, "%s", cg->mem);
  }
  char *dirs[3] = {cg->mem, cg->pids, cg->cpu};
  bool *ok[3] = {mem_ok, pids_ok, cpu_ok};
  for (int i = 0; i < 3; i++) {
    *ok[i] = false;
    if (!dirs[i][0]) continue;
    if (i > 0 && cg->v2) {
      *ok[i] = *ok[0];
      continue;
    }
    if (make_owned(dirs[i], &cg->lock_fd[i]) == 0) *ok[i] = true;
    else if (errno == EWOULDBLOCK) return false;
  }
  return true;
}

uint32_t sq__jail_cgroup_create(sq__jail_cgroup *cg, const char *name, int64_t memory_mib, int pids_max) {
  memset(cg, 0, sizeof *cg);
  cg->made = true;
  cg->peak_fd = cg->oom_fd = cg->cpu_fd = -1;
  for (int i = 0; i < 3; i++) cg->lock_fd[i] = -1;
  cg->v2 = is_v2_only();
  uint32_t layers = 0;
  bool mem_ok = false, pids_ok = false, cpu_ok = false;
  char unique[48];
  snprintf(unique, sizeof unique, "%s", name);
  for (int k = 1; !make_dirs(cg, unique, &mem_ok, &pids_ok, &cpu_ok) && k < 64; k++) {
    for (int i = 0; i < 3; i++) {
      if (cg->lock_fd[i] >= 0) close(cg->lock_fd[i]);
      cg->lock_fd[i] = -1;
    }
    snprintf(unique, sizeof unique, "%s-%d", name, k); /* that name is a live owner's */
  }
  if (!made_add(cg)) { /* the process is ending: no groups any more */
    sq__jail_cgroup_destroy(cg);
    return 0;
  }
  if (mem_ok && set_mem(cg, memory_mib) == 0) {
    layers |= SQ_JAIL_LAYER_CGROUP_MEMORY;
    cg->limit_mib = memory_mib;
    open_run_files(cg);
  } else
    cg->mem[0] = '\0';
  char v[32];
  snprintf(v, sizeof v, "%d", pids_max);
  if (pids_ok && write_file(cg->pids, "pids.max", v) == 0)
    layers |= SQ_JAIL_LAYER_CGROUP_PIDS;
  else if (!cg->v2 || !cg->mem[0])
    cg->pids[0] = '\0';
  char path[512];
  snprintf(path, sizeof path, "%s/%s", cg->cpu, cg->v2 ? "cpu.stat" : "cpuacct.usage");
  if (cpu_ok && (cg->cpu_fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 && sq__jail_cgroup_cpu_us(cg) >= 0)
    layers |= SQ_JAIL_LAYER_CGROUP_CPU;
  else {
    if (cg->cpu_fd >= 0) close(cg->cpu_fd);
    cg->cpu_fd = -1;
    cg->cpu[0] = '\0';
  }
  cg->oom_kills_before = oom_kills(cg);
  return layers;
}

_Atomic int sq__jail_cgroup_reset_failures;

/* Whether the test hook fails this write (sq__jail_cgroup_reset_failures). */
static bool injected_failure(void) {
  int n = atomic_load(&sq__jail_cgroup_reset_failures);
  while (n > 0 && !atomic_compare_exchange_weak(&sq__jail_cgroup_reset_failures, &n, n - 1)) {
  }
  return n > 0;
}

/* Whether the kernel holds memory_mib (plus the slack) as cg's limit:
 * read back, not taken from the write's word. */
static bool limit_is(const sq__jail_cgroup *cg, int64_t memory_mib) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", cg->mem, cg->v2 ? "memory.max" : "memory.limit_in_bytes");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  int64_t v = pread_num(fd, NULL);
  close(fd);
  return v == (memory_mib + SQ__JAIL_CGROUP_SLACK_MIB) << 20;
}

int sq__jail_cgroup_reset(sq__jail_cgroup *cg, int64_t memory_mib) {
  if (!cg->mem[0]) return 0;
  if (memory_mib != cg->limit_mib) {
    cg->limit_mib = -1; /* unknown until read back */
    if (injected_failure()) {
      errno = EBUSY;
      return -1;
    }
    if (set_mem(cg, memory_mib) != 0 || !limit_is(cg, memory_mib)) return -1;
    cg->limit_mib = memory_mib;
  }
  if (cg->peak_per_run && !reset_peak(cg)) cg->peak_per_run = false;
  cg->oom_kills_before = oom_kills(cg);
  return 0;
}

/* cg's directories, each once (v2 and a shared v1 hierarchy give one
 * group for several controllers), into dirs; how many. Async-signal-safe. */
static int distinct_dirs(const sq__jail_cgroup *cg, const char *dirs[3]) {
  int n = 0;
  if (cg->mem[0]) dirs[n++] = cg->mem;
  if (cg->pids[0] && strcmp(cg->pids, cg->mem) != 0) dirs[n++] = cg->pids;
  if (cg->cpu[0] && strcmp(cg->cpu, cg->mem) != 0 && strcmp(cg->cpu, cg->pids) != 0) dirs[n++] = cg->cpu;
  return n;
}

int sq__jail_cgroup_attach(const sq__jail_cgroup *cg, pid_t pid) {
  char v[32];
  snprintf(v, sizeof v, "%d", (int)pid);
  const char *dirs[3];
  int rc = 0;
  for (int i = 0, n = distinct_dirs(cg, dirs); i < n; i++)
    if (write_file(dirs[i], "cgroup.procs", v) != 0) rc = -1;
  return rc;
}

bool sq__jail_cgroup_self_enterable(const sq__jail_cgroup *cg) { return cg->made && !cg->v2; }

int sq__jail_cgroup_enter(const sq__jail_cgroup *cg) {
  const char *dirs[3];
  for (int i = 0, n = distinct_dirs(cg, dirs); i < n; i++)
    if (write_file(dirs[i], "tasks", "0") != 0) return -1;
  return 0;
}

int64_t sq__jail_cgroup_peak_kib(const sq__jail_cgroup *cg) {
  if (!cg->mem[0] || !cg->peak_per_run) return 0;
  int64_t v = pread_num(cg->peak_fd, NULL);
  return v > 0 ? v / 1024 : 0;
}

bool sq__jail_cgroup_oom_fired(const sq__jail_cgroup *cg) { return oom_kills(cg) > cg->oom_kills_before; }

/* SIGKILL to every process listed, until none is left (bounded). */
static void kill_all(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  for (int round = 0; round < 50; round++) {
    FILE *f = fopen(path, "re");
    if (!f) return;
    int n = 0;
    long pid;
    while (fscanf(f, "%ld", &pid) == 1) {
      kill((pid_t)pid, SIGKILL);
      n++;
    }
    fclose(f);
    if (n == 0) return;
    usleep(2000);
  }
}

static void remove_dir(const char *dir) {
  if (!dir[0]) return;
  kill_all(dir);
  for (int i = 0; i < 100 && rmdir(dir) != 0 && errno == EBUSY; i++) usleep(2000);
}

void sq__jail_cgroup_destroy(sq__jail_cgroup *cg) {
  if (!cg || !cg->made) return; /* zeroed, never made: its descriptors (0) are not ours */
  made_entry me;
  bool recorded = made_take(cg, &me);
  if (cg->mem[0]) {
    if (cg->peak_fd >= 0) close(cg->peak_fd);
    if (cg->oom_fd >= 0) close(cg->oom_fd);
    cg->peak_fd = cg->oom_fd = -1;
  }
  if (cg->cpu_fd >= 0) close(cg->cpu_fd);
  cg->cpu_fd = -1;
  if (recorded) { /* every directory made, also one whose limit could not be set (its field is "") */
    for (int d = 0; d < me.n; d++) remove_dir(me.dirs[d]);
  } else {
    remove_dir(cg->mem);
    if (strcmp(cg->pids, cg->mem) != 0) remove_dir(cg->pids);
    if (strcmp(cg->cpu, cg->mem) != 0 && strcmp(cg->cpu, cg->pids) != 0) remove_dir(cg->cpu);
  }
  for (int i = 0; i < 3; i++) {
    if (cg->lock_fd[i] >= 0) close(cg->lock_fd[i]);
    cg->lock_fd[i] = -1;
  }
  cg->mem[0] = cg->pids[0] = cg->cpu[0] = '\0';
  cg->made = false;
}

uint32_t sq__jail_cgroup_probe(char *detail, size_t len) {
  char name[64];
  snprintf(name, sizeof name, "probe-%d", (int)getpid());
  sq__jail_cgroup cg;
  uint32_t layers = sq__jail_cgroup_create(&cg, name, 64, 8);
  char v2_mem[360], v2_pids[360];
  snprintf(v2_mem, sizeof v2_mem, "no (%s)", unified.why[0] ? unified.why : "memory.max could not be set");
  snprintf(v2_pids, sizeof v2_pids, "no (%s)", unified.why[0] ? unified.why : "pids.max could not be set");
  snprintf(detail, len, "%s: memory %s, pids %s, cpu %s", cg.v2 ? "cgroup v2" : "cgroup v1",
           layers & SQ_JAIL_LAYER_CGROUP_MEMORY ? "yes" : cg.v2 ? v2_mem : "no (no writable memory hierarchy)",
           layers & SQ_JAIL_LAYER_CGROUP_PIDS ? "yes" : cg.v2 ? v2_pids : "no (no writable pids hierarchy)",
           layers & SQ_JAIL_LAYER_CGROUP_CPU ? "yes" : cg.v2 ? "no (no cpu.stat)" : "no (no writable cpuacct hierarchy)");
  sq__jail_cgroup_destroy(&cg);
  return layers;
}
