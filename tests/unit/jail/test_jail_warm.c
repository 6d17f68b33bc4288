/* test_jail_warm.c: the warm pool: each verdict mapped as in spawn mode,
 * no state leaking from one task to the next, a killed zygote replaced,
 * concurrent runs from several threads, the cgroup OOM verdict, a task's
 * end taken early only as the kernel shows it, and the C loop's children
 * as fresh as Python's own fork would make them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "jail.h"
#include "jail_internal.h" /* sq__jail_cgroup_reset_failures */
#include "util.h"

static sq_jail *jail;
static char scratch_root[64];
static const sq_jail_limits base = {.wall_ms = 10000, .cpu_ms = 10000, .memory_mib = 256, .output_kib = 64};

static int run_in(sq_jail_mode mode, const char *prog, const sq_jail_limits *lim, sq_jail_outcome *o) {
  int rc = sq_jail_run_mode(jail, mode, prog, strlen(prog), lim ? lim : &base, "test", o);
  if (rc != 0) fprintf(stderr, "sq_jail_run: %s (%s)\n", sq_strerror(rc), o->error);
  if (rc == 0 && o->mode != mode) fprintf(stderr, "mode not recorded\n");
  return rc;
}

static void expect(sq_jail_mode mode, const char *prog, const sq_jail_limits *lim, sq_jail_end want,
                   const char *blocked) {
  sq_jail_outcome o;
  CHECK_EQ(run_in(mode, prog, lim, &o), 0);
  if (o.end != want)
    fprintf(stderr, "--- %s: %s\nstdout: %.300s\nstderr: %.600s\n", sq_jail_mode_name(mode), prog,
            o.stdout_buf ? o.stdout_buf : "", o.stderr_buf ? o.stderr_buf : "");
  CHECK_STR(sq_jail_end_name(o.end), sq_jail_end_name(want));
  CHECK_EQ((int)o.mode, (int)mode);
  if (blocked) CHECK_STR(o.blocked_syscall, blocked);
  CHECK(o.layers & SQ_JAIL_LAYER_SECCOMP);
  sq_jail_outcome_clear(&o);
}

/* Runs prog warm; its stdout must be want. */
static void warm_prints(const char *prog, const char *want) {
  sq_jail_outcome o;
  CHECK_EQ(run_in(SQ_JAIL_MODE_WARM, prog, NULL, &o), 0);
  CHECK_STR(o.stdout_buf, want);
  sq_jail_outcome_clear(&o);
}

/* A program's end follows `python3 main.py`: its non-daemon threads are
 * waited for (their output kept), in both modes. */
static void test_thread_end(void) {
  const char *prog = "import threading, time\n"
                     "def late():\n    time.sleep(0.2)\n    print('from the thread', flush=True)\n"
                     "threading.Thread(target=late).start()\nprint('main done')\n";
  for (int m = 0; m < 2; m++) {
    sq_jail_outcome o;
    CHECK_EQ(run_in(m ? SQ_JAIL_MODE_WARM : SQ_JAIL_MODE_SPAWN, prog, NULL, &o), 0);
    CHECK_STR(o.stdout_buf, "main done\nfrom the thread\n");
    sq_jail_outcome_clear(&o);
  }
}

/* A run's input is its stdin, read from its start (warm: this runner's
 * mode; test_jail.c has spawn's), and /dev/null without one; it is not in
 * the scratch. */
static void test_input(void) {
  const char *prog = "import os, sys\nprint(sys.stdin.read()[:20], sorted(os.listdir('.')))\n";
  static const char input[] = "the tests\nline 2\n";
  sq_jail_outcome o;
  CHECK_EQ(sq_jail_run_task(jail, prog, strlen(prog), NULL, 0, input, sizeof input - 1, &base, NULL, "test", &o), 0);
  CHECK_STR(o.stdout_buf, "the tests\nline 2\n ['main.py']\n");
  sq_jail_outcome_clear(&o);
  CHECK_EQ(sq_jail_run_task(jail, prog, strlen(prog), NULL, 0, NULL, 0, &base, NULL, "test", &o), 0);
  CHECK_STR(o.stdout_buf, " ['main.py']\n");
  sq_jail_outcome_clear(&o);
}

/* Every verdict, pinned in both modes. */
static void test_verdicts(void) {
  sq_jail_limits fast = base;
  fast.wall_ms = 1500;
  fast.cpu_ms = 60000;
  sq_jail_limits cpu = base;
  cpu.cpu_ms = 1000;
  for (int m = 0; m < 2; m++) {
    sq_jail_mode mode = m ? SQ_JAIL_MODE_WARM : SQ_JAIL_MODE_SPAWN;
    expect(mode, "print('ok')\n", NULL, SQ_JAIL_EXITED_OK, NULL);
    expect(mode, "assert 1 == 2\n", NULL, SQ_JAIL_ASSERTION, NULL);
    expect(mode, "raise ValueError('x')\n", NULL, SQ_JAIL_EXITED_ERROR, NULL);
    expect(mode, "import time\ntime.sleep(30)\n", &fast, SQ_JAIL_TIMEOUT, NULL);
    expect(mode, "while True:\n    pass\n", &cpu, SQ_JAIL_CPU_LIMIT, NULL);
    /* SIGXCPU ignored: the hard limit's SIGKILL is still cpu_limit. */
    expect(mode, "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n", &cpu,
           SQ_JAIL_CPU_LIMIT, NULL);
    expect(mode, "x = bytearray(1 << 30)\n", NULL, SQ_JAIL_MEMORY_LIMIT, NULL);
    expect(mode, "import sys\nwhile True:\n    sys.stdout.write('y' * 4096)\n", NULL, SQ_JAIL_OUTPUT_LIMIT, NULL);
    expect(mode, "import ctypes\nctypes.CDLL(None).syscall(101, 0, 0, 0, 0)\n", NULL, SQ_JAIL_POLICY, "ptrace");
    expect(mode, "import ctypes\nctypes.CDLL(None).syscall(272, 0x20000)\n", NULL, SQ_JAIL_POLICY, "unshare");
    expect(mode, "import ctypes\nctypes.CDLL(None).syscall(425, 8, 0)\n", NULL, SQ_JAIL_POLICY, "io_uring_setup");
    /* By a process the task forked: named all the same (in warm mode through
     * the zygote's one listener), and the whole tree goes. */
    expect(mode, "import ctypes, os\nif os.fork() == 0:\n    ctypes.CDLL(None).syscall(101, 0, 0, 0, 0)\nos.wait()\n",
           NULL, SQ_JAIL_POLICY, "ptrace");
    /* An x32 call: foreign ABI, killed outright (no name). */
    expect(mode, "import ctypes\nctypes.CDLL(None).syscall(0x40000000 | 39)\n", NULL, SQ_JAIL_POLICY, NULL);
    /* A socket outside AF_UNIX: EPERM, the program carries on. */
    expect(mode, "import socket\ntry:\n    socket.socket()\nexcept PermissionError:\n    print('eperm')\n", NULL,
           SQ_JAIL_EXITED_OK, NULL);
  }
}

/* The filter's widenings (sq_jail_run_opts): a run that keeps the POSIX timers makes
 * one; any other gets EPERM and carries on, in both modes, from a process
 * it forked too (warm: through the zygote's one listener, answered for
 * the run at hand). A run that keeps none and calls them past the
 * supervisor's budget is killed, the call named. */
