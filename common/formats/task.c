/* task.c: one task off the wire (JSON, cJSON) into an sq_task, with errors
 * that name the field. */
#include "task.h"

#include <bson/bson.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "json_scan.h"
#include "name.h"
#include "util.h"

/* A payload over max_bytes is still read this far to file its result under
 * its own id and batch; past it the id is raw-<hash> (docs/formats.md). */
#define SALVAGE_MAX_BYTES ((size_t)64 << 20)
/* libbson's JSON reader stops near 100 levels; the margin is the result's own. */
#define METADATA_DEPTH_MAX 64
/* 9999-12-31T23:59:59.999Z: past it enqueued_at_ms is not a time. */
#define ENQUEUED_AT_MS_MAX 253402300799999.0

/* Ids are compared and stored as bytes: no control characters, and valid
 * UTF-8, since the result's BSON _id must be (a lenient copy would map
 * different ids onto one). */
static int valid_text(const char *s, size_t max) {
  size_t n = strlen(s);
  if (n == 0 || n > max) return 0;
  if (!bson_utf8_validate(s, n, false)) return 0;
  for (; *s; s++) /* C0, DEL, and C1 (U+0080-U+009F: a terminal takes U+009B for ESC [) */
    if ((unsigned char)*s < 0x20 || *s == 0x7f || ((unsigned char)s[0] == 0xc2 && (unsigned char)s[1] < 0xa0))
      return 0;
  return 1;
}

static int valid_id(const char *s) { return valid_text(s, SQ_TASK_ID_MAX); }

static int valid_identifier(const char *s) {
  if (!*s || strlen(s) > 128 || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

static int take_string(const cJSON *v, const char *name, char **dst, char *err, size_t errlen) {
  if (!cJSON_IsString(v)) return sq_errf(err, errlen, SQ_ETASK, "%s: must be a string", name);
  *dst = strdup(v->valuestring);
  return *dst ? 0 : SQ_ENOMEM;
}

/* Whether v is a JSON number holding an integer in [lo, hi] (checked as a
 * double before any conversion: 1e309 and 2^63 do not fit an int64_t). */
static bool integer_in(const cJSON *v, double lo, double hi) {
  if (!cJSON_IsNumber(v)) return false;
  double d = v->valuedouble;
  return isfinite(d) && d >= lo && d <= hi && d == floor(d);
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Refuses a member name that obj (an object, or an array whose objects are
 * checked) holds twice, at every level below it too: cJSON keeps both and
 * each reader takes one of them (the first here, the last there), so the
 * task would not mean one thing. where names obj in the message ("limits",
 * "cases[2]"). Sorted names, so a large metadata costs n log n. */
static int refuse_twice(const cJSON *obj, const char *where, char *err, size_t errlen) {
  if (!cJSON_IsObject(obj) && !cJSON_IsArray(obj)) return 0;
  const cJSON *c;
  size_t n = 0, i = 0;
  cJSON_ArrayForEach(c, obj) n++;
  if (cJSON_IsObject(obj) && n > 1) {
    const char **names = malloc(n * sizeof *names);
    if (!names) return SQ_ENOMEM;
    cJSON_ArrayForEach(c, obj) names[i++] = c->string;
    qsort(names, n, sizeof *names, name_cmp);
    const char *twice = NULL;
    for (i = 1; i < n && !twice; i++)
      if (strcmp(names[i - 1], names[i]) == 0) twice = names[i];
    int rc = twice ? sq_errf(err, errlen, SQ_ETASK, "%s.%.64s: appears twice", where, twice) : 0;
    free(names);
    if (rc) return rc;
  }
  i = 0;
  cJSON_ArrayForEach(c, obj) {
    char sub[160];
    if (cJSON_IsArray(obj)) snprintf(sub, sizeof sub, "%s[%zu]", where, i++);
    else snprintf(sub, sizeof sub, "%s.%.64s", where, c->string);
    int rc = refuse_twice(c, sub, err, errlen);
    if (rc) return rc;
  }
  return 0;
}

static int take_limit(const cJSON *v, const char *name, int64_t min, int64_t max, int64_t *dst, char *err,
                      size_t errlen) {
  if (!integer_in(v, (double)min, (double)max))
    return sq_errf(err, errlen, SQ_ETASK, "limits.%s: must be an integer in [%lld, %lld]", name, (long long)min,
                   (long long)max);
  *dst = (int64_t)v->valuedouble;
  return 0;
}

static int take_limits(const cJSON *v, sq_jail_limits *lim, char *err, size_t errlen) {
  if (!cJSON_IsObject(v)) return sq_errf(err, errlen, SQ_ETASK, "limits: must be an object");
  int twice = refuse_twice(v, "limits", err, errlen);
  if (twice) return twice;
  const cJSON *m;
  const int64_t day_ms = 24LL * 3600 * 1000;
  cJSON_ArrayForEach(m, v) {
    int rc;
    if (strcmp(m->string, "wall_ms") == 0) rc = take_limit(m, "wall_ms", 1, day_ms, &lim->wall_ms, err, errlen);
    else if (strcmp(m->string, "cpu_ms") == 0) rc = take_limit(m, "cpu_ms", 1, day_ms, &lim->cpu_ms, err, errlen);
    else if (strcmp(m->string, "memory_mib") == 0) /* the config's floor: Python does not start in less */
      rc = take_limit(m, "memory_mib", SQ_TASK_MEMORY_MIB_MIN, 1024 * 1024, &lim->memory_mib, err, errlen);
    else if (strcmp(m->string, "output_kib") == 0)
      rc = take_limit(m, "output_kib", 1, 1024 * 1024, &lim->output_kib, err, errlen);
    else
      rc = sq_errf(err, errlen, SQ_ETASK,
                "limits.%s: unknown limit (known: wall_ms, cpu_ms, memory_mib, output_kib)", m->string);
    if (rc) return rc;
  }
  return 0;
}

bool sq_task_relative_name_ok(const char *name) {
  if (!valid_text(name, SQ_TASK_FILE_NAME_MAX) || name[0] == '/') return false;
  for (const char *c = name;;) { /* each component: not empty, not ".", not ".." */
    size_t n = strcspn(c, "/");
    if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) return false;
    if (!c[n]) return true;
    c += n + 1;
  }
}

/* The decoded size of s as strict RFC 4648 base64 (padded, no white
 * space), or -1 when it is not that. */
static long long base64_bytes(const char *s) {
  size_t n = strlen(s), pad = 0;
  if (n % 4) return -1;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '=') {
      if (i < n - 2) return -1;
      pad++;
    } else if (pad || !(isalnum(c) || c == '+' || c == '/')) {
      return -1;
    }
  }
  return (long long)(n / 4 * 3 - pad);
}

