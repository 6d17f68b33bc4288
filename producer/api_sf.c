/* api_sf.c: SandboxFusion's /run_code schemas (sandbox/server/sandbox_api.py,
 * sandbox/runners/types.py) on sandq's task and result: a request body into
 * a task (its limits, files, stdin as one case, its language's sandq name),
 * a stored result into RunCodeResponse by SandboxFusion's status rules, and
 * the 422 bodies FastAPI (pydantic 2) gives for a body it cannot validate.
 * Pure: no I/O, no Redis. */
#include <bson/bson.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "base64.h"
#include "errors.h"
#include "json_scan.h"
#include "status.h"
#include "task.h"
#include "util.h"

/* SandboxFusion's Language literal, in its order (the 422 lists it), and
 * sandq's name for each it runs (NULL: one sandq does not run). */
static const struct {
  const char *sf, *sandq;
} languages[] = {
    {"python", "python"},
    {"cpp", "cpp"},
    {"nodejs", "javascript"},
    {"go", "go"},
    {"go_test", NULL},
    {"java", "java"},
    {"php", "php"},
    {"csharp", NULL},
    {"bash", "bash"},
    {"typescript", "typescript"},
    {"sql", NULL},
    {"rust", "rust"},
    {"cuda", NULL},
    {"lua", "lua"},
    {"R", NULL},
    {"perl", "perl"},
    {"D_ut", NULL},
    {"ruby", "ruby"},
    {"scala", NULL},
    {"julia", NULL},
    {"pytest", NULL},
    {"junit", NULL},
    {"kotlin_script", NULL},
    {"jest", NULL},
    {"verilog", NULL},
    {"python_gpu", NULL},
    {"lean", NULL},
    {"swift", NULL},
    {"racket", NULL},
};
#define N_LANGUAGES (sizeof languages / sizeof languages[0])

/* Java: SandboxFusion compiles Main.java and runs Main; sandq's java task
 * is Problem.java. The request's code goes in as the file Main.java and
 * this Problem calls its main (javac compiles Main.java as it reads it). */
#define JAVA_MAIN "Main.java"
static const char java_shim[] =
    "public class Problem { public static void main(String[] args) throws Exception { Main.main(args); } }\n";

#define DEFAULT_TIMEOUT_S 10.0
#define LIMIT_MS_MAX 86400000
#define MEMORY_MIB_MAX 1048576

/* ---- FastAPI's error shapes ---- */

char *sq__api_detail(const char *detail) {
  cJSON *o = cJSON_CreateObject();
  char *s = o && cJSON_AddStringToObject(o, "detail", detail) ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return s;
}

/* Appends one pydantic error at loc (taken) to detail: the input (a copy;
 * NULL: {}), ctx (taken; may be NULL). */
static void add_error_at(cJSON *detail, const char *type, cJSON *loc, const char *msg, const cJSON *input,
                         cJSON *ctx) {
  cJSON *e = cJSON_CreateObject();
  if (!e || !loc) {
    cJSON_Delete(e), cJSON_Delete(loc), cJSON_Delete(ctx);
    return;
  }
  cJSON_AddStringToObject(e, "type", type);
  cJSON_AddItemToObject(e, "loc", loc);
  cJSON_AddStringToObject(e, "msg", msg);
  cJSON_AddItemToObject(e, "input", input ? cJSON_Duplicate(input, true) : cJSON_CreateObject());
  if (ctx) cJSON_AddItemToObject(e, "ctx", ctx);
  cJSON_AddItemToArray(detail, e);
}

/* loc ["body", field(, sub | index)] */
static void add_error(cJSON *detail, const char *type, const char *field, const char *sub, int index,
                      const char *msg, const cJSON *input, cJSON *ctx) {
  cJSON *loc = cJSON_CreateArray();
  if (loc) {
    cJSON_AddItemToArray(loc, cJSON_CreateString("body"));
    if (field) cJSON_AddItemToArray(loc, cJSON_CreateString(field));
    if (sub)
      cJSON_AddItemToArray(loc, cJSON_CreateString(sub));
    else if (index >= 0)
      cJSON_AddItemToArray(loc, cJSON_CreateNumber(index));
  }
  add_error_at(detail, type, loc, msg, input, ctx);
}

