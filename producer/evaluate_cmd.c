/* evaluate_cmd.c: `sandq-producer evaluate DATASET FILE (--canonical |
 * --completions F | --samples N) [--k LIST] [--json] [--html F] [--workers
 * N]`: import (import_cmd.c), push (push_cmd.c), wait with the progress
 * bar (progress.c) and report (report_cmd.c) in one command. With a Redis
 * given (SANDQ_REDIS_URL, --redis, a config file's redis_url) it uses that
 * fleet. Without one it starts its own: a redis-server on a free loopback
 * port and N `sandq-worker serve` (the worker next to this program), all
 * in one process group of their own (the terminal's Ctrl-C reaches this
 * process only, which stops them in order: workers, then Redis), each
 * told by the kernel to stop should this process die (PR_SET_PDEATHSIG);
 * whatever the way out, nothing it started is left running. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "errors.h"
#include "eval.h"
#include "name.h"
#include "producer.h"
#include "queue.h"
#include "util.h"

#define MAX_WORKERS 64
#define DEFAULT_WORKERS_MAX 8
#define REDIS_READY_MS 15000   /* a redis-server not ready by then is not coming */
#define WORKER_STOP_MS 10000   /* SIGTERM: it finishes what it holds, then leaves */
#define WORKER_FORCE_MS 5000   /* a second SIGTERM: it stops at once */
#define REDIS_STOP_MS 5000

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
  (void)sig;
  stop_requested = 1;
}

/* What evaluate started: a private directory, and the processes of one
 * process group (the redis-server leads it). */
typedef struct {
  char dir[PATH_MAX];   /* "" until made */
  pid_t pgid;           /* 0: nothing started */
  pid_t redis;          /* 0 once reaped */
  pid_t workers[MAX_WORKERS];
  int n_workers, live_workers;
  bool told_worker_exit;
  char url[64];
} fleet;

static void sleep_ms(int64_t ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL); /* a signal cuts it short: the caller looks at stop_requested */
}

/* The last lines of a log of f's directory on stderr, to show why a
 * process it started stopped. */
static void log_tail(const fleet *f, const char *name) {
  char path[PATH_MAX + 64], buf[8192];
  snprintf(path, sizeof path, "%s/%s", f->dir, name);
  FILE *in = fopen(path, "rb");
  if (!in) return;
  fseek(in, 0, SEEK_END);
  long size = ftell(in);
  fseek(in, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0, SEEK_SET);
  size_t n = fread(buf, 1, sizeof buf - 1, in);
  fclose(in);
  buf[n] = 0;
  const char *from = buf + n;
  for (int lines = 0; from > buf && lines < 9; from--)
    if (from[-1] == '\n' && from != buf + n) lines++;
  fprintf(stderr, "--- the last lines of %s:\n%s%s", name, from, n && buf[n - 1] != '\n' ? "\n" : "");
}

/* Whether pid exited (reaped here), saying how in why. */
static bool exited(pid_t pid, char *why, size_t len) {
  int status;
  if (waitpid(pid, &status, WNOHANG) != pid) return false;
  if (WIFEXITED(status)) snprintf(why, len, "exit status %d", WEXITSTATUS(status));
  else snprintf(why, len, "signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return true;
}

/* Starts argv in f's process group (the first one started leads it), its
 * output to log (a file of f's directory), with the environment plus env
 * (NAME=VALUE strings, NULL-terminated). Returns the pid, or -1 after
 * saying why. */
static pid_t spawn(fleet *f, char *const argv[], const char *log, char *const env[]) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", f->dir, log);
  pid_t parent = getpid(), pid = fork();
  if (pid < 0) {
    fprintf(stderr, "sandq-producer: evaluate: cannot start %s: %s\n", argv[0], strerror(errno));
    return -1;
  }
  if (pid == 0) {
    setpgid(0, f->pgid);
    /* this process dying, even by SIGKILL, stops the child too */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int in = open("/dev/null", O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(126);
    for (size_t i = 0; env && env[i]; i++) putenv(env[i]);
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, f->pgid ? f->pgid : pid); /* here too: whichever runs first */
  if (!f->pgid) f->pgid = pid;
  return pid;
}

/* A TCP port free on 127.0.0.1 just now (the kernel's pick); 0 if none. */
static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

/* Whether file (of f's directory) holds text. */
static bool log_holds(const fleet *f, const char *file, const char *text) {
  char path[PATH_MAX + 64], buf[16384];
  snprintf(path, sizeof path, "%s/%s", f->dir, file);
  FILE *in = fopen(path, "rb");
  if (!in) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, in);
  fclose(in);
  buf[n] = 0;
  return strstr(buf, text) != NULL;
}

