/* test_task.c: task parsing, good and bad input, and program assembly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "json_scan.h"
#include "task.h"
#include "util.h"

static int parse(const char *json, sq_task **t, char *err) {
  return sq_task_parse(json, strlen(json), 4096, t, err, 256);
}

static void bad(const char *json, int code, const char *needle, const char *salvaged_id);

/* Like parse, for text holding raw NUL bytes (len given). */
static int parse_n(const char *json, size_t len, sq_task **t, char *err) {
  return sq_task_parse(json, len, 4096, t, err, 256);
}

/* NUL characters, invalid UTF-8, deep
 * metadata and numbers that do not fit are refused naming the field, never
 * cut short, remapped or cast blindly. */
static void test_exact_strings(void) {
  sq_task *t = NULL;
  char err[256] = "";
  /* tests holding \u0000 came back "passed": the second assert was cut off */
  CHECK_EQ(parse("{\"id\":\"n1\",\"code\":\"def f(x): return x\","
                 "\"tests\":\"assert f(1)==1\\u0000\\nassert f(2)==3\"}", &t, err), SQ_ETASK);
  CHECK_CONTAINS(err, "tests: holds a NUL character");
  CHECK(t && strcmp(t->id, "n1") == 0); /* filed under its own id */
  sq_task_free(t);
  bad("{\"id\":\"n2\",\"code\":\"print(1)\\u0000print(2)\"}", SQ_ETASK, "code: holds a NUL", "n2");
  bad("{\"id\":\"n3\",\"prompt\":\"p\\u0000q\"}", SQ_ETASK, "prompt: holds a NUL", "n3");
  bad("{\"id\":\"n4\",\"code\":\"1\",\"expected_stdout\":\"a\\u0000\"}", SQ_ETASK, "expected_stdout: holds a NUL", "n4");
  /* ids t\u0000one and t\u0000two collapsed to t: refused, and no id salvaged */
  bad("{\"id\":\"t\\u0000one\",\"code\":\"1\"}", SQ_ETASK, "id: holds a NUL", NULL);
  bad("{\"code\":\"1\",\"id\":\"t\\u0000two\"}", SQ_ETASK, "id: holds a NUL", NULL);
  /* a field name with a NUL must not pass for "id" */
  bad("{\"id\\u0000x\":\"t\",\"code\":\"1\"}", SQ_ETASK, "holds a NUL", NULL);
  /* an escaped backslash before u0000 is not a NUL */
  CHECK_EQ(parse("{\"id\":\"bs\",\"code\":\"s = '\\\\u0000'\"}", &t, err), 0);
  CHECK_STR(t->code, "s = '\\u0000'");
  sq_task_free(t);
  /* a raw NUL byte inside a string */
  static const char raw[] = "{\"id\":\"r\",\"code\":\"a\0b\"}";
  CHECK_EQ(parse_n(raw, sizeof raw - 1, &t, err), SQ_ETASK);
  CHECK_CONTAINS(err, "code: holds a NUL");
  sq_task_free(t);
  /* batch and metadata with a NUL are not salvaged */
  CHECK_EQ(parse("{\"id\":\"m\",\"batch\":\"b\\u0000c\",\"metadata\":{\"k\":\"v\\u0000w\"},\"code\":5}", &t, err),
           SQ_ETASK);
  CHECK(t && strcmp(t->batch, "default") == 0 && t->metadata_json == NULL);
  sq_task_free(t);
  bad("{\"id\":\"m2\",\"code\":\"1\",\"metadata\":{\"k\":[\"\\u0000\"]}}", SQ_ETASK, "metadata: holds a NUL", "m2");

  /* invalid UTF-8 ids: a\xff and a\xfe both became "a\ufffd" */
  bad("{\"id\":\"a\xff\",\"code\":\"1\"}", SQ_ETASK, "id: must be 1-128 bytes of valid UTF-8", NULL);
  bad("{\"id\":\"a\xfe\",\"code\":\"1\"}", SQ_ETASK, "valid UTF-8", NULL);
  bad("{\"id\":\"\xc0\x80\",\"code\":\"1\"}", SQ_ETASK, "valid UTF-8", NULL); /* overlong NUL */
  bad("{\"id\":\"a\xc2\x9b\",\"code\":\"1\"}", SQ_ETASK, "without control characters", NULL); /* C1 CSI */
  CHECK_EQ(parse("{\"id\":\"caf\xc3\xa9\xc2\xa0\",\"code\":\"1\"}", &t, err), 0);
  sq_task_free(t);

  /* metadata: deep or invalid UTF-8 became null in the result */
  char deep[1024];
  size_t n = (size_t)snprintf(deep, sizeof deep, "{\"id\":\"d\",\"code\":\"1\",\"metadata\":{\"a\":");
  for (int i = 0; i < 120; i++) deep[n++] = '[';
  for (int i = 0; i < 120; i++) deep[n++] = ']';
  snprintf(deep + n, sizeof deep - n, "}}");
  bad(deep, SQ_ETASK, "metadata: nested deeper than 64 levels", "d");
  bad("{\"id\":\"u\",\"code\":\"1\",\"metadata\":{\"expect\":\"passed\",\"k\":\"\xff\"}}", SQ_ETASK,
      "metadata: holds a string that is not valid UTF-8", "u");
  CHECK_EQ(parse("{\"id\":\"ok\",\"code\":\"1\",\"metadata\":{\"expect\":\"passed\",\"n\":[[[1]]]}}", &t, err), 0);
  CHECK_STR(t->metadata_json, "{\"expect\":\"passed\",\"n\":[[[1]]]}");
  sq_task_free(t);

  /* numbers: no float-to-int conversion out of range (UBSan), ranges named */
  bad("{\"id\":\"l\",\"code\":\"1\",\"limits\":{\"wall_ms\":1e309}}", SQ_ETASK, "limits.wall_ms: must be an integer in [1, 86400000]", "l");
  bad("{\"id\":\"l\",\"code\":\"1\",\"limits\":{\"cpu_ms\":9223372036854775808}}", SQ_ETASK, "limits.cpu_ms", "l");
  bad("{\"id\":\"l\",\"code\":\"1\",\"limits\":{\"output_kib\":-1e309}}", SQ_ETASK, "limits.output_kib", "l");
  bad("{\"id\":\"e\",\"code\":\"1\",\"enqueued_at_ms\":1e309}", SQ_ETASK, "enqueued_at_ms: must be an integer", "e");
  bad("{\"id\":\"e\",\"code\":\"1\",\"enqueued_at_ms\":9223372036854775808}", SQ_ETASK, "enqueued_at_ms", "e");
  bad("{\"id\":\"e\",\"code\":\"1\",\"enqueued_at_ms\":1e19}", SQ_ETASK, "enqueued_at_ms", "e");
  bad("{\"id\":\"e\",\"code\":\"1\",\"enqueued_at_ms\":12.5}", SQ_ETASK, "enqueued_at_ms", "e");
  /* memory_mib under the config's floor of 16: spawn mode failed with "failed to map segment" */
  bad("{\"id\":\"m\",\"code\":\"1\",\"limits\":{\"memory_mib\":15}}", SQ_ETASK,
      "limits.memory_mib: must be an integer in [16, 1048576]", "m");
  bad("{\"id\":\"m\",\"code\":\"1\",\"limits\":{\"memory_mib\":1}}", SQ_ETASK, "limits.memory_mib", "m");
  CHECK_EQ(parse("{\"id\":\"m\",\"code\":\"1\",\"limits\":{\"memory_mib\":16}}", &t, err), 0);
  sq_task_free(t);
  /* idempotency keys may be as long as documented */
  char key[400];
  memset(key, 'k', 256);
  key[256] = 0;
  char line[600];
  snprintf(line, sizeof line, "{\"id\":\"i\",\"code\":\"1\",\"idempotency_key\":\"%s\"}", key);
  CHECK_EQ(parse(line, &t, err), 0);
  sq_task_free(t);
}

