/* test_hooks.c: the test-only behaviour described in test_hooks.h. */
#include "test_hooks.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static bool g_hooks, g_noop;

void sq__test_hooks_init(void) {
  const char *h = getenv("SANDQ_TEST_HOOKS"), *e = getenv("SANDQ_TEST_EXEC");
  g_hooks = h && strcmp(h, "1") == 0;
  g_noop = g_hooks && e && strcmp(e, "noop") == 0;
  if (g_hooks) SQ_WARN("SANDQ_TEST_HOOKS=1: test hooks are on%s; never in production", g_noop ? ", execution stubbed" : "");
}

void sq__test_hook_task(const sq_task *t) {
  if (g_hooks && t->metadata_json && strstr(t->metadata_json, "\"sandq_test\":\"die\"")) {
    SQ_LOGT(SQ_LOG_WARN, t->id, "test hook: dying on this task");
    kill(getpid(), SIGKILL);
  }
}

bool sq__test_exec_noop(void) { return g_noop; }

bool sq__test_jail_fails(const sq_task *t) {
  return g_hooks && t && t->metadata_json && strstr(t->metadata_json, "\"sandq_test\":\"jail_fail\"");
}
