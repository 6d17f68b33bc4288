/* test_result.c: results into BSON. Checks the document with libbson and, when
 * given a path, writes it there for tests/integration/result_bson.sh to decode
 * with pymongo's independent bson module. */
#include <bson/bson.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "result.h"

int main(int argc, char **argv) {
  static const char out[] = "ok \xff\xfe bad utf8, a NUL:\0:end";
  sq_result r = {.id = "t-1",
                 .batch = "b-1",
                 .status = SQ_STATUS_FAILED,
                 .reason = NULL,
                 .exit_code = 97,
                 .signal = 0,
                 .stdout_buf = out,
                 .stdout_len = sizeof out - 1,
                 .stdout_truncated = true,
                 .stderr_buf = "Traceback\nAssertionError\n",
                 .stderr_len = 25,
                 .code = "assert 1 == 2\n",
                 .queue_ms = 5,
                 .llm_ms = 1200,
                 .exec_ms = 30,
                 .total_ms = 1240,
                 .attempts = 3,
                 .all_attempts_ms = 13020,
                 .cpu_ms = 20,
                 .cpu_wait_ms = 7,
                 .memory_kib = 9000,
                 .llm = {.called = true, .provider = "fake", .model = "m", .prompt_tokens = 10,
                         .completion_tokens = 20, .cost_usd = 0.0125,
                         .temperature = 0.8},
                 .jail = {.ran = true, .mode = "warm", .layers = {"pid_ns", "seccomp"}, .oom_killed = true},
                 .worker = "w-1",
                 .finished_at_ms = 1700000000123LL,
                 .metadata_json = "{\"expect\":\"failed\",\"n\":[1,2]}"};
  bson_t doc = BSON_INITIALIZER;
  CHECK_EQ(sq_result_to_bson(&r, &doc, NULL, 0), 0);
  bson_iter_t it;
  CHECK(bson_iter_init_find(&it, &doc, "_id") && strcmp(bson_iter_utf8(&it, NULL), "t-1") == 0);
  CHECK(bson_iter_init_find(&it, &doc, "status") && strcmp(bson_iter_utf8(&it, NULL), "failed") == 0);
  bson_iter_t sub;
  CHECK(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "timings.llm_ms", &sub) &&
        bson_iter_int64(&sub) == 1200);
  CHECK(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "resources.cpu_wait_ms", &sub) &&
        bson_iter_int64(&sub) == 7);
  CHECK(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "llm.cost_usd", &sub) &&
        bson_iter_double(&sub) == 0.0125);
  CHECK(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "metadata.expect", &sub) &&
        strcmp(bson_iter_utf8(&sub, NULL), "failed") == 0);
  /* attempts, time across them, the sampling temperature */
  CHECK(bson_iter_init_find(&it, &doc, "attempts") && bson_iter_int32(&it) == 3);
  CHECK(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "timings.all_attempts_ms", &sub) &&
        bson_iter_int64(&sub) == 13020);
  CHECK(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "llm.temperature", &sub) &&
        bson_iter_double(&sub) == 0.8);
  /* no reply kept unless the worker keeps it (store_llm_reply): then as given, invalid UTF-8 made valid */
  CHECK(!(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "llm.reply", &sub)));
  static const char said[] = "Sure:\n```python\nprint(1)\n```\xff";
  sq_result kept = {.id = "t-3", .batch = "b", .status = SQ_STATUS_FAILED, .exit_code = 1, .worker = "w",
                    .llm = {.called = true, .provider = "p", .model = "m", .reply = said, .reply_len = sizeof said - 1,
                            .reply_truncated = true}};
  bson_t doc_reply = BSON_INITIALIZER;
  CHECK_EQ(sq_result_to_bson(&kept, &doc_reply, NULL, 0), 0);
  CHECK(bson_iter_init(&it, &doc_reply) && bson_iter_find_descendant(&it, "llm.reply", &sub));
  CHECK_STR(bson_iter_utf8(&sub, NULL), "Sure:\n```python\nprint(1)\n```\xef\xbf\xbd");
  CHECK(bson_iter_init(&it, &doc_reply) && bson_iter_find_descendant(&it, "llm.reply_truncated", &sub) &&
        bson_iter_bool(&sub));
  bson_destroy(&doc_reply);
  CHECK(bson_iter_init_find(&it, &doc, "stdout"));
  uint32_t len = 0;
  const char *s = bson_iter_utf8(&it, &len);
  CHECK(bson_utf8_validate(s, len, false)); /* valid, and no NUL inside (utf8.h) */
  CHECK_EQ(len, sizeof out - 1 + 6); /* two bad bytes and the NUL became three 3-byte U+FFFD */
  CHECK_EQ(strlen(s), len);
  CHECK(bson_iter_init_find(&it, &doc, "finished_at") && bson_iter_date_time(&it) == 1700000000123LL);
  CHECK(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "jail.mode", &sub) &&
        strcmp(bson_iter_utf8(&sub, NULL), "warm") == 0);
  CHECK(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "jail.layers.1", &sub) &&
        strcmp(bson_iter_utf8(&sub, NULL), "seccomp") == 0);
  CHECK(bson_iter_init(&it, &doc) && bson_iter_find_descendant(&it, "jail.oom_killed", &sub) &&
        bson_iter_bool(&sub));

  /* an invalid task without an LLM call: no llm sub-document, null exit code */
  sq_result inv = {.id = "raw-1", .batch = "_invalid", .status = SQ_STATUS_INVALID_TASK,
                   .reason = "task: not valid JSON", .exit_code = -1, .worker = "w"};
  bson_t doc2 = BSON_INITIALIZER;
  CHECK_EQ(sq_result_to_bson(&inv, &doc2, NULL, 0), 0);
  CHECK(!bson_iter_init_find(&it, &doc2, "llm"));
  CHECK(!bson_iter_init_find(&it, &doc2, "jail"));
  CHECK(bson_iter_init_find(&it, &doc2, "exit_code") && BSON_ITER_HOLDS_NULL(&it));
  CHECK(bson_iter_init_find(&it, &doc2, "reason"));
  CHECK(bson_iter_init_find(&it, &doc2, "attempts") && bson_iter_int32(&it) == 1); /* unset: the first */
  CHECK(bson_iter_init(&it, &doc2) && bson_iter_find_descendant(&it, "timings.all_attempts_ms", &sub) &&
        bson_iter_int64(&sub) == 0);

  /* the pre-check's findings: an array of {kind, line, col, detail}; absent when it did not run */
  CHECK(!bson_iter_init_find(&it, &doc2, "findings"));
  sq_precheck_report rep = {.n = 2, .n_total = 2,
                          .items = {{SQ_FINDING_IMPORT, 1, 8, "socket"}, {SQ_FINDING_EVAL, 3, 5, "eval"}}};
  sq_result blk = {.id = "t-2", .batch = "b", .status = SQ_STATUS_BLOCKED, .reason = "static pre-check: x",
                   .exit_code = -1, .worker = "w", .findings = &rep};
  bson_t doc3 = BSON_INITIALIZER;
  CHECK_EQ(sq_result_to_bson(&blk, &doc3, NULL, 0), 0);
  CHECK(bson_iter_init_find(&it, &doc3, "status") && strcmp(bson_iter_utf8(&it, NULL), "blocked") == 0);
  CHECK(bson_iter_init_find(&it, &doc3, "findings") && BSON_ITER_HOLDS_ARRAY(&it));
  CHECK(bson_iter_init(&it, &doc3) && bson_iter_find_descendant(&it, "findings.1.kind", &sub) &&
        strcmp(bson_iter_utf8(&sub, NULL), "eval") == 0);
  CHECK(bson_iter_init(&it, &doc3) && bson_iter_find_descendant(&it, "findings.0.col", &sub) &&
        bson_iter_int32(&sub) == 8);
  CHECK(bson_iter_init(&it, &doc3) && bson_iter_find_descendant(&it, "findings.0.detail", &sub) &&
        strcmp(bson_iter_utf8(&sub, NULL), "socket") == 0);
  CHECK(bson_iter_init(&it, &doc3));
  CHECK(!bson_iter_find_descendant(&it, "findings.2", &sub)); /* exactly two findings */
  bson_destroy(&doc3);

  /* metadata BSON cannot hold: stored as null, and the note says why (the
   * module logs nothing; the worker logs the note with the task id) */
  sq_result meta = {.id = "t-3", .batch = "b", .status = SQ_STATUS_PASSED, .exit_code = 0, .worker = "w",
                    .metadata_json = "{\"n\": {\"$numberLong\": \"not a number\"}}"};
  bson_t doc4 = BSON_INITIALIZER;
  char note[256] = "unset";
  CHECK_EQ(sq_result_to_bson(&meta, &doc4, note, sizeof note), 0);
  CHECK_CONTAINS(note, "metadata not representable in BSON");
  CHECK(bson_iter_init_find(&it, &doc4, "metadata") && BSON_ITER_HOLDS_NULL(&it));
  bson_destroy(&doc4);
  meta.metadata_json = "{\"k\": 1}";
  bson_t doc5 = BSON_INITIALIZER;
  CHECK_EQ(sq_result_to_bson(&meta, &doc5, note, sizeof note), 0);
  CHECK_STR(note, "");
  bson_destroy(&doc5);

  /* The stored form: no _id, no batch, layers as a mask; read back in
   * full it is the full document byte for byte. */
  bson_t stored = BSON_INITIALIZER, back;
  CHECK_EQ(sq_result_to_stored_bson(&r, &stored, NULL, 0), 0);
  CHECK(!bson_has_field(&stored, "_id") && !bson_has_field(&stored, "batch"));
  CHECK(bson_iter_init(&it, &stored) && bson_iter_find_descendant(&it, "jail.layers", &sub) &&
        BSON_ITER_HOLDS_INT32(&sub) && bson_iter_int32(&sub) == (1 << 0 | 1 << 13)); /* pid_ns, seccomp */
  CHECK(stored.len + 40 < doc.len);
  CHECK_EQ(sq_result_from_stored("t-1", "b-1", bson_get_data(&stored), stored.len, &back), 0);
  CHECK_EQ(back.len, doc.len);
  CHECK(back.len == doc.len && memcmp(bson_get_data(&back), bson_get_data(&doc), doc.len) == 0);
  bson_destroy(&back);
  /* a document stored in full (an older sandq's) comes back as it is */
  CHECK_EQ(sq_result_from_stored("other", "x", bson_get_data(&doc), doc.len, &back), 0);
  CHECK(back.len == doc.len && memcmp(bson_get_data(&back), bson_get_data(&doc), doc.len) == 0);
  bson_destroy(&back);
  /* a bit this sandq has no name for (a newer one's layer) is named by its number */
  bson_t odd = BSON_INITIALIZER, jail;
  BSON_APPEND_UTF8(&odd, "status", "ok");
  BSON_APPEND_DOCUMENT_BEGIN(&odd, "jail", &jail);
  BSON_APPEND_INT32(&jail, "layers", (int32_t)(1u << 1 | 1u << 30));
  bson_append_document_end(&odd, &jail);
  CHECK_EQ(sq_result_from_stored("o", "b", bson_get_data(&odd), odd.len, &back), 0);
  char *js = bson_as_relaxed_extended_json(&back, NULL);
  CHECK_STR(js, "{ \"_id\" : \"o\", \"batch\" : \"b\", \"status\" : \"ok\", \"jail\" : { \"layers\" : [ \"net_ns\", "
                "\"bit30\" ] } }");
  bson_free(js);
  bson_destroy(&back);
  bson_destroy(&odd);
  /* not BSON: an error, nothing made */
  CHECK_EQ(sq_result_from_stored("o", "b", (const uint8_t *)"garbage!", 8, &back), SQ_EBSON);
  /* an id that needs sanitizing is stored in full, so it comes back as written */
  sq_result bad_id = r;
  bad_id.id = "t\xff";
  bson_t full = BSON_INITIALIZER;
  CHECK_EQ(sq_result_to_stored_bson(&bad_id, &full, NULL, 0), 0);
  CHECK(bson_iter_init(&it, &full) && bson_iter_next(&it) && strcmp(bson_iter_key(&it), "_id") == 0);
  bson_destroy(&full);
  bson_destroy(&stored);

  if (argc > 1) {
    FILE *f = fopen(argv[1], "wb");
    CHECK(f != NULL);
    if (f) {
      fwrite(bson_get_data(&doc), 1, doc.len, f);
      fwrite(bson_get_data(&doc2), 1, doc2.len, f);
      fclose(f);
    }
  }
  bson_destroy(&doc);
  bson_destroy(&doc2);
  return sq_check_done("test_result");
}