/* language, files and fetch_files: what is carried, and each refusal
 * naming the field or the cap. */
static void test_files(void) {
  sq_task *t = NULL;
  char err[256] = "";
  CHECK_EQ(parse("{\"id\":\"f\",\"code\":\"ls\",\"language\":\"sh\",\"files\":{\"a.txt\":\"aGk=\","
                 "\"d/e/b.bin\":\"\",\"c\":\"AAEC\"},\"fetch_files\":[\"*.png\",\"out/*\"]}", &t, err), 0);
  CHECK_STR(err, "");
  CHECK_EQ(t->language, SQ_TASK_BASH);
  CHECK_EQ(t->n_files, 3);
  CHECK_STR(t->files[0].name, "a.txt");
  CHECK_STR(t->files[0].base64, "aGk=");
  CHECK_EQ(t->files[0].bytes, 2);
  CHECK_STR(t->files[1].name, "d/e/b.bin");
  CHECK_EQ(t->files[1].bytes, 0);
  CHECK_EQ(t->files[2].bytes, 3);
  CHECK_EQ(t->n_fetch, 2);
  CHECK_STR(t->fetch_files[1], "out/*");
  sq_task_free(t);
  CHECK_EQ(parse("{\"id\":\"f\",\"code\":\"1\",\"language\":\"python\",\"files\":{},\"fetch_files\":[]}", &t, err), 0);
  CHECK_EQ(t->language, SQ_TASK_PYTHON);
  CHECK_EQ(t->n_files, 0);
  CHECK_EQ(t->n_fetch, 0);
  sq_task_free(t);
  CHECK_EQ(parse("{\"id\":\"f\",\"code\":\"echo\",\"language\":\"bash\"}", &t, err), 0);
  CHECK_EQ(t->language, SQ_TASK_BASH);
  sq_task_free(t);

  /* languages: every name and alias of the table; tests follow the code in
   * any language; unknown ones name them all; Python-only fields */
  static const struct {
    const char *name;
    sq_task_language id;
  } names[] = {{"javascript", SQ_LANGUAGE_JAVASCRIPT}, {"node", SQ_LANGUAGE_JAVASCRIPT},
               {"ts", SQ_LANGUAGE_TYPESCRIPT},         {"c", SQ_LANGUAGE_C},
               {"c++", SQ_LANGUAGE_CPP},               {"cpp", SQ_LANGUAGE_CPP},
               {"go", SQ_LANGUAGE_GO},                 {"rust", SQ_LANGUAGE_RUST},
               {"java", SQ_LANGUAGE_JAVA},             {"ruby", SQ_LANGUAGE_RUBY},
               {"php", SQ_LANGUAGE_PHP},               {"lua", SQ_LANGUAGE_LUA},
               {"perl", SQ_LANGUAGE_PERL}};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char json[128];
    snprintf(json, sizeof json, "{\"id\":\"l\",\"code\":\"x\",\"tests\":\"y\",\"language\":\"%s\"}", names[i].name);
    CHECK_EQ(parse(json, &t, err), 0);
    CHECK_EQ(t->language, names[i].id);
    CHECK_STR(t->tests, "y");
    sq_task_free(t);
  }
  bad("{\"id\":\"l\",\"code\":\"1\",\"language\":\"cobol\"}", SQ_ETASK,
      "language: 'cobol' is not a language sandq runs (it knows: python, bash, sh, javascript, js, node, typescript", "l");
  bad("{\"id\":\"l\",\"code\":\"1\",\"language\":\"Python\"}", SQ_ETASK, "'Python' is not a language", "l");
  bad("{\"id\":\"l\",\"code\":\"1\",\"language\":3}", SQ_ETASK, "language: must be a string", "l");
  bad("{\"id\":\"l\",\"code\":\"1\",\"language\":\"bash\",\"entry_point\":\"f\"}", SQ_ETASK,
      "entry_point: only with language python", "l");
  /* A prompt in another language asks the model for a program in it. */
  {
    sq_task *bash = NULL;
    char why[256] = "";
    CHECK_EQ(parse("{\"id\":\"l\",\"prompt\":\"p\",\"language\":\"bash\"}", &bash, why), 0);
    if (bash) CHECK_EQ(bash->language, SQ_LANGUAGE_BASH);
    sq_task_free(bash);
  }

  /* profile: a name, looked up by the worker (an unknown one is its invalid_task) */
  CHECK_EQ(parse("{\"id\":\"p\",\"code\":\"1\",\"profile\":\"data\"}", &t, err), 0);
  CHECK_STR(t->profile, "data");
  sq_task_free(t);
  CHECK_EQ(parse("{\"id\":\"p\",\"code\":\"1\"}", &t, err), 0);
  CHECK(t->profile == NULL);
  sq_task_free(t);
  bad("{\"id\":\"p\",\"code\":\"1\",\"profile\":7}", SQ_ETASK, "profile: must be a string", "p");
  bad("{\"id\":\"p\",\"code\":\"1\",\"profile\":\"\"}", SQ_ETASK, "profile: must be 1-31 characters", "p");
  bad("{\"id\":\"p\",\"code\":\"1\",\"profile\":\"a/b\"}", SQ_ETASK, "profile: must be 1-31 characters", "p");

  /* names: relative, no '..' or '.', no links to anywhere (a name is a plain file) */
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"/etc/passwd\":\"\"}}", SQ_ETASK,
      "files: '/etc/passwd' is not a relative file name", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"../x\":\"\"}}", SQ_ETASK, "files: '../x' is not a relative", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"a/../../x\":\"\"}}", SQ_ETASK, "not a relative", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"a//b\":\"\"}}", SQ_ETASK, "not a relative", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"a/\":\"\"}}", SQ_ETASK, "not a relative", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"./a\":\"\"}}", SQ_ETASK, "not a relative", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"\":\"\"}}", SQ_ETASK, "not a relative", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"a\\nb\":\"\"}}", SQ_ETASK, "not a relative", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"main.py\":\"\"}}", SQ_ETASK,
      "files: 'main.py' is the program's own name", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"a\":\"\",\"a\":\"\"}}", SQ_ETASK, "files.a: appears twice", "n");
  bad("{\"id\":\"n\",\"code\":\"1\",\"files\":{\"a\":\"\",\"a/b\":\"\"}}", SQ_ETASK,
      "one is a directory of the other", "n");
  CHECK(sq_task_relative_name_ok("a..b/c.d"));
  CHECK(!sq_task_relative_name_ok(".."));
  char longname[300];
  memset(longname, 'x', 256);
  longname[256] = 0;
  CHECK(!sq_task_relative_name_ok(longname));
  longname[255] = 0;
  CHECK(sq_task_relative_name_ok(longname));

  /* contents: strict base64, decoded sizes counted against the caps */
  bad("{\"id\":\"b\",\"code\":\"1\",\"files\":{\"a\":\"aGk\"}}", SQ_ETASK, "files.a: not valid base64", "b");
  bad("{\"id\":\"b\",\"code\":\"1\",\"files\":{\"a\":\"a=Gk\"}}", SQ_ETASK, "not valid base64", "b");
  bad("{\"id\":\"b\",\"code\":\"1\",\"files\":{\"a\":\"aG k\"}}", SQ_ETASK, "not valid base64", "b");
  bad("{\"id\":\"b\",\"code\":\"1\",\"files\":{\"a\":5}}", SQ_ETASK, "files.a: must be a base64 string", "b");
  bad("{\"id\":\"b\",\"code\":\"1\",\"files\":[\"a\"]}", SQ_ETASK, "files: must be an object", "b");
  bad("{\"id\":\"g\",\"code\":\"1\",\"fetch_files\":\"*\"}", SQ_ETASK, "fetch_files: must be an array", "g");
  bad("{\"id\":\"g\",\"code\":\"1\",\"fetch_files\":[\"*\",\"../*\"]}", SQ_ETASK,
      "fetch_files[1]: must be a relative glob", "g");
  bad("{\"id\":\"g\",\"code\":\"1\",\"fetch_files\":[\"/tmp/*\"]}", SQ_ETASK, "fetch_files[0]", "g");

  /* the caps, each named: count of files, their total size, count of globs */
  sq_buf b = {0};
  CHECK_EQ(sq_buf_appendf(&b, "{\"id\":\"c\",\"code\":\"1\",\"files\":{"), 0);
  for (int i = 0; i <= SQ_TASK_FILES_MAX; i++) CHECK_EQ(sq_buf_appendf(&b, "%s\"f%d\":\"\"", i ? "," : "", i), 0);
  CHECK_EQ(sq_buf_appendf(&b, "}}"), 0);
  CHECK_EQ(sq_task_parse(b.data, b.len, 0, &t, err, 256), SQ_ETASK);
  CHECK_CONTAINS(err, "files: 257 files, more than the 256 allowed");
  sq_task_free(t);
  sq_buf_clear(&b);
  CHECK_EQ(sq_buf_appendf(&b, "{\"id\":\"c\",\"code\":\"1\",\"files\":{\"a\":\""), 0);
  for (unsigned i = 0; i < SQ_TASK_FILES_BYTES_MAX / 3 + 1; i++) CHECK_EQ(sq_buf_appendf(&b, "AAAA"), 0);
  CHECK_EQ(sq_buf_appendf(&b, "\"}}"), 0);
  CHECK_EQ(sq_task_parse(b.data, b.len, 0, &t, err, 256), SQ_ETASK);
  CHECK_CONTAINS(err, "files: more than the 8388608 bytes allowed in all");
  sq_task_free(t);
  sq_buf_clear(&b);
  CHECK_EQ(sq_buf_appendf(&b, "{\"id\":\"c\",\"code\":\"1\",\"fetch_files\":["), 0);
  for (int i = 0; i <= SQ_TASK_FETCH_MAX; i++) CHECK_EQ(sq_buf_appendf(&b, "%s\"*\"", i ? "," : ""), 0);
  CHECK_EQ(sq_buf_appendf(&b, "]}"), 0);
  CHECK_EQ(sq_task_parse(b.data, b.len, 0, &t, err, 256), SQ_ETASK);
  CHECK_CONTAINS(err, "fetch_files: 33 globs, more than the 32 allowed");
  sq_task_free(t);
  sq_buf_clear(&b);
}