#define TIMER_PROG                                                                                                \
  "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"                                              \
  "def make():\n    t = ctypes.c_int(-1)\n    r = libc.syscall(222, 1, None, ctypes.byref(t))\n"                \
  "    e = ctypes.get_errno()\n    return '%d %d %s' % (r, e, libc.syscall(226, t.value) if r == 0 else '-')\n" \
  "print(make(), flush=True)\nif os.fork() == 0:\n    print(make(), flush=True)\n    os._exit(0)\nos.wait()\n"
static void test_widenings(void) {
  const sq_jail_run_opts keeps = {.widenings = SQ_JAIL_WIDEN_TIMERS};
  /* sq_jail_run_task runs in the runner's mode: spawn on one of its own */
  sq_jail_config cfg = {.python_path = "/usr/bin/python3", .scratch_root = scratch_root, .mode = SQ_JAIL_MODE_SPAWN};
  sq_jail *spawn = NULL;
  CHECK_EQ(sq_jail_new(&cfg, &spawn), 0);
  if (!spawn) return;
  for (int m = 0; m < 2; m++) {
    sq_jail_mode mode = m ? SQ_JAIL_MODE_WARM : SQ_JAIL_MODE_SPAWN;
    sq_jail_outcome o;
    CHECK_EQ(run_in(mode, TIMER_PROG, NULL, &o), 0);
    CHECK_STR(sq_jail_end_name(o.end), "exited_ok");
    CHECK_STR(o.stdout_buf, "-1 1 -\n-1 1 -\n");
    CHECK_STR(o.blocked_syscall, "");
    sq_jail_outcome_clear(&o);
    CHECK_EQ(sq_jail_run_task(m ? jail : spawn, TIMER_PROG, strlen(TIMER_PROG), NULL, 0, NULL, 0, &base, &keeps,
                              "test", &o), 0);
    CHECK_EQ((int)o.mode, (int)mode);
    CHECK_STR(sq_jail_end_name(o.end), "exited_ok");
    CHECK_STR(o.stdout_buf, "0 0 0\n0 0 0\n");
    sq_jail_outcome_clear(&o);
    /* the next run on the same zygote keeps nothing again */
    CHECK_EQ(run_in(mode, TIMER_PROG, NULL, &o), 0);
    CHECK_STR(o.stdout_buf, "-1 1 -\n-1 1 -\n");
    sq_jail_outcome_clear(&o);
  }
  sq_jail_free(spawn);
  expect(SQ_JAIL_MODE_WARM,
         "import ctypes\nlibc = ctypes.CDLL(None)\nt = ctypes.c_int()\n"
         "for _ in range(5000):\n    libc.syscall(222, 1, None, ctypes.byref(t))\nprint('survived')\n",
         NULL, SQ_JAIL_POLICY, "timer_create");
}

/* A task's last act closes its stdout and stderr, so the run can end from
 * the kernel's view of its exit before its memory is torn down. A program
 * that closes them itself and carries on gets the verdict of what it did. */
#define CLOSED "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(0.2)\n"
static void test_early_end(void) {
  sq_jail_limits cpu = base;
  cpu.cpu_ms = 1000;
  sq_jail_outcome o;
  CHECK_EQ(run_in(SQ_JAIL_MODE_WARM, CLOSED "os._exit(3)\n", NULL, &o), 0);
  CHECK_STR(sq_jail_end_name(o.end), sq_jail_end_name(SQ_JAIL_EXITED_ERROR));
  CHECK_EQ(o.exit_code, 3);
  CHECK(o.wall_ms >= 150);
  sq_jail_outcome_clear(&o);
  expect(SQ_JAIL_MODE_WARM, CLOSED "os.kill(os.getpid(), 9)\n", NULL, SQ_JAIL_SIGNALED, NULL);
  expect(SQ_JAIL_MODE_WARM, CLOSED "while True:\n    pass\n", &cpu, SQ_JAIL_CPU_LIMIT, NULL);
  /* The usual path: statuses, output and CPU time as before, task after task. */
  for (int i = 0; i < 4; i++) {
    char prog[120];
    snprintf(prog, sizeof prog, "import sys, time\nprint(%d)\nt = time.process_time()\n"
             "while time.process_time() - t < 0.05 * %d: pass\nsys.exit(%d)\n", i, i, i * 7);
    CHECK_EQ(run_in(SQ_JAIL_MODE_WARM, prog, NULL, &o), 0);
    CHECK_EQ(o.exit_code, i * 7);
    char want[16];
    snprintf(want, sizeof want, "%d\n", i);
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", want);
    CHECK(o.cpu_ms >= 50 * i - 10);
    sq_jail_outcome_clear(&o);
  }
}

/* Several processes under the AS limit each, together over the cgroup's:
 * the OOM killer fires and the verdict is memory_limit. Its own ctest test
 * (test_jail_warm_memory_cgroup, `test_jail_warm memory_cgroup`): skipped
 * (77) where the jail has no memory cgroup. */
static void test_cgroup_oom(void) {
  if (!(sq_jail_layers(jail) & SQ_JAIL_LAYER_CGROUP_MEMORY)) {
    sq_check_skip("cgroup_oom", "the jail has no memory cgroup on this host (cgroup v2 with the memory "
                                "controller, or v1's memory hierarchy, writable by root)");
    return;
  }
  static const char prog[] =
      "import os, time\npids = []\nfor i in range(4):\n    pid = os.fork()\n    if pid == 0:\n"
      "        b = bytearray(200 * 1024 * 1024)\n        for k in range(0, len(b), 4096): b[k] = 1\n"
      "        time.sleep(1)\n        os._exit(0)\n    pids.append(pid)\n"
      "for p in pids:\n    os.waitpid(p, 0)\nprint('parent done')\n";
  /* The wall clock is a deadline with room: on a busy host, four
   * processes touching 800 MiB past the limit may reclaim for seconds
   * before the OOM killer picks one, and that is not the verdict asked. */
  sq_jail_limits roomy = base;
  roomy.wall_ms = 120000;
  roomy.cpu_ms = 120000;
  for (int m = 0; m < 2; m++) {
    sq_jail_outcome o;
    CHECK_EQ(run_in(m ? SQ_JAIL_MODE_WARM : SQ_JAIL_MODE_SPAWN, prog, &roomy, &o), 0);
    CHECK(o.oom_killed);
    CHECK_STR(sq_jail_end_name(o.end), "memory_limit");
    sq_jail_outcome_clear(&o);
  }
}

