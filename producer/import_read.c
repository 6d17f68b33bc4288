/* import_read.c: a dataset file into the problems of `import`: whole-file
 * reading (.gz or plain, "-" standard input), one JSON object a line,
 * problem ids and their index, and each line handed to its dataset's
 * reader (import_internal.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "errors.h"
#include "import_internal.h"
#include "json_scan.h"
#include "log.h"
#include "task.h"

void sq__import_problems_free(sq__import_set *ps) {
  for (size_t i = 0; i < ps->n; i++) {
    sq__import_problem *p = &ps->p[i];
    free(p->id), free(p->gen_prompt), free(p->prefix), free(p->canonical), free(p->tests),
        free(p->entry_point);
    cJSON_Delete(p->cases);
    free(p->plus_tests);
    cJSON_Delete(p->stop_tokens);
  }
  free(ps->p);
  ps->p = NULL;
  ps->n = 0;
  sq_strmap_free(ps->by_id);
  ps->by_id = NULL;
}

/* Reads a whole file ("-": standard input), gunzipping it when it is gzip
 * (zlib reads plain files as they are). Returns 0 and a NUL-terminated malloc'd buffer, or -1 with
 * the reason on stderr. */
int sq__import_read_input(const char *path, char **out, size_t *len) {
  /* "-": standard input (a dup, so gzclose leaves fd 0 alone) */
  int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : -1;
  gzFile f = strcmp(path, "-") == 0 ? (fd >= 0 ? gzdopen(fd, "rb") : NULL) : gzopen(path, "rb");
  if (!f && fd >= 0) close(fd);
  if (!f) {
    fprintf(stderr, "sandq-producer: cannot read %s: %s\n", path, errno ? strerror(errno) : "out of memory");
    return -1;
  }
  sq_buf b = {0};
  char chunk[65536];
  int n;
  while ((n = gzread(f, chunk, sizeof chunk)) > 0) {
    if (b.len + (size_t)n > SQ__IMPORT_MAX_INPUT_BYTES || sq_buf_append(&b, chunk, (size_t)n) != 0) {
      fprintf(stderr, "sandq-producer: %s: more than %zu bytes, or out of memory\n", path,
              SQ__IMPORT_MAX_INPUT_BYTES);
      gzclose(f);
      sq_buf_clear(&b);
      return -1;
    }
  }
  /* A gzip stream cut short ends in a clean EOF from gzread (what came
   * before the cut is all there): only gzerror and gzclose tell. */
  int zerr = Z_OK;
  char msg[128]; /* gzclose frees gzerror's text */
  snprintf(msg, sizeof msg, "%s", gzerror(f, &zerr));
  int zclose = gzclose(f);
  if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END) || zclose != Z_OK) {
    if (zerr == Z_ERRNO || zclose == Z_ERRNO)
      fprintf(stderr, "sandq-producer: reading %s: %s\n", path, strerror(errno));
    else {
      const char *why = msg; /* zlib's text starts with the path */
      if (strncmp(why, path, strlen(path)) == 0 && strncmp(why + strlen(path), ": ", 2) == 0)
        why += strlen(path) + 2;
      fprintf(stderr, "sandq-producer: %s: truncated or corrupt gzip (%s)\n", path,
              zerr != Z_OK && why[0] ? why : "unexpected end of file");
    }
    sq_buf_clear(&b);
    return -1;
  }
  if (sq_buf_append(&b, "", 1) != 0) return -1; /* the NUL; len stays the text's */
  *out = b.data;
  *len = b.len - 1;
  return 0;
}

/* Calls fn on each non-blank line of path (lineno 1-based) until it fails. */
typedef int (*sq__import_line_fn)(const char *path, size_t lineno, const char *line, size_t len, void *ud);
int sq__import_each_line(const char *path, sq__import_line_fn fn, void *ud) {
  char *buf = NULL;
  size_t len = 0;
  if (sq__import_read_input(path, &buf, &len) != 0) return -1;
  int rc = 0;
  char *p = buf, *end = buf + len;
  for (size_t lineno = 1; p < end && rc == 0; lineno++) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    if (n && p[n - 1] == '\r') n--;
    size_t lead = 0;
    while (lead < n && (p[lead] == ' ' || p[lead] == '\t'))
      lead++;
    if (lead < n) rc = fn(path, lineno, p, n, ud);
    p = nl ? nl + 1 : end;
  }
  free(buf);
  return rc;
}

