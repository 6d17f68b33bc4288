/* fuzz_extract_risk.c: libFuzzer target for sq_extract_risk: any bytes,
 * no crash, and a parsed verdict always holds values in range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  sq_risk_verdict v;
  char err[128];
  if (sq_extract_risk(text, &v, err, sizeof err) == 0) {
    if (v.level > SQ_RISK_CRITICAL || v.action > SQ_RISK_BLOCK) abort();
    if (v.confidence != -1 && (v.confidence < 0 || v.confidence > 1)) abort();
    if (strlen(v.reason) >= sizeof v.reason) abort();
  }
  free(text);
  return 0;
}
