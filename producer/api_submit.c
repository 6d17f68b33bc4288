/* api_submit.c: SandboxFusion's POST /submit (sandbox/server/online_judge_api.py,
 * sandbox/datasets/types.py) for a problem sent inline in
 * config.provided_data, in its two own formats: CommonOJDataset (tests of
 * stdin and expected stdout, one /run_code per test, stdout compared line
 * by line as SandboxFusion does) and AutoEvalDataset (a test program the
 * code goes into at #<INSERT>, or after, one /run_code). sandq keeps no
 * dataset tables, so a request without provided_data is refused. Pure:
 * the HTTP side runs the /run_code bodies made here and hands their
 * answers back for the EvalResult. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "json_scan.h"
#include "util.h"

#define INSERT_MARK "#<INSERT>"
/* SandboxFusion's defaults (seconds) */
#define OJ_TIMEOUT_S 10.0            /* compile, and a compiled program's run */
#define OJ_SCRIPT_RUN_TIMEOUT_S 20.0 /* an interpreted program's run */
#define AUTO_COMPILE_TIMEOUT_S 40.0
#define AUTO_RUN_TIMEOUT_S 20.0
#define FLOAT_REL_TOL 1e-5

typedef enum { KIND_OJ, KIND_AUTO } eval_kind;

struct sq__api_eval {
  eval_kind kind;
  cJSON *id;       /* the request's id (int or str), a copy */
  char *code;      /* extracted from the completion */
  char *full_code; /* AutoEval: the code in its test program */
  cJSON *cases;    /* CommonOJ: the tests, a copy */
  char **runs;     /* the /run_code bodies */
  size_t n_runs;
};

void sq__api_eval_free(sq__api_eval *e) {
  if (!e) return;
  cJSON_Delete(e->id);
  free(e->code);
  free(e->full_code);
  cJSON_Delete(e->cases);
  for (size_t i = 0; i < e->n_runs; i++)
    free(e->runs[i]);
  free(e->runs);
  free(e);
}

size_t sq__api_eval_runs(const sq__api_eval *e) { return e ? e->n_runs : 0; }
const char *sq__api_eval_run_body(const sq__api_eval *e, size_t i) {
  return i < e->n_runs ? e->runs[i] : NULL;
}

/* ---- the code out of a completion ---- */

/* A fence's info string names language (SandboxFusion's aliases, compared
 * without case). */
static bool names_language(const char *info, size_t n, const char *language) {
  static const struct {
    const char *language, *aliases;
  } table[] = {
      {"python", " python py python3 "},
      {"cpp", " cpp c++ "},
      {"nodejs", " javascript js "},
      {"go", " go "},
      {"java", " java "},
      {"php", " php "},
      {"bash", " bash sh shell "},
      {"typescript", " typescript "},
      {"rust", " rust rs "},
      {"lua", " lua "},
      {"perl", " perl "},
      {"ruby", " ruby "},
  };
  while (n && isspace((unsigned char)*info))
    info++, n--;
  while (n && isspace((unsigned char)info[n - 1]))
    n--;
  if (!n || n > 16 || !language) return false;
  char word[20];
  snprintf(word, sizeof word, " %.*s ", (int)n, info);
  for (char *p = word; *p; p++)
    *p = (char)tolower((unsigned char)*p);
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].language, language) == 0) return strstr(table[i].aliases, word) != NULL;
  return false;
}

/* The code of a completion, as SandboxFusion's default extraction picks it:
 * the fenced blocks (```info\n ... \n```), the first in language, else the
 * first; without a closed fence, what follows an opening one. Without any
 * fence sandq takes the completion whole (SandboxFusion would take ''). */
static char *extract_code(const char *c, const char *language) {
  const char *first = NULL, *first_end = NULL, *open = NULL;
  for (const char *p = strstr(c, "```"); p;) {
    const char *nl = strchr(p + 3, '\n');
    if (!nl) break;
    const char *body = nl + 1, *end = NULL, *after = NULL;
    /* the earliest "```" after a line break and white space closes it */
    for (const char *q = strstr(body, "```"); q && !end; q = strstr(q + 1, "```")) {
      const char *ws = q;
      while (ws > body && isspace((unsigned char)ws[-1]))
        ws--;
      if ((end = memchr(ws, '\n', (size_t)(q - ws)))) after = q + 3;
    }
    if (!end) {
      open = body;
      break;
    }
    if (names_language(p + 3, (size_t)(nl - p - 3), language)) return strndup(body, (size_t)(end - body));
    if (!first) first = body, first_end = end;
    p = strstr(after, "```");
  }
  if (first) return strndup(first, (size_t)(first_end - first));
  if (open) return strdup(open);
  return strdup(c);
}

