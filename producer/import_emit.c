/* import_emit.c: the task lines of `import`: one task per problem and
 * sample, checked as push will check it (the same sq_task_parse, stamped,
 * within the size limit), a refusal naming the dataset's own field. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "import_internal.h"
#include "log.h"
#include "name.h"
#include "task.h"

/* The dataset's name for a task field (its table's fields), so that a
 * refusal names what the user can fix in the line it names. */
static const char *source_field(const sq__import_set *ps, const char *source, const char *field) {
  if (strcmp(field, "code") == 0 && strcmp(source, "completion") == 0) return "completion";
  const char *as = strcmp(field, "metadata") == 0 ? "id" : field; /* metadata.task_id is the id */
  for (size_t i = 0; ps->ds->fields[i][0]; i++)
    if (strcmp(as, ps->ds->fields[i][0]) == 0) return ps->ds->fields[i][1];
  return field;
}

/* Refuses a task line that push would refuse: the same sq_task_parse, on
 * the line as push stamps it (with the longest batch name), within
 * max_task_bytes. Explains a refusal as FILE:LINE: field: why (the option's
 * name for --model) and returns SQ_ETASK; 0 when push will take it. */
static int check_task(const sq__import_set *ps, const char *line, const char *source, const char *path,
                      size_t lineno) {
  char batch[SQ_NAME_BATCH_MAX + 1], err[512] = "", shown[sizeof err * 4];
  memset(batch, 'b', SQ_NAME_BATCH_MAX);
  batch[SQ_NAME_BATCH_MAX] = 0;
  char *stamped = NULL;
  sq_task *t = NULL;
  int rc = sq_task_stamp(line, strlen(line), batch, sq_now_wall_ms(), &stamped);
  if (rc == SQ_ENOMEM) return rc;
  if (rc == 0) rc = sq_task_parse(stamped, strlen(stamped), ps->o->max_task_bytes, &t, err, sizeof err);
  sq_task_free(t);
  free(stamped);
  if (rc == 0 || rc == SQ_ENOMEM) return rc;
  char *why = strstr(err, ": ");
  if (!why) {
    fprintf(stderr, "%s:%zu: task: %s\n", path, lineno,
            err[0] ? sq_log_escape(err, shown, sizeof shown) : sq_strerror(rc));
    return SQ_ETASK;
  }
  *why = 0;
  why += 2;
  if (strcmp(err, "model") == 0)
    fprintf(stderr, "sandq-producer: --model: %s\n", sq_log_escape(why, shown, sizeof shown));
  else
    fprintf(stderr, "%s:%zu: %s: %s%s\n", path, lineno, source_field(ps, source, err),
            sq_log_escape(why, shown, sizeof shown),
            ps->ds->flags & SQ__DS_MAX_CASES && strstr(why, "max_task_kib")
                ? "; --max-cases N keeps each row's first N cases"
                : "");
  return SQ_ETASK;
}

/* One task line for problem p with code (NULL: prompt-only) into out,
 * checked as push will check it; a refusal names path:lineno (the line
 * the task came from). */
