/* test_workspace.c: files in and out of a task and bash programs, through
 * workspace.py in the real jail (both modes): files written into scratch
 * before the program, new and changed ones back after it, cut at the
 * budget and listed, never taken from a forged block; and the block read
 * off stderr by sq_workspace_take_files alone. Skips (77) without
 * /usr/bin/python3 or /bin/bash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "compiled.h"
#include "errors.h"
#include "harness.h"
#include "jail.h"
#include "task.h"
#include "workspace.h"

static const char python[] = "/usr/bin/python3";
static sq_jail *jail;
static sq_jail_mode mode;
static bool force_prelude; /* programs made to call the prelude, which the jail may not have */

/* Parses task JSON, runs it as the worker would (harness, then workspace,
 * with a compiled language's build from use when not NULL), takes the
 * files off stderr into f. */
static void run_task_with(const char *json, const sq_workspace_build_use *use, sq_jail_outcome *o,
                          sq_workspace_files *f) {
  sq_task *t = NULL;
  char err[256] = "";
  CHECK_EQ(sq_task_parse(json, strlen(json), 0, &t, err, sizeof err), 0);
  CHECK_STR(err, "");
  if (!t) return;
  CHECK(sq_workspace_applies(t));
  char *inner = NULL, *prog = NULL;
  if (t->language == SQ_TASK_PYTHON) CHECK_EQ(sq_harness_program(t, t->code, &inner), 0);
  CHECK_EQ(sq_workspace_program(t, inner ? inner : t->code, NULL, use,
                                force_prelude || (sq_jail_prelude_in_force(jail) && mode == SQ_JAIL_MODE_WARM),
                                &prog), 0);
  sq_jail_limits lim = {.wall_ms = 10000, .cpu_ms = 10000, .memory_mib = 256,
                        .output_kib = 64 + (t->n_fetch ? SQ_WORKSPACE_OUTPUT_KIB : 0) + (use ? 1024 : 0)};
  sq_language_limits(t->language, &lim);
  *o = (sq_jail_outcome){0};
  CHECK_EQ(sq_jail_run_mode(jail, mode, prog, strlen(prog), &lim, t->id, o), 0);
  CHECK_EQ(sq_workspace_take_files(o, 64, f), 0);
  free(inner);
  free(prog);
  sq_task_free(t);
}

static void run_task(const char *json, sq_jail_outcome *o, sq_workspace_files *f) { run_task_with(json, NULL, o, f); }

static const sq_workspace_file *file_named(const sq_workspace_files *f, const char *name) {
  for (size_t i = 0; i < f->n; i++)
    if (strcmp(f->files[i].name, name) == 0) return &f->files[i];
  return NULL;
}

/* Files in ("hi", a nested one), a new file and a changed one back; the
 * unchanged input and main.py do not come back. */
static void test_python_files(void) {
  sq_jail_outcome o;
  sq_workspace_files f;
  run_task("{\"id\":\"py\",\"code\":\"import helper\\nprint(open('a.txt').read(), open('d/e.bin','rb').read())\\n"
           "open('out.txt','w').write('made')\\nopen('a.txt','a').write('!')\\nprint(helper.X)\\n\","
           "\"files\":{\"a.txt\":\"aGk=\",\"d/e.bin\":\"AAEC\",\"helper.py\":\"WCA9IDQy\"},\"fetch_files\":[\"*\"]}",
           &o, &f);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_OK);
  CHECK_STR(o.stdout_buf, "hi b'\\x00\\x01\\x02'\n42\n");
  CHECK_STR(o.stderr_buf, "");
  CHECK(f.sent);
  CHECK_EQ(f.n, 2);
  const sq_workspace_file *a = file_named(&f, "a.txt"), *made = file_named(&f, "out.txt");
  CHECK(a && a->len == 3 && memcmp(a->data, "hi!", 3) == 0 && !a->truncated);
  CHECK(made && made->len == 4 && memcmp(made->data, "made", 4) == 0);
  CHECK(!file_named(&f, "d/e.bin") && !file_named(&f, "main.py") && !file_named(&f, "helper.py"));
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);

  /* an exception: the traceback shows main.py's frame only, files still come back */
  run_task("{\"id\":\"ex\",\"code\":\"open('x.log','w').write('1')\\nraise ValueError('no')\\n\","
           "\"fetch_files\":[\"*.log\"]}", &o, &f);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_ERROR);
  CHECK_EQ(o.exit_code, 1);
  CHECK_CONTAINS(o.stderr_buf, "File \"/scratch/main.py\", line 2, in <module>");
  CHECK_CONTAINS(o.stderr_buf, "ValueError: no");
  CHECK(strstr(o.stderr_buf, "workspace") == NULL && strstr(o.stderr_buf, "sandq-files") == NULL);
  CHECK(f.sent && f.n == 1 && file_named(&f, "x.log"));
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);

  /* with tests: the harness still proves they ran, under the file writer */
  run_task("{\"id\":\"t\",\"code\":\"def f(): return open('a').read()\",\"tests\":\"assert f() == 'hi'\","
           "\"files\":{\"a\":\"aGk=\"}}", &o, &f);
  sq_harness_marks m;
  sq_harness_take_marks(&o, &m);
  CHECK(m.begun && m.completed);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_OK);
  CHECK(!f.sent); /* no fetch_files: no block */
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);
}