/* AutoEval's program: the code at the test's first #<INSERT> (the test's
 * text up to a second one kept), or the code (cut at a Python
 * `if __name__ ==`) then the test. */
static char *append_test(const char *code, const char *test) {
  const char *mark = strstr(test, INSERT_MARK);
  sq_buf b = {0};
  int rc;
  if (mark) {
    const char *rest = mark + strlen(INSERT_MARK), *next = strstr(rest, INSERT_MARK);
    size_t rest_n = next ? (size_t)(next - rest) : strlen(rest);
    rc = sq_buf_appendf(&b, "%.*s%s%.*s", (int)(mark - test), test, code, (int)rest_n, rest);
  } else {
    const char *main_at = strstr(code, "if __name__ ==");
    size_t n = main_at ? (size_t)(main_at - code) : strlen(code);
    rc = sq_buf_appendf(&b, "%.*s\n%s", (int)n, code, test);
  }
  if (rc) {
    sq_buf_clear(&b);
    return NULL;
  }
  return b.data;
}

/* ---- the request ---- */

static int fail(int status, const char *detail, char **reply) {
  *reply = sq__api_detail(detail);
  return status;
}

/* v as an object, or a string holding a JSON object or array (rows keep
 * their columns as JSON text): a parsed copy in *owned. */
static const cJSON *json_column(const cJSON *v, cJSON **owned) {
  *owned = NULL;
  if (cJSON_IsString(v)) return *owned = cJSON_Parse(v->valuestring);
  return v;
}

/* A RunCodeRequest body (malloc'd) for code in language. */
static char *run_body(const char *code, const char *language, double compile_s, double run_s, const char *in,
                      const cJSON *files) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "code", code);
  cJSON_AddStringToObject(o, "language", language);
  cJSON_AddNumberToObject(o, "compile_timeout", compile_s);
  cJSON_AddNumberToObject(o, "run_timeout", run_s);
  if (in) cJSON_AddStringToObject(o, "stdin", in);
  if (files) cJSON_AddItemToObject(o, "files", cJSON_Duplicate(files, true));
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

static bool compiled(const char *language) {
  static const char *const names[] = {"cpp", "go", "java", "rust", "typescript"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(language, names[i]) == 0) return true;
  return false;
}

/* config's timeout (a number; null or absent: dflt). */
static double timeout_of(const cJSON *config, const char *name, double dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, name);
  return cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : dflt;
}

static int plan_oj(sq__api_eval *e, const cJSON *config, const cJSON *row, const char *completion,
                   char **reply) {
  const cJSON *lang = cJSON_GetObjectItemCaseSensitive(config, "language");
  if (!cJSON_IsString(lang))
    return fail(400, "config.language field must exist for CommonOJDataset, got None", reply);
  cJSON *owned;
  const cJSON *tests = json_column(cJSON_GetObjectItemCaseSensitive(row, "test"), &owned);
  if (!cJSON_IsArray(tests) || cJSON_GetArraySize(tests) == 0) {
    cJSON_Delete(owned);
    return fail(400,
                "config.provided_data.test must be a non-empty list of {\"input\": {\"stdin\": ...}, "
                "\"output\": {\"stdout\": ...}}",
                reply);
  }
  e->cases = owned ? owned : cJSON_Duplicate(tests, true);
  size_t n = (size_t)cJSON_GetArraySize(e->cases);
  if (!e->cases || !(e->code = extract_code(completion, lang->valuestring)) ||
      !(e->runs = calloc(n, sizeof *e->runs)))
    return fail(500, "out of memory", reply);
  bool c = compiled(lang->valuestring);
  double compile_s = timeout_of(config, "compile_timeout", OJ_TIMEOUT_S),
         run_s = timeout_of(config, "run_timeout", c ? OJ_TIMEOUT_S : OJ_SCRIPT_RUN_TIMEOUT_S);
  const cJSON *t;
  cJSON_ArrayForEach(t, e->cases) {
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "input"), "stdin");
    const cJSON *out =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "output"), "stdout");
    if (!cJSON_IsString(in) || !cJSON_IsString(out)) {
      char msg[160];
      snprintf(msg, sizeof msg,
               "config.provided_data.test[%zu]: needs input.stdin and output.stdout, strings", e->n_runs);
      return fail(400, msg, reply);
    }
    if (!(e->runs[e->n_runs] = run_body(e->code, lang->valuestring, compile_s, run_s, in->valuestring, NULL)))
      return fail(500, "out of memory", reply);
    e->n_runs++;
  }
  return 200;
}

