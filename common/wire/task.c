/* task.c: one task off the wire (JSON, cJSON) into an sq_task, with errors
 * that name the field. */
#include "task.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "util.h"


static int valid_id(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > SQ_TASK_ID_MAX) return 0;
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) return 0;
  return 1;
}

/* Batch names end up in Redis keys: a narrower alphabet than ids. */
static int valid_batch(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > SQ_TASK_ID_MAX) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("._:-", *s)) return 0;
  return 1;
}

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

static int take_limit(const cJSON *v, const char *name, int64_t max, int64_t *dst, char *err, size_t errlen) {
  if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble || v->valuedouble < 1 ||
      v->valuedouble > (double)max)
    return sq_errf(err, errlen, SQ_ETASK, "limits.%s: must be an integer in [1, %lld]", name, (long long)max);
  *dst = (int64_t)v->valuedouble;
  return 0;
}

static int take_limits(const cJSON *v, sq_jail_limits *lim, char *err, size_t errlen) {
  if (!cJSON_IsObject(v)) return sq_errf(err, errlen, SQ_ETASK, "limits: must be an object");
  const cJSON *m;
  const int64_t day_ms = 24LL * 3600 * 1000;
  cJSON_ArrayForEach(m, v) {
    int rc;
    if (strcmp(m->string, "wall_ms") == 0) rc = take_limit(m, "wall_ms", day_ms, &lim->wall_ms, err, errlen);
    else if (strcmp(m->string, "cpu_ms") == 0) rc = take_limit(m, "cpu_ms", day_ms, &lim->cpu_ms, err, errlen);
    else if (strcmp(m->string, "memory_mib") == 0)
      rc = take_limit(m, "memory_mib", 1024 * 1024, &lim->memory_mib, err, errlen);
    else if (strcmp(m->string, "output_kib") == 0)
      rc = take_limit(m, "output_kib", 1024 * 1024, &lim->output_kib, err, errlen);
    else
      rc = sq_errf(err, errlen, SQ_ETASK,
                "limits.%s: unknown limit (known: wall_ms, cpu_ms, memory_mib, output_kib)", m->string);
    if (rc) return rc;
  }
  return 0;
}

/* Recovers id, batch and metadata from a task that fails validation, so the
 * error can be reported against it. */
static sq_task *salvage(const cJSON *root) {
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
  if (!cJSON_IsString(id) || !valid_id(id->valuestring)) return NULL;
  sq_task *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->id = strdup(id->valuestring);
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "batch");
  t->batch = strdup(cJSON_IsString(b) && valid_batch(b->valuestring) ? b->valuestring : "default");
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
  if (cJSON_IsObject(meta)) t->metadata_json = cJSON_PrintUnformatted(meta);
  if (!t->id || !t->batch) {
    sq_task_free(t);
    return NULL;
  }
  return t;
}