/* "files": an object of relative name -> base64 content, within the caps. */
static int take_files(const cJSON *v, sq_task *t, char *err, size_t errlen) {
  if (!cJSON_IsObject(v)) return sq_errf(err, errlen, SQ_ETASK, "files: must be an object of name -> base64 string");
  size_t n = (size_t)cJSON_GetArraySize(v);
  if (n > SQ_TASK_FILES_MAX)
    return sq_errf(err, errlen, SQ_ETASK, "files: %zu files, more than the %d allowed", n, SQ_TASK_FILES_MAX);
  if (n == 0) return 0;
  if (!(t->files = calloc(n, sizeof *t->files))) return SQ_ENOMEM;
  unsigned long long total = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, v) {
    const char *name = m->string;
    if (!sq_task_relative_name_ok(name))
      return sq_errf(err, errlen, SQ_ETASK,
                     "files: '%.64s' is not a relative file name (1-%d bytes, no '..' or '.' component, "
                     "not absolute)", name, SQ_TASK_FILE_NAME_MAX);
    if (strcmp(name, SQ_TASK_PROGRAM_NAME) == 0)
      return sq_errf(err, errlen, SQ_ETASK, "files: '%s' is the program's own name in scratch", name);
    if (!cJSON_IsString(m)) return sq_errf(err, errlen, SQ_ETASK, "files.%.64s: must be a base64 string", name);
    long long bytes = base64_bytes(m->valuestring);
    if (bytes < 0) return sq_errf(err, errlen, SQ_ETASK, "files.%.64s: not valid base64 (RFC 4648, padded)", name);
    total += (unsigned long long)bytes;
    if (total > SQ_TASK_FILES_BYTES_MAX)
      return sq_errf(err, errlen, SQ_ETASK, "files: more than the %u bytes allowed in all (decoded)",
                     SQ_TASK_FILES_BYTES_MAX);
    for (size_t k = 0; k < t->n_files; k++) { /* a name twice, or a file where another needs a directory */
      const char *o = t->files[k].name;
      size_t lo = strlen(o), ln = strlen(name);
      if (strcmp(o, name) == 0) return sq_errf(err, errlen, SQ_ETASK, "files.%.64s: appears twice", name);
      if ((lo < ln && strncmp(o, name, lo) == 0 && name[lo] == '/') ||
          (ln < lo && strncmp(o, name, ln) == 0 && o[ln] == '/'))
        return sq_errf(err, errlen, SQ_ETASK, "files: '%.64s' and '%.64s': one is a directory of the other", o, name);
    }
    sq_task_file *f = &t->files[t->n_files++];
    f->bytes = (size_t)bytes;
    if (!(f->name = strdup(name)) || !(f->base64 = strdup(m->valuestring))) return SQ_ENOMEM;
  }
  return 0;
}

