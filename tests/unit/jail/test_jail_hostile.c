/* test_jail_hostile.c: what a hostile task does to the jail itself, in
 * both modes: each attack runs first, then honest tasks whose results must
 * be what they would have been, on the same runner (one zygote, so a warm
 * attack meets the very zygote the next task uses). The warm-mode
 * invariants of docs/security.md are pinned here: a task's exit status is
 * never a jail signal, a stopped or damaged zygote is replaced, every
 * rlimit comes from the worker, prlimit64 reaches the caller only,
 * CLONE_PARENT is refused, scratch is a fresh mount whatever was left in
 * it, the wall clock starts when the child takes the task; plus the whole
 * tree's CPU limit, programs of any allowed size, and the cgroup sweep's
 * owner check across PID namespaces. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "jail.h"
#include "jail_internal.h"
#include "util.h"

static sq_jail *jail;
static char scratch_root[64];
static const sq_jail_limits base = {.wall_ms = 10000, .cpu_ms = 10000, .memory_mib = 512, .output_kib = 64};

static const sq_jail_mode modes[] = {SQ_JAIL_MODE_SPAWN, SQ_JAIL_MODE_WARM};
#define MODE_NAME(m) sq_jail_mode_name(m)

/* Runs prog; the run itself must succeed (rc 0), whatever the program did. */
static void run(sq_jail_mode mode, const char *prog, size_t len, const sq_jail_limits *lim, sq_jail_outcome *o) {
  int rc = sq_jail_run_mode(jail, mode, prog, len, lim ? lim : &base, "hostile", o);
  if (rc != 0) fprintf(stderr, "--- %s: sq_jail_run: %s (%s)\n", MODE_NAME(mode), sq_strerror(rc), o->error);
  CHECK_EQ(rc, 0);
}

/* The honest tasks after an attack: the same results as on a fresh jail. */
static void honest(sq_jail_mode mode, const char *after) {
  static const struct {
    const char *prog, *out;
  } tasks[] = {
      {"print(sum(range(10)))\n", "45\n"},
      /* allocates 96 MiB under 512: an RLIMIT_DATA left by a task would fail it */
      {"b = bytearray(96 << 20)\nb[-1] = 1\nprint(len(b) >> 20)\n", "96\n"},
      /* scratch is writable, empty but for main.py, and files fit */
      {"import os\nopen('f.txt', 'w').write('x' * 1000)\nprint(sorted(os.listdir('.')), os.stat('.').st_mode & 0o777)\n",
       "['f.txt', 'main.py'] 448\n"},
      /* 60 descriptors may be opened: NOFILE is the jail's 64 */
      {"fs = [open('/dev/null') for _ in range(55)]\nprint(len(fs))\n", "55\n"},
      /* threads start */
      {"import threading\nts = [threading.Thread(target=lambda: None) for _ in range(20)]\n"
       "[t.start() for t in ts]; [t.join() for t in ts]\nprint('threads')\n",
       "threads\n"},
  };
  for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++) {
    sq_jail_outcome o;
    run(mode, tasks[i].prog, strlen(tasks[i].prog), NULL, &o);
    if (o.end != SQ_JAIL_EXITED_OK || !o.stdout_buf || strcmp(o.stdout_buf, tasks[i].out) != 0)
      fprintf(stderr, "--- %s, honest task %zu after %s: end %s\nstdout: %.200s\nstderr: %.400s\n", MODE_NAME(mode), i,
              after, sq_jail_end_name(o.end), o.stdout_buf ? o.stdout_buf : "", o.stderr_buf ? o.stderr_buf : "");
    CHECK_STR(sq_jail_end_name(o.end), "exited_ok");
    CHECK_STR(o.stdout_buf, tasks[i].out);
    /* No stall after the attack: the time it neither ran nor waited for a CPU
     * (a busy host's queue is not the jail's wait). */
    if (o.wall_ms - o.cpu_wait_ms >= 3000)
      fprintf(stderr, "--- %s, honest task %zu after %s: wall_ms %lld cpu_wait_ms %lld\n", MODE_NAME(mode), i, after,
              (long long)o.wall_ms, (long long)o.cpu_wait_ms);
    CHECK(o.wall_ms - o.cpu_wait_ms < 3000);
    sq_jail_outcome_clear(&o);
  }
}

