/* fuzz_task.c: libFuzzer target for the task parser and the producer's
 * stamp (sq_task_parse, sq_task_stamp): any bytes, no crash, no leak, no
 * undefined behaviour; a failure names why; a salvaged task has an id; and
 * stamping loses nothing: a task that parses still parses once stamped,
 * with the same strings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"

static int same(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *buf = (const char *)data;
  sq_task *t = NULL, *s = NULL;
  char err[256] = "";
  int rc = sq_task_parse(buf, size, 1024, &t, err, sizeof err);
  if (rc != 0 && !err[0]) abort();         /* every refusal says why */
  if (rc != 0 && t && (!t->id || !t->batch)) abort();
  if (rc == 0 && (!t || !t->id || !t->batch || (!t->code && !t->prompt))) abort();
  if (rc == 0 && t->limits.memory_mib && t->limits.memory_mib < SQ_TASK_MEMORY_MIB_MIN) abort();
  sq_task_free(t);
  t = NULL;
  rc = sq_task_parse(buf, size, 0, &t, err, sizeof err);
  char *stamped = NULL;
  if (sq_task_stamp(buf, size, "fz", 1700000000000LL, &stamped) == 0) {
    if (!stamped) abort();
    int rc2 = sq_task_parse(stamped, strlen(stamped), 0, &s, err, sizeof err);
    if (rc == 0) {
      if (rc2 != 0) abort(); /* the stamp must not break a good task */
      if (!same(t->id, s->id) || !same(t->code, s->code) || !same(t->tests, s->tests) ||
          !same(t->prompt, s->prompt) || !same(t->expected_stdout, s->expected_stdout) ||
          strcmp(s->batch, "fz") != 0 || s->enqueued_at_ms != 1700000000000LL)
        abort();
    }
  }
  sq_task_free(s);
  sq_task_free(t);
  free(stamped);
  return 0;
}
