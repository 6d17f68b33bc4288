/* test_hooks_off.c: a worker built without SQ_TEST_HOOKS (a production
 * build) has no test hook, whatever the environment says: SANDQ_TEST_HOOKS=1
 * neither stubs execution, nor fails a jail run, nor lets a task's metadata
 * kill the worker. This file is compiled as such a build compiles
 * test_hooks.h. */
#undef SQ_TEST_HOOKS
#include <stdlib.h>

#include "check.h"
#include "test_hooks.h"

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  setenv("SANDQ_TEST_HOOKS", "1", 1);
  setenv("SANDQ_TEST_EXEC", "noop", 1);
  sq__test_hooks_init();
  CHECK(!sq__test_exec_noop());
  sq_task t = {0};
  t.id = "t1";
  t.metadata_json = "{\"sandq_test\":\"die\"}";
  sq__test_hook_task(&t); /* alive past this line */
  t.metadata_json = "{\"sandq_test\":\"jail_fail\"}";
  CHECK(!sq__test_jail_fails(&t));
  return sq_check_done("test_hooks_off");
}
