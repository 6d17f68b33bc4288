/* test_precheck_humaneval.c: under the default policy, none of the 164
 * HumanEval canonical solutions is blocked. Each program is assembled as
 * the worker does it (prompt + canonical_solution, test, check(entry_point))
 * and checked. The data is $SANDQ_HUMANEVAL, else HumanEval.jsonl.gz in
 * $SANDQ_DATA_DIR (tests/CMakeLists.txt finds ../shared/data) or in
 * $SQ_SRC/../shared/data; the test skips (77) when it is absent. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "precheck.h"
#include "task.h"

#define LINE_BYTES (1 << 20)

int main(void) {
  char path[4096], cmd[4200];
  const char *env = getenv("SANDQ_HUMANEVAL");
  const char *dir = getenv("SANDQ_DATA_DIR"); /* found by tests/CMakeLists.txt */
  const char *src = getenv("SQ_SRC");
  if (env && *env) snprintf(path, sizeof path, "%s", env);
  else if (dir && *dir) snprintf(path, sizeof path, "%s/HumanEval.jsonl.gz", dir);
  else snprintf(path, sizeof path, "%s/../shared/data/HumanEval.jsonl.gz", src ? src : ".");
  if (access(path, R_OK) != 0) {
    fprintf(stderr, "SKIP: HumanEval data not found at %s (set SANDQ_HUMANEVAL)\n", path);
    return 77;
  }
  snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
  FILE *f = popen(cmd, "r");
  CHECK(f != NULL);
  if (!f) return sq_check_done("test_precheck_humaneval");
  sq_precheck_config cfg;
  sq_precheck_defaults(&cfg);
  char *line = malloc(LINE_BYTES);
  int problems = 0, with_findings = 0;
  while (line && fgets(line, LINE_BYTES, f)) {
    cJSON *o = cJSON_Parse(line);
    const char *prompt = cJSON_GetStringValue(cJSON_GetObjectItem(o, "prompt"));
    const char *solution = cJSON_GetStringValue(cJSON_GetObjectItem(o, "canonical_solution"));
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(o, "task_id"));
    sq_task task = {.id = (char *)id,
                    .tests = cJSON_GetStringValue(cJSON_GetObjectItem(o, "test")),
                    .entry_point = cJSON_GetStringValue(cJSON_GetObjectItem(o, "entry_point"))};
    CHECK(prompt && solution && id && task.tests && task.entry_point);
    char *code = NULL, *program = NULL;
    if (prompt && solution) {
      size_t n = strlen(prompt) + strlen(solution) + 1;
      code = malloc(n);
      if (code) snprintf(code, n, "%s%s", prompt, solution);
    }
    CHECK(code && sq_task_program(&task, code, &program) == 0);
    if (program) {
      sq_precheck_report rep;
      CHECK_EQ(sq_precheck_check(&cfg, program, strlen(program), &rep), 0);
      if (rep.blocked) {
        char reason[512];
        sq_precheck_reason(&cfg, &rep, reason, sizeof reason);
        fprintf(stderr, "%s blocked: %s\n", id, reason);
        CHECK(!rep.blocked);
      }
      with_findings += rep.n > 0;
    }
    problems++;
    free(program);
    free(code);
    cJSON_Delete(o);
  }
  free(line);
  CHECK_EQ(pclose(f), 0);
  CHECK_EQ(problems, 164);
  printf("%d problems checked, %d with recorded findings, none blocked\n", problems, with_findings);
  return sq_check_done("test_precheck_humaneval");
}
