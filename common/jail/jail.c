/* jail.c: the jail's public side: the runner, its slots (one uid and one
 * cgroup name per concurrent run), spawn-mode runs (clone into fresh
 * namespaces, the interpreter exec'd per run) and mapping how a run ended.
 *
 * The child's containment steps are in jail_contain.c and jail_mnt.c, the
 * filter in jail_seccomp.c, cgroups in jail_cgroup.c, the wall clock and
 * output caps in jail_supervise.c, the warm pool in jail_pool.c (one
 * zygote: jail_zygote.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors.h"
#include "jail_internal.h"
#include "log.h"
#include "util.h"

/* Used for a limit that is still 0 after sq_jail_limits_apply. */
static const sq_jail_limits builtin_limits = {
    .wall_ms = 10000, .cpu_ms = 10000, .memory_mib = 512, .output_kib = 1024};

#define NS_FLAGS (CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS)
#define NS_LAYERS                                                                                  \
  (SQ_JAIL_LAYER_PID_NS | SQ_JAIL_LAYER_NET_NS | SQ_JAIL_LAYER_MOUNT_NS | SQ_JAIL_LAYER_IPC_NS |   \
   SQ_JAIL_LAYER_UTS_NS | SQ_JAIL_LAYER_NEW_ROOT)

static void slot_cgroups_destroy(void);

struct sq_jail {
  sq__jail_common c;
  sq_jail_mode mode;
  sq__jail_pool *pool;
  const char *fallback; /* warm asked for, spawn in force: why; else NULL */
};

/* Fills the builtin defaults into lim (runs whose caller set no limits). */
static void limits_builtin(sq_jail_limits *lim) { sq_jail_limits_apply(lim, &builtin_limits, NULL); }

/* Clones a child with flags that exits at once: whether the kernel (and
 * our privileges) allow those namespaces. */