/* Whether an executable named name is on the PATH. */
static bool on_path(const char *name) {
  const char *path = getenv("PATH");
  char dir[PATH_MAX + 64];
  for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
    size_t n = strcspn(p, ":");
    snprintf(dir, sizeof dir, "%.*s/%s", (int)n, p, name);
    if (n && access(dir, X_OK) == 0) return true;
    p += n + (p[n] == ':');
  }
  return false;
}

/* The private redis-server, ready (its log says so); 0, or -1 after saying why. */
static int start_redis(fleet *f) {
  if (!on_path("redis-server")) {
    fprintf(stderr, "sandq-producer: evaluate: redis-server is not on the PATH (install Redis 7, "
                    "scripts/install-deps.sh), or set SANDQ_REDIS_URL to use a running one\n");
    return -1;
  }
  char rdir[PATH_MAX + 16];
  snprintf(rdir, sizeof rdir, "%s/redis", f->dir);
  if (mkdir(rdir, 0700) != 0) {
    fprintf(stderr, "sandq-producer: evaluate: cannot make %s: %s\n", rdir, strerror(errno));
    return -1;
  }
  for (int attempt = 0; attempt < 3; attempt++) { /* a port taken between the pick and redis's bind: again */
    char port[16], why[64];
    snprintf(port, sizeof port, "%d", free_port());
    char *argv[] = {"redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                    "--dir", rdir, "--daemonize", "no", "--protected-mode", "yes", NULL};
    if ((f->redis = spawn(f, argv, "redis.log", NULL)) < 0) return f->redis = 0, -1;
    int64_t t0 = sq_now_mono_ms();
    while (!stop_requested && sq_now_mono_ms() - t0 < REDIS_READY_MS) {
      if (log_holds(f, "redis.log", "Ready to accept connections")) {
        snprintf(f->url, sizeof f->url, "redis://127.0.0.1:%s", port);
        return 0;
      }
      if (exited(f->redis, why, sizeof why)) {
        f->redis = 0;
        break;
      }
      sleep_ms(20);
    }
    if (stop_requested) return -1;
    if (f->redis) {
      fprintf(stderr, "sandq-producer: evaluate: the private redis-server was not ready within %d s\n",
              REDIS_READY_MS / 1000);
      log_tail(f, "redis.log");
      return -1;
    }
    if (!log_holds(f, "redis.log", "Address already in use")) break;
  }
  fprintf(stderr, "sandq-producer: evaluate: the private redis-server did not start\n");
  log_tail(f, "redis.log");
  return -1;
}

/* n workers against f's Redis: 0, or -1 after saying why. */
static int start_workers(fleet *f, const sq_config *cfg, int n, int64_t cores) {
  char self[PATH_MAX], worker[PATH_MAX + 32];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    fprintf(stderr, "sandq-producer: evaluate: cannot find this program's directory: %s\n", strerror(errno));
    return -1;
  }
  self[len] = 0;
  char *slash = strrchr(self, '/');
  snprintf(worker, sizeof worker, "%.*s/sandq-worker", slash ? (int)(slash - self) : 1, slash ? self : ".");
  if (access(worker, X_OK) != 0) {
    fprintf(stderr, "sandq-producer: evaluate: %s: %s (sandq-worker belongs next to sandq-producer; or set "
                    "SANDQ_REDIS_URL to use a running fleet)\n", worker, strerror(errno));
    return -1;
  }
  static char url_env[128], queue_env[160], threads_env[48];
  snprintf(url_env, sizeof url_env, "SANDQ_REDIS_URL=%s", f->url);
  snprintf(queue_env, sizeof queue_env, "SANDQ_QUEUE=%s", cfg->queue);
  /* the host's cores shared among the workers, unless the user sized them */
  int64_t threads = cores / n > 0 ? cores / n : 1;
  snprintf(threads_env, sizeof threads_env, "SANDQ_JAIL_THREADS=%lld", (long long)threads);
  char *env[] = {url_env, queue_env, getenv("SANDQ_JAIL_THREADS") ? NULL : threads_env, NULL};
  for (int i = 0; i < n && !stop_requested; i++) {
    char id[64], log[32];
    snprintf(id, sizeof id, "evaluate-%ld-%d", (long)getpid(), i + 1);
    snprintf(log, sizeof log, "worker-%d.log", i + 1);
    char *argv[] = {worker, "serve", "--worker-id", id, NULL};
    pid_t pid = spawn(f, argv, log, env);
    if (pid < 0) return -1;
    f->workers[f->n_workers++] = pid;
    f->live_workers++;
  }
  return stop_requested ? -1 : 0;
}