/* Whether name (a carried file's) is one the language's steps write or
 * read in scratch, from the language table: the source (source_name), what
 * the compiler writes (its -o, Java's class of the run), the files the run
 * names (main.js, ./main). Returns what it is ("source", "build"), or NULL. */
static const char *build_name(sq_language_id id, const char *name) {
  const sq_language *l = sq_language_get(id);
  if (!l) return NULL;
  if (strcmp(name, l->source_name) == 0) return "source";
  bool javac = false;
  for (int i = 0; l->compile[i]; i++) {
    if (strcmp(l->compile[i], "-d") == 0) javac = true;
    if (strcmp(l->compile[i], "-o") == 0 && l->compile[i + 1] && strcmp(name, l->compile[i + 1]) == 0) return "build";
  }
  for (int i = 1; l->run[i]; i++) { /* the words that are scratch's files: not flags, paths or settings */
    const char *w = l->run[i];
    if (w[0] == '-' || w[0] == '/' || strpbrk(w, "={") || strcmp(w, ".") == 0) continue;
    if (strncmp(w, "./", 2) == 0) w += 2;
    size_t n = strlen(w);
    if (strcmp(name, w) == 0) return l->compile[0] ? "build" : "source";
    if (javac && strncmp(name, w, n) == 0 && strcmp(name + n, ".class") == 0) return "build";
  }
  return NULL;
}

/* "fetch_files": an array of relative globs. */
static int take_fetch(const cJSON *v, sq_task *t, char *err, size_t errlen) {
  if (!cJSON_IsArray(v)) return sq_errf(err, errlen, SQ_ETASK, "fetch_files: must be an array of glob strings");
  size_t n = (size_t)cJSON_GetArraySize(v);
  if (n > SQ_TASK_FETCH_MAX)
    return sq_errf(err, errlen, SQ_ETASK, "fetch_files: %zu globs, more than the %d allowed", n, SQ_TASK_FETCH_MAX);
  if (n == 0) return 0;
  if (!(t->fetch_files = calloc(n, sizeof *t->fetch_files))) return SQ_ENOMEM;
  const cJSON *g;
  cJSON_ArrayForEach(g, v) {
    if (!cJSON_IsString(g) || !sq_task_relative_name_ok(g->valuestring))
      return sq_errf(err, errlen, SQ_ETASK,
                     "fetch_files[%zu]: must be a relative glob (1-%d bytes, no '..' or '.' component, "
                     "not absolute)", t->n_fetch, SQ_TASK_FILE_NAME_MAX);
    if (!(t->fetch_files[t->n_fetch++] = strdup(g->valuestring))) return SQ_ENOMEM;
  }
  return 0;
}

static int take_language(const cJSON *v, sq_task *t, char *err, size_t errlen) {
  if (!cJSON_IsString(v))
    return sq_errf(err, errlen, SQ_ETASK, "language: must be a string (one of: %s)", sq_language_all_names());
  if (sq_language_find(v->valuestring, &t->language) != 0)
    return sq_errf(err, errlen, SQ_ETASK, "language: '%.32s' is not a language sandq runs (it knows: %s)",
                   v->valuestring, sq_language_all_names());
  return 0;
}