static bool try_clone(unsigned long flags) {
  long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
  if (pid == 0) _exit(0);
  if (pid < 0) return false;
  int st;
  while (waitpid((pid_t)pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The layers this host gives spawn mode; details for `check` in jail_probe.c. */
static uint32_t host_layers(void) {
  uint32_t l = SQ_JAIL_LAYER_RLIMITS | SQ_JAIL_LAYER_NO_NEW_PRIVS | SQ_JAIL_LAYER_SECCOMP;
  if (sq__jail_seccomp_notify_supported()) l |= SQ_JAIL_LAYER_SECCOMP_NOTIFY;
  if (geteuid() != 0) return l; /* no namespaces without root (docs/security.md) */
  l |= SQ_JAIL_LAYER_UID | SQ_JAIL_LAYER_CAPS;
  /* One child for both where the kernel gives both (each costs a network
   * namespace made and torn down). */
  if (try_clone(NS_FLAGS | CLONE_NEWCGROUP)) l |= NS_LAYERS | SQ_JAIL_LAYER_CGROUP_NS;
  else if (try_clone(NS_FLAGS)) l |= NS_LAYERS;
  char detail[400];
  if (l & SQ_JAIL_LAYER_PID_NS) l |= sq__jail_cgroup_probe(detail, sizeof detail);
  return l;
}

int sq_jail_new(const sq_jail_config *cfg, sq_jail **out) {
  *out = NULL;
  if (!cfg || !cfg->python_path || cfg->python_path[0] != '/' || !cfg->scratch_root ||
      !cfg->scratch_root[0] || cfg->pool_size < 0 || cfg->pool_size > SQ__JAIL_MAX_SLOTS)
    return SQ_EINVAL;
  if (strlen(cfg->scratch_root) > PATH_MAX - 64) return SQ_EINVAL;
  if (access(cfg->python_path, X_OK) != 0) {
    SQ_PERROR("python %s is not an executable file (config key 'python', SANDQ_PYTHON)", cfg->python_path);
    return SQ_EJAIL;
  }
  if (mkdir(cfg->scratch_root, 0711) != 0 && errno != EEXIST) {
    SQ_PERROR("cannot create the scratch root %s", cfg->scratch_root);
    return SQ_EJAIL;
  }
  struct stat st;
  if (stat(cfg->scratch_root, &st) != 0 || !S_ISDIR(st.st_mode) || access(cfg->scratch_root, W_OK | X_OK) != 0) {
    SQ_ERROR("scratch root %s is not a writable directory", cfg->scratch_root);
    return SQ_EJAIL;
  }
  sq_jail *j = calloc(1, sizeof *j);
  if (!j) return SQ_ENOMEM;
  j->mode = cfg->mode;
  j->c.interp.fd = -1;
  j->c.python_path = strdup(cfg->python_path);
  j->c.scratch_root = strdup(cfg->scratch_root);
  char root[PATH_MAX];
  snprintf(root, sizeof root, "%s/root", cfg->scratch_root);
  j->c.root_dir = strdup(root);
  sq_buf prelude = {0};
  if (cfg->prelude && sq_buf_appendf(&prelude, "SANDQ_PRELUDE=%s", cfg->prelude) == 0) j->c.prelude = prelude.data;
  if (!j->c.python_path || !j->c.scratch_root || !j->c.root_dir || (cfg->prelude && !j->c.prelude)) {
    sq_jail_free(j);
    return SQ_ENOMEM;
  }
  if (mkdir(root, 0755) != 0 && errno != EEXIST) {
    SQ_PERROR("cannot create %s (the jail roots' mount point)", root);
    sq_jail_free(j);
    return SQ_EJAIL;
  }
  char pwhy[300];
  int rc = sq__jail_profile_init(&j->c, cfg->profile, pwhy, sizeof pwhy);
  if (rc != 0) {
    SQ_ERROR("jail: profile: %s", pwhy);
    sq_jail_free(j);
    return rc;
  }
  rc = sq__jail_seccomp_build(&j->c.seccomp);
  if (rc == 0) rc = sq__jail_seccomp_narrowings_build();
  if (rc != 0) {
    sq_jail_free(j);
    return rc;
  }
  j->c.layers = host_layers();
  if (j->c.layers & SQ_JAIL_LAYER_PID_NS) {
    int swept = sq__jail_cgroup_sweep();
    if (swept > 0) SQ_INFO("jail: removed %d cgroups left by workers that were killed", swept);
  }
  const char *missing[SQ_JAIL_LAYER_COUNT];
  int n_missing = sq_jail_layers_names(~j->c.layers, missing, SQ_JAIL_LAYER_COUNT);
  for (int i = 0; i < n_missing; i++)
    SQ_WARN("jail: layer %s is not available on this host: runs go without it "
            "(see `sandq-worker check` and docs/security.md)", missing[i]);
  /* Warm mode needs the namespaces; without them it falls back to spawn,
   * which runs with the layers this host has (docs/security.md). */
  if (cfg->mode == SQ_JAIL_MODE_WARM &&
      (!(j->c.layers & SQ_JAIL_LAYER_PID_NS) || !(j->c.layers & SQ_JAIL_LAYER_NEW_ROOT))) {
    j->mode = SQ_JAIL_MODE_SPAWN;
    j->fallback = "warm mode needs pid and mount namespaces";
    const char *why = sq_jail_ns_missing_reason();
    SQ_WARN("jail: %s, which this host does not give (%s): running in spawn mode (docs/security.md, \"Without "
            "root\")", j->fallback, why ? why : "namespaces refused");
  }
  /* The interpreter's files in large pages for every root this runner
   * builds (jail_interp.c); not for one run, which would not earn back the
   * copy. */
  if ((j->c.layers & SQ_JAIL_LAYER_NEW_ROOT) && !cfg->one_run) {
    char why[300];
    if (sq__jail_interp_prepare(&j->c.interp, j->c.python_path, why, sizeof why) == 0)
      SQ_INFO("jail: the interpreter's %d files (%.1f MiB) copied into large pages for the runs", j->c.interp.n,
              (double)j->c.interp.bytes / (1 << 20));
    else
      SQ_INFO("jail: the runs map the host's interpreter files, not copies in large pages: %s "
              "(docs/architecture.md, \"The interpreter in large pages\")", why);
  }
  if (j->mode == SQ_JAIL_MODE_WARM) {
    rc = sq__jail_pool_new(j, cfg->pool_size > 0 ? cfg->pool_size : 1, cfg->one_run, &j->pool);
    if (rc != 0) {
      sq_jail_free(j);
      return rc;
    }
  }
  *out = j;
  return 0;
}

void sq_jail_free(sq_jail *j) {
  if (!j) return;
  sq__jail_pool_free(j->pool);
  slot_cgroups_destroy();
  sq__jail_seccomp_free(&j->c.seccomp);
  sq__jail_interp_release(&j->c.interp);
  sq__jail_profile_release(&j->c);
  /* root_dir stays: another runner (in this process or another worker
   * sharing the scratch root) may be mounting a root on it right now. */
  free(j->c.python_path);
  free(j->c.scratch_root);
  free(j->c.root_dir);
  free(j->c.prelude);
  free(j);
}

const sq__jail_common *sq__jail_common_of(const sq_jail *j) { return &j->c; }

sq_jail_mode sq_jail_mode_in_force(const sq_jail *j, const char **why) {
  if (why) *why = j ? j->fallback : NULL;
  return j ? j->mode : SQ_JAIL_MODE_SPAWN;
}

bool sq_jail_prelude_in_force(const sq_jail *j) { return j && j->c.prelude && j->mode == SQ_JAIL_MODE_WARM; }

const char *sq_jail_ns_missing_reason(void) {
  if (geteuid() != 0) return "not root";
  if (try_clone(NS_FLAGS)) return NULL;
  /* CapEff in /proc/self/status: bit 21 is CAP_SYS_ADMIN */
  FILE *f = fopen("/proc/self/status", "re");
  char line[256];
  unsigned long long eff = ~0ULL;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "CapEff: %llx", &eff) == 1) break;
  if (f) fclose(f);
  if (!(eff & (1ULL << 21)))
    return "root without CAP_SYS_ADMIN, as in a default Docker container; docs/deploy.md lists what to add";
  return "root, but namespaces are refused: a seccomp or AppArmor profile such as Docker's default; see docs/deploy.md";
}
uint32_t sq_jail_layers(const sq_jail *j) { return j ? j->c.layers : 0; }

/* Slots are per process, not per runner: two runners must not share a uid
 * or a cgroup name. */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t slots_used; /* bit s: slot s is taken */

int sq__jail_slot_take(void) {
  int slot = -1;
  pthread_mutex_lock(&slots_lock);
  for (int s = 0; s < SQ__JAIL_MAX_SLOTS; s++)
    if (!(slots_used & (UINT64_C(1) << s))) {
      slots_used |= UINT64_C(1) << s;
      slot = s;
      break;
    }
  pthread_mutex_unlock(&slots_lock);
  return slot;
}

void sq__jail_slot_give(int slot) {
  if (slot < 0) return;
  pthread_mutex_lock(&slots_lock);
  slots_used &= ~(UINT64_C(1) << slot);
  pthread_mutex_unlock(&slots_lock);
}

/* Slots are per process, but uids are per host: two workers (or a worker and
 * a test) on one machine must not run tasks as the same uid, or a fork bomb
 * in one exhausts the other's RLIMIT_NPROC. Each process takes a block of
 * SQ__JAIL_MAX_SLOTS uids by holding an flock on a file named after the
 * block; the kernel drops the lock when the process dies, so a crashed
 * worker's block is free again at once. */
#define UID_BLOCK_DIR "/run/sandq-uid-blocks"
#define UID_BLOCKS 4096
static pthread_once_t uid_block_once = PTHREAD_ONCE_INIT;
static unsigned uid_block;

static void take_uid_block(void) {
  (void)mkdir(UID_BLOCK_DIR, 0700);
  for (unsigned b = 0; b < UID_BLOCKS; b++) {
    char path[64];
    snprintf(path, sizeof path, UID_BLOCK_DIR "/%u", b);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) break;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      uid_block = b; /* fd stays open (and locked) for the life of the process */
      return;
    }
    close(fd);
  }
  uid_block = (unsigned)getpid() % UID_BLOCKS;
  SQ_WARN("cannot lock a uid block under %s; using block %u from the pid (two processes may share "
          "task uids)", UID_BLOCK_DIR, uid_block);
}

