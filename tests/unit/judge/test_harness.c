/* test_harness.c: the test harness (harness.h) around real programs, run
 * by /usr/bin/python3 -I -S as the jail runs main.py (outside the jail:
 * the jail's own behaviour is the abuse suite's). Early exits never leave
 * the completion mark, values that claim to equal anything fail the tests,
 * honest programs pass, tracebacks keep the listing's line numbers, and the
 * marks come off stderr. Skips (77) without /usr/bin/python3. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "errors.h"
#include "compiled.h"
#include "harness.h"
#include "util.h"
#include "verdict.h"

#define PY "/usr/bin/python3"

static char dir[] = "/tmp/sq-harness-XXXXXX";

/* What one run left: exit status, stdout, stderr (marks still in it). */
typedef struct {
  int exit_code;
  char *out, *err;
  size_t err_len;
} run_result;

static char *slurp(const char *path, size_t *len) {
  char *s = NULL;
  if (sq_file_read(path, 1 << 20, &s, len) != 0) return strdup("");
  return s;
}

/* Runs code with tests and entry point (either may be NULL) through the harness. */
static run_result run(const char *code, const char *tests, const char *entry) {
  run_result r = {.exit_code = -1};
  sq_task t = {.id = "t", .tests = (char *)tests, .entry_point = (char *)entry};
  char *program = NULL, path[128], cmd[512];
  CHECK_EQ(sq_harness_program(&t, code, &program), 0);
  if (!program) return r;
  snprintf(path, sizeof path, "%s/main.py", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs(program, f);
    fclose(f);
  }
  free(program);
  snprintf(cmd, sizeof cmd, "cd %s && " PY " -I -S main.py >out 2>err", dir);
  int st = system(cmd);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  snprintf(path, sizeof path, "%s/out", dir);
  r.out = slurp(path, NULL);
  snprintf(path, sizeof path, "%s/err", dir);
  r.err = slurp(path, &r.err_len);
  return r;
}

/* The verdict the worker would give r (exit 0: exited_ok; 1 with an
 * AssertionError: assertion; else exited_error), reason in *why. */
static const char *verdict(run_result *r, const char **why) {
  sq_jail_outcome o = {.stderr_buf = r->err, .stderr_len = r->err_len};
  o.end = r->exit_code == 0 ? SQ_JAIL_EXITED_OK
          : r->exit_code == 1 && strstr(r->err, "AssertionError") ? SQ_JAIL_ASSERTION
                                                                    : SQ_JAIL_EXITED_ERROR;
  sq_verdict_input in = {.has_tests = true};
  sq_harness_take_marks(&o, &in.marks);
  r->err_len = o.stderr_len;
  return sq_status_name(sq_verdict_decide(&o, &in, why));
}

static void done(run_result *r) {
  free(r->out);
  free(r->err);
}

static const char *tests_add = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(2, 2) == 4\n";

/* A wrong add, with what comes before it and in its body. */
static void wrong_add(const char *name, const char *before, const char *body, const char *want_why) {
  char code[1024];
  snprintf(code, sizeof code, "%sdef add(a, b):\n%s    return a - b\n", before, body);
  run_result r = run(code, tests_add, "add");
  const char *why = NULL;
  const char *status = verdict(&r, &why);
  if (strcmp(status, "passed") == 0) fprintf(stderr, "%s passed:\n%s\n", name, r.err);
  CHECK_STR(status, "failed");
  CHECK_STR(why, want_why);
  done(&r);
}