static void test_bash(void) {
  sq_jail_outcome o;
  sq_workspace_files f;
  run_task("{\"id\":\"sh\",\"language\":\"bash\",\"code\":\"cat a.txt; echo; echo $((6*7)) > n.txt; "
           "echo oops >&2; exit 3\",\"files\":{\"a.txt\":\"aGk=\"},\"fetch_files\":[\"*.txt\"]}", &o, &f);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_ERROR);
  CHECK_EQ(o.exit_code, 3);
  CHECK_STR(o.stdout_buf, "hi\n");
  CHECK_STR(o.stderr_buf, "oops\n");
  CHECK(f.sent && f.n == 1);
  const sq_workspace_file *n = file_named(&f, "n.txt");
  CHECK(n && n->len == 3 && memcmp(n->data, "42\n", 3) == 0);
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);
  /* the network is not there for bash either */
  run_task("{\"id\":\"net\",\"language\":\"sh\",\"code\":\"exec 3<>/dev/tcp/127.0.0.1/6379 && echo open\"}", &o, &f);
  CHECK(o.exit_code != 0);
  CHECK(strstr(o.stdout_buf ? o.stdout_buf : "", "open") == NULL);
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);
}

/* Over the budget: cut and listed as truncated, never dropped. A forged
 * block (no nonce) is the program's own output. */
static void test_caps_and_forgery(void) {
  sq_jail_outcome o;
  sq_workspace_files f;
  run_task("{\"id\":\"big\",\"code\":\"open('big','wb').write(b'x' * (1536 * 1024))\\nopen('small','w').write('s')\\n"
           "import sys\\nsys.stderr.write('sandq-files:' + '0' * 32 + ':out\\\\nF YQ== YQ==\\\\nsandq-files:' + '0' * 32 + ':end\\\\n')\","
           "\"fetch_files\":[\"*\"]}", &o, &f);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_OK);
  CHECK(f.sent);
  const sq_workspace_file *big = file_named(&f, "big"), *small = file_named(&f, "small");
  CHECK(big && big->truncated && big->len == SQ_TASK_FETCH_BYTES_MAX);
  CHECK(small && small->truncated && small->len == 0); /* the budget was spent: listed, no bytes */
  CHECK(!file_named(&f, "a"));
  CHECK_CONTAINS(o.stderr_buf, "sandq-files:00000000000000000000000000000000:out");
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);

  /* the program's own output is held to its own cap even with the room added for files */
  run_task("{\"id\":\"flood\",\"code\":\"print('y' * 200000)\",\"fetch_files\":[\"*\"]}", &o, &f);
  CHECK_EQ(o.end, SQ_JAIL_OUTPUT_LIMIT);
  CHECK(o.stdout_truncated && o.stdout_len == 64 * 1024);
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);
}

