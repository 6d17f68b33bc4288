/* fuzz_result.c: libFuzzer target for stored result documents as the
 * report reads them (producer/report_model.c, report_json.c,
 * report_html.c): the input, cut at each "\xff\xfe" into up to 32 stored
 * values, is read as one batch's results. No crash, leak or undefined
 * behaviour (NaN and huge numbers, invalid UTF-8, documents that are not
 * BSON); and the JSON report is valid JSON in valid UTF-8. */
#include <bson/bson.h>
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "eval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sq__result_doc docs[32];
  sq__result_set rs = {.docs = docs};
  size_t start = 0;
  for (size_t i = 0; i <= size && rs.n < 32; i++) {
    if (i < size && !(i + 1 < size && data[i] == 0xff && data[i + 1] == 0xfe)) continue;
    char id[16];
    snprintf(id, sizeof id, "r%zu", rs.n);
    docs[rs.n] = (sq__result_doc){.id = strdup(id), .bson = malloc(i - start + 1), .len = i - start};
    if (!docs[rs.n].id || !docs[rs.n].bson) abort();
    memcpy(docs[rs.n].bson, data + start, i - start);
    rs.n++;
    start = i + 2;
    i++;
  }
  int k[] = {1, 2, 10};
  sq__report r;
  sq_buf json = {0}, html = {0};
  if (sq__report_build(&rs, "b", "q", k, 3, &r) != 0) abort();
  /* what report_cmd.c adds: the batch's counters */
  r.batch_tasks = (int64_t)rs.n, r.batch_results = (int64_t)rs.n, r.finished = true;
  if (sq__report_json(&r, &json) != 0 || sq__report_html(&r, &html) != 0) abort();
  if (!bson_utf8_validate(json.data, json.len, false)) abort();
  cJSON *parsed = cJSON_ParseWithLength(json.data, json.len);
  if (!parsed) abort();
  cJSON_Delete(parsed);
  for (size_t i = 0; i < rs.n; i++) (void)sq__result_bson_ok(docs[i].bson, docs[i].len);
  sq__report_free(&r);
  sq_buf_clear(&json);
  sq_buf_clear(&html);
  for (size_t i = 0; i < rs.n; i++) free(docs[i].id), free(docs[i].bson);
  return 0;
}
