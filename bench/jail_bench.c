/* jail_bench.c: per-task cost of the jail against the usual alternatives,
 * interleaved in one run so they share the machine's load (in an order
 * shuffled afresh every round: see way_order), bare
 * `python3 -I -S -c`, bubblewrap with comparable isolation, firejail,
 * sandq spawn mode and sandq warm mode; for a trivial program and a
 * HumanEval-sized one. Not a test: prints a table and the ratios.
 *
 *   build/bin/sandq-jail-bench [ROUNDS] [shuffled|fixed]   (root; see docs/benchmarks.md)
 *
 * "fixed" keeps the old order (bare, bubblewrap, firejail, spawn, warm) to
 * show what a fixed predecessor does to the figures. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <spawn.h>
#include <time.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"

extern char **environ;

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A HumanEval-sized task: problem 0's solution with its tests. */
static const char humaneval[] =
    "from typing import List\n\n"
    "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
    "    for idx, elem in enumerate(numbers):\n"
    "        for idx2, elem2 in enumerate(numbers):\n"
    "            if idx != idx2:\n"
    "                distance = abs(elem - elem2)\n"
    "                if distance < threshold:\n"
    "                    return True\n"
    "    return False\n\n"
    "def check(candidate):\n"
    "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
    "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"
    "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True\n"
    "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.8) == False\n"
    "    assert candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1) == True\n"
    "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) == True\n"
    "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5) == False\n\n"
    "check(has_close_elements)\n";

enum { BARE, BWRAP, FIREJAIL, SPAWN, WARM, N_WAYS };
static const char *const way_names[N_WAYS] = {"bare python3 -I -S", "bubblewrap", "firejail", "sandq spawn",
                                              "sandq warm"};

/* The order of one round: a fresh shuffle (fixed seed, so runs repeat).
 * A fixed order gives every way the same predecessor, and what a
 * predecessor leaves behind lands on it: firejail's namespaces are torn
 * down by kernel workers after it exits, and whatever runs next pays
 * 0.5-1 ms of that (docs/benchmarks.md). Shuffled, each way follows each
 * other way about equally often. */
static void way_order(int order[N_WAYS], bool shuffled) {
  static uint64_t x = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < N_WAYS; i++) order[i] = i;
  if (!shuffled) return;
  for (int i = N_WAYS - 1; i > 0; i--) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
    int k = (int)(x % (uint64_t)(i + 1));
    int t = order[i];
    order[i] = order[k];
    order[k] = t;
  }
}

/* Runs argv to completion, output to /dev/null; returns ms or -1. */
static double run_cmd(char *const argv[]) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  int64_t t0 = now_us();
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) return -1;
  int st;
  waitpid(pid, &st, 0);
  posix_spawn_file_actions_destroy(&fa);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
  return (double)(now_us() - t0) / 1000.0;
}

static double run_jail(sq_jail *j, sq_jail_mode mode, const char *prog) {
  sq_jail_limits lim = {.wall_ms = 10000, .cpu_ms = 5000, .memory_mib = 512, .output_kib = 64};
  sq_jail_outcome o;
  int64_t t0 = now_us();
  int rc = sq_jail_run_mode(j, mode, prog, strlen(prog), &lim, NULL, &o);
  double ms = (double)(now_us() - t0) / 1000.0;
  bool ok = rc == 0 && o.end == SQ_JAIL_EXITED_OK;
  sq_jail_outcome_clear(&o);
  return ok ? ms : -1;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Medians of a way's runs split by what ran just before: firejail (its
 * namespaces still being torn down) or anything else. */
typedef struct {
  double fj, other;
  int n_fj, n_other;
} split_t;