int sq__import_emit(sq_buf *out, sq__import_problem *p, const sq__import_set *ps, const char *code,
                    const char *source, const char *path, size_t lineno) {
  const sq__import_opts *o = ps->o;
  int64_t k = p->samples++;
  sq_buf id = {0};
  if (sq_buf_appendf(&id, "%s/%lld", p->id, (long long)k) != 0) return SQ_ENOMEM;
  cJSON *t = cJSON_CreateObject(), *meta = NULL;
  int rc = SQ_ENOMEM;
  if (!t || !cJSON_AddStringToObject(t, "id", id.data)) goto out;
  if (p->language && strcmp(p->language, "python") != 0 &&
      !cJSON_AddStringToObject(t, "language", p->language))
    goto out;
  if (code) {
    if (!cJSON_AddStringToObject(t, "code", code)) goto out;
  } else {
    if (!cJSON_AddStringToObject(t, "prompt", p->gen_prompt)) goto out;
    if (o->temperature >= 0 && !cJSON_AddNumberToObject(t, "temperature", o->temperature)) goto out;
    if (o->model && !cJSON_AddStringToObject(t, "model", o->model)) goto out;
  }
  if (o->limits.wall_ms || o->limits.cpu_ms || o->limits.memory_mib) {
    cJSON *lim = cJSON_AddObjectToObject(t, "limits");
    if (!lim || (o->limits.wall_ms && !cJSON_AddNumberToObject(lim, "wall_ms", (double)o->limits.wall_ms)) ||
        (o->limits.cpu_ms && !cJSON_AddNumberToObject(lim, "cpu_ms", (double)o->limits.cpu_ms)) ||
        (o->limits.memory_mib && !cJSON_AddNumberToObject(lim, "memory_mib", (double)o->limits.memory_mib)))
      goto out;
  }
  if (p->cases) {
    cJSON *cases = cJSON_Duplicate(p->cases, 1);
    if (!cases) goto out;
    cJSON_AddItemToObject(t, "cases", cases);
  } else if (p->entry_point) {
    if (!cJSON_AddStringToObject(t, "tests", p->tests) ||
        !cJSON_AddStringToObject(t, "entry_point", p->entry_point))
      goto out;
    if (p->plus_tests && !cJSON_AddStringToObject(t, "plus_tests", p->plus_tests)) goto out;
  } else if (!code && p->prefix[0]) {
    /* Generated MBPP code cannot be preceded by the setup: it goes before the asserts. */
    char *tests = sq__import_cat3(p->prefix, "\n", p->tests);
    cJSON *ts = tests ? cJSON_AddStringToObject(t, "tests", tests) : NULL;
    free(tests);
    if (!ts) goto out;
  } else if (!cJSON_AddStringToObject(t, "tests", p->tests)) {
    goto out;
  }
  /* With --batch, the same sample of the same problem, source, model and
   * temperature for that batch is the same task: pushed again, it is
   * skipped, so re-pushing the file resumes an interrupted push. Keys are
   * queue-wide (docs/formats.md): the batch in the key lets the same file
   * go into another batch. */
  if (o->batch) {
    sq_buf idem = {0};
    char temp[32] = "-";
    if (!code && o->temperature >= 0) snprintf(temp, sizeof temp, "%g", o->temperature);
    if (sq_buf_appendf(&idem, "import:%s:%s:%s:%lld:%s:%s:%s", o->batch, ps->ds->name, p->id, (long long)k,
                       source, code || !o->model ? "-" : o->model, temp) != 0) {
      sq_buf_clear(&idem);
      goto out;
    }
    if (idem.len > SQ__IMPORT_IDEMPOTENCY_KEY_MAX) {
      fprintf(stderr,
              "sandq-producer: task %s: its idempotency_key (--batch, dataset, problem, sample, model) "
              "takes %zu bytes, more than %d: use a shorter --batch or --model\n",
              id.data, idem.len, SQ__IMPORT_IDEMPOTENCY_KEY_MAX);
      sq_buf_clear(&idem);
      rc = SQ_EINVAL;
      goto out;
    }
    bool idem_ok = cJSON_AddStringToObject(t, "idempotency_key", idem.data) != NULL;
    sq_buf_clear(&idem);
    if (!idem_ok) goto out;
  }
  if (!(meta = cJSON_AddObjectToObject(t, "metadata")) || !cJSON_AddStringToObject(meta, "task_id", p->id) ||
      !cJSON_AddStringToObject(meta, "dataset", ps->ds->name) ||
      !cJSON_AddNumberToObject(meta, "sample", (double)k) || !cJSON_AddStringToObject(meta, "source", source))
    goto out;
  char *line = cJSON_PrintUnformatted(t);
  if (line && (rc = check_task(ps, line, source, path, lineno)) == 0) rc = sq_buf_appendf(out, "%s\n", line);
  free(line);
out:
  cJSON_Delete(t);
  sq_buf_clear(&id);
  return rc;
}

/* The program text for a problem's code: HumanEval's continues its prompt
 * (SQ__DS_CONTINUES); MBPP's setup code goes first. malloc'd. */
char *sq__import_program_code(const sq__import_set *ps, const sq__import_problem *p, const char *body) {
  return ps->ds->flags & SQ__DS_CONTINUES ? sq__import_cat3(p->prefix, body, "")
                                          : sq__import_cat3(p->prefix, p->prefix[0] ? "\n" : "", body);
}

/* The canonical or sampled tasks of every problem, one at a time: checked
 * only (to NULL), or written to f as each is made, so memory does not grow
 * with --samples. *tasks gets how many. Explains failures on stderr;
 * returns 0 or an SQ_E* code. */
int sq__import_generate(sq__import_set *ps, const sq__import_opts *o, FILE *f, size_t *tasks) {
  sq_buf one = {0};
  int rc = 0;
  *tasks = 0;
  for (size_t i = 0; i < ps->n && !rc; i++) {
    sq__import_problem *p = &ps->p[i];
    char *prog = o->mode == MODE_CANONICAL ? sq__import_program_code(ps, p, p->canonical) : NULL;
    int64_t n = o->mode == MODE_CANONICAL ? 1 : o->samples;
    rc = o->mode == MODE_CANONICAL && !prog ? SQ_ENOMEM : 0;
    p->samples = 0; /* the second pass makes the same ids */
    for (int64_t k = 0; k < n && rc == 0; k++) {
      one.len = 0;
      rc = sq__import_emit(&one, p, ps, prog, o->mode == MODE_CANONICAL ? "canonical" : "sample", ps->path,
                           p->lineno);
      if (!rc && f && fwrite(one.data, 1, one.len, f) != one.len) rc = SQ_EIO;
      if (!rc) ++*tasks;
    }
    free(prog);
  }
  if (!rc && f && fflush(f) != 0) rc = SQ_EIO;
  if (rc == SQ_EIO)
    fprintf(stderr, "sandq-producer: writing the tasks: %s\n", strerror(errno));
  else if (rc && rc != SQ_ETASK)
    fprintf(stderr, "sandq-producer: import: %s\n", sq_strerror(rc));
  sq_buf_clear(&one);
  return rc;
}
