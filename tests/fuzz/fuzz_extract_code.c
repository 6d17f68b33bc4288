/* fuzz_extract_code.c: libFuzzer target for sq_extract_code: any
 * bytes, no crash, no leak, and a success always yields a string. */
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
  char *code = NULL, err[128];
  if (sq_extract_code(text, "python", &code, err, sizeof err) == 0) {
    if (!code) abort();
    if (strchr(code, '\r') && strstr(code, "\r\n")) abort(); /* CRLF is always normalised */
  }
  free(code);
  free(text);
  return 0;
}
