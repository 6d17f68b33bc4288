/* test_jail_plan.c: a run's plan (jail_plan.h): the limits worked out once
 * (CPU rounded up to whole seconds, at least 1; the address space; the
 * cgroup's memory; the fixed rlimits), the verdict reading the same CPU
 * figure, and a failed rlimit named with its values, by the setter and by
 * a spawn payload's death message. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "jail_internal.h"

static void test_make(void) {
  static const struct {
    int64_t cpu_ms, cpu_s;
  } c[] = {{1, 1}, {999, 1}, {1000, 1}, {1001, 2}, {5000, 5}, {0, 1}};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    sq_jail_limits lim = {.wall_ms = 1000, .cpu_ms = c[i].cpu_ms, .memory_mib = 256, .output_kib = 64};
    sq__jail_plan p;
    sq__jail_plan_make(&lim, 0, &p);
    CHECK_EQ(p.cpu_s, c[i].cpu_s);
    CHECK_EQ(sq_jail_cpu_limit_s(c[i].cpu_ms), c[i].cpu_s);
    CHECK_EQ(p.rlimits[0].res, RLIMIT_CPU);
    CHECK_EQ(p.rlimits[0].soft, c[i].cpu_s);
    CHECK_EQ(p.rlimits[0].hard, c[i].cpu_s + 1);
  }
  sq_jail_limits lim = {.wall_ms = 1000, .cpu_ms = 2000, .memory_mib = 256, .output_kib = 64};
  sq__jail_plan p;
  sq__jail_plan_make(&lim, SQ_JAIL_WIDEN_TIMERS, &p);
  CHECK_EQ(p.widenings, SQ_JAIL_WIDEN_TIMERS);
  CHECK_EQ(p.as_bytes, 256ll << 20);
  CHECK_EQ(p.cgroup_mib, 256);
  CHECK_EQ(p.rlimits[1].res, RLIMIT_AS);
  CHECK_EQ(p.rlimits[1].soft, 256ll << 20);
  CHECK_EQ(p.lim.wall_ms, 1000);
  lim.address_space_mib = 4096; /* a runtime held by the cgroup (the JVM) */
  sq__jail_plan_make(&lim, 0, &p);
  CHECK_EQ(p.as_bytes, 4096ll << 20);
  CHECK_EQ(p.cgroup_mib, 256);
  for (int i = 0; i < SQ__JAIL_FIXED_RLIMITS; i++) {
    CHECK_EQ(p.rlimits[2 + i].res, sq__jail_fixed_rlimits[i].res);
    CHECK_EQ(p.rlimits[2 + i].soft, sq__jail_fixed_rlimits[i].soft);
  }
  CHECK_EQ(sq__jail_fixed_rlimits[0].res, RLIMIT_NOFILE);
  CHECK_EQ(sq__jail_fixed_rlimits[0].hard, SQ__JAIL_NOFILE_MAX);
}

/* A SIGKILL is the CPU limit's once the run's CPU reached the plan's soft
 * limit in whole seconds, not its cpu_ms. */
static void test_verdict(void) {
  sq_jail_limits lim = {.wall_ms = 5000, .cpu_ms = 1, .memory_mib = 256, .output_kib = 64};
  sq__jail_plan p;
  sq__jail_plan_make(&lim, 0, &p);
  sq_jail_outcome o = {0};
  o.cpu_ms = 999;
  CHECK_EQ(sq__jail_map_end(&o, SIGKILL, SQ_JAIL_EXITED_OK, &p, false), SQ_JAIL_SIGNALED);
  o.cpu_ms = 1000;
  CHECK_EQ(sq__jail_map_end(&o, SIGKILL, SQ_JAIL_EXITED_OK, &p, false), SQ_JAIL_CPU_LIMIT);
}

static void test_describe(void) {
  char out[96];
  sq__zygote_rlimit as = {.res = RLIMIT_AS, .soft = 536870912, .hard = 536870912};
  sq__jail_rlimit_describe("setting ", &as, out, sizeof out);
  CHECK_STR(out, "setting RLIMIT_AS=536870912:536870912");
  sq__zygote_rlimit core = {.res = RLIMIT_CORE, .soft = 0, .hard = -1};
  sq__jail_rlimit_describe("", &core, out, sizeof out);
  CHECK_STR(out, "RLIMIT_CORE=0:unlimited");
  sq__jail_rlimit_describe("setting ", &as, out, 12); /* cut to fit, still terminated */
  CHECK_STR(out, "setting RLI");
}

/* The setter stops at the first limit the kernel refuses (a soft limit
 * above the hard one: EINVAL, root or not) and says which. */
static void test_set_names_failure(void) {
  pid_t pid = fork();
  if (pid == 0) {
    sq__zygote_rlimit l[] = {{RLIMIT_CORE, 0, 0}, {RLIMIT_NOFILE, 10, 5}, {RLIMIT_STACK, 1, 1}};
    int bad = sq__jail_rlimits_set(l, 3);
    _exit(bad == 1 && errno == EINVAL ? 0 : 1);
  }
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A spawn payload (no namespaces) whose plan holds a limit the kernel
 * refuses dies naming that limit and its values on the status pipe. */
static void test_payload_names_failure(void) {
  char dir[] = "/tmp/sandq-plan-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  int st_p[2], out_p[2];
  CHECK_EQ(pipe2(st_p, O_CLOEXEC), 0);
  CHECK_EQ(pipe2(out_p, O_CLOEXEC), 0);
  sq_jail_limits lim = {.wall_ms = 5000, .cpu_ms = 2000, .memory_mib = 256, .output_kib = 64};
  sq__jail_plan plan;
  sq__jail_plan_make(&lim, 0, &plan);
  plan.rlimits[3] = (sq__zygote_rlimit){RLIMIT_FSIZE, 20, 10};
  char *argv[] = {"/bin/true", NULL}, *envp[] = {NULL};
  sq__jail_child c = {.python_path = "/bin/true", .scratch_dir = dir, .program_fd = -1, .input_fd = -1,
                      .argv = argv, .envp = envp, .stdout_fd = out_p[1], .stderr_fd = out_p[1],
                      .status_fd = st_p[1], .sync_fd = -1, .result_fd = -1, .notify_sock = -1,
                      .plan = &plan, .layers = 0};
  pid_t pid = fork();
  if (pid == 0) sq__jail_contain(&c);
  close(st_p[1]);
  close(out_p[1]);
  char msg[256];
  sq__jail_read_status(st_p[0], msg, sizeof msg);
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == SQ__JAIL_EXIT_SETUP);
  CHECK_STR(msg, "sandq-jail: setting RLIMIT_FSIZE=20:10 failed: EINVAL (errno 22)");
  close(st_p[0]);
  close(out_p[0]);
  rmdir(dir);
}

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  test_make();
  test_verdict();
  test_describe();
  test_set_names_failure();
  test_payload_names_failure();
  return sq_check_done("test_jail_plan");
}
