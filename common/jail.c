/* jail.c: the jail's supervising side: scratch dir, pipes, fork, the wall
 * clock and output caps, reaping, and mapping how the run ended.
 *
 * The child's containment steps are in jail_contain.c, the filter in
 * jail_seccomp.c, the Python harness in jail_harness.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

#define DRAIN_AFTER_EXIT_MS 1000 /* reading what the killed tree left in the pipes */
#define TICK_MS 10               /* poll period when pidfd_open is unavailable */

struct sq_jail {
  char *python_path;
  char *scratch_root;
  struct sock_fprog seccomp;
};

const char *sq_jail_end_name(sq_jail_end e) {
  switch (e) {
  case SQ_JAIL_EXITED_OK: return "exited_ok";
  case SQ_JAIL_EXITED_ERROR: return "exited_error";
  case SQ_JAIL_ASSERTION: return "assertion";
  case SQ_JAIL_SIGNALED: return "signaled";
  case SQ_JAIL_TIMEOUT: return "timeout";
  case SQ_JAIL_CPU_LIMIT: return "cpu_limit";
  case SQ_JAIL_MEMORY_LIMIT: return "memory_limit";
  case SQ_JAIL_OUTPUT_LIMIT: return "output_limit";
  case SQ_JAIL_POLICY: return "policy";
  case SQ_JAIL_SETUP_ERROR: return "setup_error";
  }
  return "unknown";
}

static void apply_one(int64_t *v, int64_t dflt, int64_t max) {
  if (*v <= 0) *v = dflt;
  if (max > 0 && *v > max) *v = max;
}

void sq_jail_limits_apply(sq_jail_limits *lim, const sq_jail_limits *defaults,
                          const sq_jail_limits *max) {
  static const sq_jail_limits none = {0};
  if (!defaults) defaults = &none;
  if (!max) max = &none;
  apply_one(&lim->wall_ms, defaults->wall_ms, max->wall_ms);
  apply_one(&lim->cpu_ms, defaults->cpu_ms, max->cpu_ms);
  apply_one(&lim->memory_mib, defaults->memory_mib, max->memory_mib);
  apply_one(&lim->output_kib, defaults->output_kib, max->output_kib);
}

int sq_jail_new(const sq_jail_config *cfg, sq_jail **out) {
  *out = NULL;
  if (!cfg || !cfg->python_path || cfg->python_path[0] != '/' || !cfg->scratch_root ||
      !cfg->scratch_root[0])
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
  j->python_path = strdup(cfg->python_path);
  j->scratch_root = strdup(cfg->scratch_root);
  if (!j->python_path || !j->scratch_root) {
    sq_jail_free(j);
    return SQ_ENOMEM;
  }
  int rc = sq__jail_seccomp_build(&j->seccomp);
  if (rc != 0) {
    sq_jail_free(j);
    return rc;
  }
  *out = j;
  return 0;
}

void sq_jail_free(sq_jail *j) {
  if (!j) return;
  sq__jail_seccomp_free(&j->seccomp);
  free(j->python_path);
  free(j->scratch_root);
  free(j);
}

void sq_jail_outcome_clear(sq_jail_outcome *o) {
  if (!o) return;
  free(o->stdout_buf);
  free(o->stderr_buf);
  memset(o, 0, sizeof *o);
}

/* One captured stream: read end of a pipe and what was kept of it. */
typedef struct {
  int fd;
  sq_buf buf;
  size_t cap;
  bool truncated;
} stream;

/* Reads once from s. Returns 1 on data, 0 at EOF (fd closed), or SQ_ENOMEM.
 * Bytes past the cap are dropped and mark the stream truncated. */