/* A task over max_task_kib is still filed under its own id
 * and batch when those can be read, never under _invalid with a raw id. */
static void test_too_big(void) {
  sq_task *t = NULL;
  char err[256] = "";
  char *big = malloc(10000);
  size_t n = (size_t)snprintf(big, 10000, "{\"id\":\"big\",\"batch\":\"b-9\",\"metadata\":{\"k\":1},\"code\":\"");
  memset(big + n, 'x', 9000);
  snprintf(big + n + 9000, 10000 - n - 9000, "\"}");
  CHECK_EQ(sq_task_parse(big, strlen(big), 4096, &t, err, sizeof err), SQ_ETOOBIG);
  CHECK_CONTAINS(err, "more than the 4096 allowed");
  CHECK(t != NULL);
  if (t) {
    CHECK_STR(t->id, "big");
    CHECK_STR(t->batch, "b-9");
    CHECK_STR(t->metadata_json, "{\"k\":1}");
    CHECK(t->code == NULL);
  }
  sq_task_free(t);
  free(big);
}

/* The scanner behind the NUL checks: which top-level member holds one. */
static void test_json_scan(void) {
  bool nul[5];
  const char *j = "{\"a\":{\"x\":[\"\\u0000\",{\"y\":1}]},\"b\":\"\\\\u0000\",\"c\\u0000\":1,\"d\":[1,2],\"e\":\"\\\"\\u0000\"}";
  memset(nul, 0, sizeof nul);
  CHECK_EQ(sq_json_nul_members(j, strlen(j), nul, 5), 3);
  CHECK(nul[0] && !nul[1] && nul[2] && !nul[3] && nul[4]);
  static const char raw[] = " {\"a\":1,\"b\":\"x\0\"}";
  memset(nul, 0, sizeof nul);
  CHECK_EQ(sq_json_nul_members(raw, sizeof raw - 1, nul, 1), 1); /* counted, not written past n */
  CHECK(!nul[0] && !nul[1]);
  CHECK_EQ(sq_json_nul_members("{}", 2, NULL, 0), 0);
}