/* One task changes everything it can reach; the next sees none of it. */
static void test_no_leak(void) {
  static const char dirty[] =
      "import sys, builtins, json, os\n"
      "sys.modules['json'] = 'poisoned'\nbuiltins.len = lambda x: 42\nbuiltins.planted = 1\n"
      "globals()['LEFT'] = 1\nsys.path.insert(0, '/scratch')\n"
      "open('left.txt', 'w').write('x')\nos.mkdir('d')\nos.symlink('/etc/passwd', 'd/link')\n"
      "os.chmod('d', 0)\nos.environ['LEAK'] = '1'\nprint('dirty')\n";
  static const char clean[] =
      "import sys, builtins, os\n"
      "print(type(sys.modules['json']).__name__, len([1]), hasattr(builtins, 'planted'),\n"
      "      'LEFT' in globals(), sys.path[0] == '/scratch', sorted(os.listdir('.')), 'LEAK' in os.environ)\n";
  sq_jail_outcome o;
  for (int round = 0; round < 2; round++) {
    warm_prints(dirty, "dirty\n");
    warm_prints(clean, "module 1 False False False ['main.py'] False\n");
  }
  /* The zygote rehearses a task before its first child (zygote.py): none
   * of it shows, in either kind, and a task's sys.argv is its own. */
  for (int round = 0; round < 2; round++) {
    warm_prints("import sys\nprint(__name__, sys.argv, 'x' in globals(), sys.modules['__main__'].__dict__ is globals())\n"
                "sys.argv.append('left')\nx = 1\n",
                "__main__ ['/scratch/main.py'] False True\n");
    warm_prints("print(__name__, __file__, 'x' in globals())\nx = 1\n", "__main__ /scratch/main.py False\n");
  }
  /* The scratch is reused without a mount only when the kernel's counts
   * show it as fresh once main.py is gone (zygote_loop.c,
   * scratch_as_fresh): each change below alone must still give the next
   * task a fresh one. Several rounds, so that a change and the check after
   * it meet on the same zygote of the two. */
  static const char *const alone[] = {
      "import os\nos.chmod('.', 0o755)\n",                 /* the root's mode */
      "import os\nos.link('main.py', 'hard')\n",           /* main.py kept under another name */
      "import os\nos.rename('main.py', 'moved')\n",        /* main.py gone, its inode kept */
      "import os\nopen('empty', 'w')\n",                    /* an inode, no block */
      "import os\nos.mkdir('d')\nos.rmdir('d')\nopen('main.py', 'a').write('#' * 9000)\n", /* clean */
  };
  for (int round = 0; round < 3; round++)
    for (size_t i = 0; i < sizeof alone / sizeof *alone; i++) {
      warm_prints(alone[i], "");
      warm_prints("import os\nprint(oct(os.stat('.').st_mode), sorted(os.listdir('.')))\n",
                  "0o40700 ['main.py']\n");
    }
  /* And a clean scratch is reused: main.py's inode number, which a fresh
   * tmpfs starts again, moves on from one task to the next on a zygote. */
  unsigned long ino_min = ~0UL, ino_max = 0;
  for (int i = 0; i < 8; i++) {
    CHECK_EQ(run_in(SQ_JAIL_MODE_WARM, "import os\nprint(os.stat('main.py').st_ino)\n", NULL, &o), 0);
    unsigned long ino = o.stdout_buf ? strtoul(o.stdout_buf, NULL, 10) : 0;
    if (ino < ino_min) ino_min = ino;
    if (ino > ino_max) ino_max = ino;
    sq_jail_outcome_clear(&o);
  }
  CHECK(ino_max > ino_min);
  /* A daemon that outlives its task is killed with it: setsid is refused,
   * and after each task the zygote kills every process left in its
   * namespace. */
  CHECK_EQ(run_in(SQ_JAIL_MODE_WARM,
                  "import os, time\nif os.fork() == 0:\n    time.sleep(0.5)\n    open('late.txt','w').write('x')\n"
                  "    time.sleep(30)\nprint('bye')\n",
                  NULL, &o),
           0);
  sq_jail_outcome_clear(&o);
  usleep(800000);
  warm_prints("import os\nprint(sorted(os.listdir('.')))\n", "['main.py']\n");
  /* What a task orphans is the zygote's (its subreaper) and reaped as it
   * goes: 150 orphans, more than the uid's 64 processes, as zombies. */
  warm_prints("import os, time\nn = 0\nfor i in range(150):\n    c = os.fork()\n    if c == 0:\n        try:\n"
              "            g = os.fork()\n        except OSError:\n            os._exit(1)\n"
              "        if g == 0:\n            time.sleep(0.002)\n        os._exit(0)\n"
              "    n += os.waitpid(c, 0)[1] == 0\nprint(n)\n",
              "150\n");
}

static int python_below(int pid, int sig);

/* A task cannot kill its zygote (test_zygote_unreachable); one killed from
 * outside is replaced. A task sent to a zygote as it dies (its child had
 * said it was ready) ends signaled, as any task whose zygote dies under it;
 * the next ones run on new zygotes. */
static void test_zygote_replaced(void) {
  sq_jail_outcome o;
  CHECK_EQ(run_in(SQ_JAIL_MODE_WARM,
                  "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept PermissionError:\n"
                  "    print('refused')\n",
                  NULL, &o),
           0);
  CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "refused\n");
  sq_jail_outcome_clear(&o);
  CHECK(python_below((int)getpid(), SIGKILL) > 0);
  for (int i = 0; i < 8; i++) { /* twice the pool's zygotes */
    CHECK_EQ(run_in(SQ_JAIL_MODE_WARM, "print('fresh')\n", NULL, &o), 0);
    if (i >= 4) CHECK_STR(o.stdout_buf, "fresh\n");
    else if (o.end != SQ_JAIL_EXITED_OK) CHECK_STR(sq_jail_end_name(o.end), "signaled");
    sq_jail_outcome_clear(&o);
  }
}

/* The zygote's loop forks the interpreter from C (zygote_loop.c): each
 * child must still run the interpreter's fork hooks (random reseeded, so no
 * two tasks share a sequence), and the loop's shared object in the root is
 * the task's to read, not to change. */
static void test_fork_state(void) {
  static const char prog[] =
      "import random, os\n"
      "so = '/.sandq-zygote.so'\n"
      "st = os.stat(so)\n"
      "try:\n    open(so, 'r+b'); w = 'writable'\nexcept OSError as e:\n    w = type(e).__name__\n"
      "print(random.getrandbits(64), st.st_uid, oct(st.st_mode & 0o777), w, 'LD_BIND_NOW' in os.environ)\n";
  char seen[3][96];
  for (int i = 0; i < 3; i++) {
    sq_jail_outcome o;
    CHECK_EQ(run_in(SQ_JAIL_MODE_WARM, prog, NULL, &o), 0);
    CHECK_STR(sq_jail_end_name(o.end), "exited_ok");
    unsigned long long bits = 0;
    char mode[16] = "", w[32] = "", env[8] = "";
    int uid = -1;
    CHECK_EQ(o.stdout_buf ? sscanf(o.stdout_buf, "%llu %d %15s %31s %7s", &bits, &uid, mode, w, env) : 0, 5);
    CHECK_STR(env, "False"); /* the zygote's LD_BIND_NOW is not the task's */
    CHECK_EQ(uid, 0);
    CHECK_STR(mode, "0o555");
    CHECK(strcmp(w, "writable") != 0);
    snprintf(seen[i], sizeof seen[i], "%llu", bits);
    for (int k = 0; k < i; k++) CHECK(strcmp(seen[k], seen[i]) != 0);
    sq_jail_outcome_clear(&o);
  }
}

/* Two kinds of zygote: a program whose text never says "import" runs on a
 * lean one (none of the common modules loaded), any other on a full one;
 * a lean one keeps nothing from one task to the next either. */
