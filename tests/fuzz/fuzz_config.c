/* fuzz_config.c: libFuzzer target for the config loader
 * (sq_config_load_json, then sq_config_validate): any bytes, no crash, no
 * leak, no undefined behaviour, and every refusal says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static sq_config cfg; /* large: not on the stack */
  char err[512] = "";
  sq_config_defaults(&cfg);
  int rc = sq_config_load_json(&cfg, (const char *)data, size, "fuzz.json", err, sizeof err);
  if (rc == 0) rc = sq_config_validate(&cfg, err, sizeof err);
  if (rc != 0 && !err[0]) abort();
  if (rc == 0) {
    for (int i = 0; i < cfg.n_providers; i++) {
      const sq_llm_provider *p = &cfg.providers[i];
      if (!(p->price_in_usd_per_mtok >= 0 && p->price_in_usd_per_mtok <= 1e6)) abort(); /* finite, in range */
      if (p->weight < 0 || p->timeout_ms < 1) abort();
    }
  }
  return 0;
}