static int plan_auto(sq__api_eval *e, const cJSON *config, const cJSON *row, const char *completion,
                     char **reply) {
  cJSON *labels_owned, *test_owned, *asset_owned = NULL;
  const cJSON *labels = json_column(cJSON_GetObjectItemCaseSensitive(row, "labels"), &labels_owned);
  const cJSON *test = json_column(cJSON_GetObjectItemCaseSensitive(row, "test"), &test_owned);
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(labels, "programming_language");
  const cJSON *el = cJSON_GetObjectItemCaseSensitive(labels, "execution_language");
  const cJSON *tcode = cJSON_GetObjectItemCaseSensitive(test, "code");
  const cJSON *asset = json_column(cJSON_GetObjectItemCaseSensitive(test, "asset"), &asset_owned);
  const char *language = cJSON_IsString(el) ? el->valuestring : cJSON_IsString(pl) ? pl->valuestring : NULL;
  int status = 200;
  char msg[200];
  if (!language || !cJSON_IsString(pl)) {
    status =
        fail(400, "config.provided_data.labels.programming_language is required for AutoEvalDataset", reply);
  } else if (!cJSON_IsString(tcode)) {
    status =
        fail(400, "config.provided_data.test.code (the test program) is required for AutoEvalDataset", reply);
  } else if (strcmp(pl->valuestring, "java") == 0 || !sq__api_language_known(language)) {
    snprintf(msg, sizeof msg,
             "AutoEvalDataset in %.40s is not served by sandq (python, cpp, nodejs, go, ... are)",
             strcmp(pl->valuestring, "java") == 0 ? "java (junit)" : language);
    status = fail(400, msg, reply);
  } else if (asset && !cJSON_IsNull(asset) && !cJSON_IsObject(asset)) {
    status = fail(400, "config.provided_data.test.asset must be an object of file name -> base64", reply);
  } else if (!(e->code = extract_code(completion, pl->valuestring)) ||
             !(e->full_code = append_test(e->code, tcode->valuestring)) ||
             !(e->runs = calloc(1, sizeof *e->runs)) ||
             !(e->runs[0] = run_body(e->full_code, language,
                                     timeout_of(config, "compile_timeout", AUTO_COMPILE_TIMEOUT_S),
                                     timeout_of(config, "run_timeout", AUTO_RUN_TIMEOUT_S), NULL,
                                     cJSON_IsObject(asset) ? asset : NULL))) {
    status = fail(500, "out of memory", reply);
  } else {
    e->n_runs = 1;
  }
  cJSON_Delete(labels_owned);
  cJSON_Delete(test_owned);
  cJSON_Delete(asset_owned);
  return status;
}

/* SubmitRequest's fields as pydantic checks them. */
static void validate(cJSON *detail, const cJSON *root) {
  static const char *const required[] = {"dataset", "id", "completion", "config"};
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, required[i]);
    if (!v)
      sq__api_add_error(detail, "missing", required[i], -1, "Field required", root, NULL);
    else if (i == 1 && !cJSON_IsString(v) && !(cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble)))
      sq__api_add_error(detail, "int_type", required[i], -1, "Input should be a valid integer or string", v,
                        NULL);
    else if (i == 3 && !cJSON_IsObject(v))
      sq__api_add_error(detail, "model_attributes_type", required[i], -1,
                        "Input should be a valid dictionary or object to extract fields from", v, NULL);
    else if ((i == 0 || i == 2) && !cJSON_IsString(v))
      sq__api_add_error(detail, "string_type", required[i], -1, "Input should be a valid string", v, NULL);
  }
  const cJSON *config = cJSON_GetObjectItemCaseSensitive(root, "config");
  const cJSON *lang = cJSON_GetObjectItemCaseSensitive(config, "language");
  if (cJSON_IsObject(config) && lang && !cJSON_IsNull(lang) &&
      !(cJSON_IsString(lang) && sq__api_language_known(lang->valuestring))) {
    char expected[600], msg[640];
    sq__api_languages_expected(expected, sizeof expected);
    snprintf(msg, sizeof msg, "Input should be %s", expected);
    cJSON *ctx = cJSON_CreateObject();
    if (ctx) cJSON_AddStringToObject(ctx, "expected", expected);
    sq__api_add_error(detail, "literal_error", "config.language", -1, msg, lang, ctx);
  }
  const char *timeouts[] = {"compile_timeout", "run_timeout"};
  for (size_t i = 0; cJSON_IsObject(config) && i < 2; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, timeouts[i]);
    char path[40];
    snprintf(path, sizeof path, "config.%s", timeouts[i]);
    if (v && !cJSON_IsNull(v) && !cJSON_IsNumber(v))
      sq__api_add_error(detail, "float_type", path, -1, "Input should be a valid number", v, NULL);
  }
}