void sq__api_add_error(cJSON *detail, const char *type, const char *path, int index, const char *msg,
                       const cJSON *input, cJSON *ctx) {
  cJSON *loc = cJSON_CreateArray();
  if (loc) {
    cJSON_AddItemToArray(loc, cJSON_CreateString("body"));
    for (const char *p = path; p && *p;) {
      const char *dot = strchr(p, '.');
      size_t n = dot ? (size_t)(dot - p) : strlen(p);
      char name[64];
      snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
      cJSON_AddItemToArray(loc, cJSON_CreateString(name));
      p = dot ? dot + 1 : p + n;
    }
    if (index >= 0) cJSON_AddItemToArray(loc, cJSON_CreateNumber(index));
  }
  add_error_at(detail, type, loc, msg, input, ctx);
}

char *sq__api_validation_reply(cJSON *detail) {
  cJSON *o = cJSON_CreateObject();
  char *s = NULL;
  if (o && detail) {
    cJSON_AddItemToObject(o, "detail", detail);
    detail = NULL;
    s = cJSON_PrintUnformatted(o);
  }
  cJSON_Delete(o);
  cJSON_Delete(detail);
  return s;
}

cJSON *sq__api_parse_object(const char *body, size_t len, char **reply) {
  const char *end = NULL;
  *reply = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, false);
  cJSON *detail = cJSON_CreateArray();
  if (!detail) {
    cJSON_Delete(root);
    return NULL;
  }
  if (!root || sq_json_trailing_at(body, len, end) != len) {
    cJSON *ctx = cJSON_CreateObject(), *loc = cJSON_CreateArray();
    if (ctx) cJSON_AddStringToObject(ctx, "error", root ? "Extra data" : "Expecting value");
    size_t at = root ? sq_json_trailing_at(body, len, end) : end ? (size_t)(end - body) : 0;
    if (loc) {
      cJSON_AddItemToArray(loc, cJSON_CreateString("body"));
      cJSON_AddItemToArray(loc, cJSON_CreateNumber((double)at));
    }
    add_error_at(detail, "json_invalid", loc, "JSON decode error", NULL, ctx);
  } else if (!cJSON_IsObject(root)) {
    add_error(detail, "model_attributes_type", NULL, NULL, -1,
              "Input should be a valid dictionary or object to extract fields from", root, NULL);
  } else {
    cJSON_Delete(detail);
    return root;
  }
  cJSON_Delete(root);
  *reply = sq__api_validation_reply(detail);
  return NULL;
}

bool sq__api_language_known(const char *name) {
  for (size_t i = 0; name && i < N_LANGUAGES; i++)
    if (strcmp(name, languages[i].sf) == 0) return true;
  return false;
}

/* A float field (lax, as pydantic: a number or a string that reads as one). */
static bool float_field(cJSON *detail, const cJSON *body, const char *name, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, name);
  if (!v) return true; /* the default stays */
  if (cJSON_IsNumber(v)) {
    *out = v->valuedouble;
    return true;
  }
  if (cJSON_IsString(v)) {
    char *end = NULL;
    double d = strtod(v->valuestring, &end);
    if (*v->valuestring && end && !*end && isfinite(d)) {
      *out = d;
      return true;
    }
    add_error(detail, "float_parsing", name, NULL, -1,
              "Input should be a valid number, unable to parse string as a number", v, NULL);
    return false;
  }
  add_error(detail, "float_type", name, NULL, -1, "Input should be a valid number", v, NULL);
  return false;
}

static bool int_field(cJSON *detail, const cJSON *body, const char *name, int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, name);
  if (!v) return true;
  double d = 0;
  if (cJSON_IsNumber(v)) {
    d = v->valuedouble;
    if (d != floor(d)) {
      add_error(detail, "int_from_float", name, NULL, -1,
                "Input should be a valid integer, got a number with a fractional part", v, NULL);
      return false;
    }
  } else if (cJSON_IsString(v)) {
    int64_t n;
    if (sq_parse_i64(v->valuestring, INT64_MIN / 2, INT64_MAX / 2, &n) != 0) {
      add_error(detail, "int_parsing", name, NULL, -1,
                "Input should be a valid integer, unable to parse string as an integer", v, NULL);
      return false;
    }
    d = (double)n;
  } else {
    add_error(detail, "int_type", name, NULL, -1, "Input should be a valid integer", v, NULL);
    return false;
  }
  *out = d > 9e15 ? (int64_t)9e15 : d < -9e15 ? (int64_t)-9e15 : (int64_t)d;
  return true;
}