/* Stamping: every batch/enqueued_at_ms goes, and NUL is refused, not cut. */
static void test_stamp(void) {
  char *stamped = NULL;
  const char *dup = "{\"id\":\"s\",\"batch\":\"a\",\"code\":\"1\",\"batch\":\"b\"}";
  CHECK_EQ(sq_task_stamp(dup, strlen(dup), "new", 7, &stamped), 0);
  CHECK_STR(stamped, "{\"id\":\"s\",\"code\":\"1\",\"batch\":\"new\",\"enqueued_at_ms\":7}");
  free(stamped);
  const char *nul = "{\"id\":\"s\",\"code\":\"a\\u0000b\"}";
  CHECK_EQ(sq_task_stamp(nul, strlen(nul), "new", 7, &stamped), SQ_ETASK);
  CHECK(stamped == NULL);
}

/* Expects json to be rejected with code, err mentioning needle, and the id
 * salvaged (or not). */
static void bad(const char *json, int code, const char *needle, const char *salvaged_id) {
  sq_task *t = NULL;
  char err[256] = "";
  CHECK_EQ(parse(json, &t, err), code);
  CHECK_CONTAINS(err, needle);
  if (salvaged_id) {
    CHECK(t != NULL);
    if (t) CHECK_STR(t->id, salvaged_id);
  } else {
    CHECK(t == NULL);
  }
  sq_task_free(t);
}