/* "cases": an array of {"stdin": S, "expected_stdout": S} objects. */
static int take_cases(const cJSON *v, sq_task *t, char *err, size_t errlen) {
  if (!cJSON_IsArray(v))
    return sq_errf(err, errlen, SQ_ETASK, "cases: must be an array of {\"stdin\", \"expected_stdout\"} objects");
  size_t n = (size_t)cJSON_GetArraySize(v);
  if (n == 0) return sq_errf(err, errlen, SQ_ETASK, "cases: must hold at least one case");
  if (n > SQ_TASK_CASES_MAX)
    return sq_errf(err, errlen, SQ_ETASK, "cases: %zu cases, more than the %d allowed", n, SQ_TASK_CASES_MAX);
  if (!(t->cases = calloc(n, sizeof *t->cases))) return SQ_ENOMEM;
  const cJSON *c;
  cJSON_ArrayForEach(c, v) {
    size_t i = t->n_cases;
    if (!cJSON_IsObject(c)) return sq_errf(err, errlen, SQ_ETASK, "cases[%zu]: must be an object", i);
    char where[32];
    snprintf(where, sizeof where, "cases[%zu]", i);
    int twice = refuse_twice(c, where, err, errlen);
    if (twice) return twice;
    const cJSON *m;
    cJSON_ArrayForEach(m, c) {
      if (strcmp(m->string, "stdin") != 0 && strcmp(m->string, "expected_stdout") != 0)
        return sq_errf(err, errlen, SQ_ETASK, "cases[%zu].%.32s: unknown field (known: stdin, expected_stdout)", i,
                       m->string);
    }
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(c, "stdin");
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(c, "expected_stdout");
    if (in && !cJSON_IsString(in)) return sq_errf(err, errlen, SQ_ETASK, "cases[%zu].stdin: must be a string", i);
    if (!cJSON_IsString(want))
      return sq_errf(err, errlen, SQ_ETASK, "cases[%zu].expected_stdout: required, a string", i);
    sq_task_case *k = &t->cases[t->n_cases++];
    if (!(k->stdin_text = strdup(in ? in->valuestring : "")) || !(k->expected_stdout = strdup(want->valuestring)))
      return SQ_ENOMEM;
  }
  return 0;
}

/* "checker": "exact", "tokens" or "float:TOL" (TOL a number in (0, 1]). */
static int take_checker(const cJSON *v, sq_task *t, char *err, size_t errlen) {
  const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
  if (s && strcmp(s, "tokens") == 0) t->checker = (sq_task_checker){.kind = SQ_CHECKER_TOKENS};
  else if (s && strcmp(s, "exact") == 0) t->checker = (sq_task_checker){.kind = SQ_CHECKER_EXACT};
  else if (s && strncmp(s, "float:", 6) == 0) {
    char *end = NULL;
    double tol = strtod(s + 6, &end);
    if (end == s + 6 || *end || !(tol > 0 && tol <= 1))
      return sq_errf(err, errlen, SQ_ETASK, "checker: '%.32s': the tolerance must be a number in (0, 1]", s);
    t->checker = (sq_task_checker){.kind = SQ_CHECKER_FLOAT, .tolerance = tol};
  } else
    return sq_errf(err, errlen, SQ_ETASK, "checker: must be \"exact\", \"tokens\" or \"float:TOL\"");
  return 0;
}

/* "profile": a name the worker looks up (an unknown one is its invalid_task). */
static int take_profile(const cJSON *v, sq_task *t, char *err, size_t errlen) {
  int rc = take_string(v, "profile", &t->profile, err, errlen);
  if (rc) return rc;
  size_t n = strlen(t->profile);
  bool ok = n > 0 && n <= 31;
  for (const char *c = t->profile; ok && *c; c++)
    ok = isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.';
  return ok ? 0 : sq_errf(err, errlen, SQ_ETASK, "profile: must be 1-31 characters of A-Z a-z 0-9 _ - .");
}

/* How deep v nests (a scalar is 0, {} is 1); stops counting past limit. */
static int depth_of(const cJSON *v, int limit) {
  if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) return 0;
  int deepest = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, v) {
    if (deepest >= limit) break;
    int d = depth_of(c, limit - 1);
    if (d > deepest) deepest = d;
  }
  return deepest + 1;
}

/* metadata as JSON text in *out, refused (with the reason) unless the
 * result can carry it untouched: an object, at most METADATA_DEPTH_MAX
 * levels, valid UTF-8, readable by libbson. */