static int stream_read(stream *s) {
  char chunk[65536];
  ssize_t n = read(s->fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 1;
  if (n <= 0) {
    close(s->fd);
    s->fd = -1;
    return 0;
  }
  size_t room = s->cap - s->buf.len;
  size_t keep = (size_t)n < room ? (size_t)n : room;
  if ((size_t)n > room) s->truncated = true;
  if (keep && sq_buf_append(&s->buf, chunk, keep) != 0) return SQ_ENOMEM;
  return 1;
}

/* SIGKILL to the run's process group (its session; the filter keeps the
 * tree inside it) and to the child itself, in case it had not reached
 * setsid yet. */
static void kill_tree(pid_t pid, bool reaped) {
  kill(-pid, SIGKILL);
  if (!reaped) kill(pid, SIGKILL);
}

/* Formats the outcome's error (truncated to fit). */
__attribute__((format(printf, 2, 3))) static void set_error(sq_jail_outcome *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->error, sizeof o->error, fmt, ap);
  va_end(ap);
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Makes the private scratch dir and main.py in it, owned by the jail's uid
 * when we run as root. dir must hold PATH_MAX bytes. */
static int make_scratch(const sq_jail *j, const char *program, size_t len, bool as_root,
                        char *dir, sq_jail_outcome *o) {
  snprintf(dir, PATH_MAX, "%s/run.XXXXXX", j->scratch_root);
  if (!mkdtemp(dir)) {
    set_error(o, "mkdtemp under %s: %s", j->scratch_root, strerror(errno));
    dir[0] = '\0';
    return SQ_EJAIL;
  }
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/main.py", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || write_all(fd, program, len) != 0 || close(fd) != 0) {
    set_error(o, "writing %s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return SQ_EJAIL;
  }
  if (as_root && (chown(dir, SQ__JAIL_UID, SQ__JAIL_UID) != 0 ||
                  chown(path, SQ__JAIL_UID, SQ__JAIL_UID) != 0)) {
    set_error(o, "chown of %s: %s", dir, strerror(errno));
    return SQ_EJAIL;
  }
  return 0;
}

static bool has(const sq_jail_outcome *o, const char *needle) {
  return o->stderr_buf && memmem(o->stderr_buf, o->stderr_len, needle, strlen(needle));
}

/* Maps the wait status (and what we did to the tree) to an end. */
static sq_jail_end map_end(const sq_jail_outcome *o, int status, sq_jail_end killed_for,
                           const sq_jail_limits *lim) {
  if (killed_for == SQ_JAIL_TIMEOUT || killed_for == SQ_JAIL_OUTPUT_LIMIT) return killed_for;
  if (o->stdout_truncated || o->stderr_truncated) return SQ_JAIL_OUTPUT_LIMIT;
  bool oom_text = has(o, "MemoryError") || has(o, "Cannot allocate memory");
  if (WIFEXITED(status)) {
    switch (WEXITSTATUS(status)) {
    case 0: return SQ_JAIL_EXITED_OK;
    case SQ__JAIL_EXIT_ASSERTION: return SQ_JAIL_ASSERTION;
    case SQ__JAIL_EXIT_MEMORY: return SQ_JAIL_MEMORY_LIMIT;
    default: return oom_text ? SQ_JAIL_MEMORY_LIMIT : SQ_JAIL_EXITED_ERROR;
    }
  }
  int sig = WTERMSIG(status);
  int64_t cpu_soft_ms = (lim->cpu_ms + 999) / 1000 * 1000;
  if (sig == SIGXCPU || (sig == SIGKILL && o->cpu_ms >= cpu_soft_ms)) return SQ_JAIL_CPU_LIMIT;
  if (sig == SIGSYS) return SQ_JAIL_POLICY;
  if (sig == SIGABRT && oom_text) return SQ_JAIL_MEMORY_LIMIT;
  return SQ_JAIL_SIGNALED;
}

int sq_jail_run(sq_jail *j, const char *program, size_t program_len, const sq_jail_limits *lim_in,
                const char *task_id, sq_jail_outcome *o) {
  memset(o, 0, sizeof *o);
  o->exit_code = -1;
  o->end = SQ_JAIL_SETUP_ERROR;
  if (!j || !program || !lim_in) {
    set_error(o, "sq_jail_run: missing argument");
    return SQ_EINVAL;
  }
  sq_jail_limits lim = *lim_in;
  sq_jail_limits_apply(&lim, &builtin_limits, NULL);

  int ret = 0;
  char dir[PATH_MAX] = "";
  int out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, st_p[2] = {-1, -1}, pidfd = -1;
  stream s[2] = {{.fd = -1, .cap = (size_t)lim.output_kib * 1024},
                 {.fd = -1, .cap = (size_t)lim.output_kib * 1024}};
  bool as_root = geteuid() == 0;

  ret = make_scratch(j, program, program_len, as_root, dir, o);
  if (ret != 0) goto out;

  char home[PATH_MAX + 8];
  snprintf(home, sizeof home, "HOME=%s", dir);
  char *envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", home, "PYTHONDONTWRITEBYTECODE=1",
                  "PYTHONIOENCODING=utf-8", NULL};
  char *argv[] = {"python3", "-I", "-S", "-c", (char *)sq__jail_harness_py, NULL};
  if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0 || pipe2(st_p, O_CLOEXEC) != 0) {
    set_error(o, "pipe2: %s", strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  sq__jail_child child = {.python_path = j->python_path, .scratch_dir = dir, .argv = argv,
                          .envp = envp, .stdout_fd = out_p[1], .stderr_fd = err_p[1],
                          .status_fd = st_p[1], .lim = &lim, .drop_uid = as_root,
                          .seccomp = &j->seccomp};

  int64_t start_ms = sq_now_mono_ms();
  pid_t pid = fork();
  if (pid < 0) {
    set_error(o, "fork: %s", strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  if (pid == 0) sq__jail_contain(&child);

  close(out_p[1]);
  close(err_p[1]);
  close(st_p[1]);
  out_p[1] = err_p[1] = st_p[1] = -1;
  s[0].fd = out_p[0];
  s[1].fd = err_p[0];
  out_p[0] = err_p[0] = -1;

  /* EOF on the status pipe: exec succeeded (close-on-exec) or the child died. */
  char setup_msg[sizeof o->error];
  size_t setup_len = 0;
  for (;;) {
    ssize_t n = read(st_p[0], setup_msg + setup_len, sizeof setup_msg - 1 - setup_len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    setup_len += (size_t)n;
    if (setup_len == sizeof setup_msg - 1) break;
  }
  setup_msg[setup_len] = '\0';

  pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  int64_t deadline_ms = start_ms + lim.wall_ms;
  sq_jail_end killed_for = SQ_JAIL_EXITED_OK; /* EXITED_OK: we did not kill it */
  bool exited = false, oom = false;
  int status = 0;
  struct rusage ru = {0};
  int64_t drain_until_ms = 0;

  for (;;) {
    if (!exited) {
      pid_t r = wait4(pid, &status, WNOHANG, &ru);
      if (r == pid || (r < 0 && errno == ECHILD)) {
        exited = true;
        o->wall_ms = sq_now_mono_ms() - start_ms;
        kill_tree(pid, true); /* what the program left behind */
        drain_until_ms = sq_now_mono_ms() + DRAIN_AFTER_EXIT_MS;
      }
    }
    int64_t now = sq_now_mono_ms();
    if (exited && ((s[0].fd < 0 && s[1].fd < 0) || now >= drain_until_ms)) break;
    if (!exited && killed_for == SQ_JAIL_EXITED_OK && now >= deadline_ms) {
      killed_for = SQ_JAIL_TIMEOUT;
      kill_tree(pid, false);
    }
    int64_t wait_ms = exited ? drain_until_ms - now
                      : killed_for != SQ_JAIL_EXITED_OK ? TICK_MS : deadline_ms - now;
    if ((pidfd < 0 || killed_for != SQ_JAIL_EXITED_OK) && wait_ms > TICK_MS) wait_ms = TICK_MS;
    if (wait_ms < 0) wait_ms = 0;

    struct pollfd pfd[3];
    int map[3], n = 0;
    for (int i = 0; i < 2; i++)
      if (s[i].fd >= 0) {
        pfd[n] = (struct pollfd){.fd = s[i].fd, .events = POLLIN};
        map[n++] = i;
      }
    if (!exited && pidfd >= 0) {
      pfd[n] = (struct pollfd){.fd = pidfd, .events = POLLIN};
      map[n++] = -1;
    }
    int pr = poll(pfd, (nfds_t)n, (int)wait_ms);
    if (pr < 0 && errno != EINTR) {
      SQ_PERROR("poll");
      kill_tree(pid, exited);
    }
    for (int k = 0; pr > 0 && k < n; k++) {
      if (map[k] < 0 || !pfd[k].revents) continue;
      stream *st = &s[map[k]];
      bool was_truncated = st->truncated;
      if (stream_read(st) == SQ_ENOMEM) oom = true;
      if ((oom || (!was_truncated && st->truncated)) && killed_for == SQ_JAIL_EXITED_OK && !exited) {
        killed_for = oom ? SQ_JAIL_SIGNALED : SQ_JAIL_OUTPUT_LIMIT;
        kill_tree(pid, false);
      }
    }
  }
  kill_tree(pid, true);

  o->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  o->cpu_ms = (int64_t)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 +
              (int64_t)ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
  o->memory_kib = ru.ru_maxrss;
  if (sq_buf_append(&s[0].buf, "", 0) != 0 || sq_buf_append(&s[1].buf, "", 0) != 0) oom = true;
  o->stdout_buf = s[0].buf.data;
  o->stdout_len = s[0].buf.len;
  o->stdout_truncated = s[0].truncated;
  o->stderr_buf = s[1].buf.data;
  o->stderr_len = s[1].buf.len;
  o->stderr_truncated = s[1].truncated;
  s[0].buf = s[1].buf = (sq_buf){0};

  if (oom) {
    set_error(o, "out of memory while capturing output");
    ret = SQ_ENOMEM;
  } else if (setup_len > 0) {
    char *nl = strchr(setup_msg, '\n');
    if (nl) *nl = '\0';
    set_error(o, "%s", setup_msg);
    ret = SQ_EJAIL;
  } else {
    o->end = map_end(o, status, killed_for, &lim);
  }
  if (ret != 0) SQ_LOGT(SQ_LOG_ERROR, task_id, "jail setup failed: %s", o->error);
  else
    SQ_LOGT(SQ_LOG_DEBUG, task_id, "jail run ended %s exit=%d signal=%d wall_ms=%lld cpu_ms=%lld",
            sq_jail_end_name(o->end), o->exit_code, o->signal, (long long)o->wall_ms,
            (long long)o->cpu_ms);

out:
  if (ret != 0) o->end = SQ_JAIL_SETUP_ERROR;
  for (int i = 0; i < 2; i++) {
    if (s[i].fd >= 0) close(s[i].fd);
    sq_buf_clear(&s[i].buf);
  }
  int fds[] = {out_p[0], out_p[1], err_p[0], err_p[1], st_p[0], st_p[1], pidfd};
  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    if (fds[i] >= 0) close(fds[i]);
  if (dir[0] && sq_rmtree(dir) != 0) SQ_LOGT(SQ_LOG_WARN, task_id, "cannot remove scratch dir %s", dir);
  if (ret != 0 && !o->error[0]) set_error(o, "%s", sq_strerror(ret));
  return ret;
}