/* sq_task_salvage (the id and batch of a payload the parser refused): an id
 * or batch holding a NUL is never taken, so "t\u0000one" and "t\u0000two"
 * cannot both be filed as "t". */
static void test_salvage(void) {
  char id[SQ_TASK_ID_MAX + 1], batch[SQ_TASK_ID_MAX + 1];
  const char *ok = "{\"id\":\"x1\",\"batch\":\"b\",\"code\":1}";
  CHECK_EQ(sq_task_salvage(ok, strlen(ok), id, batch), 0);
  CHECK_STR(id, "x1");
  CHECK_STR(batch, "b");
  const char *nul_id = "{\"id\":\"t\\u0000one\",\"batch\":\"raw\"}";
  CHECK_EQ(sq_task_salvage(nul_id, strlen(nul_id), id, batch), 0);
  CHECK_STR(id, "");
  CHECK_STR(batch, "raw");
  const char *nul_batch = "{\"id\":\"y\",\"batch\":\"r\\u0000aw\"}";
  CHECK_EQ(sq_task_salvage(nul_batch, strlen(nul_batch), id, batch), 0);
  CHECK_STR(id, "y");
  CHECK_STR(batch, SQ_TASK_INVALID_BATCH);
  const char *no_batch = "{\"id\":\"z\"}";
  CHECK_EQ(sq_task_salvage(no_batch, strlen(no_batch), id, batch), 0);
  CHECK_STR(batch, "default");
  CHECK_EQ(sq_task_salvage("[1]", 3, id, batch), SQ_EPARSE);
  CHECK_STR(id, "");
}

/* "cases", "checker", "stop_on_failure": parsed, defaults, and each
 * refusal naming the field. */