/* seconds into 1..LIMIT_MS_MAX ms */
static int64_t limit_ms(double s) {
  double ms = ceil(s * 1000.0);
  return ms < 1 ? 1 : ms > LIMIT_MS_MAX ? LIMIT_MS_MAX : (int64_t)ms;
}

void sq__api_languages_expected(char *buf, size_t n) {
  size_t at = 0;
  buf[0] = 0;
  for (size_t i = 0; i < N_LANGUAGES && at < n; i++)
    at += (size_t)snprintf(buf + at, n - at, "%s'%s'",
                           i == 0                 ? ""
                           : i + 1 == N_LANGUAGES ? " or "
                                                  : ", ",
                           languages[i].sf);
}

/* A glob matching exactly name (SandboxFusion fetches paths, sandq globs). */
static char *literal_glob(const char *name) {
  size_t n = strlen(name);
  char *g = malloc(n * 3 + 1), *p = g;
  if (!g) return NULL;
  for (const char *c = name; *c; c++) {
    if (*c == '*' || *c == '?' || *c == '[')
      *p++ = '[', *p++ = *c, *p++ = ']';
    else
      *p++ = *c;
  }
  *p = 0;
  return g;
}

/* A SandboxError response with message (malloc'd). */
static char *sandbox_error(const char *message) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "status", "SandboxError");
  cJSON_AddStringToObject(o, "message", message);
  cJSON_AddNullToObject(o, "compile_result");
  cJSON_AddNullToObject(o, "run_result");
  cJSON_AddNullToObject(o, "executor_pod_name");
  cJSON_AddObjectToObject(o, "files");
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

/* Checks the body's fields as RunCodeRequest does; each error goes into
 * detail. Returns the language's index in languages[] (or -1). */
static int validate(cJSON *detail, const cJSON *body, double *compile_s, double *run_s, int64_t *memory_mb) {
  const cJSON *code = cJSON_GetObjectItemCaseSensitive(body, "code");
  const cJSON *lang = cJSON_GetObjectItemCaseSensitive(body, "language");
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(body, "stdin");
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(body, "files");
  const cJSON *fetch = cJSON_GetObjectItemCaseSensitive(body, "fetch_files");
  int li = -1;
  float_field(detail, body, "compile_timeout", compile_s);
  float_field(detail, body, "run_timeout", run_s);
  int_field(detail, body, "memory_limit_MB", memory_mb);
  if (!code)
    add_error(detail, "missing", "code", NULL, -1, "Field required", body, NULL);
  else if (!cJSON_IsString(code))
    add_error(detail, "string_type", "code", NULL, -1, "Input should be a valid string", code, NULL);
  if (in && !cJSON_IsNull(in) && !cJSON_IsString(in))
    add_error(detail, "string_type", "stdin", NULL, -1, "Input should be a valid string", in, NULL);
  if (!lang) {
    add_error(detail, "missing", "language", NULL, -1, "Field required", body, NULL);
  } else {
    for (size_t i = 0; cJSON_IsString(lang) && i < N_LANGUAGES; i++)
      if (strcmp(lang->valuestring, languages[i].sf) == 0) li = (int)i;
    if (li < 0) {
      char expected[600], msg[640];
      sq__api_languages_expected(expected, sizeof expected);
      snprintf(msg, sizeof msg, "Input should be %s", expected);
      cJSON *ctx = cJSON_CreateObject();
      if (ctx) cJSON_AddStringToObject(ctx, "expected", expected);
      add_error(detail, "literal_error", "language", NULL, -1, msg, lang, ctx);
    }
  }
  if (files && !cJSON_IsObject(files)) {
    add_error(detail, "dict_type", "files", NULL, -1, "Input should be a valid dictionary", files, NULL);
  } else if (files) {
    const cJSON *f;
    cJSON_ArrayForEach(f, files) if (!cJSON_IsString(f) && !cJSON_IsNull(f))
        add_error(detail, "string_type", "files", f->string, -1, "Input should be a valid string", f, NULL);
  }
  if (fetch && !cJSON_IsArray(fetch)) {
    add_error(detail, "list_type", "fetch_files", NULL, -1, "Input should be a valid list", fetch, NULL);
  } else if (fetch) {
    int i = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, fetch) {
      if (!cJSON_IsString(f))
        add_error(detail, "string_type", "fetch_files", NULL, i, "Input should be a valid string", f, NULL);
      i++;
    }
  }
  return li;
}

