/* test_reason.c: every failing status gets a reason that says why: the
 * assertion's line and message, the first differing stdout line, the limit
 * hit, the exception's type and message. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "reason.h"

static const char *reason(sq_status st, sq_jail_end end, const char *out, const char *err, const char *want) {
  static char buf[SQ_REASON_MAX];
  sq_jail_outcome o = {.end = end,
                       .exit_code = end == SQ_JAIL_EXITED_OK ? 0 : 1,
                       .stdout_buf = (char *)out,
                       .stdout_len = out ? strlen(out) : 0,
                       .stderr_buf = (char *)err,
                       .stderr_len = err ? strlen(err) : 0};
  sq_jail_limits lim = {.wall_ms = 2000, .cpu_ms = 1500, .memory_mib = 256, .output_kib = 64};
  size_t n = sq_reason_build(st, &o, &lim, want, buf, sizeof buf);
  CHECK_EQ(n, strlen(buf));
  return buf;
}

static const char *HUMANEVAL_TB =
    "Traceback (most recent call last):\n"
    "  File \"/scratch/main.py\", line 20, in <module>\n"
    "    check(add)\n"
    "  File \"/scratch/main.py\", line 12, in check\n"
    "    assert candidate(2, 3) == 5, \"two and three\"\n"
    "           ^^^^^^^^^^^^^^^^^^^^\n"
    "AssertionError: two and three\n";

int main(void) {
  /* failed: the assertion's line, source and message */
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_ASSERTION, "", HUMANEVAL_TB, NULL),
            "assertion failed at line 12: assert candidate(2, 3) == 5, \"two and three\" (two and three)");
  /* a bare assert, in a frame of the zygote's harness below main.py's */
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_ASSERTION, "",
                   "Traceback (most recent call last):\n"
                   "  File \"<sandq-zygote>\", line 65, in run\n"
                   "  File \"/scratch/main.py\", line 3, in <module>\n"
                   "    assert f(1) == 2\n"
                   "AssertionError\n",
                   NULL),
            "assertion failed at line 3: assert f(1) == 2");
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_ASSERTION, "", "", NULL), "assertion failed (no traceback on stderr)");
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_EXITED_OK, "", "", NULL), "failed (the run ended exited_ok)");
  /* failed: expected_stdout, first differing line */
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_EXITED_OK, "1\n2\nFizz\n5\n", NULL, "1\n2\nFizz\n4\n"),
            "stdout differs at line 4: expected \"4\", got \"5\"");
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_EXITED_OK, "a\n", NULL, "a\nb"),
            "stdout differs at line 2: expected \"b\", got (end of output)");
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_EXITED_OK, "", NULL, "42"),
            "stdout differs at line 1: expected \"42\", got (end of output)");
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_EXITED_OK, "a\nb\nc\n", NULL, "a\nb"),
            "stdout differs at line 3: expected (end of output), got \"c\"");
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_EXITED_OK, "a \nb\n", NULL, "a\nb\n"),
            "stdout differs at line 1: expected \"a\", got \"a \"");
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_EXITED_OK, "a\n\n", NULL, "a"),
            "stdout differs from expected_stdout in white space only");
  CHECK_STR(reason(SQ_STATUS_FAILED, SQ_JAIL_EXITED_OK, "x\ty\n", NULL, "x y"),
            "stdout differs at line 1: expected \"x y\", got \"x?y\"");
  /* runtime_error: exception type, message, line */
  CHECK_STR(reason(SQ_STATUS_RUNTIME_ERROR, SQ_JAIL_EXITED_ERROR, "",
                   "Traceback (most recent call last):\n"
                   "  File \"/scratch/main.py\", line 1, in <module>\n"
                   "    x = 1/0\n"
                   "        ~^~\n"
                   "ZeroDivisionError: division by zero\n",
                   NULL),
            "ZeroDivisionError: division by zero at line 1: x = 1/0");
  /* chained exceptions: the last one raised */
  CHECK_STR(reason(SQ_STATUS_RUNTIME_ERROR, SQ_JAIL_EXITED_ERROR, "",
                   "Traceback (most recent call last):\n"
                   "  File \"/scratch/main.py\", line 2, in <module>\n"
                   "    d['k']\n"
                   "KeyError: 'k'\n\n"
                   "During handling of the above exception, another exception occurred:\n\n"
                   "Traceback (most recent call last):\n"
                   "  File \"/scratch/main.py\", line 4, in <module>\n"
                   "    raise ValueError('no k')\n"
                   "ValueError: no k\n",
                   NULL),
            "ValueError: no k at line 4: raise ValueError('no k')");
  /* the innermost main.py frame, not the library's */
  CHECK_STR(reason(SQ_STATUS_RUNTIME_ERROR, SQ_JAIL_EXITED_ERROR, "",
                   "Traceback (most recent call last):\n"
                   "  File \"/scratch/main.py\", line 7, in <module>\n"
                   "    json.loads('{')\n"
                   "  File \"/usr/lib/python3.11/json/__init__.py\", line 346, in loads\n"
                   "    return _default_decoder.decode(s)\n"
                   "json.decoder.JSONDecodeError: Expecting property name: line 1 column 2 (char 1)\n",
                   NULL),
            "json.decoder.JSONDecodeError: Expecting property name: line 1 column 2 (char 1) at line 7: "
            "json.loads('{')");
  /* a SyntaxError has no Traceback header */
  CHECK_STR(reason(SQ_STATUS_RUNTIME_ERROR, SQ_JAIL_EXITED_ERROR, "",
                   "  File \"/scratch/main.py\", line 1\n"
                   "    def f(:\n"
                   "          ^\n"
                   "SyntaxError: invalid syntax\n",
                   NULL),
            "SyntaxError: invalid syntax at line 1: def f(:");
  /* no traceback: the exit status and the last stderr line */
  CHECK_STR(reason(SQ_STATUS_RUNTIME_ERROR, SQ_JAIL_EXITED_ERROR, "", "bad input\nfatal: giving up\n", NULL),
            "exited with status 1: fatal: giving up");
  CHECK_STR(reason(SQ_STATUS_RUNTIME_ERROR, SQ_JAIL_EXITED_ERROR, "", "", NULL), "exited with status 1");
  {
    char buf[128];
    sq_jail_outcome o = {.end = SQ_JAIL_SIGNALED, .exit_code = -1, .signal = 11};
    sq_reason_build(SQ_STATUS_RUNTIME_ERROR, &o, NULL, NULL, buf, sizeof buf);
    CHECK_STR(buf, "killed by signal 11 (SIGSEGV)");
  }
  /* the limits hit */
  {
    char buf[192];
    sq_jail_limits lim = {.wall_ms = 2000, .cpu_ms = 1500, .memory_mib = 256, .output_kib = 64};
    sq_jail_outcome o = {.end = SQ_JAIL_TIMEOUT, .wall_ms = 2004, .cpu_ms = 3};
    sq_reason_build(SQ_STATUS_TIMEOUT, &o, &lim, NULL, buf, sizeof buf);
    CHECK_STR(buf, "wall-clock limit of 2000 ms reached (ran 2004 ms)");
    o.wall_ms = 5100, o.cpu_wait_ms = 3090; /* a busy host: the wait was credited */
    sq_reason_build(SQ_STATUS_TIMEOUT, &o, &lim, NULL, buf, sizeof buf);
    CHECK_STR(buf, "wall-clock limit of 2000 ms reached (ran 5100 ms, 3090 ms of it waiting for a CPU)");
    o.wall_ms = 12000, o.cpu_wait_ms = 11500, o.starved = true;
    sq_reason_build(SQ_STATUS_TIMEOUT, &o, &lim, NULL, buf, sizeof buf);
    CHECK_STR(buf, "wall-clock limit of 2000 ms reached (ran 12000 ms, 11500 ms of it waiting for a CPU): "
                   "the host was too busy to run it");
    o.cpu_wait_ms = 0, o.starved = false;
    o.end = SQ_JAIL_CPU_LIMIT, o.cpu_ms = 1510;
    sq_reason_build(SQ_STATUS_CPU_LIMIT, &o, &lim, NULL, buf, sizeof buf);
    CHECK_STR(buf, "CPU-time limit of 1500 ms reached (used 1510 ms)");
    o.end = SQ_JAIL_MEMORY_LIMIT, o.oom_killed = true;
    sq_reason_build(SQ_STATUS_MEMORY_LIMIT, &o, &lim, NULL, buf, sizeof buf);
    CHECK_STR(buf, "memory limit of 256 MiB reached (killed by the OOM killer)");
    o.oom_killed = false;
    o.stderr_buf = "Traceback (most recent call last):\n  File \"/scratch/main.py\", line 2, in <module>\n"
                   "    x = [0] * 10**10\nMemoryError\n";
    o.stderr_len = strlen(o.stderr_buf);
    sq_reason_build(SQ_STATUS_MEMORY_LIMIT, &o, &lim, NULL, buf, sizeof buf);
    CHECK_STR(buf, "memory limit of 256 MiB reached (MemoryError at line 2)");
    o = (sq_jail_outcome){.end = SQ_JAIL_OUTPUT_LIMIT, .stderr_truncated = true};
    sq_reason_build(SQ_STATUS_OUTPUT_LIMIT, &o, &lim, NULL, buf, sizeof buf);
    CHECK_STR(buf, "output limit of 64 KiB reached on stderr");
    o.stdout_truncated = true;
    sq_reason_build(SQ_STATUS_OUTPUT_LIMIT, &o, NULL, NULL, buf, sizeof buf);
    CHECK_STR(buf, "output limit reached on stdout and stderr");
    o = (sq_jail_outcome){.end = SQ_JAIL_POLICY};
    snprintf(o.blocked_syscall, sizeof o.blocked_syscall, "ptrace");
    sq_reason_build(SQ_STATUS_POLICY_VIOLATION, &o, &lim, NULL, buf, sizeof buf);
    CHECK_STR(buf, "killed by the seccomp policy: ptrace");
  }
  /* statuses that need no reason */
  CHECK_STR(reason(SQ_STATUS_PASSED, SQ_JAIL_EXITED_OK, "", "", NULL), "");
  CHECK_STR(reason(SQ_STATUS_OK, SQ_JAIL_EXITED_OK, "", "", NULL), "");
  /* long lines are cut on a UTF-8 boundary; small buffers stay terminated */
  {
    char want[400], got[400];
    memset(want, 'a', 300), want[300] = 0;
    for (int i = 0; i < 150; i++) memcpy(got + 2 * i, "\xc3\xa9", 2);
    got[300] = 0;
    const char *r = reason(SQ_STATUS_FAILED, SQ_JAIL_EXITED_OK, got, NULL, want);
    CHECK_CONTAINS(r, "...\", got \"\xc3\xa9");
    CHECK_CONTAINS(r, "\xc3\xa9...\"");
    CHECK(strlen(r) < 300);
    char tiny[16];
    sq_jail_outcome o = {.end = SQ_JAIL_EXITED_OK, .stdout_buf = got, .stdout_len = 300};
    size_t n = sq_reason_build(SQ_STATUS_FAILED, &o, NULL, want, tiny, sizeof tiny);
    CHECK_EQ(n, 15);
    CHECK_EQ(strlen(tiny), 15);
  }
  /* kinds, for grouping */
  {
    static const char *const cases[][2] = {
        {"assertion failed at line 12: assert f(1) == 2 (x)", "assertion failed"},
        {"ZeroDivisionError: division by zero at line 1: x = 1/0", "ZeroDivisionError"},
        {"stdout differs at line 4: expected \"4\", got \"5\"", "stdout differs"},
        {"wall-clock limit of 2000 ms reached (ran 2004 ms)", "wall-clock limit of 2000 ms reached"},
        {"llm: connection refused (after 3 attempts)", "llm"},
        {"killed by the seccomp policy: ptrace", "killed by the seccomp policy"},
        {"exited with status 3", "exited with status 3"},
        {"case 3: expected `7`, got `-7`", "wrong output"},
        {"case 12: got `x` past the expected end", "wrong output"},
        {"case 1: at byte 2 expected `b`, got ` `", "wrong output"},
        {"case 2: wall-clock limit of 1500 ms reached (ran 1502 ms)", "wall-clock limit of 1500 ms reached"},
        {"case 4: ZeroDivisionError: division by zero at line 1: x = 1/0", "ZeroDivisionError"},
        {"expected `7`, got `-7`", "expected `7`, got `-7`"},
        {"", ""}};
    char kind[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      sq_reason_kind(cases[i][0], kind, sizeof kind);
      CHECK_STR(kind, cases[i][1]);
    }
    sq_reason_kind(NULL, kind, sizeof kind);
    CHECK_STR(kind, "");
  }
  /* the traceback reader alone */
  {
    char type[32], msg[32], src[64];
    int line = -1;
    CHECK_EQ(sq_reason_traceback(HUMANEVAL_TB, strlen(HUMANEVAL_TB), type, sizeof type, msg, sizeof msg, &line, src,
                                 sizeof src),
             1);
    CHECK_STR(type, "AssertionError");
    CHECK_STR(msg, "two and three");
    CHECK_EQ(line, 12);
    CHECK_EQ(sq_reason_traceback("hello\n", 6, type, sizeof type, msg, sizeof msg, &line, src, sizeof src), 0);
    CHECK_STR(type, "");
    CHECK_EQ(line, 0);
    CHECK_EQ(sq_reason_traceback(NULL, 0, NULL, 0, NULL, 0, NULL, NULL, 0), 0);
  }
  return sq_check_done("test_reason");
}