static void test_cases(void) {
  sq_task *t = NULL;
  char err[256] = "";
  CHECK_EQ(parse("{\"id\":\"c\",\"code\":\"print(input())\",\"cases\":[{\"stdin\":\"1\\n\",\"expected_stdout\":\"1\"},"
                 "{\"expected_stdout\":\"\"}]}", &t, err), 0);
  CHECK_STR(err, "");
  if (t) {
    CHECK_EQ(t->n_cases, 2);
    CHECK_STR(t->cases[0].stdin_text, "1\n");
    CHECK_STR(t->cases[1].stdin_text, "");
    CHECK_STR(t->cases[1].expected_stdout, "");
    CHECK_EQ(t->checker.kind, SQ_CHECKER_TOKENS);
    CHECK(t->stop_on_failure);
  }
  sq_task_free(t);
  t = NULL;
  CHECK_EQ(parse("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"1\"}],\"checker\":\"float:1e-6\","
                 "\"stop_on_failure\":false}", &t, err), 0);
  if (t) {
    CHECK_EQ(t->checker.kind, SQ_CHECKER_FLOAT);
    CHECK(t->checker.tolerance == 1e-6);
    CHECK(!t->stop_on_failure);
  }
  sq_task_free(t);
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[]}", SQ_ETASK, "cases: must hold at least one case", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":{}}", SQ_ETASK, "cases: must be an array", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[1]}", SQ_ETASK, "cases[0]: must be an object", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"stdin\":\"\"}]}", SQ_ETASK, "cases[0].expected_stdout: required", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"\",\"stdin\":3}]}", SQ_ETASK,
      "cases[0].stdin: must be a string", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"\",\"input\":\"\"}]}", SQ_ETASK,
      "cases[0].input: unknown field", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"a\\u0000b\"}]}", SQ_ETASK, "cases: ", "c");
  /* a case's stdin is data: its NUL is refused as such, not as "Python source" */
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"stdin\":\"a\\u0000b\",\"expected_stdout\":\"\"}]}", SQ_ETASK,
      "cases: a case's stdin or expected_stdout holds a NUL character", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"\"}],\"tests\":\"assert 1\"}", SQ_ETASK,
      "cases: not with tests", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"\"}],\"expected_stdout\":\"1\"}", SQ_ETASK,
      "cases: not with expected_stdout", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"checker\":\"exact\"}", SQ_ETASK, "checker: only with cases", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"\"}],\"checker\":\"float:0\"}", SQ_ETASK,
      "the tolerance must be a number in (0, 1]", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"\"}],\"checker\":\"lines\"}", SQ_ETASK,
      "checker: must be", "c");
  bad("{\"id\":\"c\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"\"}],\"stop_on_failure\":1}", SQ_ETASK,
      "stop_on_failure: must be true or false", "c");
  /* the cap */
  sq_buf b = {0};
  sq_buf_appendf(&b, "{\"id\":\"c\",\"code\":\"x\",\"cases\":[");
  for (int i = 0; i <= SQ_TASK_CASES_MAX; i++) sq_buf_appendf(&b, "%s{\"expected_stdout\":\"\"}", i ? "," : "");
  sq_buf_appendf(&b, "]}");
  char big_err[256] = "";
  CHECK_EQ(sq_task_parse(b.data, b.len, 0, &t, big_err, sizeof big_err), SQ_ETASK);
  CHECK_CONTAINS(big_err, "cases: 10001 cases, more than the 10000 allowed");
  sq_task_free(t);
  sq_buf_clear(&b);
}

/* A field given twice means two things to two readers (cJSON's first, a
 * loop's last): refused at every level, naming where. */
static void test_twice(void) {
  bad("{\"id\":\"d\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"1\",\"expected_stdout\":\"2\"}]}", SQ_ETASK,
      "cases[0].expected_stdout: appears twice", "d");
  bad("{\"id\":\"d\",\"code\":\"x\",\"cases\":[{\"expected_stdout\":\"\"},{\"stdin\":\"a\",\"stdin\":\"b\","
      "\"expected_stdout\":\"\"}]}", SQ_ETASK, "cases[1].stdin: appears twice", "d");
  /* a 1 s sleep under wall_ms 100 then 5000 ended ok */
  bad("{\"id\":\"d\",\"code\":\"x\",\"limits\":{\"wall_ms\":100,\"wall_ms\":5000}}", SQ_ETASK,
      "limits.wall_ms: appears twice", "d");
  bad("{\"id\":\"d\",\"code\":\"x\",\"metadata\":{\"expect\":\"ok\",\"expect\":\"failed\"}}", SQ_ETASK,
      "metadata.expect: appears twice", "d");
  bad("{\"id\":\"d\",\"code\":\"x\",\"metadata\":{\"a\":[{\"k\":1,\"k\":2}]}}", SQ_ETASK,
      "metadata.a[0].k: appears twice", "d");
  sq_task *t = NULL;
  char err[256] = "";
  CHECK_EQ(parse("{\"id\":\"d\",\"code\":\"x\",\"limits\":{\"wall_ms\":100,\"cpu_ms\":100},"
                 "\"metadata\":{\"a\":{\"k\":1},\"b\":{\"k\":2}}}", &t, err), 0);
  CHECK_STR(err, "");
  sq_task_free(t);
}

/* A carried file under a name the language's steps take in scratch (its
 * source, its build) was silently overwritten: refused, per language. */