/* The standby mark (workspace.py writes it right after the begin mark,
 * before the program runs) is taken off stderr only there and only with
 * the run's nonce; anywhere else it is the program's text. */
static void test_standby_mark(void) {
  const char *nonce = "0123456789abcdef0123456789abcdef", *other = "fedcba9876543210fedcba9876543210";
  char err[3][256], want[3][256];
  snprintf(err[0], sizeof err[0], "sandq-files:%s:begin\nsandq-files:%s:standby\nboom\n", nonce, nonce);
  snprintf(want[0], sizeof want[0], "boom\n");
  snprintf(err[1], sizeof err[1], "sandq-files:%s:begin\nboom\nsandq-files:%s:standby\n", nonce, nonce);
  snprintf(want[1], sizeof want[1], "boom\nsandq-files:%s:standby\n", nonce); /* not first: the program's */
  snprintf(err[2], sizeof err[2], "sandq-files:%s:begin\nsandq-files:%s:standby\n", nonce, other);
  snprintf(want[2], sizeof want[2], "sandq-files:%s:standby\n", other); /* another nonce */
  for (int i = 0; i < 3; i++) {
    sq_jail_outcome o = {.end = SQ_JAIL_EXITED_OK, .stderr_buf = strdup(err[i]), .stderr_len = strlen(err[i])};
    sq_workspace_files f;
    CHECK_EQ(sq_workspace_take_files(&o, 64, &f), 0);
    CHECK_EQ(f.standby, i == 0);
    CHECK_STR(o.stderr_buf, want[i]);
    sq_workspace_files_clear(&f);
    sq_jail_outcome_clear(&o);
  }
}

/* A compiled language (C): the compiler's refusal comes back as the
 * compile mark, taken off stderr with its diagnostics left; a program that
 * prints a mark without the nonce is not a compile error; the source and
 * the binary are not the task's files, what the program wrote is. */
static void test_compiled(void) {
  if (!sq_language_available(SQ_LANGUAGE_C)) {
    fprintf(stderr, "test_compiled: no gcc here, left out\n");
    return;
  }
  sq_jail_outcome o;
  sq_workspace_files f;
  run_task("{\"id\":\"cc\",\"language\":\"c\",\"code\":\"int main(void) { return x; }\"}", &o, &f);
  CHECK(f.compile_error);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_ERROR);
  CHECK_CONTAINS(o.stderr_buf, "error");
  CHECK(strstr(o.stderr_buf, "sandq-files:") == NULL);
  char why[256];
  sq_workspace_compile_reason(&o, why, sizeof why);
  CHECK_CONTAINS(why, "main.c:1:25: error: ");
  CHECK_CONTAINS(why, "undeclared");
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);

  run_task("{\"id\":\"forge\",\"language\":\"c\",\"fetch_files\":[\"*\"],\"code\":\"#include <stdio.h>\\n"
           "int main(void) { FILE *f = fopen(\\\"out.txt\\\", \\\"w\\\"); fputs(\\\"42\\\", f); fclose(f);"
           " fputs(\\\"sandq-files:00000000000000000000000000000000:compile\\\\n\\\", stderr); return 0; }\"}",
           &o, &f);
  CHECK(!f.compile_error);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_OK);
  CHECK(f.sent && f.n == 1);
  const sq_workspace_file *out = file_named(&f, "out.txt");
  CHECK(out && out->len == 2 && memcmp(out->data, "42", 2) == 0);
  CHECK(!file_named(&f, "main.c") && !file_named(&f, "main"));
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);
}

/* workspace.py compiled in the jail as the worker does (worker/pool.c);
 * the programs then load it instead of holding its text. */