static int parse_fields(const cJSON *root, sq_task *t, char *err, size_t errlen) {
  static const char *const known[] = {"id",    "batch",           "prompt", "code",     "tests",
                                      "entry_point", "expected_stdout", "limits", "metadata",
                                      "enqueued_at_ms", "priority", "idempotency_key"};
  const size_t n_known = sizeof known / sizeof known[0];
  unsigned seen = 0;
  const cJSON *m;
  int rc = 0;
  cJSON_ArrayForEach(m, root) {
    size_t k;
    for (k = 0; k < n_known; k++)
      if (strcmp(m->string, known[k]) == 0) break;
    if (k == n_known)
      return sq_errf(err, errlen, SQ_ETASK,
                  "%s: unknown field (known: id, batch, prompt, code, tests, entry_point, "
                  "expected_stdout, limits, metadata, enqueued_at_ms, priority, idempotency_key)", m->string);
    if (seen & (1u << k)) return sq_errf(err, errlen, SQ_ETASK, "%s: appears twice", m->string);
    seen |= 1u << k;
    switch (k) {
    case 0:
      if ((rc = take_string(m, "id", &t->id, err, errlen))) return rc;
      if (!valid_id(t->id))
        return sq_errf(err, errlen, SQ_ETASK, "id: must be 1-%d bytes without control characters", SQ_TASK_ID_MAX);
      break;
    case 1:
      if ((rc = take_string(m, "batch", &t->batch, err, errlen))) return rc;
      if (!valid_batch(t->batch))
        return sq_errf(err, errlen, SQ_ETASK, "batch: must be 1-%d characters of A-Z a-z 0-9 . _ : -", SQ_TASK_ID_MAX);
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
    case 8:
      if (!cJSON_IsObject(m)) return sq_errf(err, errlen, SQ_ETASK, "metadata: must be an object");
      if (!(t->metadata_json = cJSON_PrintUnformatted(m))) return SQ_ENOMEM;
      break;
    case 9:
      if (!cJSON_IsNumber(m) || m->valuedouble < 0)
        return sq_errf(err, errlen, SQ_ETASK, "enqueued_at_ms: must be a non-negative integer");
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
      if (!valid_id(t->idempotency_key) || strlen(t->idempotency_key) > SQ_TASK_IDEM_MAX)
        return sq_errf(err, errlen, SQ_ETASK, "idempotency_key: must be 1-%d bytes without control characters",
                    SQ_TASK_IDEM_MAX);
      break;
    }
    if (rc) return rc;
  }
  if (!t->id) return sq_errf(err, errlen, SQ_ETASK, "id: required");
  if (!t->prompt && !t->code) return sq_errf(err, errlen, SQ_ETASK, "prompt or code: one of them is required");
  if (t->prompt && !t->code && !t->prompt[strspn(t->prompt, " \t\r\n")])
    return sq_errf(err, errlen, SQ_ETASK, "prompt: must not be blank");
  if (!t->batch && !(t->batch = strdup("default"))) return SQ_ENOMEM;
  return 0;
}

int sq_task_parse(const char *buf, size_t len, size_t max_bytes, sq_task **out, char *err, size_t errlen) {
  *out = NULL;
  if (max_bytes && len > max_bytes)
    return sq_errf(err, errlen, SQ_ETOOBIG, "task: %zu bytes, more than the %zu allowed", len, max_bytes);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
  if (!root) {
    size_t at = end && end >= buf ? (size_t)(end - buf) : 0;
    const char *p = cJSON_GetErrorPtr();
    if (p && p >= buf && p <= buf + len) at = (size_t)(p - buf);
    return sq_errf(err, errlen, SQ_EPARSE, "task: not valid JSON (error near byte %zu)", at);
  }
  if (end) {
    while (end < buf + len && isspace((unsigned char)*end)) end++;
    if (end < buf + len) {
      size_t at = (size_t)(end - buf);
      cJSON_Delete(root);
      return sq_errf(err, errlen, SQ_EPARSE, "task: trailing data after the JSON object at byte %zu", at);
    }
  }
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return sq_errf(err, errlen, SQ_EPARSE, "task: must be a JSON object");
  }
  sq_task *t = calloc(1, sizeof *t);
  if (!t) {
    cJSON_Delete(root);
    return SQ_ENOMEM;
  }
  int rc = parse_fields(root, t, err, errlen);
  if (rc) {
    sq_task_free(t);
    *out = salvage(root);
  } else {
    *out = t;
  }
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
  free(t->entry_point);
  free(t->expected_stdout);
  free(t->metadata_json);
  free(t->idempotency_key);
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
  const cJSON *i = cJSON_GetObjectItemCaseSensitive(root, "id");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "batch");
  if (cJSON_IsString(i) && valid_id(i->valuestring)) snprintf(id, SQ_TASK_ID_MAX + 1, "%s", i->valuestring);
  if (!b) snprintf(batch, SQ_TASK_ID_MAX + 1, "default");
  else if (cJSON_IsString(b) && valid_batch(b->valuestring)) snprintf(batch, SQ_TASK_ID_MAX + 1, "%s", b->valuestring);
  cJSON_Delete(root);
  return 0;
}

int sq_task_stamp(const char *buf, size_t len, const char *batch, int64_t now_ms, char **out) {
  *out = NULL;
  cJSON *root = cJSON_ParseWithLength(buf, len);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return SQ_EPARSE;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(root, "batch");
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