unsigned sq__jail_slot_uid(int slot) {
  pthread_once(&uid_block_once, take_uid_block);
  return SQ__JAIL_UID_BASE + uid_block * SQ__JAIL_MAX_SLOTS + (unsigned)slot;
}

unsigned sq__jail_zygote_uid(int slot) { return sq__jail_slot_uid(slot) + UID_BLOCKS * SQ__JAIL_MAX_SLOTS; }

/* Spawn runs keep their slot's cgroups from one run to the next (making and
 * removing a v1 cgroup per run costs more than starting the interpreter);
 * the slot's owner alone touches slot_cg[slot]. */
static sq__jail_cgroup slot_cg[SQ__JAIL_MAX_SLOTS];
static uint32_t slot_cg_layers[SQ__JAIL_MAX_SLOTS];
static bool slot_cg_made[SQ__JAIL_MAX_SLOTS];

static void slot_cgroup_make(int slot, int64_t memory_mib) {
  char name[64];
  snprintf(name, sizeof name, "s%d-%d", (int)getpid(), slot); /* s: spawn, z: warm pool */
  slot_cg_layers[slot] = sq__jail_cgroup_create(&slot_cg[slot], name, memory_mib, SQ__JAIL_NPROC_MAX + 2);
  slot_cg_made[slot] = true;
}