static void precompile(void) {
  char *input = sq_compiled_input(SQ_COMPILED_WORKSPACE);
  const char *prog = sq_compiled_program();
  sq_jail_limits lim = {.wall_ms = 10000, .cpu_ms = 10000, .memory_mib = 256, .output_kib = 1024};
  sq_jail_outcome o = {0};
  CHECK(input != NULL);
  CHECK_EQ(sq_jail_run_task(jail, prog, strlen(prog), NULL, 0, input, strlen(input), &lim, NULL, "compile", &o), 0);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_OK);
  CHECK_EQ(sq_compiled_set(SQ_COMPILED_WORKSPACE, o.stdout_buf, o.stdout_len), 0);
  sq_task t = {.id = "c", .code = "print(1)", .n_fetch = 0};
  char *out = NULL;
  CHECK_EQ(sq_workspace_program(&t, "print(1)", NULL, NULL, false, &out), 0);
  CHECK_CONTAINS(out, "exec(marshal.loads(binascii.a2b_base64(b'");
  CHECK(out && strstr(out, "def send_files") == NULL);
  free(out);
  sq_jail_outcome_clear(&o);
  free(input);
}

/* The compile step's products come back as the build block, taken off
 * stderr before anything of the program; placed into a fresh scratch they
 * run as the compiler's did, without compiling (no compiler output, the
 * same result). A program that prints a build block of its own (it has no
 * nonce, and it runs after the real one) sends nothing; a build over the
 * size asked for is not sent. */
static void test_build(void) {
  if (!sq_language_available(SQ_LANGUAGE_C)) {
    fprintf(stderr, "test_build: no gcc here, left out\n");
    return;
  }
  const char *json = "{\"id\":\"b\",\"language\":\"c\",\"code\":\"#include <stdio.h>\\n"
                     "int main(void) { puts(\\\"built\\\"); fputs(\\\"sandq-files:00000000000000000000000000000000"
                     ":build\\\\nX bWFpbg== eA==\\\\nsandq-files:00000000000000000000000000000000:built\\\\n\\\", stderr);"
                     " return 4; }\"}";
  sq_jail_outcome o;
  sq_workspace_files f, g;
  sq_workspace_build_use emit = {.emit_max_bytes = 1 << 20};
  run_task_with(json, &emit, &o, &f);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_ERROR);
  CHECK_EQ(o.exit_code, 4);
  CHECK_STR(o.stdout_buf, "built\n");
  CHECK_CONTAINS(o.stderr_buf, ":build\nX bWFpbg== eA==\n"); /* the program's own text, left as it is */
  CHECK_EQ(f.build.n, 1);
  const sq_workspace_build_file *bin = f.build.n ? &f.build.files[0] : NULL;
  CHECK(bin && strcmp(bin->name, "main") == 0 && bin->executable && bin->len > 1000 && memcmp(bin->data, "\177ELF", 4) == 0);
  CHECK_EQ(f.build.bytes, bin ? bin->len : 0);
  sq_jail_outcome_clear(&o);

  sq_workspace_build_use cached = {.cached = &f.build};
  run_task_with(json, &cached, &o, &g);
  CHECK_EQ(o.end, SQ_JAIL_EXITED_ERROR);
  CHECK_EQ(o.exit_code, 4);
  CHECK_STR(o.stdout_buf, "built\n");
  CHECK_EQ(g.build.n, 0); /* nothing compiled, nothing sent */
  sq_workspace_files_clear(&g);
  sq_jail_outcome_clear(&o);
  sq_workspace_files_clear(&f);

  sq_workspace_build_use small = {.emit_max_bytes = 100};
  run_task_with(json, &small, &o, &f);
  CHECK_EQ(o.exit_code, 4);
  CHECK_EQ(f.build.n, 0);
  sq_workspace_files_clear(&f);
  sq_jail_outcome_clear(&o);
}

/* On zygotes that loaded workspace.py as the jail's prelude (a warm
 * worker's): the program only calls it, and what a task does to the
 * loaded module (or to the zygote's scratch) stays with that task. */
