/* errors.c: messages and names for the SQ_E* codes. */
#include "errors.h"

const char *sq_strerror(int code) {
  switch (code) {
  case SQ_OK: return "success";
#define X(name, msg)                                                           \
  case SQ_E##name: return msg;
    SQ_ERRNO_MAP(X)
#undef X
  default: return "unknown error";
  }
}