static uint32_t slot_cgroup(int slot, int64_t memory_mib, sq__jail_cgroup **out) {
  if (!slot_cg_made[slot]) {
    slot_cgroup_make(slot, memory_mib);
  } else if (sq__jail_cgroup_reset(&slot_cg[slot], memory_mib) != 0) {
    /* Never the last run's limit: a new group, and a new holder in it. */
    SQ_WARN("jail: slot %d's cgroup refused the memory limit of %lld MiB (%s); replacing it", slot,
            (long long)memory_mib, strerror(errno));
    sq__jail_slot_stop(slot);
    sq__jail_cgroup_destroy(&slot_cg[slot]);
    slot_cgroup_make(slot, memory_mib);
  }
  *out = &slot_cg[slot];
  return slot_cg_layers[slot];
}

/* Stops the holders and removes the cgroups of every slot nobody holds. */
static void slot_cgroups_destroy(void) {
  pthread_mutex_lock(&slots_lock);
  for (int s = 0; s < SQ__JAIL_MAX_SLOTS; s++)
    if (slot_cg_made[s] && !(slots_used & (UINT64_C(1) << s))) {
      sq__jail_slot_stop(s);
      sq__jail_cgroup_destroy(&slot_cg[s]);
      slot_cg_made[s] = false;
    }
  pthread_mutex_unlock(&slots_lock);
}

/* Formats the outcome's error (truncated to fit). */
__attribute__((format(printf, 2, 3))) static void set_error(sq_jail_outcome *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->error, sizeof o->error, fmt, ap);
  va_end(ap);
}

/* Without namespaces: a private scratch dir on the host with main.py in
 * it, owned by uid when not -1 (root without namespaces: the run drops to
 * uid and must still reach its own files). dir must hold PATH_MAX bytes. */
