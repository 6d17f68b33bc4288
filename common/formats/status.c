/* status.c: wire names of the task statuses. */
#include "status.h"

#include <string.h>

#include "errors.h"

static const char *const names[] = {
#define X(name, str) str,
    SQ_STATUS_MAP(X)
#undef X
};

const char *sq_status_name(sq_status s) {
  if ((int)s < 0 || s >= SQ_STATUS__COUNT) return "unknown";
  return names[s];
}

int sq_status_parse(const char *name, sq_status *out) {
  for (int i = 0; i < SQ_STATUS__COUNT; i++) {
    if (name && strcmp(name, names[i]) == 0) {
      *out = (sq_status)i;
      return 0;
    }
  }
  return SQ_EINVAL;
}