static void predecessor_split(const double *v, const int *after, int rounds, split_t *out) {
  double *a = calloc((size_t)rounds, sizeof *a), *b = calloc((size_t)rounds, sizeof *b);
  int na = 0, nb = 0;
  for (int r = 0; a && b && r < rounds; r++) {
    if (v[r] < 0) continue;
    if (after[r] == FIREJAIL) a[na++] = v[r];
    else b[nb++] = v[r];
  }
  if (na) qsort(a, (size_t)na, sizeof *a, cmp);
  if (nb) qsort(b, (size_t)nb, sizeof *b, cmp);
  *out = (split_t){.fj = na ? a[na / 2] : 0, .other = nb ? b[nb / 2] : 0, .n_fj = na, .n_other = nb};
  free(a);
  free(b);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 50;
  if (rounds < 1) rounds = 1;
  bool shuffled = !(argc > 2 && strcmp(argv[2], "fixed") == 0);
  sq_jail *j = NULL;
  sq_jail_config cfg = {.python_path = "/usr/bin/python3", .scratch_root = "/tmp/sandq-bench",
                        .mode = SQ_JAIL_MODE_WARM, .pool_size = 1};
  if (sq_jail_new(&cfg, &j) != 0) {
    fprintf(stderr, "cannot start the jail (root needed for namespaces)\n");
    return 1;
  }
  const char *progs[2] = {"pass\n", humaneval};
  const char *prog_names[2] = {"trivial", "humaneval-sized"};
  double *t = calloc((size_t)rounds * N_WAYS, sizeof *t);
  int *after = calloc((size_t)rounds * N_WAYS, sizeof *after); /* the way run just before */
  for (int p = 0; p < 2; p++) {
    char *code = (char *)progs[p];
    char *bare[] = {"/usr/bin/python3", "-I", "-S", "-c", code, NULL};
    char *bwrap[] = {"/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--new-session",
                     "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64",
                     "/lib64", "--symlink", "usr/bin", "/bin", "--ro-bind", "/etc/ld.so.cache",
                     "/etc/ld.so.cache", "--dev", "/dev", "--tmpfs", "/scratch", "--chdir", "/scratch",
                     "--cap-drop", "ALL", "/usr/bin/python3", "-I", "-S", "-c", code, NULL};
    char *firejail[] = {"/usr/bin/firejail", "--quiet", "--noprofile", "--net=none", "--private",
                        "--caps.drop=all", "--nonewprivs", "--seccomp", "/usr/bin/python3", "-I", "-S", "-c",
                        code, NULL};
    bool have[N_WAYS] = {true, true, true, true, true};
    /* One warm-up each, which also tells which tools work here. */
    have[BWRAP] = run_cmd(bwrap) >= 0;
    have[FIREJAIL] = run_cmd(firejail) >= 0;
    run_cmd(bare);
    run_jail(j, SQ_JAIL_MODE_SPAWN, code);
    run_jail(j, SQ_JAIL_MODE_WARM, code);
    int last = -1;
    for (int r = 0; r < rounds; r++) {
      int order[N_WAYS];
      way_order(order, shuffled);
      for (int k = 0; k < N_WAYS; k++) {
        int w = order[k];
        double ms = -1;
        if (!have[w]) continue;
        switch (w) {
        case BARE: ms = run_cmd(bare); break;
        case BWRAP: ms = run_cmd(bwrap); break;
        case FIREJAIL: ms = run_cmd(firejail); break;
        case SPAWN: ms = run_jail(j, SQ_JAIL_MODE_SPAWN, code); break;
        case WARM: ms = run_jail(j, SQ_JAIL_MODE_WARM, code); break;
        }
        t[w * rounds + r] = ms;
        after[w * rounds + r] = last;
        last = w;
      }
    }
    printf("\n%s program, %d rounds interleaved, %s (ms per task)\n", prog_names[p], rounds,
           shuffled ? "order shuffled per round" : "fixed order");
    printf("%-20s %9s %9s %9s %12s\n", "", "median", "mean", "p90", "vs bare");
    double bare_median = 0;
    split_t split[N_WAYS] = {{0}};
    for (int w = 0; w < N_WAYS; w++) {
      if (!have[w]) {
        printf("%-20s %9s (did not run on this host)\n", way_names[w], "-");
        continue;
      }
      double *v = &t[w * rounds], sum = 0;
      predecessor_split(v, &after[w * rounds], rounds, &split[w]);
      int failed = 0;
      for (int r = 0; r < rounds; r++) {
        if (v[r] < 0) failed++;
        sum += v[r];
      }
      qsort(v, (size_t)rounds, sizeof *v, cmp);
      double median = v[rounds / 2], p90 = v[rounds * 9 / 10];
      if (w == BARE) bare_median = median;
      printf("%-20s %9.2f %9.2f %9.2f %11.2fx%s\n", way_names[w], median, sum / rounds, p90,
             bare_median > 0 ? median / bare_median : 0, failed ? "  (some runs failed)" : "");
    }
    printf("%-20s %14s %14s   (median ms, by the way run just before)\n", "", "after firejail", "after others");
    for (int w = 0; w < N_WAYS; w++)
      if (have[w] && w != FIREJAIL && split[w].n_fj > 0)
        printf("%-20s %9.2f (%2d) %9.2f (%2d)\n", way_names[w], split[w].fj, split[w].n_fj, split[w].other,
               split[w].n_other);
  }
  free(after);
  free(t);
  sq_jail_free(j);
  return 0;
}