/* The task JSON for a validated body, or NULL (out of memory; or a
 * refusal, *why set). */
static cJSON *build_task(const cJSON *body, const char *batch, const char *id, int64_t now_ms,
                         const char *lang, double run_s, int64_t memory_mb, sq__api_run *run,
                         const char **why) {
  const cJSON *code = cJSON_GetObjectItemCaseSensitive(body, "code");
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(body, "stdin");
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(body, "files");
  const cJSON *fetch = cJSON_GetObjectItemCaseSensitive(body, "fetch_files");
  bool java = strcmp(lang, "java") == 0;
  cJSON *t = cJSON_CreateObject(), *limits = NULL, *fs = NULL;
  if (!t) return NULL;
  cJSON_AddStringToObject(t, "id", id);
  cJSON_AddStringToObject(t, "batch", batch);
  cJSON_AddNumberToObject(t, "enqueued_at_ms", (double)now_ms);
  cJSON_AddStringToObject(t, "language", lang);
  cJSON_AddStringToObject(t, "code", java ? java_shim : code->valuestring);
  if ((limits = cJSON_AddObjectToObject(t, "limits"))) {
    /* SandboxFusion's run_timeout is wall-clock time; a run has one core
     * there, so its CPU time is held to the same. */
    cJSON_AddNumberToObject(limits, "wall_ms", (double)limit_ms(run_s));
    cJSON_AddNumberToObject(limits, "cpu_ms", (double)limit_ms(run_s));
    if (memory_mb > 0)
      cJSON_AddNumberToObject(limits, "memory_mib",
                              (double)(memory_mb < SQ_TASK_MEMORY_MIB_MIN ? SQ_TASK_MEMORY_MIB_MIN
                                       : memory_mb > MEMORY_MIB_MAX       ? MEMORY_MIB_MAX
                                                                          : memory_mb));
  }
  const cJSON *f;
  size_t n_files = 0;
  cJSON_ArrayForEach(f, files) if (cJSON_IsString(f)) n_files++;
  if (n_files || java) fs = cJSON_AddObjectToObject(t, "files");
  cJSON_ArrayForEach(f, files) {
    if (!cJSON_IsString(f)) continue; /* SandboxFusion writes only the files with content */
    if (java && strcmp(f->string, JAVA_MAIN) == 0) {
      *why = "files: Main.java is where java code goes (the code field)";
      cJSON_Delete(t);
      return NULL;
    }
    cJSON_AddStringToObject(fs, f->string, f->valuestring);
  }
  if (java) {
    sq_buf b = {0};
    size_t n = strlen(code->valuestring);
    if (sq_base64_append(&b, code->valuestring, n) || sq_buf_append(&b, "", 1)) {
      sq_buf_clear(&b);
      cJSON_Delete(t);
      return NULL;
    }
    cJSON_AddStringToObject(fs, JAVA_MAIN, b.data);
    sq_buf_clear(&b);
  }
  if (cJSON_GetArraySize(fetch) > 0) {
    cJSON *arr = cJSON_AddArrayToObject(t, "fetch_files");
    cJSON_ArrayForEach(f, fetch) {
      char *g = literal_glob(f->valuestring);
      if (g) cJSON_AddItemToArray(arr, cJSON_CreateString(g));
      free(g);
    }
  }
  /* stdin goes in as one case: the run sees it as its standard input;
   * the case's verdict on stdout is not SandboxFusion's and is dropped. */
  if (cJSON_IsString(in) && in->valuestring[0]) {
    cJSON *cases = cJSON_AddArrayToObject(t, "cases"), *c = cJSON_CreateObject();
    if (c) {
      cJSON_AddStringToObject(c, "stdin", in->valuestring);
      cJSON_AddStringToObject(c, "expected_stdout", "");
      cJSON_AddItemToArray(cases, c);
    }
    cJSON_AddFalseToObject(t, "stop_on_failure");
    run->stdin_case = true;
  }
  return t;
}