static void test_kinds(void) {
  static const char lean[] = "imp = __builtins__.__dict__['__im' + 'port__']\nprint('re' in imp('sys').modules)\n";
  static const char full[] = "import sys\nprint('re' in sys.modules)\n";
  static const char dirty[] =
      "__builtins__.planted = 1\nglobals()['LEFT'] = 1\nopen('left.txt', 'w').write('x')\nprint('dirty')\n";
  static const char clean[] =
      "try:\n    open('left.txt'); f = 'left'\nexcept FileNotFoundError:\n    f = 'none'\n"
      "print(hasattr(__builtins__, 'planted'), 'LEFT' in globals(), f)\n";
  sq_jail_outcome o;
  for (int round = 0; round < 2; round++) {
    warm_prints(lean, "False\n");
    warm_prints(full, "True\n");
    warm_prints(dirty, "dirty\n");
    warm_prints(clean, "False False none\n");
  }
  /* The task's own text decides, not the program around it. */
  CHECK_EQ(sq_jail_run_task(jail, full, strlen(full), "print(1)\n", 9, NULL, 0, &base, NULL, "test", &o), 0);
  CHECK_STR(o.stdout_buf, "False\n");
  sq_jail_outcome_clear(&o);
}

/* A pool starts its lean zygotes only; the full ones start when the first
 * program that imports asks for one, and that program runs on a lean one
 * meanwhile. Runs first, on the fresh pool: nothing has imported yet. */
static void test_full_on_demand(void) {
  static const char full[] = "import sys\nprint('re' in sys.modules)\n";
  usleep(1000 * 1000); /* full zygotes started with the pool would be up by now */
  warm_prints(full, "False\n"); /* no full zygote was up: a lean one ran it */
  bool up = false;
  for (int i = 0; i < 200 && !up; i++) { /* then they come up: 10 s at most */
    sq_jail_outcome o;
    CHECK_EQ(run_in(SQ_JAIL_MODE_WARM, full, NULL, &o), 0);
    up = o.stdout_buf && strcmp(o.stdout_buf, "True\n") == 0;
    sq_jail_outcome_clear(&o);
    if (!up) usleep(50 * 1000);
  }
  CHECK(up);
}

typedef struct {
  sq_jail_mode mode;
  int id, ok;
} thread_arg;

static void *worker(void *p) {
  thread_arg *a = p;
  for (int i = 0; i < 5; i++) {
    char prog[128];
    snprintf(prog, sizeof prog, "import os\nprint(%d * 1000 + %d, os.getuid())\n", a->id, i);
    sq_jail_outcome o;
    if (sq_jail_run_mode(jail, a->mode, prog, strlen(prog), &base, "thread", &o) == 0 && o.stdout_buf) {
      int got = -1;
      sscanf(o.stdout_buf, "%d", &got);
      if (got == a->id * 1000 + i && o.end == SQ_JAIL_EXITED_OK) a->ok++;
    }
    sq_jail_outcome_clear(&o);
  }
  return NULL;
}

typedef struct {
  int ok;
  char out[16];
} kind_arg;

static void *lean_sleeper(void *p) {
  static const char prog[] =
      "imp = __builtins__.__dict__['__im' + 'port__']\nimp('time').sleep(2)\nprint('re' in imp('sys').modules)\n";
  kind_arg *a = p;
  sq_jail_outcome o;
  if (sq_jail_run_mode(jail, SQ_JAIL_MODE_WARM, prog, strlen(prog), &base, "kinds", &o) == 0 &&
      o.end == SQ_JAIL_EXITED_OK && o.stdout_buf) {
    a->ok = 1;
    snprintf(a->out, sizeof a->out, "%s", o.stdout_buf);
  }
  sq_jail_outcome_clear(&o);
  return NULL;
}

/* More programs that import nothing than lean zygotes (the pool has 2): all
 * run at once, the third on a full zygote, none waiting for a lean one. */
static void test_kind_fallback(void) {
  enum { N = 3 };
  pthread_t t[N];
  kind_arg a[N] = {{0}};
  for (int i = 0; i < N; i++) CHECK_EQ(pthread_create(&t[i], NULL, lean_sleeper, &a[i]), 0);
  int full = 0;
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    CHECK_EQ(a[i].ok, 1);
    full += strcmp(a[i].out, "True\n") == 0;
  }
  CHECK(full >= 1);
}

/* sq_jail_run from several threads at once, both modes mixed. */
static void test_threads(void) {
  enum { N = 6 };
  pthread_t t[N];
  thread_arg a[N];
  for (int i = 0; i < N; i++) {
    a[i] = (thread_arg){.mode = i % 2 ? SQ_JAIL_MODE_WARM : SQ_JAIL_MODE_SPAWN, .id = i + 1};
    CHECK_EQ(pthread_create(&t[i], NULL, worker, &a[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    CHECK_EQ(a[i].ok, 5);
  }
}

/* Frees the jail and checks it left its scratch root empty; the exit code. */

/* A pool of its own, freed while its full zygotes never started (nothing
 * imported): freeing closes nothing it did not open (it once closed fd 0,
 * with the never-made cgroups of those zygotes). */
/* A warm runner of its own: pool_size lean zygotes of python (and as many
 * full ones on demand); NULL (a failed check) when it cannot be made. */
static sq_jail *own_jail(const char *python, int pool_size, bool one_run) {
  sq_jail_config cfg = {.python_path = python, .scratch_root = scratch_root, .mode = SQ_JAIL_MODE_WARM,
                        .pool_size = pool_size, .one_run = one_run};
  sq_jail *j = NULL;
  CHECK_EQ(sq_jail_new(&cfg, &j), 0);
  return j;
}

/* A task cannot hand the next one a value through /scratch's timestamps
 * (64 bits each, set with utime): on one zygote, the next task finds the
 * times of a fresh mount, whatever the last one set. */
static void test_scratch_times(void) {
  sq_jail *j = own_jail("/usr/bin/python3", 1, true); /* one zygote: every task on it */
  if (!j) return;
  static const char set[] = "import os\nos.utime('/scratch', ns=(123456789012345678, 987654321012345678))\n"
                            "print(os.stat('/scratch').st_atime_ns)\n";
  static const char get[] = "import os\nst = os.stat('/scratch')\nprint(st.st_atime_ns, st.st_mtime_ns)\n";
  for (int round = 0; round < 3; round++) {
    sq_jail_outcome o;
    CHECK_EQ(sq_jail_run(j, set, strlen(set), &base, "times set", &o), 0);
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "123456789012345678\n"); /* the task may set them */
    sq_jail_outcome_clear(&o);
    CHECK_EQ(sq_jail_run(j, get, strlen(get), &base, "times read", &o), 0);
    long long atime_ns = -1, mtime_ns = -1;
    CHECK(o.stdout_buf && sscanf(o.stdout_buf, "%lld %lld", &atime_ns, &mtime_ns) == 2);
    if (atime_ns == 123456789012345678LL || mtime_ns == 987654321012345678LL)
      fprintf(stderr, "scratch times left by the last task: %s", o.stdout_buf);
    CHECK(atime_ns != 123456789012345678LL);
    CHECK(mtime_ns != 987654321012345678LL);
    sq_jail_outcome_clear(&o);
  }
  sq_jail_free(j);
}

/* A task's sys.executable and the paths its interpreter found are the
 * same in both modes: the zygote's argv[0] is python3 too (zygote_proto.h;
 * a name not on PATH made the prefix "/" and tracebacks name
 * /lib/python3.11). */
static void test_executable(void) {
  static const char *const progs[] = { /* a full zygote's, and a lean one's (the text never says import) */
      "import sys\nprint(sys.executable, sys._base_executable, sys.prefix, sys.path[1:])\n",
      "sys = __builtins__.__dict__['__im' + 'port__']('sys')\n"
      "print(sys.executable, sys._base_executable, sys.prefix, sys.path[1:])\n"};
  for (size_t i = 0; i < 2; i++) {
    sq_jail_outcome o[2];
    CHECK_EQ(run_in(SQ_JAIL_MODE_SPAWN, progs[i], NULL, &o[0]), 0);
    CHECK_EQ(run_in(SQ_JAIL_MODE_WARM, progs[i], NULL, &o[1]), 0);
    CHECK(o[0].stdout_buf && strncmp(o[0].stdout_buf, "/", 1) == 0); /* not empty */
    CHECK_STR(o[1].stdout_buf ? o[1].stdout_buf : "", o[0].stdout_buf ? o[0].stdout_buf : "-");
    sq_jail_outcome_clear(&o[0]);
    sq_jail_outcome_clear(&o[1]);
  }
}

/* The next task's memory figures start once the last task's memory is
 * uncharged: on one zygote, an honest task right after one that filled its
 * scratch with 60 MiB (tmpfs pages, charged to the slot's cgroup until the
 * scratch is replaced) reports its own small peak, not the scratch's. */
static void test_peak_after_scratch(void) {
  sq_jail *j = own_jail("/usr/bin/python3", 1, true); /* one zygote: every task on it */
  if (!j) return;
  static const char fill[] = "for i in range(4):\n    open('f%d' % i, 'wb').write(b'x' * (15 << 20))\nprint('filled')\n";
  static const char small[] = "print(6 * 7)\n";
  for (int round = 0; round < 3; round++) {
    sq_jail_outcome o;
    CHECK_EQ(sq_jail_run(j, fill, strlen(fill), &base, "fill", &o), 0);
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "filled\n");
    sq_jail_outcome_clear(&o);
    CHECK_EQ(sq_jail_run(j, small, strlen(small), &base, "small", &o), 0);
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "42\n");
    if (o.memory_kib > (32 << 10)) fprintf(stderr, "peak after a full scratch: %lld KiB\n", (long long)o.memory_kib);
    CHECK(o.memory_kib > 0 && o.memory_kib <= (32 << 10));
    sq_jail_outcome_clear(&o);
  }
  sq_jail_free(j);
}