static int take_metadata(const cJSON *m, char **out, char *err, size_t errlen) {
  if (!cJSON_IsObject(m)) return sq_errf(err, errlen, SQ_ETASK, "metadata: must be an object");
  if (depth_of(m, METADATA_DEPTH_MAX + 1) > METADATA_DEPTH_MAX)
    return sq_errf(err, errlen, SQ_ETASK, "metadata: nested deeper than %d levels", METADATA_DEPTH_MAX);
  int twice = refuse_twice(m, "metadata", err, errlen);
  if (twice) return twice;
  char *json = cJSON_PrintUnformatted(m);
  if (!json) return SQ_ENOMEM;
  if (!bson_utf8_validate(json, strlen(json), false)) {
    free(json);
    return sq_errf(err, errlen, SQ_ETASK, "metadata: holds a string that is not valid UTF-8");
  }
  bson_error_t berr;
  bson_t *doc = bson_new_from_json((const uint8_t *)json, -1, &berr);
  if (!doc) {
    free(json);
    return sq_errf(err, errlen, SQ_ETASK, "metadata: not representable in BSON (%s)", berr.message);
  }
  bson_destroy(doc);
  *out = json;
  return 0;
}

/* The first member of root named name, or NULL when there is none or it
 * holds a NUL character (nul[] from sq_json_nul_members). */
static const cJSON *clean_member(const cJSON *root, const char *name, const bool *nul) {
  size_t i = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, root) {
    if (strcmp(m->string, name) == 0) return nul[i] ? NULL : m;
    i++;
  }
  return NULL;
}

/* Recovers id, batch and metadata from a task that fails validation, so the
 * error can be reported against it; each only when valid itself. */
static sq_task *salvage(const cJSON *root, const bool *nul) {
  const cJSON *id = clean_member(root, "id", nul);
  if (!cJSON_IsString(id) || !valid_id(id->valuestring)) return NULL;
  sq_task *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->id = strdup(id->valuestring);
  const cJSON *b = clean_member(root, "batch", nul);
  t->batch = strdup(cJSON_IsString(b) && sq_name_ok(b->valuestring, SQ_NAME_BATCH_MAX) ? b->valuestring : "default");
  const cJSON *meta = clean_member(root, "metadata", nul);
  char scratch[8];
  if (meta && take_metadata(meta, &t->metadata_json, scratch, sizeof scratch) != 0) t->metadata_json = NULL;
  if (!t->id || !t->batch) {
    sq_task_free(t);
    return NULL;
  }
  return t;
}