int sq__api_run_code_task(const char *body, size_t len, const char *batch, const char *id, int64_t now_ms,
                          size_t max_task_bytes, char **task, sq__api_run *run, char **reply) {
  *task = *reply = NULL;
  memset(run, 0, sizeof *run);
  cJSON *root = sq__api_parse_object(body, len, reply);
  if (!root) return 422;
  cJSON *detail = cJSON_CreateArray();
  int status = 422;
  if (!detail) goto out;
  double compile_s = DEFAULT_TIMEOUT_S, run_s = DEFAULT_TIMEOUT_S;
  int64_t memory_mb = -1;
  int li = validate(detail, root, &compile_s, &run_s, &memory_mb);
  if (cJSON_GetArraySize(detail) > 0) goto out;
  status = 200;
  /* cJSON ends a string at a NUL: such a member is refused, never cut */
  enum { MAX_MEMBERS = 64 };
  bool nul[MAX_MEMBERS] = {0};
  if (sq_json_nul_members(body, len, nul, MAX_MEMBERS) > 0) {
    int i = 0;
    const cJSON *m;
    char msg[256];
    cJSON_ArrayForEach(m, root) {
      if (i < MAX_MEMBERS && nul[i]) {
        snprintf(msg, sizeof msg, "%.40s: %s", m->string, sq_json_nul_reason);
        *reply = sandbox_error(msg);
        goto out;
      }
      i++;
    }
    *reply = sandbox_error("the request holds a NUL character (\\u0000)");
    goto out;
  }
  const char *lang = languages[li].sandq;
  if (!lang) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "language '%s' is not one sandq runs (it runs: python, cpp, nodejs, go, java, php, bash, "
             "typescript, rust, lua, perl, ruby)",
             languages[li].sf);
    *reply = sandbox_error(msg);
    goto out;
  }
  sq_language_find(lang, &run->language);
  const sq_language *L = sq_language_get(run->language);
  run->compiles = L && L->compile[0] != NULL;
  run->budget_ms = limit_ms(compile_s) + limit_ms(run_s);
  const char *why = NULL;
  cJSON *t = build_task(root, batch, id, now_ms, lang, run_s, memory_mb, run, &why);
  char *s = t ? cJSON_PrintUnformatted(t) : NULL;
  cJSON_Delete(t);
  if (!s) {
    *reply = sandbox_error(why ? why : "out of memory");
    goto out;
  }
  sq_task *parsed = NULL;
  char err[512];
  int rc = sq_task_parse(s, strlen(s), max_task_bytes, &parsed, err, sizeof err);
  sq_task_free(parsed);
  if (rc) {
    free(s);
    *reply = sandbox_error(err[0] ? err : sq_strerror(rc));
    goto out;
  }
  *task = s;
out:
  if (status == 422) {
    *reply = sq__api_validation_reply(detail);
    detail = NULL;
  }
  cJSON_Delete(detail);
  cJSON_Delete(root);
  return status;
}

const char *sq__api_datasets_json(void) {
  return "[\"humaneval\",\"mbpp\",\"apps\",\"humaneval+\",\"mbpp+\",\"multipl-e\"]";
}

/* ---- a result into RunCodeResponse ---- */

/* What the response needs of a stored result. */
typedef struct {
  const char *status, *reason, *stdout_text, *stderr_text, *worker;
  bool exit_null, compile_cached, has_cached, stdout_truncated, stderr_truncated;
  int64_t exit_code, signal, exec_ms, cpu_ms, memory_kib;
  bson_iter_t files, truncated;
  bool has_files, has_truncated;
} fields;

static int64_t iter_int(const bson_iter_t *it) {
  return BSON_ITER_HOLDS_INT32(it)   ? bson_iter_int32(it)
         : BSON_ITER_HOLDS_INT64(it) ? bson_iter_int64(it)
                                     : 0;
}