static void marks(void) {
  char err[256];
  const char *nonce = "0123456789abcdef0123456789abcdef";
  snprintf(err, sizeof err, "sandq-harness:%s:begin\nboom\nsandq-harness:%s:end\n", nonce, nonce);
  sq_jail_outcome o = {.stderr_buf = err, .stderr_len = strlen(err)};
  sq_harness_marks m;
  sq_harness_take_marks(&o, &m);
  CHECK(m.begun && m.completed && !m.equal_to_anything);
  CHECK_STR(o.stderr_buf, "boom\n");
  CHECK_EQ(o.stderr_len, 5);
  /* an end mark with another nonce is the program's own text */
  snprintf(err, sizeof err, "sandq-harness:%s:begin\nsandq-harness:%s:end\n", nonce, "ffffffffffffffffffffffffffffffff");
  o = (sq_jail_outcome){.stderr_buf = err, .stderr_len = strlen(err)};
  sq_harness_take_marks(&o, &m);
  CHECK(m.begun && !m.completed);
  CHECK_STR(o.stderr_buf, "sandq-harness:ffffffffffffffffffffffffffffffff:end\n");
  /* no begin mark first: nothing is read or removed */
  snprintf(err, sizeof err, "x\nsandq-harness:%s:begin\nsandq-harness:%s:end\n", nonce, nonce);
  o = (sq_jail_outcome){.stderr_buf = err, .stderr_len = strlen(err)};
  sq_harness_take_marks(&o, &m);
  CHECK(!m.begun && !m.completed);
  CHECK_EQ(o.stderr_len, strlen(err));
  o = (sq_jail_outcome){0};
  sq_harness_take_marks(&o, &m);
  CHECK(!m.begun);
  /* The judge's marks: how it ran the tests, and its own failure, taken off. */
  snprintf(err, sizeof err, "sandq-harness:%s:begin\nsandq-harness:%s:judge in_process the tests pass f\nx\n"
           "sandq-harness:%s:fail returned a value the judge cannot compare: Int\n", nonce, nonce, nonce);
  o = (sq_jail_outcome){.stderr_buf = err, .stderr_len = strlen(err)};
  sq_harness_take_marks(&o, &m);
  CHECK_STR(m.judge, "in_process");
  CHECK_STR(m.judge_why, "the tests pass f");
  CHECK_STR(m.fail, "returned a value the judge cannot compare: Int");
  CHECK(!m.fail_cpu_limit);
  CHECK_STR(o.stderr_buf, "x\n");
  /* a call over the CPU time the tests gave it: the reason, and the limit's status */
  snprintf(err, sizeof err, "sandq-harness:%s:begin\nsandq-harness:%s:limit plus input 3 of 9: over its CPU time\n",
           nonce, nonce);
  o = (sq_jail_outcome){.stderr_buf = err, .stderr_len = strlen(err)};
  sq_harness_take_marks(&o, &m);
  CHECK_STR(m.fail, "plus input 3 of 9: over its CPU time");
  CHECK(m.fail_cpu_limit);
  CHECK_STR(o.stderr_buf, "");
  /* another nonce's, or an unknown mode: the program's own text, nothing taken */
  snprintf(err, sizeof err, "sandq-harness:%s:begin\nsandq-harness:%s:judge isolated\nsandq-harness:%s:judge best\n",
           nonce, "ffffffffffffffffffffffffffffffff", nonce);
  o = (sq_jail_outcome){.stderr_buf = err, .stderr_len = strlen(err)};
  sq_harness_take_marks(&o, &m);
  CHECK_STR(m.judge, "");
  CHECK_STR(m.fail, "");
}

static void assembly(void) {
  sq_task plain = {.id = "p"};
  char *p = NULL;
  CHECK_EQ(sq_harness_program(&plain, "print(1)", &p), 0);
  CHECK_STR(p, "print(1)\n"); /* no tests: the listing itself */
  free(p);
  sq_task t = {.id = "t", .tests = "assert True", .entry_point = "f"};
  CHECK_EQ(sq_harness_program(&t, "x = 1", &p), 0);
  CHECK(p && strstr(p, "def main(") != NULL);
  /* the listing is in no readable form in the program (base64 of "x = 1\n\nassert True\n\ncheck(f)\n") */
  CHECK(p && strstr(p, "assert True") == NULL);
  CHECK_CONTAINS(p, "main(b'eCA9IDEKCmFzc2VydCBUcnVlCgpjaGVjayhmKQo=', 7, 20)\n");
  free(p);
}

/* The judge's program is one text for every task; the task is its input,
 * a frame sq_harness_judge_input_read decodes exactly. */