/* Attack, its expected end (NULL: any), then the honest set. */
static void attack(sq_jail_mode mode, const char *what, const char *prog, const char *want_end) {
  sq_jail_outcome o;
  fprintf(stderr, "%s: %s\n", MODE_NAME(mode), what);
  run(mode, prog, strlen(prog), NULL, &o);
  if (want_end) {
    if (strcmp(sq_jail_end_name(o.end), want_end) != 0)
      fprintf(stderr, "stdout: %.200s\nstderr: %.400s\n", o.stdout_buf ? o.stdout_buf : "",
              o.stderr_buf ? o.stderr_buf : "");
    CHECK_STR(sq_jail_end_name(o.end), want_end);
  }
  sq_jail_outcome_clear(&o);
  honest(mode, what);
}

/* Exit status 125 was the warm child's "could not set up": one task stopped
 * a worker. A status is only ever the program's. */
static void test_exit_statuses(sq_jail_mode mode) {
  for (int code = 124; code <= 127; code++) {
    char prog[64];
    snprintf(prog, sizeof prog, "import os\nos._exit(%d)\n", code);
    sq_jail_outcome o;
    run(mode, prog, strlen(prog), NULL, &o);
    CHECK_EQ(o.exit_code, code);
    CHECK_STR(sq_jail_end_name(o.end), "exited_error");
    sq_jail_outcome_clear(&o);
  }
  attack(mode, "sys.exit(125)", "import sys\nsys.exit(125)\n", "exited_error");
}

/* Python that sends its parent sig, refused or not. */
#define STOP_PARENT(sig) "try:\n    os.kill(os.getppid(), signal." sig ")\nexcept PermissionError:\n    pass\n"

/* What a task can do to its zygote (warm) or its init (spawn). */
static void test_zygote_attacks(sq_jail_mode mode) {
  /* A warm task's zygote refuses them (its real and saved uid are not the
   * task's); a spawn run's init, pid 1 of its namespace, ignores them. */
  attack(mode, "SIGSTOP the parent", "import os, signal\n" STOP_PARENT("SIGSTOP") "print('stopped')\n", NULL);
  attack(mode, "SIGSTOP the parent, then sleep past the wall clock",
         "import os, signal, time\n" STOP_PARENT("SIGSTOP") "time.sleep(60)\n", NULL);
  attack(mode, "SIGTSTP the parent", "import os, signal\n" STOP_PARENT("SIGTSTP"), NULL);
  /* Its output closed well before it exits (as a loaded machine may make
   * any task look), and its zygote stopped, so no end report comes: the
   * supervisor keeps looking for the exit (and wakes the zygote) instead of
   * waiting out the wall clock. */
  attack(mode, "close stdout and stderr, SIGSTOP the parent, exit 0.3 s later",
         "import os, signal, time\nos.close(1)\nos.close(2)\n" STOP_PARENT("SIGSTOP") "time.sleep(0.3)\n",
         "exited_ok");
  attack(mode, "chmod 0500 /scratch", "import os\nos.chmod('/scratch', 0o500)\nprint('ro')\n", "exited_ok");
  attack(mode, "chmod 0 /scratch", "import os\nos.chmod('/scratch', 0)\n", "exited_ok");
  attack(mode, "main.py deleted", "import os\nos.unlink('/scratch/main.py')\n", "exited_ok");
  attack(mode, "1,100 nested directories, the innermost unreadable",
         "import os\nfor i in range(1100):\n    os.mkdir('d')\n    os.chdir('d')\nos.chmod('.', 0)\n"
         "os.chdir('/scratch')\nos.chmod('d', 0o100)\n",
         "exited_ok");
  attack(mode, "/scratch full of files",
         "import os\nfor i in range(3000):\n    open('f%d' % i, 'w').write('x' * 4096)\n", NULL);
  /* prlimit64 on another process: EPERM; on itself (pid 0): allowed. */
  attack(mode, "prlimit RLIMIT_DATA and RLIMIT_NOFILE on the parent",
         "import os, resource\nfor r, v in ((resource.RLIMIT_DATA, 10 << 20), (resource.RLIMIT_NOFILE, 8),\n"
         "                   (resource.RLIMIT_NPROC, 1), (resource.RLIMIT_AS, 20 << 20)):\n"
         "    try:\n        resource.prlimit(os.getppid(), r, (v, v))\n        print('changed', r)\n"
         "    except PermissionError:\n        print('refused', r)\n"
         "resource.setrlimit(resource.RLIMIT_DATA, (10 << 20, 10 << 20))\n",
         "exited_ok");
  /* clone(CLONE_PARENT) would hand a process (a zombie later) to the zygote. */
  attack(mode, "clone(CLONE_PARENT)", "import ctypes\nctypes.CDLL(None).syscall(56, 0x8000 | 17, 0, 0, 0, 0)\n",
         "policy");
}