static void test_build_names(void) {
  static const struct { const char *lang, *file; } taken[] = {
      {"c", "main.c"},  {"c", "main"},    {"cpp", "main.cpp"},  {"cpp", "main"},        {"go", "main.go"},
      {"go", "main"},   {"rust", "main"}, {"javascript", "main.js"}, {"typescript", "main.ts"},
      {"typescript", "main.js"}, {"bash", "main.sh"}, {"java", "Problem.java"}, {"java", "Problem.class"},
      {"ruby", "main.rb"}, {"python", "main.py"}, {"c", "main.py"}};
  char json[256];
  for (size_t i = 0; i < sizeof taken / sizeof *taken; i++) {
    snprintf(json, sizeof json, "{\"id\":\"f\",\"files\":{\"%s\":\"\"},\"code\":\"x\",\"language\":\"%s\"}",
             taken[i].file, taken[i].lang);
    bad(json, SQ_ETASK, "files: '", "f");
  }
  bad("{\"id\":\"f\",\"files\":{\"main\":\"\"},\"code\":\"x\",\"language\":\"c\"}", SQ_ETASK,
      "files: 'main' is the name of the c program's build in scratch", "f");
  bad("{\"language\":\"c\",\"id\":\"f\",\"files\":{\"main.c\":\"\"},\"code\":\"x\"}", SQ_ETASK,
      "files: 'main.c' is the name of the c program's source in scratch", "f");
  /* another language's names are free: data.c for c, main.c for python */
  static const struct { const char *lang, *file; } free_[] = {
      {"c", "data.c"}, {"python", "main.c"}, {"python", "main"}, {"javascript", "main"}, {"go", "main.c"}};
  for (size_t i = 0; i < sizeof free_ / sizeof *free_; i++) {
    sq_task *t = NULL;
    char err[256] = "";
    snprintf(json, sizeof json, "{\"id\":\"f\",\"files\":{\"%s\":\"\"},\"code\":\"x\",\"language\":\"%s\"}",
             free_[i].file, free_[i].lang);
    CHECK_EQ(parse(json, &t, err), 0);
    CHECK_STR(err, "");
    sq_task_free(t);
  }
}

