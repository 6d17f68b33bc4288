/* fuzz_pytok.c: libFuzzer target for the pre-check: the tokenizer, the
 * f-string field walk and the whole checker on arbitrary bytes. Built with
 * clang only (tests/precheck.cmake):
 *   build/bin/fuzz_pytok -max_total_time=60 -timeout=2 corpus/ */
#include <stddef.h>
#include <stdint.h>

#include "precheck.h"
#include "pytok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int no_op(void *ctx, const char *expr, size_t len, int line, int col) {
  (void)ctx, (void)expr, (void)len, (void)line, (void)col;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *src = (const char *)data;
  sq_pytok tz;
  sq_token t;
  sq_pytok_init(&tz, src, size);
  size_t n = 0;
  while (sq_pytok_next(&tz, &t) != SQ_TOK_END) {
    if (t.text < src || t.text + t.len > src + size || ++n > 2 * size + 4) __builtin_trap();
    sq_pytok_fstring_fields(&t, no_op, NULL);
  }
  static sq_precheck_config cfg;
  static sq_precheck_report rep;
  sq_precheck_defaults(&cfg);
  sq_precheck_check(&cfg, src, size, &rep);
  if (rep.n > SQ_PRECHECK_MAX_FINDINGS) __builtin_trap();
  return 0;
}
