/* calls_internal.h: the rules of calls/<language>.c and the drivers
 * embedded from drivers/<language>.<ext> (calls.h). */
#ifndef SQ_CALLS_INTERNAL_H
#define SQ_CALLS_INTERNAL_H

#include "calls.h"

#define SQ__CALLS_LANGUAGE(x)                  \
  extern const sq_calls_rule sq__calls_rule_##x; \
  extern const char sq__calls_driver_##x[];

SQ__CALLS_LANGUAGE(bash)
SQ__CALLS_LANGUAGE(javascript)
SQ__CALLS_LANGUAGE(typescript)
SQ__CALLS_LANGUAGE(c)
SQ__CALLS_LANGUAGE(cpp)
SQ__CALLS_LANGUAGE(go)
SQ__CALLS_LANGUAGE(rust)
SQ__CALLS_LANGUAGE(java)
SQ__CALLS_LANGUAGE(ruby)
SQ__CALLS_LANGUAGE(php)
SQ__CALLS_LANGUAGE(lua)
SQ__CALLS_LANGUAGE(perl)

#endif