static int make_host_scratch(const sq_jail *j, const char *program, size_t len, long uid, char *dir,
                             sq_jail_outcome *o) {
  snprintf(dir, PATH_MAX, "%s/run.XXXXXX", j->c.scratch_root);
  if (!mkdtemp(dir)) {
    set_error(o, "mkdtemp under %s: %s", j->c.scratch_root, strerror(errno));
    dir[0] = '\0';
    return SQ_EJAIL;
  }
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/main.py", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || sq_write_all(fd, program, len) != 0 || (uid >= 0 && fchown(fd, (uid_t)uid, (gid_t)uid) != 0) ||
      close(fd) != 0) {
    set_error(o, "writing %s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return SQ_EJAIL;
  }
  if (uid >= 0 && chown(dir, (uid_t)uid, (gid_t)uid) != 0) {
    set_error(o, "chown %s to the run's uid %ld: %s", dir, uid, strerror(errno));
    return SQ_EJAIL;
  }
  return 0;
}

static bool has(const sq_jail_outcome *o, const char *needle) {
  return o->stderr_buf && memmem(o->stderr_buf, o->stderr_len, needle, strlen(needle));
}

/* Whether stderr ends with an uncaught exception of type name, as the
 * interpreter prints it: the last "Traceback (most recent call last):"
 * line, its indented frames, then "name" or "name: message". */
static bool uncaught(const sq_jail_outcome *o, const char *name) {
  static const char tb[] = "Traceback (most recent call last):\n";
  if (!o->stderr_buf) return false;
  const char *p = NULL;
  for (const char *s = o->stderr_buf; (s = memmem(s, o->stderr_len - (size_t)(s - o->stderr_buf), tb, sizeof tb - 1));
       s++)
    if (s == o->stderr_buf || s[-1] == '\n') p = s;
  if (!p) return false;
  p += sizeof tb - 1;
  while (*p == ' ') { /* frames and source lines are indented */
    const char *nl = strchr(p, '\n');
    if (!nl) return false;
    p = nl + 1;
  }
  size_t n = strlen(name);
  return strncmp(p, name, n) == 0 && (p[n] == ':' || p[n] == '\n' || p[n] == '\0');
}

sq_jail_end sq__jail_map_end(const sq_jail_outcome *o, int status, sq_jail_end killed_for,
                             const sq__jail_plan *plan, bool oom_killed) {
  if (killed_for == SQ_JAIL_TIMEOUT || killed_for == SQ_JAIL_OUTPUT_LIMIT || killed_for == SQ_JAIL_POLICY ||
      killed_for == SQ_JAIL_CPU_LIMIT)
    return killed_for;
  if (o->stdout_truncated || o->stderr_truncated) return SQ_JAIL_OUTPUT_LIMIT;
  bool oom_text = has(o, "MemoryError") || has(o, "Cannot allocate memory") ||
                  has(o, "Could not allocate") || has(o, "out of memory");
  if (WIFEXITED(status)) {
    switch (WEXITSTATUS(status)) {
    case 0: return oom_killed ? SQ_JAIL_MEMORY_LIMIT : SQ_JAIL_EXITED_OK;
    case 1:
      if (oom_killed || uncaught(o, "MemoryError")) return SQ_JAIL_MEMORY_LIMIT;
      if (uncaught(o, "AssertionError")) return SQ_JAIL_ASSERTION;
      return oom_text ? SQ_JAIL_MEMORY_LIMIT : SQ_JAIL_EXITED_ERROR;
    default: return oom_text || oom_killed ? SQ_JAIL_MEMORY_LIMIT : SQ_JAIL_EXITED_ERROR;
    }
  }
  /* The cgroup's OOM killer took a process of the run (maybe not the
   * first one): the run hit its memory limit, however it ended. */
  if (oom_killed) return SQ_JAIL_MEMORY_LIMIT;
  int sig = WTERMSIG(status);
  int64_t cpu_soft_ms = plan->cpu_s * 1000;
  if (sig == SIGXCPU || (sig == SIGKILL && o->cpu_ms >= cpu_soft_ms)) return SQ_JAIL_CPU_LIMIT;
  if (sig == SIGKILL && oom_killed) return SQ_JAIL_MEMORY_LIMIT;
  if (sig == SIGSYS) return SQ_JAIL_POLICY;
  if ((sig == SIGABRT || sig == SIGSEGV) && (oom_text || oom_killed)) return SQ_JAIL_MEMORY_LIMIT;
  return SQ_JAIL_SIGNALED;
}