static void judge_assembly(void) {
  sq_task t = {.id = "t", .tests = "assert f() == 41", .entry_point = NULL};
  char *p = NULL, *in = NULL;
  size_t in_len = 0;
  CHECK_EQ(sq_harness_judge(&t, "def f():\n    return 42", NULL, 0, &p, &in, &in_len), 0);
  CHECK_STR(p, sq_harness_judge_program());
  CHECK(strstr(p, "assert f()") == NULL && strstr(p, "42") == NULL);
  sq_harness_judge_frame f;
  CHECK_EQ(sq_harness_judge_input_read(in, in_len, &f), 0);
  CHECK(!f.marshalled && f.judge_len > 1000 && strncmp(f.judge, "# judge.py", 10) == 0);
  CHECK(f.code_len == 22 && memcmp(f.code, "def f():\n    return 42", 22) == 0);
  CHECK(f.harness_len > 1000 && strncmp(f.harness, "# harness.py", 12) == 0);
  const char listing[] = "def f():\n    return 42\n\nassert f() == 41\n";
  CHECK(f.listing_len == strlen(listing) && memcmp(f.listing, listing, f.listing_len) == 0);
  CHECK(f.tests_at == 24 && f.check_at == -1 && f.plan_len == 0);
  CHECK(memcmp(in, "sandq-judge 1 s ", 16) == 0 && in[SQ_HARNESS_JUDGE_HEAD_BYTES - 1] == '\n');

  /* Anything but what the encoder writes is refused. */
  char *bad = malloc(in_len + 1);
  CHECK(bad != NULL);
  if (bad) {
    CHECK_EQ(sq_harness_judge_input_read(in, in_len - 1, &f), SQ_EINVAL); /* a byte short */
    memcpy(bad, in, in_len);
    bad[in_len] = 'x';
    CHECK_EQ(sq_harness_judge_input_read(bad, in_len + 1, &f), SQ_EINVAL); /* a byte over */
    bad[12] = '2';
    CHECK_EQ(sq_harness_judge_input_read(bad, in_len, &f), SQ_EINVAL); /* another version */
    memcpy(bad, in, in_len);
    bad[SQ_HARNESS_JUDGE_HEAD_BYTES - 1] = ' ';
    CHECK_EQ(sq_harness_judge_input_read(bad, in_len, &f), SQ_EINVAL); /* a head without its end */
    memcpy(bad, in, in_len);
    bad[14] = 'x';
    CHECK_EQ(sq_harness_judge_input_read(bad, in_len, &f), SQ_EINVAL); /* an unknown kind */
    memcpy(bad, in, in_len);
    char *sp = memchr(bad + 16, ' ', 20); /* JUDGE's length one less: the sizes do not add up */
    CHECK(sp != NULL);
    if (sp) sp[-1] = (char)(sp[-1] == '0' ? '1' : sp[-1] - 1);
    CHECK_EQ(sq_harness_judge_input_read(bad, in_len, &f), SQ_EINVAL);
    free(bad);
  }
  CHECK_EQ(sq_harness_judge_input_read(in, 10, &f), SQ_EINVAL);
  free(p);
  free(in);

  sq_task plain = {.id = "p"};
  CHECK_EQ(sq_harness_judge(&plain, "print(1)", NULL, 0, &p, &in, &in_len), 0);
  CHECK_STR(p, "print(1)\n");
  CHECK(in == NULL && in_len == 0);
  free(p);
  /* precompiled: only base64 is taken, and then the input carries the marshalled bytes */
  CHECK_EQ(sq_compiled_set(SQ_COMPILED_JUDGE, "not base64!", 11), SQ_EINVAL);
  CHECK_EQ(sq_compiled_set(SQ_COMPILED_JUDGE, "", 0), SQ_EINVAL);
  CHECK_EQ(sq_compiled_set(SQ_COMPILED_JUDGE, "QUJD", 4), 0);
  CHECK_EQ(sq_harness_judge(&t, "x = 1", NULL, 0, &p, &in, &in_len), 0);
  CHECK_EQ(sq_harness_judge_input_read(in, in_len, &f), 0);
  CHECK(f.marshalled && f.judge_len == 3 && memcmp(f.judge, "ABC", 3) == 0);
  CHECK(f.code_len == 5 && memcmp(f.code, "x = 1", 5) == 0);
  free(p);
  free(in);
  sq_compiled_clear();
}

/* judge.py's side of the frame: a real run of the judge's program (its
 * own copy from the input, as off a full zygote) judges; another version
 * or a short input is refused with exit 125, naming it. */
static int put(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  size_t n = fwrite(data, 1, len, f);
  return fclose(f) == 0 && n == len ? 0 : -1;
}