static int parse_fields(const cJSON *root, const bool *nul, sq_task *t, char *err, size_t errlen) {
  static const char *const known[] = {"id",    "batch",           "prompt", "code",     "tests",
                                      "entry_point", "expected_stdout", "limits", "metadata",
                                      "enqueued_at_ms", "priority", "idempotency_key",
                                      "temperature", "model", "language", "files", "fetch_files",
                                      "cases", "checker", "stop_on_failure", "plus_tests", "profile"};
  const size_t n_known = sizeof known / sizeof known[0];
  unsigned seen = 0;
  const cJSON *m;
  int rc = 0;
  size_t idx = 0;
  cJSON_ArrayForEach(m, root) {
    size_t k;
    if (nul[idx++] && strcmp(m->string, "cases") == 0) /* data, not source: the reason is a case's own */
      return sq_errf(err, errlen, SQ_ETASK, "cases: a case's stdin or expected_stdout holds a NUL character "
                     "(\\u0000); a case's text is NUL-free, so it is refused rather than cut short");
    if (nul[idx - 1]) return sq_errf(err, errlen, SQ_ETASK, "%s: %s", m->string, sq_json_nul_reason);
    for (k = 0; k < n_known; k++)
      if (strcmp(m->string, known[k]) == 0) break;
    if (k == n_known)
      return sq_errf(err, errlen, SQ_ETASK,
                  "%s: unknown field (known: id, batch, prompt, code, tests, entry_point, "
                  "expected_stdout, limits, metadata, enqueued_at_ms, priority, idempotency_key, "
                  "temperature, model, language, files, fetch_files, cases, checker, "
                  "stop_on_failure, plus_tests, profile)", m->string);
    if (seen & (1u << k)) return sq_errf(err, errlen, SQ_ETASK, "%s: appears twice", m->string);
    seen |= 1u << k;
    switch (k) {
    case 0:
      if ((rc = take_string(m, "id", &t->id, err, errlen))) return rc;
      if (!valid_id(t->id))
        return sq_errf(err, errlen, SQ_ETASK, "id: must be 1-%d bytes of valid UTF-8 without control characters",
                       SQ_TASK_ID_MAX);
      break;
    case 1:
      if ((rc = take_string(m, "batch", &t->batch, err, errlen))) return rc;
      if (!sq_name_ok(t->batch, SQ_NAME_BATCH_MAX))
        return sq_errf(err, errlen, SQ_ETASK, "batch: must be 1-%d characters of " SQ_NAME_CHARS, SQ_NAME_BATCH_MAX);
      break;
    case 2: rc = take_string(m, "prompt", &t->prompt, err, errlen); break;
    case 3: rc = take_string(m, "code", &t->code, err, errlen); break;
    case 4: rc = take_string(m, "tests", &t->tests, err, errlen); break;
    case 5:
      if ((rc = take_string(m, "entry_point", &t->entry_point, err, errlen))) return rc;
      if (!valid_identifier(t->entry_point))
        return sq_errf(err, errlen, SQ_ETASK, "entry_point: must be a Python identifier");
      break;
    case 6: rc = take_string(m, "expected_stdout", &t->expected_stdout, err, errlen); break;
    case 7: rc = take_limits(m, &t->limits, err, errlen); break;
    case 8: rc = take_metadata(m, &t->metadata_json, err, errlen); break;
    case 9:
      if (!integer_in(m, 0, ENQUEUED_AT_MS_MAX))
        return sq_errf(err, errlen, SQ_ETASK, "enqueued_at_ms: must be an integer in [0, %.0f] (ms since the epoch)",
                       ENQUEUED_AT_MS_MAX);
      t->enqueued_at_ms = (int64_t)m->valuedouble;
      break;
    case 10:
      if (!cJSON_IsString(m)) return sq_errf(err, errlen, SQ_ETASK, "priority: must be \"high\", \"normal\" or \"low\"");
      if (strcmp(m->valuestring, "high") == 0) t->priority = SQ_TASK_HIGH;
      else if (strcmp(m->valuestring, "low") == 0) t->priority = SQ_TASK_LOW;
      else if (strcmp(m->valuestring, "normal") == 0) t->priority = SQ_TASK_NORMAL;
      else return sq_errf(err, errlen, SQ_ETASK, "priority: must be \"high\", \"normal\" or \"low\"");
      break;
    case 11:
      if ((rc = take_string(m, "idempotency_key", &t->idempotency_key, err, errlen))) return rc;
      if (!valid_text(t->idempotency_key, SQ_TASK_IDEM_MAX))
        return sq_errf(err, errlen, SQ_ETASK, "idempotency_key: must be 1-%d bytes of valid UTF-8 without control characters",
                    SQ_TASK_IDEM_MAX);
      break;
    case 12:
      if (!cJSON_IsNumber(m) || !(m->valuedouble >= 0 && m->valuedouble <= 2))
        return sq_errf(err, errlen, SQ_ETASK, "temperature: must be a number in [0, 2]");
      t->temperature = m->valuedouble;
      break;
    case 13:
      if ((rc = take_string(m, "model", &t->model, err, errlen))) return rc;
      if (!valid_id(t->model))
        return sq_errf(err, errlen, SQ_ETASK, "model: must be 1-%d bytes of valid UTF-8 without control characters", SQ_TASK_ID_MAX);
      break;
    case 14: rc = take_language(m, t, err, errlen); break;
    case 15: rc = take_files(m, t, err, errlen); break;
    case 16: rc = take_fetch(m, t, err, errlen); break;
    case 17: rc = take_cases(m, t, err, errlen); break;
    case 18: rc = take_checker(m, t, err, errlen); break;
    case 19:
      if (!cJSON_IsBool(m)) return sq_errf(err, errlen, SQ_ETASK, "stop_on_failure: must be true or false");
      t->stop_on_failure = cJSON_IsTrue(m);
      break;
    case 20: rc = take_string(m, "plus_tests", &t->plus_tests, err, errlen); break;
    case 21: rc = take_profile(m, t, err, errlen); break;
    }
    if (rc) return rc;
  }
  if (!t->id) return sq_errf(err, errlen, SQ_ETASK, "id: required");
  if (!t->prompt && !t->code) return sq_errf(err, errlen, SQ_ETASK, "prompt or code: one of them is required");
  if (t->prompt && !t->code && !t->prompt[strspn(t->prompt, " \t\r\n")])
    return sq_errf(err, errlen, SQ_ETASK, "prompt: must not be blank");
  if (t->language != SQ_TASK_PYTHON && t->entry_point) /* check() is Python's; other tests follow the code */
    return sq_errf(err, errlen, SQ_ETASK, "entry_point: only with language python");
  if (t->cases) { /* each case is judged on its stdout alone */
    const char *other = t->tests ? "tests" : t->entry_point ? "entry_point" : t->expected_stdout ? "expected_stdout" : NULL;
    if (other) return sq_errf(err, errlen, SQ_ETASK, "cases: not with %s (a case carries its expected_stdout)", other);
  } else if (seen & (1u << 18 | 1u << 19)) {
    return sq_errf(err, errlen, SQ_ETASK, "%s: only with cases", seen & (1u << 18) ? "checker" : "stop_on_failure");
  }
  if (t->plus_tests && !t->tests) return sq_errf(err, errlen, SQ_ETASK, "plus_tests: only with tests (the base tier)");
  for (size_t i = 0; i < t->n_files; i++) {
    const char *what = build_name(t->language, t->files[i].name);
    if (what)
      return sq_errf(err, errlen, SQ_ETASK, "files: '%.64s' is the name of the %s program's %s in scratch (it would "
                     "be overwritten); carry the file under another name", t->files[i].name,
                     sq_language_get(t->language)->name, what);
  }
  if (!t->batch && !(t->batch = strdup("default"))) return SQ_ENOMEM;
  return 0;
}