/* A required string field of obj, or NULL with FILE:LINE: FIELD: why on stderr. */
const char *sq__import_need_string(const cJSON *obj, const char *field, const char *path, size_t lineno) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
  if (cJSON_IsString(v)) return v->valuestring;
  fprintf(stderr, "%s:%zu: %s: %s\n", path, lineno, field,
          v ? "must be a string" : "missing (a string is required)");
  return NULL;
}

/* One line as one JSON object, or NULL with FILE:LINE: why on stderr:
 * trailing bytes after the object and strings holding NUL (cJSON would cut
 * them short: a test's failing assert after \u0000 would be lost) are
 * refused, naming the field. The caller frees the object. */
cJSON *sq__import_parse_line(const char *path, size_t lineno, const char *line, size_t len) {
  const char *end = NULL;
  cJSON *o = cJSON_ParseWithLengthOpts(line, len, &end, 0);
  if (!cJSON_IsObject(o)) {
    fprintf(stderr, "%s:%zu: not a JSON object\n", path, lineno);
    cJSON_Delete(o);
    return NULL;
  }
  size_t trailing = sq_json_trailing_at(line, len, end);
  if (trailing < len) {
    fprintf(stderr, "%s:%zu: trailing data after the JSON object at byte %zu\n", path, lineno, trailing);
    cJSON_Delete(o);
    return NULL;
  }
  size_t n = (size_t)cJSON_GetArraySize(o), i = 0;
  bool *nul = calloc(n + 1, sizeof *nul);
  if (!nul) {
    fprintf(stderr, "%s:%zu: out of memory\n", path, lineno);
    cJSON_Delete(o);
    return NULL;
  }
  if (sq_json_nul_members(line, len, nul, n) > 0) {
    const cJSON *m;
    cJSON_ArrayForEach(m, o) {
      if (!nul[i++]) continue;
      char shown[256];
      fprintf(stderr, "%s:%zu: %s: %s\n", path, lineno, sq_log_escape(m->string, shown, sizeof shown),
              sq_json_nul_reason);
      break;
    }
    cJSON_Delete(o);
    o = NULL;
  }
  free(nul);
  return o;
}

/* A problem id from a dataset or samples line: a string id as it is; a
 * numbered one's integer (or "2", or "Mbpp/2") as "Mbpp/<n>"; or the
 * dataset's own (read_id). NULL with the reason on stderr. Returns a
 * malloc'd string. */
char *sq__import_problem_id(const sq__import_dataset *ds, const cJSON *obj, const char *path, size_t lineno) {
  if (ds->read_id) return ds->read_id(obj, path, lineno);
  const char *field = ds->id_field, *prefix = ds->id_prefix;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
  if (!prefix) {
    if (cJSON_IsString(v) && v->valuestring[0]) return strdup(v->valuestring);
    fprintf(stderr, "%s:%zu: %s: %s\n", path, lineno, field, v ? "must be a non-empty string" : "missing");
    return NULL;
  }
  long long n = -1;
  if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 &&
      v->valuedouble == (double)(long long)v->valuedouble)
    n = (long long)v->valuedouble;
  else if (cJSON_IsString(v)) {
    const char *s = v->valuestring;
    if (strncmp(s, prefix, strlen(prefix)) == 0) s += strlen(prefix);
    char *e = NULL;
    long long x = strtoll(s, &e, 10);
    if (*s >= '0' && *s <= '9' && e && !*e) n = x;
  }
  if (n < 0) {
    if (v)
      fprintf(stderr, "%s:%zu: %s: must be an %s problem number (2, \"2\" or \"%s2\")\n", path, lineno, field,
              ds->title, prefix);
    else
      fprintf(stderr, "%s:%zu: %s: missing\n", path, lineno, field);
    return NULL;
  }
  sq_buf b = {0};
  return sq_buf_appendf(&b, "%s%lld", prefix, n) == 0 ? b.data : NULL;
}

