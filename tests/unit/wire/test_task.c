/* test_task.c: task parsing, good and bad input, and program assembly. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "task.h"

static int parse(const char *json, sq_task **t, char *err) {
  return sq_task_parse(json, strlen(json), 4096, t, err, 256);
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

int main(void) {
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

  /* generation settings (issue 12): absent by default, carried when set */
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
  return sq_check_done("test_task");
}