int sq__api_eval_parse(const char *body, size_t len, sq__api_eval **out, char **reply) {
  *out = NULL;
  cJSON *root = sq__api_parse_object(body, len, reply);
  if (!root) return 422;
  int status = 422;
  sq__api_eval *e = NULL;
  cJSON *detail = cJSON_CreateArray();
  if (!detail) {
    status = fail(500, "out of memory", reply);
    goto out;
  }
  validate(detail, root);
  if (cJSON_GetArraySize(detail) > 0) {
    *reply = sq__api_validation_reply(detail);
    detail = NULL;
    goto out;
  }
  bool nul[8] = {0};
  if (sq_json_nul_members(body, len, nul, 8) > 0) {
    status = fail(400, "the request holds a NUL character (\\u0000): sandq takes strings whole or not at all",
                  reply);
    goto out;
  }
  const cJSON *dataset = cJSON_GetObjectItemCaseSensitive(root, "dataset");
  const cJSON *config = cJSON_GetObjectItemCaseSensitive(root, "config");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(config, "dataset_type");
  const cJSON *row = cJSON_GetObjectItemCaseSensitive(config, "provided_data");
  char msg[256];
  eval_kind kind;
  if (!cJSON_IsString(type)) {
    snprintf(msg, sizeof msg,
             "no eval class found for dataset %.100s (sandq: set config.dataset_type to "
             "CommonOJDataset or AutoEvalDataset)",
             dataset->valuestring);
    status = fail(400, msg, reply);
    goto out;
  }
  if (strcmp(type->valuestring, "CommonOJDataset") == 0) {
    kind = KIND_OJ;
  } else if (strcmp(type->valuestring, "AutoEvalDataset") == 0 ||
             strcmp(type->valuestring, "AutoEvalV4Dataset") == 0 ||
             strcmp(type->valuestring, "AutoEvalV5Dataset") == 0 ||
             strcmp(type->valuestring, "AutoEvalV6Dataset") == 0) {
    kind = KIND_AUTO;
  } else {
    snprintf(msg, sizeof msg,
             "eval class %.100s not found (sandq serves CommonOJDataset and AutoEvalDataset)",
             type->valuestring);
    status = fail(400, msg, reply);
    goto out;
  }
  if (!row || cJSON_IsNull(row)) {
    status = fail(
        400, "sandq keeps no dataset tables: send the problem in config.provided_data (docs/api.md)", reply);
    goto out;
  }
  if (!cJSON_IsObject(row)) {
    status = fail(400, "request.config.provided_data should be a dict with str -> str | int", reply);
    goto out;
  }
  if (!(e = calloc(1, sizeof *e)) ||
      !(e->id = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(root, "id"), true))) {
    status = fail(500, "out of memory", reply);
    goto out;
  }
  e->kind = kind;
  const char *completion = cJSON_GetObjectItemCaseSensitive(root, "completion")->valuestring;
  status = kind == KIND_OJ ? plan_oj(e, config, row, completion, reply)
                           : plan_auto(e, config, row, completion, reply);
  if (status == 200) {
    *out = e;
    e = NULL;
  }
out:
  sq__api_eval_free(e);
  cJSON_Delete(detail);
  cJSON_Delete(root);
  return status;
}

/* ---- the answer ---- */

/* One line of output as SandboxFusion compares it: ASCII lower case,
 * white space around it dropped. */
static char *norm_line(const char *s, size_t n) {
  while (n && isspace((unsigned char)*s))
    s++, n--;
  while (n && isspace((unsigned char)s[n - 1]))
    n--;
  char *o = strndup(s, n);
  for (char *p = o; p && *p; p++)
    *p = (char)tolower((unsigned char)*p);
  return o;
}