/* Every rlimit in a task is the worker's value or the jail's, never one
 * the zygote was left with. */
static void test_rlimits_from_worker(sq_jail_mode mode) {
  static const char prog[] = "import resource as R\nfor r in (R.RLIMIT_DATA, R.RLIMIT_RSS, R.RLIMIT_RTTIME, "
                             "R.RLIMIT_SIGPENDING, R.RLIMIT_MSGQUEUE, R.RLIMIT_NOFILE, R.RLIMIT_NPROC):\n"
                             "    print(*R.getrlimit(r))\n";
  int res[] = {RLIMIT_DATA, RLIMIT_RSS, RLIMIT_RTTIME, RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE};
  char want[512] = "";
  for (size_t i = 0; i < sizeof res / sizeof *res; i++) {
    struct rlimit rl;
    getrlimit(res[i], &rl);
    size_t at = strlen(want);
    snprintf(want + at, sizeof want - at, "%lld %lld\n", rl.rlim_cur == RLIM_INFINITY ? -1LL : (long long)rl.rlim_cur,
             rl.rlim_max == RLIM_INFINITY ? -1LL : (long long)rl.rlim_max);
  }
  size_t at = strlen(want);
  snprintf(want + at, sizeof want - at, "%d %d\n%d %d\n", SQ__JAIL_NOFILE_MAX, SQ__JAIL_NOFILE_MAX,
           SQ__JAIL_NPROC_MAX, SQ__JAIL_NPROC_MAX);
  sq_jail_outcome o;
  run(mode, prog, strlen(prog), NULL, &o);
  CHECK_STR(o.stdout_buf, want);
  sq_jail_outcome_clear(&o);
}

/* The wall clock starts when the child takes the task: a task of 0.5 s
 * under wall_ms 800 right after one that left 4,000 files and a process
 * group to clean up is not a timeout. */
static void test_clock_starts_at_take(sq_jail_mode mode) {
  static const char mess[] = "import os, time\nfor i in range(4000):\n    open('f%d' % i, 'w')\n"
                             "for k in range(8):\n    if os.fork() == 0:\n        time.sleep(60)\n";
  static const char timed[] = "import time\ntime.sleep(0.5)\nprint('in time')\n";
  sq_jail_limits tight = base;
  tight.wall_ms = 800;
  for (int i = 0; i < 3; i++) {
    sq_jail_outcome o;
    run(mode, mess, strlen(mess), NULL, &o);
    sq_jail_outcome_clear(&o);
    run(mode, timed, strlen(timed), &tight, &o);
    CHECK_STR(sq_jail_end_name(o.end), "exited_ok"); /* not timeout: the clock started at the take */
    CHECK(o.wall_ms >= 500);
    sq_jail_outcome_clear(&o);
  }
}

/* 16 forked spinners under cpu_ms 1000: the tree's CPU time is measured
 * and limited, not each process's. */
static void test_tree_cpu(sq_jail_mode mode) {
  if (!(sq_jail_layers(jail) & SQ_JAIL_LAYER_CGROUP_CPU)) {
    fprintf(stderr, "note: no CPU accounting cgroup on this host; the tree's CPU limit is not exercised\n");
    return;
  }
  static const char prog[] = "import os\nfor i in range(16):\n    if os.fork() == 0:\n        while True: pass\n"
                             "os.wait()\n";
  sq_jail_limits lim = base;
  lim.cpu_ms = 1000;
  lim.wall_ms = 60000; /* a loaded box shares its cores with others: only the CPU time is the point */
  sq_jail_outcome o;
  run(mode, prog, strlen(prog), &lim, &o);
  fprintf(stderr, "%s: 16 spinners: end %s cpu_ms %lld wall_ms %lld\n", MODE_NAME(mode), sq_jail_end_name(o.end),
          (long long)o.cpu_ms, (long long)o.wall_ms);
  CHECK_STR(sq_jail_end_name(o.end), "cpu_limit");
  CHECK(o.cpu_ms >= 1000);
  CHECK(o.cpu_ms < 1600);
  CHECK(o.layers & SQ_JAIL_LAYER_CGROUP_CPU);
  sq_jail_outcome_clear(&o);
  /* An honest task's CPU time is still its own. */
  static const char spin[] = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass\n";
  run(mode, spin, strlen(spin), &lim, &o);
  CHECK_STR(sq_jail_end_name(o.end), "exited_ok");
  CHECK(o.cpu_ms >= 190 && o.cpu_ms < 600);
  sq_jail_outcome_clear(&o);
  honest(mode, "the spinners");
}

