/* verdict.h: from how the jail run ended, and what the task expected, to a
 * task status. A pure function: no I/O. */
#ifndef SQ_VERDICT_H
#define SQ_VERDICT_H

#include <stdbool.h>

#include "run.h"
#include "status.h"

/* has_tests: the task had tests or an entry_point. expected_stdout may be
 * NULL. Returns the status a result reports. */
sq_status sq_verdict_decide(const sq_jail_outcome *o, bool has_tests, const char *expected_stdout);

#endif