static void read_fields(const bson_t *doc, fields *f) {
  bson_iter_t it, sub;
  memset(f, 0, sizeof *f);
  f->exit_null = true;
  if (!bson_iter_init(&it, doc)) return;
  while (bson_iter_next(&it)) {
    const char *k = bson_iter_key(&it);
    if (BSON_ITER_HOLDS_UTF8(&it)) {
      const char *v = bson_iter_utf8(&it, NULL);
      if (!strcmp(k, "status"))
        f->status = v;
      else if (!strcmp(k, "reason"))
        f->reason = v;
      else if (!strcmp(k, "stdout"))
        f->stdout_text = v;
      else if (!strcmp(k, "stderr"))
        f->stderr_text = v;
      else if (!strcmp(k, "worker"))
        f->worker = v;
    } else if (!strcmp(k, "exit_code") && (BSON_ITER_HOLDS_INT32(&it) || BSON_ITER_HOLDS_INT64(&it))) {
      f->exit_code = iter_int(&it), f->exit_null = false;
    } else if (!strcmp(k, "signal")) {
      f->signal = iter_int(&it);
    } else if (BSON_ITER_HOLDS_BOOL(&it)) {
      if (!strcmp(k, "compile_cached"))
        f->compile_cached = bson_iter_bool(&it), f->has_cached = true;
      else if (!strcmp(k, "stdout_truncated"))
        f->stdout_truncated = bson_iter_bool(&it);
      else if (!strcmp(k, "stderr_truncated"))
        f->stderr_truncated = bson_iter_bool(&it);
    } else if (!strcmp(k, "timings") && BSON_ITER_HOLDS_DOCUMENT(&it) && bson_iter_recurse(&it, &sub)) {
      while (bson_iter_next(&sub))
        if (!strcmp(bson_iter_key(&sub), "exec_ms")) f->exec_ms = iter_int(&sub);
    } else if (!strcmp(k, "resources") && BSON_ITER_HOLDS_DOCUMENT(&it) && bson_iter_recurse(&it, &sub)) {
      while (bson_iter_next(&sub)) {
        if (!strcmp(bson_iter_key(&sub), "cpu_ms"))
          f->cpu_ms = iter_int(&sub);
        else if (!strcmp(bson_iter_key(&sub), "memory_kib"))
          f->memory_kib = iter_int(&sub);
      }
    } else if (!strcmp(k, "files") && BSON_ITER_HOLDS_DOCUMENT(&it)) {
      f->has_files = bson_iter_recurse(&it, &f->files);
    } else if (!strcmp(k, "files_truncated") && BSON_ITER_HOLDS_ARRAY(&it)) {
      f->has_truncated = bson_iter_recurse(&it, &f->truncated);
    }
  }
}

/* CommandRunResult: status, execution_time (< 0: null), return_code (NULL
 * rc: null), stdout, stderr. */
static cJSON *command_result(const char *status, double seconds, const int64_t *rc, const char *out,
                             const char *err) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "status", status);
  if (seconds >= 0)
    cJSON_AddNumberToObject(o, "execution_time", seconds);
  else
    cJSON_AddNullToObject(o, "execution_time");
  if (rc)
    cJSON_AddNumberToObject(o, "return_code", (double)*rc);
  else
    cJSON_AddNullToObject(o, "return_code");
  cJSON_AddStringToObject(o, "stdout", out ? out : "");
  cJSON_AddStringToObject(o, "stderr", err ? err : "");
  return o;
}