/* What the end check of a run without namespaces needs. */
typedef struct {
  pid_t pid;       /* the payload */
} spawn_run;

static bool spawn_end(void *arg, const sq__zygote_msg *msg, int *status, struct rusage *ru) {
  (void)msg;
  spawn_run *r = arg;
  int st = 0;
  pid_t p = wait4(r->pid, &st, WNOHANG | __WALL, ru);
  if (p != r->pid && !(p < 0 && errno == ECHILD)) return false;
  *status = st;
  return true;
}

size_t sq__jail_read_status(int fd, char *msg, size_t cap) {
  size_t len = 0;
  for (;;) {
    ssize_t n = read(fd, msg + len, cap - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += (size_t)n;
    if (len == cap - 1) break;
  }
  msg[len] = '\0';
  char *nl = strchr(msg, '\n');
  if (nl) *nl = '\0';
  return len;
}

/* Spawn mode: with namespaces through the slot's holder (jail_slot.c);
 * without (not root), a direct child in a host scratch directory. */
static int spawn_run_one(sq_jail *j, int slot, const char *program, size_t len, const char *input, size_t input_len,
                         const sq__jail_plan *plan, const sq_jail_run_opts *opts, sq_jail_outcome *o) {
  if (j->c.layers & SQ_JAIL_LAYER_PID_NS) {
    sq__jail_cgroup *cg;
    uint32_t layers = j->c.layers & ~SQ__JAIL_CGROUP_LAYERS;
    layers |= slot_cgroup(slot, plan->cgroup_mib, &cg) & j->c.layers;
    o->layers = layers;
    return sq__jail_slot_run(&j->c, slot, cg, layers, program, len, input, input_len, plan, opts, o);
  }
  int ret = 0;
  char dir[PATH_MAX] = "";
  int out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, st_p[2] = {-1, -1}, ctl[2] = {-1, -1}, pidfd = -1, in_fd = -1;
  pid_t pid = -1;

  bool drop_uid = geteuid() == 0;
  if ((ret = make_host_scratch(j, program, len, drop_uid ? (long)sq__jail_slot_uid(slot) : -1, dir, o)) != 0) goto out;
  char home[PATH_MAX + 8];
  snprintf(home, sizeof home, "HOME=%s", dir);
  const char *base[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", home, "PYTHONDONTWRITEBYTECODE=1",
                        "PYTHONIOENCODING=utf-8", NULL};
  char *envp[sizeof j->c.spawn_envp / sizeof *j->c.spawn_envp];
  sq__jail_envp(&j->c, base, NULL, envp, sizeof envp / sizeof *envp); /* fits: as spawn_envp did */
  char *const *argv = j->c.spawn_argv;
  if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0 || pipe2(st_p, O_CLOEXEC) != 0 ||
      socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) != 0 ||
      (input && (in_fd = sq__jail_input_memfd(input, input_len)) < 0)) {
    set_error(o, "pipe2/socketpair/memfd: %s", strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  int one = 1;
  setsockopt(ctl[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  o->layers = j->c.layers;
  sq__jail_child child = {.python_path = j->c.python_path, .scratch_dir = dir, .program_fd = -1,
                          .argv = argv, .envp = envp, .stdout_fd = out_p[1], .stderr_fd = err_p[1],
                          .status_fd = st_p[1], .sync_fd = -1, .result_fd = -1, .notify_sock = ctl[1],
                          .has_input = in_fd >= 0, .input_fd = in_fd,
                          .plan = plan, .layers = j->c.layers, .uid = sq__jail_slot_uid(slot),
                          .drop_uid = drop_uid, .seccomp = &j->c.seccomp};
  int64_t start_ms = sq_now_mono_ms();
  pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
  if (pid < 0) {
    set_error(o, "clone: %s", strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  if (pid == 0) sq__jail_contain(&child);

  int child_ends[] = {out_p[1], err_p[1], st_p[1], ctl[1]};
  for (size_t i = 0; i < sizeof child_ends / sizeof *child_ends; i++) close(child_ends[i]);
  out_p[1] = err_p[1] = st_p[1] = ctl[1] = -1;
  char setup_msg[sizeof o->error];
  size_t setup_len = sq__jail_read_status(st_p[0], setup_msg, sizeof setup_msg);

  pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  spawn_run r = {.pid = pid};
  sq__jail_watch w = {.out_fd = out_p[0], .err_fd = err_p[0], .ctl_fd = ctl[0], .done_fd = pidfd, .notify_fd = -1,
                      .kill_pid = pid, .kill_group = true, .end_check = spawn_end, .arg = &r,
                      .start_ms = start_ms, .lim = &plan->lim, .widenings = plan->widenings, .stop = opts->stop};
  out_p[0] = err_p[0] = -1;
  sq_jail_end killed_for;
  int status;
  ret = sq__jail_supervise(&w, o, &killed_for, &status);
  if (ret == SQ_EJAIL) { /* cannot happen for a direct child; reap it anyway */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, __WALL);
  }
  pid = -1;
  if (ret == SQ_ENOMEM) set_error(o, "out of memory while capturing output");
  else if (ret == 0 && setup_len > 0) {
    set_error(o, "%s", setup_msg);
    ret = SQ_EJAIL;
  } else if (ret == 0) o->end = sq__jail_map_end(o, status, killed_for, plan, o->oom_killed);
out:
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, __WALL);
  }
  int fds[] = {out_p[0], out_p[1], err_p[0], err_p[1], st_p[0], st_p[1], ctl[0], ctl[1], pidfd, in_fd};
  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    if (fds[i] >= 0) close(fds[i]);
  if (dir[0] && sq_rmtree(dir) != 0) SQ_WARN("cannot remove scratch dir %s", dir);
  return ret;
}

/* A program whose own text never says "import" (so no import statement,
 * no __import__, no importlib) runs on a lean zygote; anything else on
 * one with the common modules loaded. Only the cost differs. */
static bool imports_nothing(const char *text, size_t len) { return !memmem(text, len, "import", 6); }

/* A program that calls the prelude (the runner's, sq_jail_config.prelude)
 * goes where it is loaded, the full kind (zygote.py); on a lean one it
 * carries its own copy (workspace.c), slower. */
static bool calls_prelude(const sq_jail *j, const char *program, size_t len) {
  return j->c.prelude && memmem(program, len, "sandq_prelude", 13) != NULL;
}

static int run(sq_jail *j, sq_jail_mode mode, const char *program, size_t program_len, const char *source,
               size_t source_len, const char *input, size_t input_len, const sq_jail_limits *lim_in,
               const sq_jail_run_opts *opts_in, const char *task_id, sq_jail_outcome *o) {
  memset(o, 0, sizeof *o);
  o->exit_code = -1;
  o->end = SQ_JAIL_SETUP_ERROR;
  o->mode = mode;
  if (!j || !program || !lim_in) {
    set_error(o, "sq_jail_run: missing argument");
    return SQ_EINVAL;
  }
  sq_jail_limits lim = *lim_in;
  limits_builtin(&lim);
  const sq_jail_run_opts none = {0}, *opts = opts_in ? opts_in : &none;
  sq__jail_plan plan; /* every path below applies this, and only this */
  sq__jail_plan_make(&lim, opts->widenings, &plan);
  if (program_len > SQ_JAIL_PROGRAM_MAX_BYTES || (input && input_len > SQ_JAIL_PROGRAM_MAX_BYTES)) {
    set_error(o, "the %s is %zu bytes, over the jail's limit of %d bytes (%d MiB)",
              program_len > SQ_JAIL_PROGRAM_MAX_BYTES ? "program" : "input",
              program_len > SQ_JAIL_PROGRAM_MAX_BYTES ? program_len : input_len,
              SQ_JAIL_PROGRAM_MAX_BYTES, SQ_JAIL_PROGRAM_MAX_BYTES >> 20);
    return SQ_ETOOBIG;
  }
  int ret;
  if (mode == SQ_JAIL_MODE_WARM && j->fallback) mode = o->mode = SQ_JAIL_MODE_SPAWN; /* sq_jail_mode_in_force */
  if (mode == SQ_JAIL_MODE_WARM) {
    if (!j->pool) {
      set_error(o, "warm mode needs a pool: set jail_pool_size > 0 (or jail_mode warm)");
      ret = SQ_EINVAL;
    } else {
      bool lean = source ? imports_nothing(source, source_len) : imports_nothing(program, program_len);
      if (calls_prelude(j, program, program_len)) lean = false;
      ret = sq__jail_pool_run(j->pool, program, program_len, input, input_len, lean, &plan, opts, task_id, o);
    }
  } else {
    int slot = sq__jail_slot_take();
    if (slot < 0) {
      set_error(o, "more than %d runs at once", SQ__JAIL_MAX_SLOTS);
      ret = SQ_EJAIL;
    } else {
      ret = spawn_run_one(j, slot, program, program_len, input, input_len, &plan, opts, o);
      sq__jail_slot_give(slot);
    }
  }
  if (ret != 0) {
    o->end = SQ_JAIL_SETUP_ERROR;
    if (!o->error[0]) set_error(o, "%s", sq_strerror(ret));
    SQ_LOGT(SQ_LOG_ERROR, task_id, "jail setup failed: %s", o->error);
  } else {
    SQ_LOGT(SQ_LOG_DEBUG, task_id, "jail run (%s) ended %s exit=%d signal=%d wall_ms=%lld cpu_ms=%lld%s%s",
            sq_jail_mode_name(mode), sq_jail_end_name(o->end), o->exit_code, o->signal,
            (long long)o->wall_ms, (long long)o->cpu_ms, o->blocked_syscall[0] ? " blocked=" : "",
            o->blocked_syscall);
  }
  return ret;
}

int sq_jail_run_mode(sq_jail *j, sq_jail_mode mode, const char *program, size_t program_len,
                     const sq_jail_limits *lim, const char *task_id, sq_jail_outcome *o) {
  return run(j, mode, program, program_len, NULL, 0, NULL, 0, lim, NULL, task_id, o);
}

int sq_jail_run(sq_jail *j, const char *program, size_t program_len, const sq_jail_limits *lim,
                const char *task_id, sq_jail_outcome *o) {
  return run(j, j ? j->mode : SQ_JAIL_MODE_SPAWN, program, program_len, NULL, 0, NULL, 0, lim, NULL, task_id, o);
}

int sq_jail_run_task(sq_jail *j, const char *program, size_t program_len, const char *source, size_t source_len,
                     const char *input, size_t input_len, const sq_jail_limits *lim, const sq_jail_run_opts *opts,
                     const char *task_id, sq_jail_outcome *o) {
  return run(j, j ? j->mode : SQ_JAIL_MODE_SPAWN, program, program_len, source, source_len, input, input_len, lim,
             opts, task_id, o);
}
