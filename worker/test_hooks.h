/* test_hooks.h: behaviour that only tests ask for, compiled in only with
 * the build option SQ_TEST_HOOKS (on with the tests, off in a production
 * build: -DBUILD_TESTING=OFF) and honoured only when the environment says
 * SANDQ_TEST_HOOKS=1. Without the option each hook is an inline no-op.
 *   metadata {"sandq_test": "die"}   the worker SIGKILLs itself on the task
 *                                    (a poison pill)
 *   metadata {"sandq_test": "jail_fail"}  the task's jail run fails as a
 *                                    host failure would (SQ_EJAIL)
 *   SANDQ_TEST_EXEC=noop             nothing runs in the jail: status ok
 *                                    (queue-only tests and benchmarks) */
#ifndef SQ_WORKER_TEST_HOOKS_H
#define SQ_WORKER_TEST_HOOKS_H

#include <stdbool.h>

#include "task.h"

#ifdef SQ_TEST_HOOKS
/* Reads the environment once; logs loudly when a hook is on. */
void sq__test_hooks_init(void);
/* Dies (SIGKILL) when hooks are on and t asks for it. */
void sq__test_hook_task(const sq_task *t);
/* Whether t's jail run is to fail as a host failure would. */
bool sq__test_jail_fails(const sq_task *t);
/* Whether execution is stubbed out. */
bool sq__test_exec_noop(void);
#else
static inline void sq__test_hooks_init(void) {}
static inline void sq__test_hook_task(const sq_task *t) { (void)t; }
static inline bool sq__test_jail_fails(const sq_task *t) { (void)t; return false; }
static inline bool sq__test_exec_noop(void) { return false; }
#endif

#endif