/* Whether a numbered problem id is in the split asked for. */
bool sq__import_in_split(const sq__import_dataset *ds, const char *id, int split) {
  long long n = strtoll(id + strlen(ds->id_prefix), NULL, 10);
  return n >= ds->splits[split].lo && n <= ds->splits[split].hi;
}

/* Indexes the problems by id (a hash: 100,000 problems cost no quadratic
 * scan) and refuses an id that appears twice. 0, or -1 with FILE:LINE: why. */
int sq__import_index(sq__import_set *ps) {
  if (!(ps->by_id = sq_strmap_new())) {
    fprintf(stderr, "sandq-producer: %s: out of memory\n", ps->path);
    return -1;
  }
  for (size_t i = 0; i < ps->n; i++) {
    size_t first = 0;
    int rc = sq_strmap_add(ps->by_id, ps->p[i].id, i, &first);
    if (rc == 1) {
      char shown[SQ_TASK_ID_MAX * 4 + 8];
      fprintf(stderr, "%s:%zu: task_id: '%s' appears twice (first on line %zu)\n", ps->path, ps->p[i].lineno,
              sq_log_escape(ps->p[i].id, shown, sizeof shown), ps->p[first].lineno);
      return -1;
    }
    if (rc) {
      fprintf(stderr, "sandq-producer: %s: out of memory\n", ps->path);
      return -1;
    }
  }
  return 0;
}

sq__import_problem *sq__import_find(sq__import_set *ps, const char *id) {
  size_t i;
  return sq_strmap_get(ps->by_id, id, &i) ? &ps->p[i] : NULL;
}

char *sq__import_cat3(const char *a, const char *b, const char *c) {
  sq_buf s = {0};
  if (sq_buf_appendf(&s, "%s%s%s", a, b, c) != 0) return NULL;
  return s.data;
}

/* One dataset line into ps->p[ps->n]. */
int sq__import_add_problem(const char *path, size_t lineno, const char *line, size_t len, void *ud) {
  sq__import_set *ps = ud;
  cJSON *o = sq__import_parse_line(path, lineno, line, len);
  if (!o) return -1;
  sq__import_problem *np = realloc(ps->p, (ps->n + 1) * sizeof *ps->p);
  if (!np) {
    cJSON_Delete(o);
    return -1;
  }
  ps->p = np;
  sq__import_problem *p = &ps->p[ps->n];
  memset(p, 0, sizeof *p);
  p->lineno = lineno;
  int rc = -1;
  if (!(p->id = sq__import_problem_id(ps->ds, o, path, lineno))) goto out;
  if (ps->ds->splits &&
      !sq__import_in_split(ps->ds, p->id, ps->o->split)) { /* another split's problem: not imported */
    free(p->id);
    p->id = NULL;
    cJSON_Delete(o);
    return 0;
  }
  if (ps->ds->read(o, p, ps->o, path, lineno) != 0) goto out;
  /* The problem's own fields (task_id, entry_point, the tests) checked as
   * push will, against this line, whatever the mode: a prompt-only task
   * without --model and without the size limit, which the emitted tasks
   * meet with their own code. */
  sq__import_opts probe_opts = {.temperature = -1};
  sq__import_set probe = {.ds = ps->ds, .path = ps->path, .o = &probe_opts};
  sq_buf scratch = {0};
  /* a dataset without prompt-only tasks: the program an empty completion makes */
  bool prompt_only = ps->ds->modes & (1u << MODE_SAMPLES);
  char *code = prompt_only ? NULL : sq__import_program_code(&probe, p, "");
  int probe_rc =
      prompt_only || code ? sq__import_emit(&scratch, p, &probe, code, "sample", path, lineno) : SQ_ENOMEM;
  free(code);
  sq_buf_clear(&scratch);
  p->samples = 0;
  if (probe_rc) goto out;
  ps->n++;
  rc = 0;
out:
  if (rc) {
    free(p->id), free(p->gen_prompt), free(p->prefix), free(p->canonical), free(p->tests),
        free(p->entry_point);
    cJSON_Delete(p->cases);
    free(p->plus_tests);
    cJSON_Delete(p->stop_tokens);
    memset(p, 0, sizeof *p);
  }
  cJSON_Delete(o);
  return rc;
}