/* While the batch runs: a stop asked for, or a process that left. */
static int fleet_check(void *ud) {
  fleet *f = ud;
  char why[64];
  if (stop_requested) return SQ_EXIT_INTERRUPTED;
  if (f->redis && exited(f->redis, why, sizeof why)) {
    f->redis = 0;
    fprintf(stderr, "sandq-producer: evaluate: the private redis-server stopped (%s)\n", why);
    log_tail(f, "redis.log");
    return SQ_EXIT_ERROR;
  }
  for (int i = 0; i < f->n_workers; i++) {
    if (!f->workers[i] || !exited(f->workers[i], why, sizeof why)) continue;
    f->workers[i] = 0;
    f->live_workers--;
    char log[32];
    snprintf(log, sizeof log, "worker-%d.log", i + 1);
    fprintf(stderr, "sandq-producer: evaluate: worker %d stopped (%s)%s\n", i + 1, why,
            f->live_workers ? "; the others go on" : "; no worker is left");
    if (!f->told_worker_exit || !f->live_workers) log_tail(f, log);
    f->told_worker_exit = true;
    if (!f->live_workers) return SQ_EXIT_ERROR;
  }
  return 0;
}

/* Waits up to ms for the live ones of pids[0..n) to exit, reaping them
 * (a reaped one becomes 0). Returns how many are left. */
static int wait_gone(pid_t *pids, int n, int64_t ms) {
  int64_t t0 = sq_now_mono_ms();
  for (;;) {
    int left = 0;
    char why[64];
    for (int i = 0; i < n; i++) {
      if (pids[i] && exited(pids[i], why, sizeof why)) pids[i] = 0;
      left += pids[i] != 0;
    }
    if (!left || sq_now_mono_ms() - t0 >= ms) return left;
    sleep_ms(10);
  }
}

static void signal_all(pid_t *pids, int n, int sig) {
  for (int i = 0; i < n; i++)
    if (pids[i]) kill(pids[i], sig);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

/* Stops everything f started, in order: the workers (SIGTERM: they finish
 * or hand back what they hold; a second: at once; then SIGKILL), then the
 * redis-server, then anything left in the process group; and removes the
 * private directory. Quick after an interrupt (hurry). */
static void fleet_stop(fleet *f, bool hurry) {
  if (f->pgid) {
    signal_all(f->workers, f->n_workers, SIGTERM);
    if (hurry) { /* the second SIGTERM, once the first was seen */
      sleep_ms(50);
      signal_all(f->workers, f->n_workers, SIGTERM);
    }
    if (wait_gone(f->workers, f->n_workers, hurry ? WORKER_FORCE_MS : WORKER_STOP_MS)) {
      signal_all(f->workers, f->n_workers, SIGTERM);
      if (wait_gone(f->workers, f->n_workers, WORKER_FORCE_MS)) {
        signal_all(f->workers, f->n_workers, SIGKILL);
        wait_gone(f->workers, f->n_workers, 60000);
      }
    }
    pid_t r[1] = {f->redis};
    if (r[0]) {
      kill(r[0], SIGTERM);
      if (wait_gone(r, 1, REDIS_STOP_MS)) {
        kill(r[0], SIGKILL);
        wait_gone(r, 1, 60000);
      }
    }
    f->redis = 0;
    /* what the workers started and left in the group (none should be) */
    if (kill(-f->pgid, SIGKILL) == 0)
      while (waitpid(-f->pgid, NULL, 0) > 0) {
      }
    f->pgid = 0;
  }
  if (f->dir[0] && !getenv("SANDQ_EVALUATE_KEEP")) nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  f->dir[0] = 0;
}

/* eval-YYYYmmdd-HHMMSS-<4 hex>, UTC. */
static void make_batch_id(char *buf, size_t n) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  uint16_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) r = (uint16_t)(getpid() ^ sq_now_mono_ms());
  snprintf(buf, n, "eval-%04d%02d%02d-%02d%02d%02d-%04x", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
           tm.tm_min, tm.tm_sec, (unsigned)r);
}