static bool as_float(const char *s, double *out) {
  char *end = NULL;
  if (!*s) return false;
  *out = strtod(s, &end);
  return end && !*end;
}

/* text's lines after the whole is stripped (an empty text: one empty line). */
static size_t split_lines(const char *text, const char ***starts, size_t **lens) {
  size_t n = strlen(text);
  while (n && isspace((unsigned char)*text))
    text++, n--;
  while (n && isspace((unsigned char)text[n - 1]))
    n--;
  size_t count = 1;
  for (size_t i = 0; i < n; i++)
    count += text[i] == '\n';
  *starts = calloc(count, sizeof **starts);
  *lens = calloc(count, sizeof **lens);
  if (!*starts || !*lens) return 0;
  size_t k = 0, at = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || text[i] == '\n') {
      (*starts)[k] = text + at;
      (*lens)[k++] = i - at;
      at = i + 1;
    }
  }
  return count;
}

/* stdout matches expected as SandboxFusion's stdio check has it: the same
 * number of lines, each equal without case and surrounding white space, or
 * both numbers within a relative 1e-5. */
static bool stdio_match(const char *got, const char *want) {
  const char **gs = NULL, **ws = NULL;
  size_t *gl = NULL, *wl = NULL;
  size_t gn = split_lines(got, &gs, &gl), wn = split_lines(want, &ws, &wl);
  bool ok = gn && wn && gn == wn;
  for (size_t i = 0; ok && i < gn; i++) {
    char *g = norm_line(gs[i], gl[i]), *w = norm_line(ws[i], wl[i]);
    double a, b;
    ok = g && w &&
         (strcmp(g, w) == 0 ||
          (as_float(w, &b) && as_float(g, &a) && fabs(a - b) / fmax(fabs(b), 1e-10) < FLOAT_REL_TOL));
    free(g);
    free(w);
  }
  free(gs), free(gl), free(ws), free(wl);
  return ok;
}

char *sq__api_eval_reply(const sq__api_eval *e, char *const *replies, bool *accepted) {
  cJSON *o = cJSON_CreateObject(), *tests = cJSON_CreateArray();
  *accepted = true;
  if (!o || !tests) {
    cJSON_Delete(o), cJSON_Delete(tests);
    return NULL;
  }
  const cJSON *c = e->cases ? e->cases->child : NULL;
  for (size_t i = 0; i < e->n_runs; i++, c = c ? c->next : NULL) {
    cJSON *info = replies[i] ? cJSON_Parse(replies[i]) : NULL, *t = cJSON_CreateObject();
    if (!info || !t) {
      cJSON_Delete(info), cJSON_Delete(t);
      cJSON_Delete(o), cJSON_Delete(tests);
      return NULL;
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(info, "status");
    bool passed = cJSON_IsString(st) && strcmp(st->valuestring, "Success") == 0;
    if (passed && e->kind == KIND_OJ) {
      const cJSON *out =
          cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(info, "run_result"), "stdout");
      const cJSON *want =
          cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "output"), "stdout");
      passed =
          cJSON_IsString(out) && cJSON_IsString(want) && stdio_match(out->valuestring, want->valuestring);
    }
    *accepted = *accepted && passed;
    cJSON_AddBoolToObject(t, "passed", passed);
    cJSON_AddItemToObject(t, "exec_info", info);
    cJSON_AddItemToObject(t, "test_info", c ? cJSON_Duplicate(c, true) : cJSON_CreateNull());
    cJSON_AddItemToArray(tests, t);
  }
  cJSON_AddItemToObject(o, "id", cJSON_Duplicate(e->id, true));
  cJSON_AddBoolToObject(o, "accepted", *accepted);
  cJSON_AddStringToObject(o, "extracted_code", e->code ? e->code : "");
  if (e->full_code)
    cJSON_AddStringToObject(o, "full_code", e->full_code);
  else
    cJSON_AddNullToObject(o, "full_code");
  cJSON_AddNullToObject(o, "test_code");
  cJSON_AddItemToObject(o, "tests", tests);
  cJSON_AddNullToObject(o, "extracted_type");
  if (e->kind == KIND_AUTO)
    cJSON_AddObjectToObject(o, "extra");
  else
    cJSON_AddNullToObject(o, "extra");
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}
