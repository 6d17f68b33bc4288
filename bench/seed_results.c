/* seed_results.c: N stored results of trivial tasks, for measuring the
 * readers at sizes real workers take hours to reach here. SEEDED, not
 * run: each task is pushed, claimed and completed through the same queue
 * calls a worker makes (sq_queue_push_items, sq_queue_claim_many,
 * sq_queue_complete_many: fencing, counters, first result wins), and its
 * result is built by sq_result_to_stored_bson as a worker builds it for
 * `x = i * 2` (status ok, empty output, the jail's layers, made-up
 * timings); only the LLM, the jail and the wait are skipped. Tasks are like
 * bench/large.sh's: 1,000 problems by metadata.task_id.
 * Usage: seed_results REDIS_URL QUEUE BATCH N */
#include <bson/bson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "queue.h"
#include "result.h"
#include "run.h"
#include "task.h"
#include "util.h"

#define CHUNK 512

int main(int argc, char **argv) {
  if (argc != 5 || atol(argv[4]) < 1) {
    fprintf(stderr, "usage: seed_results REDIS_URL QUEUE BATCH N\n");
    return 2;
  }
  const char *url = argv[1], *queue = argv[2], *batch = argv[3];
  size_t n = (size_t)atol(argv[4]), done = 0;
  sq_queue_options o;
  char err[256];
  sq_queue *q = NULL;
  sq_queue_options_default(&o);
  if (sq_queue_new_opts(url, queue, &o, &q, err, sizeof err) != 0) {
    fprintf(stderr, "seed_results: %s\n", err);
    return 1;
  }
  static char *payloads[CHUNK];
  static sq_push_item items[CHUNK];
  static sq_claim claims[CHUNK];
  static sq_completion comp[CHUNK];
  static bson_t docs[CHUNK];
  static sq_task *tasks[CHUNK];
  static int rcs[CHUNK];
  sq_precheck_report findings = {0};
  int64_t now_ms = sq_now_wall_ms();
  while (done < n) {
    size_t m = n - done < CHUNK ? n - done : CHUNK, claimed = 0, pushed = 0;
    for (size_t i = 0; i < m; i++) {
      char line[256];
      size_t k = done + i;
      snprintf(line, sizeof line, "{\"id\":\"%s-%07zu\",\"code\":\"x = %zu * 2\",\"metadata\":{\"task_id\":\"p%04zu\"}}",
               batch, k, k, k % 1000);
      if (sq_task_stamp(line, strlen(line), batch, now_ms, &payloads[i]) != 0) return 1;
      items[i] = (sq_push_item){.payload = payloads[i], .len = strlen(payloads[i])};
    }
    if (sq_queue_push_items(q, batch, items, m, &pushed, NULL) != 0 || pushed != m) {
      fprintf(stderr, "seed_results: push: %s\n", sq_queue_errstr(q));
      return 1;
    }
    for (size_t i = 0; i < m; i++) free(payloads[i]);
    while (claimed < m) {
      size_t got = 0;
      if (sq_queue_claim_many(q, "seed-1", 0, claims + claimed, m - claimed, &got) != 0) {
        fprintf(stderr, "seed_results: claim: %s\n", sq_queue_errstr(q));
        return 1;
      }
      claimed += got;
    }
    for (size_t i = 0; i < m; i++) {
      char perr[128];
      if (sq_task_parse(claims[i].payload, claims[i].len, 0, &tasks[i], perr, sizeof perr) != 0) {
        fprintf(stderr, "seed_results: %s\n", perr);
        return 1;
      }
      const sq_task *t = tasks[i];
      sq_result r = {.id = t->id, .batch = batch, .status = SQ_STATUS_OK, .language = "python", .exit_code = 0,
                     .stdout_buf = "", .stderr_buf = "", .code = t->code, .queue_ms = 40 + (int64_t)(i % 200),
                     .exec_ms = 30 + (int64_t)(i % 20), .attempts = 1, .cpu_ms = 20, .memory_kib = 9000,
                     .jail = {.ran = true, .mode = "warm"}, .profile = "python", .worker = "seed-1",
                     .finished_at_ms = now_ms, .metadata_json = t->metadata_json, .findings = &findings};
      r.total_ms = r.all_attempts_ms = r.queue_ms + r.exec_ms + 5;
      sq_jail_layers_names(~0u, r.jail.layers, SQ_RESULT_MAX_LAYERS);
      bson_init(&docs[i]);
      if (sq_result_to_stored_bson(&r, &docs[i], NULL, 0) != 0) return 1;
      comp[i] = (sq_completion){.claim = &claims[i], .batch = batch, .id = t->id, .status = "ok",
                                .bson = bson_get_data(&docs[i]), .bson_len = docs[i].len};
    }
    if (sq_queue_complete_many(q, comp, m, rcs) != 0) {
      fprintf(stderr, "seed_results: complete: %s\n", sq_queue_errstr(q));
      return 1;
    }
    for (size_t i = 0; i < m; i++) {
      if (rcs[i] != 0) {
        fprintf(stderr, "seed_results: %s: %s\n", tasks[i]->id, sq_strerror(rcs[i]));
        return 1;
      }
      bson_destroy(&docs[i]);
      sq_task_free(tasks[i]);
      sq_claim_clear(&claims[i]);
    }
    done += m;
  }
  sq_queue_free(q);
  printf("seeded %zu results into batch %s (queue %s)\n", n, batch, queue);
  return 0;
}