int main(void) {
  test_twice();
  test_build_names();
  test_salvage();
  test_cases();
  test_files();
  sq_task *t = NULL;
  char err[256] = "";

  CHECK_EQ(parse("{\"id\":\"a1\",\"code\":\"print(1)\",\"tests\":\"assert True\",\"entry_point\":\"f\","
                 "\"expected_stdout\":\"1\\n\",\"limits\":{\"wall_ms\":500,\"cpu_ms\":400,\"memory_mib\":64,"
                 "\"output_kib\":8},\"metadata\":{\"k\":[1,2]},\"batch\":\"b-1\",\"enqueued_at_ms\":1700000000000}",
                 &t, err),
           0);
  CHECK_STR(err, "");
  CHECK_STR(t->id, "a1");
  CHECK_STR(t->batch, "b-1");
  CHECK_STR(t->code, "print(1)");
  CHECK_STR(t->tests, "assert True");
  CHECK_STR(t->entry_point, "f");
  CHECK_STR(t->expected_stdout, "1\n");
  CHECK_EQ(t->limits.wall_ms, 500);
  CHECK_EQ(t->limits.cpu_ms, 400);
  CHECK_EQ(t->limits.memory_mib, 64);
  CHECK_EQ(t->limits.output_kib, 8);
  CHECK_STR(t->metadata_json, "{\"k\":[1,2]}");
  CHECK_EQ(t->enqueued_at_ms, 1700000000000LL);
  char *prog = NULL;
  CHECK_EQ(sq_task_program(t, t->code, &prog), 0);
  CHECK_STR(prog, "print(1)\n\nassert True\n\ncheck(f)\n");
  free(prog);
  sq_task_free(t);

  /* generation settings: absent by default, carried when set */
  CHECK_EQ(parse("{\"id\":\"s\",\"prompt\":\"p\",\"temperature\":0.8,\"model\":\"coder-7b\"}", &t, err), 0);
  CHECK(t->temperature > 0.79 && t->temperature < 0.81);
  CHECK_STR(t->model, "coder-7b");
  sq_task_free(t);
  CHECK_EQ(parse("{\"id\":\"s\",\"prompt\":\"p\",\"temperature\":0}", &t, err), 0);
  CHECK(t->temperature == 0);
  sq_task_free(t);
  bad("{\"id\":\"s\",\"prompt\":\"p\",\"temperature\":2.5}", SQ_ETASK, "temperature: must be a number in [0, 2]", "s");
  bad("{\"id\":\"s\",\"prompt\":\"p\",\"temperature\":\"hot\"}", SQ_ETASK, "temperature", "s");
  bad("{\"id\":\"s\",\"prompt\":\"p\",\"model\":\"\"}", SQ_ETASK, "model: must be", "s");
  bad("{\"id\":\"s\",\"prompt\":\"p\",\"n\":5}", SQ_ETASK, "n: unknown field", "s");

  /* prompt-only, batch defaults */
  CHECK_EQ(parse("{\"id\":\"p\",\"prompt\":\"write fizzbuzz\"}", &t, err), 0);
  CHECK_STR(t->batch, "default");
  CHECK(t->code == NULL);
  CHECK(t->temperature < 0);
  CHECK(t->model == NULL);
  CHECK_EQ(t->limits.wall_ms, 0);
  sq_task_free(t);

  /* bad input: each names the field, nothing crashes */
  bad("", SQ_EPARSE, "not valid JSON", NULL);
  bad("not json", SQ_EPARSE, "not valid JSON", NULL);
  bad("{\"id\":\"x\",\"code\":\"1\"", SQ_EPARSE, "not valid JSON", NULL);
  bad("[1,2]", SQ_EPARSE, "must be a JSON object", NULL);
  bad("{\"id\":\"x\",\"code\":\"1\"} trailing", SQ_EPARSE, "trailing data", NULL);
  bad("{\"code\":\"1\"}", SQ_ETASK, "id: required", NULL);
  bad("{\"id\":7,\"code\":\"1\"}", SQ_ETASK, "id: must be a string", NULL);
  bad("{\"id\":\"\",\"code\":\"1\"}", SQ_ETASK, "id: must be 1-", NULL);
  bad("{\"id\":\"x\"}", SQ_ETASK, "prompt or code", "x");
  bad("{\"id\":\"x\",\"prompt\":\"  \"}", SQ_ETASK, "prompt: must not be blank", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"cmd\":\"rm -rf /\"}", SQ_ETASK, "cmd: unknown field", "x");
  bad("{\"id\":\"x\",\"code\":1}", SQ_ETASK, "code: must be a string", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"tests\":[]}", SQ_ETASK, "tests: must be a string", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"entry_point\":\"os.system\"}", SQ_ETASK, "entry_point: must be a Python identifier", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"limits\":5}", SQ_ETASK, "limits: must be an object", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"limits\":{\"wall_ms\":\"ten\"}}", SQ_ETASK, "limits.wall_ms: must be an integer", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"limits\":{\"wall_ms\":-5}}", SQ_ETASK, "limits.wall_ms", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"limits\":{\"wall_ms\":1.5}}", SQ_ETASK, "limits.wall_ms", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"limits\":{\"disk_mib\":1}}", SQ_ETASK, "limits.disk_mib: unknown limit", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"metadata\":\"m\"}", SQ_ETASK, "metadata: must be an object", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"id\":\"y\"}", SQ_ETASK, "id: appears twice", "x");
  bad("{\"id\":\"x\",\"code\":\"1\",\"batch\":\"a b\"}", SQ_ETASK, "batch: must be", "x");

  /* a salvaged task keeps its batch when the batch is valid */
  CHECK_EQ(parse("{\"id\":\"x\",\"batch\":\"b7\",\"code\":5}", &t, err), SQ_ETASK);
  CHECK(t && strcmp(t->batch, "b7") == 0);
  sq_task_free(t);

  /* oversized: refused before parsing */
  char *big = malloc(8192);
  memset(big, ' ', 8191);
  big[8191] = 0;
  memcpy(big, "{\"id\":\"big\",\"code\":\"", 20);
  CHECK_EQ(sq_task_parse(big, 8191, 4096, &t, err, sizeof err), SQ_ETOOBIG);
  CHECK_CONTAINS(err, "more than the 4096 allowed");
  CHECK(t == NULL);
  free(big);

  /* stamping sets batch and time, replacing what was there */
  char *stamped = NULL;
  const char *line = "{\"id\":\"s\",\"code\":\"1\",\"batch\":\"old\"}";
  CHECK_EQ(sq_task_stamp(line, strlen(line), "new", 42, &stamped), 0);
  CHECK_STR(stamped, "{\"id\":\"s\",\"code\":\"1\",\"batch\":\"new\",\"enqueued_at_ms\":42}");
  free(stamped);
  CHECK_EQ(sq_task_stamp("nope", 4, "b", 1, &stamped), SQ_EPARSE);

  /* priority and idempotency_key */
  CHECK_EQ(parse("{\"id\":\"p\",\"code\":\"1\"}", &t, err), 0);
  CHECK_EQ(t->priority, SQ_TASK_NORMAL);
  CHECK(t->idempotency_key == NULL);
  sq_task_free(t);
  CHECK_EQ(parse("{\"id\":\"p\",\"code\":\"1\",\"priority\":\"high\",\"idempotency_key\":\"k-1\"}", &t, err), 0);
  CHECK_EQ(t->priority, SQ_TASK_HIGH);
  CHECK_STR(t->idempotency_key, "k-1");
  sq_task_free(t);
  CHECK_EQ(parse("{\"id\":\"p\",\"code\":\"1\",\"priority\":\"low\"}", &t, err), 0);
  CHECK_EQ(t->priority, SQ_TASK_LOW);
  sq_task_free(t);
  bad("{\"id\":\"p\",\"code\":\"1\",\"priority\":\"urgent\"}", SQ_ETASK, "priority", "p");
  bad("{\"id\":\"p\",\"code\":\"1\",\"priority\":1}", SQ_ETASK, "priority", "p");
  bad("{\"id\":\"p\",\"code\":\"1\",\"idempotency_key\":\"\"}", SQ_ETASK, "idempotency_key", "p");
  bad("{\"id\":\"p\",\"code\":\"1\",\"idempotency_key\":7}", SQ_ETASK, "idempotency_key", "p");
  test_exact_strings();
  test_too_big();
  test_stamp();
  test_json_scan();
  return sq_check_done("test_task");
}