/* Whether the user named a Redis: the environment, --redis, or a config
 * file's redis_url (a value other than the default). */
static bool redis_given(const sq_config *cfg, const sq_cli *cli) {
  const char *env = getenv("SANDQ_REDIS_URL");
  if ((env && *env) || sq_cli_get(cli, "redis")) return true;
  sq_config *d = malloc(sizeof *d);
  if (!d) return true;
  sq_config_defaults(d);
  bool differs = strcmp(d->redis_url, cfg->redis_url) != 0;
  free(d);
  return differs;
}

/* Pushes path into batch with push's own code (push_cmd.c); the batch id
 * it prints is dropped (the caller says it on stderr), so stdout holds
 * the report alone. */
static int push(const sq_config *cfg, const char *path, const char *batch) {
  sq_push_opts po = {.path = path, .batch = batch, .budget_usd = -1};
  fflush(stdout);
  int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (saved < 0 || null < 0 || dup2(null, STDOUT_FILENO) < 0) {
    fprintf(stderr, "sandq-producer: evaluate: %s\n", strerror(errno));
    if (saved >= 0) close(saved);
    if (null >= 0) close(null);
    return SQ_EXIT_ERROR;
  }
  close(null);
  int code = sq__push_run(cfg, &po);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  return code;
}

int sq__evaluate_run(const sq_config *cfg_in, const sq_cli *cli) {
  const char *v;
  sq__report_opts ro = {.k = {1, 10, 100}, .n_k = 3, .json = sq_cli_get(cli, "json") != NULL,
                        .html = sq_cli_get(cli, "html"), .allow_missing = sq_cli_get(cli, "allow-missing") != NULL};
  int64_t workers = 0, timeout_s = 0;
  if (cli->n_operands != 2) {
    fprintf(stderr, "sandq-producer: evaluate takes a dataset name (humaneval, mbpp, apps, humaneval+, mbpp+, "
                    "multipl-e) and its FILE (sandq-producer evaluate --help)\n");
    return SQ_EXIT_USAGE;
  }
  if (!sq_cli_get(cli, "canonical") && !sq_cli_get(cli, "completions") && !sq_cli_get(cli, "samples")) {
    fprintf(stderr, "sandq-producer: evaluate: say what to run: --canonical, --completions FILE or --samples N\n");
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "k")) && sq__report_parse_k(v, ro.k, &ro.n_k) != 0) {
    fprintf(stderr, "sandq-producer: --k '%s' must be up to %d distinct whole numbers >= 1, comma-separated\n", v,
            SQ__REPORT_MAX_K);
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "workers")) && sq_parse_i64(v, 1, MAX_WORKERS, &workers) != 0) {
    fprintf(stderr, "sandq-producer: --workers '%s' must be a whole number in [1, %d]\n", v, MAX_WORKERS);
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "timeout-s")) && sq_parse_i64(v, 1, 366LL * 24 * 3600, &timeout_s) != 0) {
    fprintf(stderr, "sandq-producer: --timeout-s '%s' must be a whole number of seconds >= 1\n", v);
    return SQ_EXIT_USAGE;
  }
  if (ro.html && (!ro.html[0] || strcmp(ro.html, "-") == 0)) {
    fprintf(stderr, "sandq-producer: --html needs a file name\n");
    return SQ_EXIT_USAGE;
  }
  if (sq__out_check(ro.html) != 0) return SQ_EXIT_USAGE;
  char batch[SQ_NAME_BATCH_MAX + 1];
  if ((v = sq_cli_get(cli, "batch"))) {
    if (!sq_name_ok(v, SQ_NAME_BATCH_MAX)) {
      fprintf(stderr, "sandq-producer: --batch '%s' must be 1-%d characters of A-Z a-z 0-9 . _ : -\n", v,
              SQ_NAME_BATCH_MAX);
      return SQ_EXIT_USAGE;
    }
    snprintf(batch, sizeof batch, "%s", v);
  } else {
    make_batch_id(batch, sizeof batch);
  }
  bool own = !redis_given(cfg_in, cli);
  if (!own && workers) {
    fprintf(stderr, "sandq-producer: evaluate: --workers starts local workers, for a private Redis only; with "
                    "a Redis given, its fleet's workers run the batch\n");
    return SQ_EXIT_USAGE;
  }

  /* from here on, a stop asked for (Ctrl-C, SIGTERM, SIGHUP) ends the run and everything it started */
  struct sigaction sa = {.sa_handler = on_stop}, old[3];
  int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
  sigemptyset(&sa.sa_mask);
  stop_requested = 0;
  for (int i = 0; i < 3; i++) sigaction(sigs[i], &sa, &old[i]);
  fleet f = {.dir = ""};
  sq_config *cfg = malloc(sizeof *cfg);
  sq_queue *q = NULL;
  FILE *tasks = NULL;
  int code = SQ_EXIT_ERROR;
  bool tasks_pushed = false; /* on a fleet, progress.c says how to re-attach after that */
  char tasks_path[PATH_MAX + 32];
  if (!cfg) goto out;
  *cfg = *cfg_in;
  const char *tmp = getenv("TMPDIR");
  snprintf(f.dir, sizeof f.dir, "%s/sandq-evaluate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(f.dir)) {
    fprintf(stderr, "sandq-producer: evaluate: cannot make a directory in %s: %s\n", tmp && *tmp ? tmp : "/tmp",
            strerror(errno));
    f.dir[0] = 0;
    goto out;
  }
  snprintf(tasks_path, sizeof tasks_path, "%s/tasks.jsonl", f.dir);
  size_t n_tasks = 0;
  if (!(tasks = fopen(tasks_path, "w"))) {
    fprintf(stderr, "sandq-producer: evaluate: cannot write %s: %s\n", tasks_path, strerror(errno));
    goto out;
  }
  code = sq__import_write(cli, tasks, &n_tasks);
  if (fclose(tasks) != 0 && code == SQ_EXIT_OK) {
    fprintf(stderr, "sandq-producer: evaluate: writing %s: %s\n", tasks_path, strerror(errno));
    code = SQ_EXIT_ERROR;
  }
  tasks = NULL;
  if (code != SQ_EXIT_OK || stop_requested) goto out;
  code = SQ_EXIT_ERROR;

  if (own) {
    sq_config_host host;
    sq_config_host_probe(&host);
    int n = workers ? (int)workers : (int)(host.cores < DEFAULT_WORKERS_MAX ? host.cores : DEFAULT_WORKERS_MAX);
    if (start_redis(&f) != 0 || start_workers(&f, cfg, n < 1 ? 1 : n, host.cores) != 0) goto out;
    snprintf(cfg->redis_url, sizeof cfg->redis_url, "%s", f.url);
    fprintf(stderr, "sandq-producer: evaluate: a private redis-server at %s and %d local worker(s); stopped at "
                    "the end\n", f.url, f.n_workers);
  }
  int64_t t0 = sq_now_mono_ms();
  if ((code = push(cfg, tasks_path, batch)) != SQ_EXIT_OK) goto out;
  tasks_pushed = true;
  fprintf(stderr, "sandq-producer: evaluate: %zu task(s) pushed as batch %s\n", n_tasks, batch);
  code = SQ_EXIT_ERROR;
  if (stop_requested) goto out;
  if (sq__open_queue(cfg, &q) != 0) goto out;
  sq_batch_stats st;
  sq_wait_hooks hooks = {.check = own ? fleet_check : NULL, .ud = &f, .private_fleet = own};
  code = sq__wait_batch_hooked(q, batch, timeout_s, &st, &hooks);
  if (code != SQ_EXIT_OK) goto out;
  fprintf(stderr, "sandq-producer: evaluate: %zu task(s) of batch %s in %.1f s\n", n_tasks, batch,
          (double)(sq_now_mono_ms() - t0) / 1000.0);
  code = sq__report_batch(cfg, q, batch, &ro);
out:
  if (stop_requested && code != SQ_EXIT_USAGE) code = SQ_EXIT_INTERRUPTED;
  if (code == SQ_EXIT_INTERRUPTED && own)
    fprintf(stderr, "sandq-producer: evaluate: interrupted; stopping the private redis-server and workers (the "
                    "batch goes with them)\n");
  else if (code == SQ_EXIT_INTERRUPTED && !tasks_pushed)
    fprintf(stderr, "sandq-producer: evaluate: interrupted before batch %s was pushed\n", batch);
  sq_queue_free(q);
  if (tasks) fclose(tasks);
  fleet_stop(&f, code == SQ_EXIT_INTERRUPTED);
  free(cfg);
  for (int i = 0; i < 3; i++) sigaction(sigs[i], &old[i], NULL);
  return code;
}