/* A task runs under its own memory limit or on a fresh slot, never under
 * the last task's: when the slot's cgroup refuses the new, lower limit (the
 * test hook fails the write, as EBUSY from memory still charged would), the
 * slot is replaced. Four processes of 80 MiB each are over a 128 MiB
 * task's cgroup limit (its memory plus the slack), not over the 1 GiB of
 * the task before. */
static void test_limit_write_fails(void) {
  sq_jail *j = own_jail("/usr/bin/python3", 1, true);
  if (!j) return;
  static const char prog[] =
      "import os, time\npids = []\nfor i in range(4):\n    pid = os.fork()\n    if pid == 0:\n"
      "        b = bytearray(80 * 1024 * 1024)\n        for k in range(0, len(b), 4096): b[k] = 1\n"
      "        time.sleep(1)\n        os._exit(0)\n    pids.append(pid)\n"
      "for p in pids:\n    os.waitpid(p, 0)\nprint('parent done')\n";
  sq_jail_limits big = base, small = base;
  big.memory_mib = 1024;
  small.memory_mib = 128;
  sq_jail_outcome o;
  CHECK_EQ(sq_jail_run(j, "print(1)\n", 9, &big, "big limit", &o), 0);
  CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "1\n");
  sq_jail_outcome_clear(&o);
  sq__jail_cgroup_reset_failures = 1;
  CHECK_EQ(sq_jail_run(j, prog, strlen(prog), &small, "small limit", &o), 0);
  sq__jail_cgroup_reset_failures = 0;
  if (o.end != SQ_JAIL_MEMORY_LIMIT)
    fprintf(stderr, "after a refused limit: end %s, stdout %s\n", sq_jail_end_name(o.end), o.stdout_buf ? o.stdout_buf : "");
  CHECK(o.oom_killed);
  CHECK_STR(sq_jail_end_name(o.end), "memory_limit");
  sq_jail_outcome_clear(&o);
  sq_jail_free(j);
}

/* The pid of the zygote below this process (the first python3 there),
 * once its child for the next task is forked; 0 if none. */
static int first_python_below(int pid);

/* A task cannot signal its zygote (the zygote's real and saved uid are
 * not the task's), so nothing it leaves behind can stop it: orphans that
 * close their outputs and keep sending it SIGSTOP, with 51 zombies of
 * their own, are killed once the task is over, the zygote reports the
 * task's end in time (it is kept, not replaced after the report's 5 s
 * deadline), and the next task finds no process of the last one. Run
 * before any other pool exists: the one python3 zygote below us is this
 * runner's. */
static void test_zygote_unreachable(void) {
  sq_jail *j = own_jail("/usr/bin/python3", 1, true);
  if (!j) return;
  static const char probe[] =
      "import os, signal\nfor s in (0, signal.SIGSTOP, signal.SIGKILL):\n    try:\n        os.kill(os.getppid(), s)\n"
      "        print('sent', end=' ')\n    except PermissionError:\n        print('refused', end=' ')\nprint()\n";
  static const char orphans[] =
      "import os, signal, time\nz = os.getppid()\nfor i in range(3):\n    if os.fork() == 0:\n"
      "        for k in range(17):\n            if os.fork() == 0:\n                os._exit(0)\n"
      "        os.close(1)\n        os.close(2)\n        while True:\n            try:\n"
      "                os.kill(z, signal.SIGSTOP)\n            except OSError:\n                pass\n"
      "print('left')\n";
  static const char census[] =
      "import os\nme = {1, os.getpid(), os.getppid()}\nn = 0\nfor p in range(1, 4096):\n    if p in me:\n"
      "        continue\n    try:\n        os.kill(p, 0)\n        n += 1\n    except PermissionError:\n        n += 1\n"
      "    except ProcessLookupError:\n        pass\nprint(n)\n";
  sq_jail_outcome o;
  CHECK_EQ(sq_jail_run(j, probe, strlen(probe), &base, "probe", &o), 0);
  CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "refused refused refused \n");
  sq_jail_outcome_clear(&o);
  for (int round = 0; round < 2; round++) {
    CHECK_EQ(sq_jail_run(j, census, strlen(census), &base, "census", &o), 0);
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "0\n");
    sq_jail_outcome_clear(&o);
    int zygote = first_python_below((int)getpid());
    CHECK(zygote > 0);
    CHECK_EQ(sq_jail_run(j, orphans, strlen(orphans), &base, "orphans", &o), 0);
    sq_jail_outcome_clear(&o);
    CHECK_EQ(sq_jail_run(j, census, strlen(census), &base, "census", &o), 0);
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "0\n");
    sq_jail_outcome_clear(&o);
    CHECK_EQ(first_python_below((int)getpid()), zygote); /* kept: it reported in time */
  }
  sq_jail_free(j);
}

static struct stat stdin_was; /* fd 0 before any jail: freeing one must leave it open */