int sq_task_parse(const char *buf, size_t len, size_t max_bytes, sq_task **out, char *err, size_t errlen) {
  *out = NULL;
  bool too_big = max_bytes && len > max_bytes;
  if (too_big) {
    int rc = sq_errf(err, errlen, SQ_ETOOBIG, "task: %zu bytes, more than the %zu allowed (max_task_kib)", len,
                     max_bytes);
    cJSON *root = len <= SALVAGE_MAX_BYTES ? cJSON_ParseWithLength(buf, len) : NULL;
    if (cJSON_IsObject(root)) {
      size_t n = (size_t)cJSON_GetArraySize(root);
      bool *nul = calloc(n + 1, sizeof *nul);
      if (nul) {
        sq_json_nul_members(buf, len, nul, n);
        *out = salvage(root, nul);
      }
      free(nul);
    }
    cJSON_Delete(root);
    return rc;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
  if (!root) {
    size_t at = end && end >= buf ? (size_t)(end - buf) : 0;
    const char *p = cJSON_GetErrorPtr();
    if (p && p >= buf && p <= buf + len) at = (size_t)(p - buf);
    return sq_errf(err, errlen, SQ_EPARSE, "task: not valid JSON (error near byte %zu)", at);
  }
  size_t trailing = sq_json_trailing_at(buf, len, end);
  if (trailing < len) {
    cJSON_Delete(root);
    return sq_errf(err, errlen, SQ_EPARSE, "task: trailing data after the JSON object at byte %zu", trailing);
  }
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return sq_errf(err, errlen, SQ_EPARSE, "task: must be a JSON object");
  }
  size_t n = (size_t)cJSON_GetArraySize(root);
  sq_task *t = calloc(1, sizeof *t);
  bool *nul = calloc(n + 1, sizeof *nul);
  if (!t || !nul) {
    free(t);
    free(nul);
    cJSON_Delete(root);
    return SQ_ENOMEM;
  }
  t->temperature = -1;
  t->stop_on_failure = true;
  sq_json_nul_members(buf, len, nul, n);
  int rc = parse_fields(root, nul, t, err, errlen);
  if (rc) {
    sq_task_free(t);
    *out = salvage(root, nul);
  } else {
    *out = t;
  }
  free(nul);
  cJSON_Delete(root);
  return rc;
}

