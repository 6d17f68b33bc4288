/* jail_zygote.c: the warm pool (stub). */
#include "errors.h"
#include "jail_internal.h"
int sq__jail_pool_new(sq_jail *j, int size, sq__jail_pool **out) { (void)j; (void)size; *out = NULL; return SQ_EJAIL; }
void sq__jail_pool_free(sq__jail_pool *p) { (void)p; }
int sq__jail_pool_run(sq__jail_pool *p, const char *program, size_t len, const sq_jail_limits *lim,
                      const char *task_id, sq_jail_outcome *o) { (void)p; (void)program; (void)len; (void)lim; (void)task_id; (void)o; return SQ_EJAIL; }
const char sq__jail_zygote_py[] = "";