static void test_free_unstarted(void) {
  sq_jail *j = own_jail("/usr/bin/python3", 2, false);
  if (!j) return;
  sq_jail_outcome o;
  CHECK_EQ(sq_jail_run(j, "print(6 * 7)\n", 12, &base, "unstarted", &o), 0);
  CHECK_STR(o.stdout_buf, "42\n");
  sq_jail_outcome_clear(&o);
  sq_jail_free(j);
  struct stat now;
  CHECK(fstat(0, &now) == 0 && now.st_dev == stdin_was.st_dev && now.st_ino == stdin_was.st_ino);
}

/* How many python3 processes run below pid (zygotes and the children they
 * forked ahead), through /proc/PID/task/TID/children; each is sent sig
 * (0: none). */
static int python_below(int pid, int sig) {
  char path[96], comm[32];
  snprintf(path, sizeof path, "/proc/%d/comm", pid);
  FILE *f = fopen(path, "r");
  int n = 0;
  if (f) {
    if (fgets(comm, sizeof comm, f) && strcmp(comm, "python3\n") == 0 && (!sig || kill(pid, sig) == 0)) n++;
    fclose(f);
  }
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char kids[320];
    snprintf(kids, sizeof kids, "/proc/%d/task/%.255s/children", pid, e->d_name);
    FILE *k = fopen(kids, "r");
    for (int kid; k && fscanf(k, "%d", &kid) == 1;) n += python_below(kid, sig);
    if (k) fclose(k);
  }
  if (d) closedir(d);
  return n;
}

/* The first python3 process below pid (a zygote, or the child it forked
 * ahead: the same mappings), or 0. */
static int first_python_below(int pid) {
  char path[96], comm[32];
  snprintf(path, sizeof path, "/proc/%d/comm", pid);
  FILE *f = fopen(path, "r");
  bool py = f && fgets(comm, sizeof comm, f) && strcmp(comm, "python3\n") == 0;
  if (f) fclose(f);
  if (py) return pid;
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR *d = opendir(path);
  int found = 0;
  for (struct dirent *e; !found && d && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char kids[320];
    snprintf(kids, sizeof kids, "/proc/%d/task/%.255s/children", pid, e->d_name);
    FILE *k = fopen(kids, "r");
    for (int kid; !found && k && fscanf(k, "%d", &kid) == 1;) found = first_python_below(kid);
    if (k) fclose(k);
  }
  if (d) closedir(d);
  return found;
}

/* How many mappings of pid are of a file whose path ends with name; -1
 * when the maps cannot be read. */