void sq_task_free(sq_task *t) {
  if (!t) return;
  free(t->id);
  free(t->batch);
  free(t->prompt);
  free(t->code);
  free(t->tests);
  free(t->plus_tests);
  free(t->entry_point);
  free(t->expected_stdout);
  free(t->metadata_json);
  free(t->idempotency_key);
  free(t->model);
  free(t->profile);
  for (size_t i = 0; i < t->n_files; i++) {
    free(t->files[i].name);
    free(t->files[i].base64);
  }
  free(t->files);
  for (size_t i = 0; i < t->n_fetch; i++)
    free(t->fetch_files[i]);
  free(t->fetch_files);
  for (size_t i = 0; i < t->n_cases; i++) {
    free(t->cases[i].stdin_text);
    free(t->cases[i].expected_stdout);
  }
  free(t->cases);
  free(t);
}

int sq_task_salvage(const char *buf, size_t len, char id[SQ_TASK_ID_MAX + 1], char batch[SQ_TASK_ID_MAX + 1]) {
  id[0] = 0;
  snprintf(batch, SQ_TASK_ID_MAX + 1, "%s", SQ_TASK_INVALID_BATCH);
  if (len > SQ_TASK_SALVAGE_MAX) return SQ_ETOOBIG;
  cJSON *root = cJSON_ParseWithLength(buf, len);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return SQ_EPARSE;
  }
  /* An id or batch holding a NUL is never taken: cJSON would hand back its
   * bytes before the NUL, and "t\u0000one" and "t\u0000two" would collapse
   * into "t" (docs/formats.md, "Strings"). */
  size_t n = (size_t)cJSON_GetArraySize(root);
  bool *nul = calloc(n + 1, sizeof *nul);
  if (!nul) {
    cJSON_Delete(root);
    return SQ_ENOMEM;
  }
  sq_json_nul_members(buf, len, nul, n);
  const cJSON *i = clean_member(root, "id", nul);
  const cJSON *b = clean_member(root, "batch", nul);
  if (cJSON_IsString(i) && valid_id(i->valuestring)) snprintf(id, SQ_TASK_ID_MAX + 1, "%s", i->valuestring);
  if (!cJSON_GetObjectItemCaseSensitive(root, "batch")) snprintf(batch, SQ_TASK_ID_MAX + 1, "default");
  else if (cJSON_IsString(b) && sq_name_ok(b->valuestring, SQ_NAME_BATCH_MAX)) snprintf(batch, SQ_TASK_ID_MAX + 1, "%s", b->valuestring);
  free(nul);
  cJSON_Delete(root);
  return 0;
}

int sq_task_stamp(const char *buf, size_t len, const char *batch, int64_t now_ms, char **out) {
  *out = NULL;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
  if (!cJSON_IsObject(root) || sq_json_trailing_at(buf, len, end) < len) { /* stamping would drop the rest */
    cJSON_Delete(root);
    return SQ_EPARSE;
  }
  if (sq_json_nul_members(buf, len, NULL, 0) > 0) { /* printing it again would cut it short */
    cJSON_Delete(root);
    return SQ_ETASK;
  }
  while (cJSON_GetObjectItemCaseSensitive(root, "batch")) cJSON_DeleteItemFromObjectCaseSensitive(root, "batch");
  while (cJSON_GetObjectItemCaseSensitive(root, "enqueued_at_ms"))
    cJSON_DeleteItemFromObjectCaseSensitive(root, "enqueued_at_ms");
  int rc = SQ_ENOMEM;
  if (cJSON_AddStringToObject(root, "batch", batch) && cJSON_AddNumberToObject(root, "enqueued_at_ms", (double)now_ms)) {
    *out = cJSON_PrintUnformatted(root);
    if (*out) rc = 0;
  }
  cJSON_Delete(root);
  return rc;
}

int sq_task_program(const sq_task *t, const char *code, char **out) {
  sq_buf b = {0};
  int rc = sq_buf_append(&b, code ? code : "", code ? strlen(code) : 0);
  if (!rc && t->tests) rc = sq_buf_appendf(&b, "\n\n%s", t->tests);
  if (!rc && t->entry_point) rc = sq_buf_appendf(&b, "\n\ncheck(%s)", t->entry_point);
  if (!rc) rc = sq_buf_append(&b, "\n", 1);
  if (rc) {
    sq_buf_clear(&b);
    return SQ_ENOMEM;
  }
  *out = b.data;
  return 0;
}