char *sq__api_run_code_reply(const sq__api_run *run, const uint8_t *bson, size_t len, const char **outcome) {
  bson_t doc;
  fields f;
  *outcome = "SandboxError";
  if (!bson_init_static(&doc, bson, len)) return sandbox_error("the task's result is not a BSON document");
  read_fields(&doc, &f);
  sq_status st;
  if (!f.status || sq_status_parse(f.status, &st) != 0)
    return sandbox_error("the task's result has no status");
  double secs = (double)f.exec_ms / 1000.0;
  /* the run's return code as Python's subprocess gives it: -N for signal N */
  int64_t rc = !f.exit_null ? f.exit_code : f.signal > 0 ? -f.signal : 1;
  cJSON *compile = NULL, *runr = NULL;
  const char *message = "";
  bool sandbox_err = false;
  switch (st) {
  case SQ_STATUS_COMPILE_ERROR: compile = command_result("Finished", secs, &rc, "", f.stderr_text); break;
  case SQ_STATUS_INVALID_TASK:
  case SQ_STATUS_LLM_ERROR:
  case SQ_STATUS_CANCELLED:
    sandbox_err = true;
    message = f.reason ? f.reason : f.status;
    break;
  case SQ_STATUS_TIMEOUT:
  case SQ_STATUS_CPU_LIMIT:
    runr = command_result("TimeLimitExceeded", secs, NULL, f.stdout_text, f.stderr_text);
    break;
  case SQ_STATUS_BLOCKED: { /* refused before it ran: a failed run that says why */
    int64_t one = 1;
    runr = command_result("Finished", 0, &one, "", f.reason);
    break;
  }
  default: runr = command_result("Finished", secs, &rc, f.stdout_text, f.stderr_text); break;
  }
  if (run->compiles && !compile && !sandbox_err && st != SQ_STATUS_BLOCKED) {
    int64_t zero = 0; /* the compile step's own time is not measured apart */
    compile = command_result("Finished", -1, &zero, "", "");
  }
  /* SandboxFusion's rule (parse_run_status): a time limit or a non-zero
   * return code is Failed, and a run that never ran is not a success */
  const char *verdict = "Success";
  if (sandbox_err)
    verdict = "SandboxError";
  else if (st == SQ_STATUS_COMPILE_ERROR || st == SQ_STATUS_TIMEOUT || st == SQ_STATUS_CPU_LIMIT ||
           st == SQ_STATUS_BLOCKED || rc != 0)
    verdict = "Failed";
  cJSON *o = cJSON_CreateObject(), *files = NULL, *sq = NULL;
  if (!o) {
    cJSON_Delete(compile), cJSON_Delete(runr);
    return NULL;
  }
  *outcome = verdict;
  cJSON_AddStringToObject(o, "status", verdict);
  cJSON_AddStringToObject(o, "message", message);
  cJSON_AddItemToObject(o, "compile_result", compile ? compile : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "run_result", runr ? runr : cJSON_CreateNull());
  cJSON_AddNullToObject(o, "executor_pod_name");
  files = cJSON_AddObjectToObject(o, "files");
  if (f.has_files) {
    while (bson_iter_next(&f.files)) {
      if (!BSON_ITER_HOLDS_BINARY(&f.files)) continue;
      const uint8_t *data;
      uint32_t n;
      bson_subtype_t sub;
      bson_iter_binary(&f.files, &sub, &n, &data);
      sq_buf b = {0};
      if (sq_base64_append(&b, data, n) == 0 && sq_buf_append(&b, "", 1) == 0)
        cJSON_AddStringToObject(files, bson_iter_key(&f.files), b.data);
      sq_buf_clear(&b);
    }
  }
  /* what sandq knows beyond SandboxFusion's fields */
  if ((sq = cJSON_AddObjectToObject(o, "sandq"))) {
    bool case_verdict = run->stdin_case && (st == SQ_STATUS_PASSED || st == SQ_STATUS_FAILED);
    cJSON_AddStringToObject(sq, "status", case_verdict ? "ok" : f.status);
    if (f.reason && !case_verdict) cJSON_AddStringToObject(sq, "reason", f.reason);
    if (f.has_cached) cJSON_AddBoolToObject(sq, "compile_cached", f.compile_cached);
    cJSON_AddNumberToObject(sq, "cpu_ms", (double)f.cpu_ms);
    cJSON_AddNumberToObject(sq, "memory_kib", (double)f.memory_kib);
    cJSON_AddBoolToObject(sq, "stdout_truncated", f.stdout_truncated);
    cJSON_AddBoolToObject(sq, "stderr_truncated", f.stderr_truncated);
    if (f.has_truncated) {
      cJSON *arr = cJSON_AddArrayToObject(sq, "files_truncated");
      while (bson_iter_next(&f.truncated))
        if (BSON_ITER_HOLDS_UTF8(&f.truncated))
          cJSON_AddItemToArray(arr, cJSON_CreateString(bson_iter_utf8(&f.truncated, NULL)));
    }
    if (f.worker) cJSON_AddStringToObject(sq, "worker", f.worker);
  }
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}