static int mappings_of(int pid, const char *name) {
  char path[64], line[512];
  snprintf(path, sizeof path, "/proc/%d/maps", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = 0;
  size_t nl = strlen(name);
  while (fgets(line, sizeof line, f)) {
    size_t l = strcspn(line, "\n");
    line[l] = '\0';
    if (l >= nl && strcmp(line + l - nl, name) == 0 && strchr(line, '/')) n++;
  }
  fclose(f);
  return n;
}

/* The zygote maps each object it loaded in two parts, code and data
 * (zygote_loop.c, merge_mappings): its headers and constants merged into
 * the code, its relocated read-only data into the data. So does the child
 * it forked ahead (the first python3 found may be either); this process,
 * loaded the usual way, maps libc in more. */
static void test_mappings_merged(void) {
  warm_prints("print(6 * 7)\n", "42\n"); /* a zygote up */
  CHECK(mappings_of((int)getpid(), "/libc.so.6") > 2); /* the count sees a split where there is one */
  int py = first_python_below((int)getpid());
  CHECK(py > 0);
  if (py > 0) {
    CHECK_EQ(mappings_of(py, "/libc.so.6"), 2);
    CHECK_EQ(mappings_of(py, "/python3.11") + mappings_of(py, "/python3"), 2);
    CHECK_EQ(mappings_of(py, "/ld-linux-x86-64.so.2"), 2);
    CHECK_EQ(mappings_of(py, "/.sandq-zygote.so"), 2);
  }
  /* and tasks still run: code, constants, data, a traceback */
  warm_prints("x = [i * i for i in range(1000)]\nprint(sum(x), 'ok'.upper())\n", "332833500 OK\n");
  sq_jail_outcome o;
  CHECK_EQ(run_in(SQ_JAIL_MODE_WARM, "def f():\n    raise ValueError('v')\nf()\n", NULL, &o), 0);
  CHECK(o.stderr_buf && strstr(o.stderr_buf, "ValueError: v") && strstr(o.stderr_buf, "line 2, in f"));
  sq_jail_outcome_clear(&o);
}

/* The zygote's command line is short and named (zygote_proto.h): its
 * Python is a file in the jail's root, not the command line, so ps shows
 * `python3 -I -S /.sandq-zygote.py slot=N KIND`, not kilobytes of source.
 * So does the child it forked ahead (the first python3 found may be
 * either). */
static void test_cmdline(void) {
  warm_prints("print(6 * 7)\n", "42\n"); /* a zygote up */
  int py = first_python_below((int)getpid());
  CHECK(py > 0);
  if (py <= 0) return;
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/cmdline", py);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  CHECK(fd >= 0);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  CHECK(n > 0);
  if (n <= 0) return;
  buf[n] = '\0';
  if (n >= 100) fprintf(stderr, "zygote's cmdline: %zd bytes: %.200s\n", n, buf);
  CHECK(n < 100);
  CHECK_STR(buf, "python3"); /* argv[0], as in spawn mode (test_executable) */
  bool named = false, slot = false;
  for (char *a = buf; a < buf + n; a += strlen(a) + 1) {
    if (strcmp(a, "/.sandq-zygote.py") == 0) named = true;
    if (strncmp(a, "slot=", 5) == 0 && a[5] >= '0' && a[5] <= '9') slot = true;
  }
  CHECK(named);
  CHECK(slot);
}

/* A supervisor that looks late, as on a busy machine, judges by when the
 * payload was reaped (jail_supervise.c, sq__jail_judge_by_reap; the warm
 * zygote's report, the spawn run's init's): here the process that runs the
 * supervisor is stopped from just after each task starts until past its
 * 1.5 s deadline (the task, in namespaces of its own, goes on), so it finds
 * the task ended when it looks. In both modes, one that ended at 0.8 s
 * passes, with its own wall time; one that ran to 1.8 s is a timeout,
 * though it ended by itself. Run in a process of its own, forked before
 * any jail's threads exist. */
static void test_late_supervisor(void) {
  static const char *const progs[] = {"import time\ntime.sleep(0.8)\nprint('done')\n",
                                      "import time\ntime.sleep(1.8)\nprint('done')\n"};
  static const sq_jail_mode modes[] = {SQ_JAIL_MODE_WARM, SQ_JAIL_MODE_SPAWN};
  int p[2];
  CHECK(pipe(p) == 0);
  pid_t h = fork();
  if (h == 0) {
    close(p[0]);
    sq_jail *j = own_jail("/usr/bin/python3", 1, false);
    sq_jail_outcome o;
    if (!j || sq_jail_run(j, "import time\n", 12, &base, "warm-up", &o) != 0) _exit(2); /* the full zygote up */
    sq_jail_outcome_clear(&o);
    sq_jail_limits lim = base;
    lim.wall_ms = 1500;
    for (int i = 0; i < 4; i++) {
      if (write(p[1], "g", 1) != 1) _exit(2);
      int64_t t0 = sq_now_mono_ms();
      int rc = sq_jail_run_mode(j, modes[i / 2], progs[i % 2], strlen(progs[i % 2]), &lim, "late", &o);
      int64_t took = sq_now_mono_ms() - t0;
      char out[160];
      snprintf(out, sizeof out, "%d %s %lld %lld %.8s|", rc, sq_jail_end_name(o.end), (long long)o.wall_ms,
               (long long)took, o.stdout_buf && o.stdout_buf[0] ? o.stdout_buf : "-");
      sq_jail_outcome_clear(&o);
      if (write(p[1], out, strlen(out)) < 0) _exit(2);
    }
    sq_jail_free(j);
    _exit(0);
  }
  close(p[1]);
  for (int i = 0; i < 4; i++) {
    char g;
    CHECK(read(p[0], &g, 1) == 1);
    struct timespec t = {0, 250 * 1000000L};
    nanosleep(&t, NULL);
    kill(h, SIGSTOP);
    t = (struct timespec){2, 50 * 1000000L};
    nanosleep(&t, NULL); /* past the deadline, and past the longer task's end */
    kill(h, SIGCONT);
    char res[160] = "";
    for (size_t n = 0; n < sizeof res - 1 && read(p[0], res + n, 1) == 1 && res[n] != '|'; n++) {
    }
    int rc = -1;
    char end[32] = "", printed[16] = "";
    long long wall = -1, took = -1;
    int got = sscanf(res, "%d %31s %lld %lld %15s", &rc, end, &wall, &took, printed);
    if (got != 5) fprintf(stderr, "late supervisor %d: %s\n", i, res);
    CHECK_EQ(got, 5);
    CHECK_EQ(rc, 0);
    CHECK(took > 2000); /* the supervisor did look only after the deadline */
    CHECK_STR(printed, "done"); /* the task ran to its end either way */
    if (i % 2 == 0) {
      CHECK_STR(end, "exited_ok");
      CHECK(wall >= 800 && wall < 1500); /* until its payload was reaped */
    } else {
      CHECK_STR(end, "timeout");
      CHECK(wall >= 1500);
    }
    if (i % 2 == 0 ? strcmp(end, "exited_ok") != 0 : strcmp(end, "timeout") != 0)
      fprintf(stderr, "late supervisor, %s mode: %s\n", i < 2 ? "warm" : "spawn", res);
  }
  close(p[0]);
  int st = 0;
  waitpid(h, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A runner for one run (a command line's): a program that imports runs on
 * its lean zygote, and no full zygote starts for runs that will not come
 * (freeing it then waits for no start). Before any other pool exists, so
 * every python3 below us is this runner's: the lean zygote and the child
 * it forked ahead, not the full one and its child too. */
static void test_one_run(void) {
  sq_jail *j = own_jail("/usr/bin/python3", 1, true);
  if (!j) return;
  static const char prog[] = "import json\nprint(json.dumps([6 * 7]))\n";
  sq_jail_outcome o;
  CHECK_EQ(sq_jail_run(j, prog, strlen(prog), &base, "one run", &o), 0);
  CHECK_STR(o.stdout_buf, "[42]\n");
  sq_jail_outcome_clear(&o);
  usleep(1000 * 1000); /* a full zygote started on demand would be up, its child forked, by now */
  CHECK_EQ(python_below((int)getpid(), 0), 2);
  sq_jail_free(j);
}

/* The prelude (sq_jail_config.prelude): loaded once per full zygote, as
 * the module sandq_prelude, its rehearse() run in the scratch before the
 * first fork; each task finds both as the zygote left them, whatever the
 * task before did to the module or left in the scratch. A lean zygote
 * (where a run goes while the full ones start) has none: a run that names
 * the prelude must carry its own there. A prelude that fails keeps the
 * full zygotes from starting, never the runs. */
static const char prelude_prog[] = "import os, sys\nm = sys.modules.get('sandq_prelude')\n"
                                   "print(m and m.X, os.listdir('.'))\nif m: m.X = 0\nopen('left', 'w')\n";

/* Runs prelude_prog until a run prints want (a full zygote took it) or
 * the full zygotes had ample time to start; returns the runs it took. */
static int prelude_until(sq_jail *j, const char *want) {
  for (int i = 1; i <= 200; i++) {
    sq_jail_outcome o;
    CHECK_EQ(sq_jail_run(j, prelude_prog, strlen(prelude_prog), &base, "prelude", &o), 0);
    CHECK_STR(sq_jail_end_name(o.end), "exited_ok");
    bool lean = o.stdout_buf && strcmp(o.stdout_buf, "None ['main.py']\n") == 0;
    bool got = o.stdout_buf && strcmp(o.stdout_buf, want) == 0;
    CHECK(lean || got);
    sq_jail_outcome_clear(&o);
    if (got) return i;
    usleep(50 * 1000);
  }
  return 0;
}

static void test_prelude(void) {
  sq_jail_config cfg = {.python_path = "/usr/bin/python3", .scratch_root = scratch_root, .mode = SQ_JAIL_MODE_WARM,
                        .pool_size = 1,
                        .prelude = "X = 40\ndef rehearse(d):\n    global X\n    X += 2\n    open(d + '/rehearsed', 'w')\n"};
  sq_jail *j = NULL;
  CHECK_EQ(sq_jail_new(&cfg, &j), 0);
  if (!j) return;
  CHECK(sq_jail_prelude_in_force(j));
  CHECK(prelude_until(j, "42 ['main.py']\n") > 0); /* the full zygote up */
  for (int i = 0; i < 3; i++) { /* one at a time: the full one each time, as its rehearsal left it */
    sq_jail_outcome o;
    CHECK_EQ(sq_jail_run(j, prelude_prog, strlen(prelude_prog), &base, "prelude", &o), 0);
    CHECK_STR(o.stdout_buf, "42 ['main.py']\n");
    sq_jail_outcome_clear(&o);
  }
  /* A program that does not name it runs on the lean zygote: no prelude. */
  static const char plain[] = "print(1)\n";
  sq_jail_outcome o;
  CHECK_EQ(sq_jail_run(j, plain, strlen(plain), &base, "plain", &o), 0);
  CHECK_STR(o.stdout_buf, "1\n");
  sq_jail_outcome_clear(&o);
  sq_jail_free(j);
  /* A broken prelude: the jail is made (its lean zygotes have none), the
   * full kind does not start, and runs that name the prelude go on
   * without it. */
  cfg.prelude = "raise RuntimeError('a broken prelude')\n";
  j = NULL;
  CHECK_EQ(sq_jail_new(&cfg, &j), 0);
  if (j) {
    for (int i = 0; i < 3; i++) {
      CHECK_EQ(sq_jail_run(j, prelude_prog, strlen(prelude_prog), &base, "broken prelude", &o), 0);
      CHECK_STR(o.stdout_buf, "None ['main.py']\n");
      sq_jail_outcome_clear(&o);
    }
  }
  sq_jail_free(j);
  cfg.prelude = NULL; /* none: nothing loaded, and runs say so */
  j = NULL;
  CHECK_EQ(sq_jail_new(&cfg, &j), 0);
  CHECK(!sq_jail_prelude_in_force(j));
  static const char none[] = "import sys\nprint('sandq_prelude' in sys.modules)\n";
  CHECK_EQ(sq_jail_run(j, none, strlen(none), &base, "no prelude", &o), 0);
  CHECK_STR(o.stdout_buf, "False\n");
  sq_jail_outcome_clear(&o);
  sq_jail_free(j);
}

/* An interpreter that cannot start the full kind (here a wrapper that
 * fails for it, as a python lacking one of its modules would): programs
 * that import run on a lean zygote instead, rather than failing as a host
 * failure, and the full kind is not tried again for every run. The
 * wrapper lives under /usr, which the jail's root binds, and keeps the
 * effective uid the zygote is started with (sh -p; jail_contain.c,
 * warm_identity). */
static void test_full_broken(void) {
  char dir[96], py[128];
  snprintf(dir, sizeof dir, "/usr/local/lib/sandq-test-%d", (int)getpid());
  snprintf(py, sizeof py, "%s/python", dir);
  if (mkdir("/usr/local/lib", 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "SKIP full broken: /usr/local/lib: %s\n", strerror(errno));
    return;
  }
  if (mkdir(dir, 0755) != 0) {
    fprintf(stderr, "SKIP full broken: %s: %s\n", dir, strerror(errno));
    return;
  }
  FILE *f = fopen(py, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("#!/bin/sh -p\nfor a; do k=$a; done\n"
        "[ \"$k\" = full ] && { echo 'test: no full zygote here' >&2; exit 1; }\n"
        "exec /usr/bin/python3 \"$@\"\n", f);
  fclose(f);
  CHECK_EQ(chmod(py, 0755), 0);
  sq_jail *j = own_jail(py, 1, false);
  static const char prog[] = "import json\nprint(json.dumps([6 * 7]))\n";
  for (int i = 0; j && i < 4; i++) { /* the first asks for the full kind, which fails to start */
    sq_jail_outcome o;
    int rc = sq_jail_run(j, prog, strlen(prog), &base, "full broken", &o);
    if (rc != 0) fprintf(stderr, "run %d: %s (%s)\n", i, sq_strerror(rc), o.error);
    CHECK_EQ(rc, 0);
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "[42]\n");
    sq_jail_outcome_clear(&o);
    if (i == 0) usleep(500 * 1000); /* the full kind's start has failed by now */
  }
  sq_jail_free(j);
  CHECK_EQ(unlink(py), 0);
  CHECK_EQ(rmdir(dir), 0);
}

/* A task's memory_kib is its own peak, not the largest of every task that
 * ran before it on the same zygote or slot: a small task after a large one
 * on one zygote (pool_size 1) and, in spawn mode, on one slot. With cgroup
 * v1 the peak is reset per task; with v2 it is reset where the kernel can
 * (6.12 and later), and elsewhere the task's own peak RSS is reported. */
static void test_memory_per_task(void) {
  sq_jail *j = own_jail("/usr/bin/python3", 1, false);
  if (!j) return;
  static const char big[] = "b = b'x' * (160 << 20)\nprint(len(b) >> 20)\n";
  static const char small[] = "print(6 * 7)\n";
  for (int m = 0; m < 2; m++) {
    sq_jail_mode mode = m ? SQ_JAIL_MODE_WARM : SQ_JAIL_MODE_SPAWN;
    sq_jail_outcome o;
    CHECK_EQ(sq_jail_run_mode(j, mode, big, strlen(big), &base, "big", &o), 0);
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "160\n");
    int64_t big_kib = o.memory_kib;
    sq_jail_outcome_clear(&o);
    CHECK_EQ(sq_jail_run_mode(j, mode, small, strlen(small), &base, "small", &o), 0);
    CHECK_STR(o.stdout_buf ? o.stdout_buf : "", "42\n");
    if (big_kib < (160 << 10) || o.memory_kib <= 0 || o.memory_kib > (64 << 10))
      fprintf(stderr, "%s: memory_kib %lld after a task of %lld\n", sq_jail_mode_name(mode),
              (long long)o.memory_kib, (long long)big_kib);
    CHECK(big_kib >= (160 << 10));
    CHECK(o.memory_kib > 0 && o.memory_kib <= (64 << 10));
    sq_jail_outcome_clear(&o);
  }
  sq_jail_free(j);
}

static int finish(void) {
  sq_jail_free(jail);
  char roots[128];
  snprintf(roots, sizeof roots, "%s/root", scratch_root);
  CHECK_EQ(rmdir(roots), 0); /* the roots' mount point stays, empty, for other runners */
  CHECK_EQ(rmdir(scratch_root), 0);
  return sq_check_done("test_jail_warm");
}

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  if (access("/usr/bin/python3", X_OK) != 0) {
    fprintf(stderr, "SKIP: /usr/bin/python3 is not installed\n");
    return 77;
  }
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: the warm pool needs pid and mount namespaces (root)\n");
    return 77;
  }
  if (fstat(0, &stdin_was) != 0) { /* make sure there is an fd 0 to watch */
    int fd = open("/dev/null", O_RDONLY);
    if (fd != 0 || fstat(0, &stdin_was) != 0) return 1;
  }
  snprintf(scratch_root, sizeof scratch_root, "/tmp/sandq-jail-warm.%d", (int)getpid());
  fprintf(stderr, "late supervisor\n");
  test_late_supervisor();
  fprintf(stderr, "one run\n");
  test_one_run();
  fprintf(stderr, "prelude\n");
  test_prelude();
  fprintf(stderr, "full kind broken\n");
  test_full_broken();
  fprintf(stderr, "memory per task\n");
  test_memory_per_task();
  if (sq_check_group(NULL)) {
    fprintf(stderr, "zygote unreachable\n");
    test_zygote_unreachable();
  }
  sq_jail_config cfg = {.python_path = "/usr/bin/python3", .scratch_root = scratch_root,
                        .mode = SQ_JAIL_MODE_WARM, .pool_size = 2};
  int rc = sq_jail_new(&cfg, &jail);
  CHECK_EQ(rc, 0);
  if (rc != 0) return sq_check_done("test_jail_warm");
  if (sq_check_group("memory_cgroup")) {
    test_cgroup_oom();
    if (sq_jail_layers(jail) & SQ_JAIL_LAYER_CGROUP_MEMORY) {
      fprintf(stderr, "peak after a full scratch\n");
      test_peak_after_scratch();
      fprintf(stderr, "limit write fails\n");
      test_limit_write_fails();
    }
    return finish();
  }
  fprintf(stderr, "command line\n");
  test_cmdline();
  fprintf(stderr, "mappings merged\n");
  test_mappings_merged();
  fprintf(stderr, "full zygotes on demand\n");
  test_full_on_demand();
  fprintf(stderr, "verdicts\n");
  test_verdicts();
  fprintf(stderr, "widenings\n");
  test_widenings();
  fprintf(stderr, "thread end\n");
  test_thread_end();
  fprintf(stderr, "input\n");
  test_input();
  fprintf(stderr, "early end\n");
  test_early_end();
  fprintf(stderr, "no leak\n");
  test_no_leak();
  fprintf(stderr, "scratch times\n");
  test_scratch_times();
  fprintf(stderr, "zygote replaced\n");
  test_zygote_replaced();
  fprintf(stderr, "fork state\n");
  test_fork_state();
  fprintf(stderr, "executable\n");
  test_executable();
  fprintf(stderr, "kinds\n");
  test_kinds();
  fprintf(stderr, "kind fallback\n");
  test_kind_fallback();
  fprintf(stderr, "threads\n");
  test_threads();
  fprintf(stderr, "free with zygotes never started\n");
  test_free_unstarted();
  return finish();
}