static int judge_run(const char *input, size_t len, char **err) {
  char path[128], cmd[512];
  snprintf(path, sizeof path, "%s/main.py", dir);
  CHECK_EQ(put(path, sq_harness_judge_program(), strlen(sq_harness_judge_program())), 0);
  snprintf(path, sizeof path, "%s/in", dir);
  CHECK_EQ(put(path, input, len), 0);
  snprintf(cmd, sizeof cmd, "cd %s && " PY " -I -S main.py <in >out 2>err", dir);
  int st = system(cmd);
  snprintf(path, sizeof path, "%s/err", dir);
  *err = slurp(path, NULL);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A run's stderr as the jail gives it, for sq_harness_take_marks. */
static sq_harness_marks marks_of(char *err) {
  sq_jail_outcome o = {0};
  o.stderr_buf = err;
  o.stderr_len = strlen(err);
  sq_harness_marks m;
  sq_harness_take_marks(&o, &m);
  return m;
}

static void judge_frames(void) {
  sq_task t = {.id = "t", .tests = "def helper(x):\n    return x\n\nassert helper(f()) == 42\nassert f() + 1 == 43\n",
               .entry_point = NULL};
  char *p = NULL, *in = NULL, *err = NULL;
  size_t in_len = 0;
  CHECK_EQ(sq_harness_judge(&t, "def f():\n    return 42", NULL, 0, &p, &in, &in_len), 0);
  CHECK_EQ(judge_run(in, in_len, &err), 0);
  CHECK_CONTAINS(err, ":judge isolated\n");
  CHECK_CONTAINS(err, ":end\n");
  /* The judge offers its plan; the marks give its bytes, digest checked. */
  CHECK_CONTAINS(err, ":plan ");
  sq_harness_marks m = marks_of(err);
  CHECK(m.completed && m.plan != NULL && m.plan_len > 20);
  CHECK(strstr(err, ":plan ") == NULL); /* taken off */
  free(err);

  /* With the plan in its input, the judge takes it (and offers none); the
   * verdicts are the same: a wrong f fails, at the listing's line. */
  char *in2 = NULL, *p2 = NULL;
  size_t in2_len = 0;
  CHECK_EQ(sq_harness_judge(&t, "def f():\n    return 42", m.plan, m.plan_len, &p2, &in2, &in2_len), 0);
  CHECK_EQ(judge_run(in2, in2_len, &err), 0);
  CHECK_CONTAINS(err, ":end\n");
  CHECK(strstr(err, ":plan ") == NULL);
  free(err);
  free(p2);
  free(in2);
  CHECK_EQ(sq_harness_judge(&t, "\n\ndef f():\n    return 41", m.plan, m.plan_len, &p2, &in2, &in2_len), 0);
  CHECK_EQ(judge_run(in2, in2_len, &err), 1);
  CHECK(strstr(err, ":end\n") == NULL);
  CHECK_CONTAINS(err, "main.py\", line 9, in <module>\n");
  CHECK_CONTAINS(err, "AssertionError");
  free(err);
  free(p2);
  free(in2);
  /* A plan that is not one (here: bytes of no marshal form) is not used. */
  CHECK_EQ(sq_harness_judge(&t, "def f():\n    return 42", "not a plan", 10, &p2, &in2, &in2_len), 0);
  CHECK_EQ(judge_run(in2, in2_len, &err), 0);
  CHECK_CONTAINS(err, ":end\n");
  CHECK_CONTAINS(err, ":plan "); /* worked out again, and offered */
  free(err);
  free(p2);
  free(in2);
  sq_harness_marks_clear(&m);

  /* A plan mark whose digest does not match its bytes gives nothing. */
  char forged[256];
  snprintf(forged, sizeof forged, "sandq-harness:0123456789abcdef0123456789abcdef:begin\n"
           "sandq-harness:0123456789abcdef0123456789abcdef:plan %064d QUJD\n", 0);
  m = marks_of(forged);
  CHECK(m.begun && m.plan == NULL);
  sq_harness_marks_clear(&m);

  char *bad = malloc(in_len);
  CHECK(bad != NULL);
  if (bad) {
    memcpy(bad, in, in_len);
    bad[12] = '7'; /* version 7 */
    CHECK_EQ(judge_run(bad, in_len, &err), 125);
    CHECK_CONTAINS(err, "sandq-judge: not an input of version 1");
    CHECK(strstr(err, ":end\n") == NULL);
    free(err);
    memcpy(bad, in, in_len);
    bad[16] = 'x'; /* JUDGE's length not a number: the loader refuses it */
    CHECK_EQ(judge_run(bad, in_len, &err), 125);
    CHECK_CONTAINS(err, "sandq-judge: not an input of version 1");
    free(err);
    memcpy(bad, in, in_len);
    char *code_len = memchr(bad + 16, ' ', 20); /* CODE's length not a number: judge.py refuses it */
    CHECK(code_len != NULL);
    if (code_len) code_len[1] = 'x';
    CHECK_EQ(judge_run(bad, in_len, &err), 125);
    CHECK_CONTAINS(err, "sandq-judge: not an input of version 1");
    free(err);
    CHECK_EQ(judge_run(in, SQ_HARNESS_JUDGE_HEAD_BYTES + 3, &err), 125); /* judge.py cut short: the loader's read */
    CHECK_CONTAINS(err, "sandq-judge: the input ended early");
    free(err);
    CHECK_EQ(judge_run(in, in_len - 5, &err), 125); /* the listing cut short */
    CHECK_CONTAINS(err, "sandq-judge: the input ended 5 bytes early");
    CHECK(strstr(err, ":end\n") == NULL);
    free(err);
    free(bad);
  }
  free(p);
  free(in);
}

int main(void) {
  marks();
  judge_assembly();
  assembly();
  if (access(PY, X_OK) != 0) {
    fprintf(stderr, "SKIP: %s is not installed (the harness runs are skipped)\n", PY);
    return sq_check_failures ? sq_check_done("test_harness") : 77;
  }
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  const char *why = NULL;

  judge_frames();

  /* An honest solution passes; its own stderr output survives the marks. */
  run_result r = run("import sys\ndef add(a, b):\n    print('hi', file=sys.stderr)\n    return a + b\n", tests_add, "add");
  CHECK_EQ(r.exit_code, 0);
  CHECK_STR(verdict(&r, &why), "passed");
  CHECK(why == NULL);
  CHECK_STR(r.err, "hi\nhi\n");
  done(&r);

  /* The harness's known attacks, each with a wrong add. */
  wrong_add("SystemExit", "raise SystemExit(0)\n", "", SQ_VERDICT_EARLY_EXIT);
  wrong_add("sys.exit in the function", "import sys\n", "    sys.exit(0)\n", SQ_VERDICT_EARLY_EXIT);
  wrong_add("os._exit", "import os\n", "    os._exit(0)\n", SQ_VERDICT_EARLY_EXIT);
  wrong_add("atexit", "import atexit, os\natexit.register(lambda: os._exit(0))\n", "", SQ_VERDICT_EARLY_EXIT);
  wrong_add("replaced os._exit", "import os, sys\n_real = os._exit\nos._exit = lambda c: _real(0)\n"
            "sys.excepthook = lambda *a: os._exit(0)\n", "", SQ_VERDICT_EARLY_EXIT);
  wrong_add("always equal", "class A:\n    def __eq__(s, o): return True\n    def __ne__(s, o): return False\n",
            "    return A()\n", SQ_VERDICT_EQUAL_TO_ANYTHING);
  wrong_add("always equal, caught", "class A:\n    def __eq__(s, o): return True\n",
            "    return [1, (A(),)]\n", SQ_VERDICT_EQUAL_TO_ANYTHING);
  wrong_add("equal to ints only", "class A(int):\n    def __eq__(s, o): return isinstance(o, int)\n",
            "    return A(0)\n", SQ_VERDICT_EQUAL_TO_ANYTHING);
  wrong_add("less than anything", "class A:\n    def __sub__(s, o): return s\n    def __abs__(s): return s\n"
            "    def __lt__(s, o): return True\n", "    return A()\n", SQ_VERDICT_EQUAL_TO_ANYTHING);

  /* A wrong solution that merely fails: an assertion, no reason. */
  r = run("def add(a, b):\n    return a - b\n", tests_add, "add");
  CHECK_EQ(r.exit_code, 1);
  CHECK_STR(verdict(&r, &why), "failed");
  CHECK(why == NULL);
  /* the traceback names the listing's lines, with their text */
  CHECK_CONTAINS(r.err, "File \"");
  CHECK_CONTAINS(r.err, "main.py\", line 10, in <module>\n    check(add)\n");
  CHECK_CONTAINS(r.err, "main.py\", line 6, in check\n    assert candidate(1, 2) == 3\n");
  CHECK(strstr(r.err, "in main\n") == NULL); /* no frame of the harness */
  done(&r);

  /* An error in the candidate's own line 3; a syntax error at its line 2. */
  r = run("def add(a, b):\n    x = 1\n    return a / 0\n", tests_add, "add");
  CHECK_STR(verdict(&r, &why), "runtime_error");
  CHECK_CONTAINS(r.err, "main.py\", line 3, in add\n    return a / 0\n");
  CHECK_CONTAINS(r.err, "ZeroDivisionError");
  done(&r);
  r = run("def add(a, b):\n    return a +\n", tests_add, "add");
  CHECK_EQ(r.exit_code, 1);
  CHECK_CONTAINS(r.err, "main.py\", line 2\n");
  CHECK_CONTAINS(r.err, "SyntaxError");
  done(&r);

  /* MBPP's shape: module-level asserts, no entry point; honest and cheating. */
  r = run("def sq(x):\n    return x * x\n", "assert sq(3) == 9\nassert sq(2) in (4,)\nassert 0 < sq(1) <= 1\n", NULL);
  CHECK_STR(verdict(&r, &why), "passed");
  done(&r);
  r = run("class A:\n    def __eq__(s, o): return True\ndef sq(x):\n    return A()\n", "assert sq(3) == 9\n", NULL);
  CHECK_STR(verdict(&r, &why), "failed");
  CHECK_STR(why, SQ_VERDICT_EQUAL_TO_ANYTHING);
  done(&r);

  /* Honest values that are not plain data pass: objects, namedtuples,
   * Counters, deques, numbers of the standard library, generators. */
  r = run("import collections, fractions\nP = collections.namedtuple('P', 'x y')\n"
          "class Box:\n    def __init__(s, v): s.v = v\n    def __eq__(s, o): return isinstance(o, Box) and s.v == o.v\n"
          "def f():\n    return [P(1, 2), collections.Counter('aab'), collections.deque([1]), fractions.Fraction(1, 3), Box(1)]\n",
          "v = f()\nassert v[0] == (1, 2) and v[1] == {'a': 2, 'b': 1} and v[2] == collections.deque([1])\n"
          "assert v[3] == fractions.Fraction(2, 6) and v[4] == Box(1) and v[4] != Box(2)\nassert list(x for x in [1]) == [1]\n",
          NULL);
  CHECK_STR(verdict(&r, &why), "passed");
  if (why) fprintf(stderr, "%s\n", r.err);
  done(&r);

  /* The code's __main__ holds nothing of the harness; __name__ is '__main__'. */
  r = run("import sys\nnames = sorted(k for k in globals() if not k.startswith('__'))\n"
          "assert names == ['sys'], names\nassert __name__ == '__main__'\n"
          "assert sys.modules['__main__'].__dict__ is globals()\n",
          "assert names == ['sys']\n", NULL);
  CHECK_STR(verdict(&r, &why), "passed");
  if (why) fprintf(stderr, "%s\n", r.err);
  done(&r);

  /* Code that swallows the tests into one of its statements (here a
   * string that the quotes in the tests' comment close) does not get to
   * skip them. */
  r = run("def add(a, b):\n    return 0\n_ = '''\n", "assert add(1, 2) == 3\n# a note: '''\n", NULL);
  CHECK_STR(verdict(&r, &why), "runtime_error");
  CHECK_CONTAINS(r.err, "runs on into the tests");
  CHECK_CONTAINS(r.err, "main.py\", line 3\n");
  done(&r);

  /* Replacing builtins does not skip the tests. */
  wrong_add("builtins.exec replaced", "import builtins\nbuiltins.exec = lambda *a, **k: None\n"
            "builtins.compile = lambda *a, **k: None\n", "", NULL);

  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
  return sq_check_done("test_harness");
}