static void test_prelude(void) {
  /* The full zygote up first: a run that names the prelude goes there,
   * and to the lean one only while the full one starts. */
  for (int i = 0; i < 200; i++) {
    static const char probe[] = "import sys\nprint('sandq_prelude' in sys.modules)\n";
    sq_jail_outcome p;
    CHECK_EQ(sq_jail_run_mode(jail, mode, probe, strlen(probe), &(sq_jail_limits){.wall_ms = 10000, .cpu_ms = 10000,
             .memory_mib = 256, .output_kib = 64}, "probe", &p), 0);
    bool up = p.stdout_buf && strcmp(p.stdout_buf, "True\n") == 0;
    sq_jail_outcome_clear(&p);
    if (up) break;
    usleep(50 * 1000);
  }
  sq_task t = {.id = "p", .code = "print(1)", .n_fetch = 0};
  char *out = NULL;
  CHECK_EQ(sq_workspace_program(&t, "print(1)", NULL, NULL, true, &out), 0);
  CHECK_CONTAINS(out, "sys.modules['sandq_prelude'].main");
  CHECK(out && strstr(out, "def send_files") == NULL); /* its own copy is in base64 */
  free(out);
  sq_jail_outcome o;
  sq_workspace_files f;
  for (int i = 0; i < 3; i++) { /* the same task thrice: each finds what the rehearsal left, not the last task */
    run_task("{\"id\":\"spoil\",\"code\":\"import sys, os\\nws = sys.modules['sandq_prelude']\\n"
             "print(hasattr(ws, 'spoiled'), sorted(os.listdir('.')))\\nws.spoiled = True\\n"
             "open('left','w').write('x')\\n\",\"files\":{\"in.txt\":\"eA==\"},\"fetch_files\":[\"*\"]}", &o, &f);
    CHECK_EQ(o.end, SQ_JAIL_EXITED_OK);
    CHECK_STR(o.stdout_buf, "False ['in.txt', 'main.py']\n");
    CHECK_STR(o.stderr_buf, "");
    CHECK(f.sent && f.n == 1 && file_named(&f, "left"));
    sq_workspace_files_clear(&f);
    sq_jail_outcome_clear(&o);
  }
}

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  if (access(python, X_OK) != 0 || access("/bin/bash", X_OK) != 0) {
    fprintf(stderr, "SKIP: %s or /bin/bash is not installed\n", python);
    return 77;
  }
  char root[64];
  snprintf(root, sizeof root, "/tmp/sandq-workspace-test.%d", (int)getpid());
  sq_language_probe();
  test_standby_mark();
  sq_jail_config cfg = {.python_path = python, .scratch_root = root, .pool_size = 1};
  int rc = sq_jail_new(&cfg, &jail);
  CHECK_EQ(rc, 0);
  if (rc != 0) return sq_check_done("test_workspace");
  sq_jail_mode modes[] = {SQ_JAIL_MODE_SPAWN, SQ_JAIL_MODE_WARM};
  for (int pass = 0; pass < 2; pass++) { /* workspace.py as text, then precompiled as the worker has it */
    if (pass == 1) precompile();
    for (int i = 0; i < 2; i++) {
      mode = sq_jail_mode_in_force(jail, NULL) == SQ_JAIL_MODE_SPAWN ? SQ_JAIL_MODE_SPAWN : modes[i];
      test_python_files();
      test_bash();
      test_caps_and_forgery();
      test_compiled();
      test_build();
      /* A program made for the prelude on a zygote without it (a lean
       * one, or spawn mode): it runs its own copy, the same. */
      force_prelude = true;
      test_python_files();
      test_bash();
      force_prelude = false;
    }
  }
  sq_compiled_clear();
  sq_jail_free(jail);
  /* A warm worker's jail: workspace.py as its prelude, rehearsed in each zygote. */
  cfg.mode = SQ_JAIL_MODE_WARM;
  cfg.prelude = sq_workspace_source();
  CHECK_EQ(sq_jail_new(&cfg, &jail), 0);
  if (jail && sq_jail_prelude_in_force(jail)) {
    mode = SQ_JAIL_MODE_WARM;
    test_prelude();
    test_python_files();
    test_bash();
    test_caps_and_forgery();
    test_compiled();
    test_build();
  } else if (jail) {
    fprintf(stderr, "test_workspace: no warm mode on this host (%s): the prelude left out\n",
                    sq_jail_ns_missing_reason() ? sq_jail_ns_missing_reason() : "?");
  }
  sq_jail_free(jail);
  rmdir(root);
  return sq_check_done("test_workspace");
}