/* A program of 5 MiB runs in both modes (the warm task message could not
 * carry it); one over the jail's limit is refused before anything starts. */
static void test_program_sizes(sq_jail_mode mode) {
  size_t n = 5 << 20;
  char *prog = malloc(n + 64);
  CHECK(prog != NULL);
  if (!prog) return;
  size_t at = (size_t)sprintf(prog, "x = '");
  memset(prog + at, 'a', n);
  at += n;
  at += (size_t)sprintf(prog + at, "'\nprint(len(x))\n");
  sq_jail_outcome o;
  run(mode, prog, at, NULL, &o);
  CHECK_STR(sq_jail_end_name(o.end), "exited_ok");
  CHECK_STR(o.stdout_buf, "5242880\n");
  sq_jail_outcome_clear(&o);
  free(prog);
  size_t big = SQ_JAIL_PROGRAM_MAX_BYTES + 1;
  prog = malloc(big);
  CHECK(prog != NULL);
  if (!prog) return;
  memset(prog, '#', big);
  CHECK_EQ(sq_jail_run_mode(jail, mode, prog, big, &base, "hostile", &o), SQ_ETOOBIG);
  CHECK_CONTAINS(o.error, "limit of 16777216 bytes");
  sq_jail_outcome_clear(&o);
  free(prog);
  honest(mode, "large programs");
}

/* The sweep leaves a group whose owner is alive, whatever PID namespace the
 * owner is in and whatever its name's pid means here; it removes it once
 * the owner is gone. */
static void test_sweep_owner(void) {
  if (!(sq_jail_layers(jail) & (SQ_JAIL_LAYER_CGROUP_MEMORY | SQ_JAIL_LAYER_CGROUP_PIDS))) {
    fprintf(stderr, "note: no cgroups here; the sweep is not exercised\n");
    return;
  }
  int ready[2];
  CHECK_EQ(pipe(ready), 0);
  /* The owner: pid 1 of a PID namespace of its own, a group named after a
   * pid that does not exist here. */
  pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, 0);
  if (pid == 0) {
    sq__jail_cgroup cg;
    uint32_t l = sq__jail_cgroup_create(&cg, "z4194000-0", 64, 8);
    char b = l ? 'y' : 'n';
    if (write(ready[1], &b, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char b = 0;
  CHECK_EQ(read(ready[0], &b, 1), 1);
  CHECK_EQ(b, 'y');
  sq__jail_cgroup probe;
  sq__jail_cgroup_create(&probe, "probe-sweep", 64, 8); /* to learn the directory */
  char dir[300];
  snprintf(dir, sizeof dir, "%s", probe.mem[0] ? probe.mem : probe.pids);
  sq__jail_cgroup_destroy(&probe);
  char *slash = strrchr(dir, '/');
  if (slash) snprintf(slash + 1, sizeof dir - (size_t)(slash + 1 - dir), "sandq-z4194000-0");
  struct stat st;
  CHECK_EQ(stat(dir, &st), 0);
  sq__jail_cgroup_sweep();
  CHECK_EQ(stat(dir, &st), 0); /* the owner is alive: kept */
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  sq__jail_cgroup_sweep();
  CHECK(stat(dir, &st) != 0); /* the owner is gone: removed */
  close(ready[0]);
  close(ready[1]);
}

int main(void) {
  if (access("/usr/bin/python3", X_OK) != 0) {
    fprintf(stderr, "SKIP: /usr/bin/python3 is not installed\n");
    return 77;
  }
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: the warm pool and the namespaces need root\n");
    return 77;
  }
  snprintf(scratch_root, sizeof scratch_root, "/tmp/sandq-jail-hostile.%d", (int)getpid());
  sq_jail_config cfg = {.python_path = "/usr/bin/python3", .scratch_root = scratch_root,
                        .mode = SQ_JAIL_MODE_WARM, .pool_size = 1};
  int rc = sq_jail_new(&cfg, &jail);
  CHECK_EQ(rc, 0);
  if (rc != 0) return sq_check_done("test_jail_hostile");
  for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
    honest(modes[m], "nothing");
    test_exit_statuses(modes[m]);
    test_zygote_attacks(modes[m]);
    test_rlimits_from_worker(modes[m]);
    test_clock_starts_at_take(modes[m]);
    test_tree_cpu(modes[m]);
    test_program_sizes(modes[m]);
  }
  test_sweep_owner();
  sq_jail_free(jail);
  char roots[128];
  snprintf(roots, sizeof roots, "%s/root", scratch_root);
  rmdir(roots);
  rmdir(scratch_root);
  return sq_check_done("test_jail_hostile");
}
