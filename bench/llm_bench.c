/* llm_bench.c: the LLM side alone: N chat completions through the project's
 * client (common/llm: libcurl multi, keep-alive) against one
 * OpenAI-compatible server, IN_FLIGHT on the wire at once, all submitted up
 * front. Prints requests/s and how many failed; exits 1 when any failed.
 * bench/llm.sh uses it to measure the fake LLM alone.
 * Usage: llm_bench BASE_URL N IN_FLIGHT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "llm.h"
#include "util.h"

typedef struct {
  long done, failed;
  char first_error[256];
} tally;

static void on_done(sq_llm_reply *rep, int rc, void *ud) {
  tally *t = ud;
  t->done++;
  if (rc != 0 || !rep->content) {
    if (!t->failed++) snprintf(t->first_error, sizeof t->first_error, "%s", rep->error[0] ? rep->error : sq_strerror(rc));
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: llm_bench BASE_URL N IN_FLIGHT\n");
    return 2;
  }
  int64_t n, in_flight;
  if (sq_parse_i64(argv[2], 1, 10000000, &n) || sq_parse_i64(argv[3], 1, 10000, &in_flight)) {
    fprintf(stderr, "llm_bench: N must be 1..10000000 and IN_FLIGHT 1..10000\n");
    return 2;
  }
  sq_llm_provider p = {.timeout_ms = 60000, .max_retries = 0, .max_in_flight = (int)in_flight, .weight = 1};
  snprintf(p.name, sizeof p.name, "bench");
  snprintf(p.base_url, sizeof p.base_url, "%s", argv[1]);
  snprintf(p.model, sizeof p.model, "fake-coder");
  sq_llm *c = NULL;
  char err[256];
  if (sq_llm_new(&p, 1, &c, err, sizeof err) != 0) {
    fprintf(stderr, "llm_bench: %s\n", err);
    return 1;
  }
  tally t = {0};
  char user[64];
  int64_t t0 = sq_now_mono_ms();
  for (int64_t i = 0; i < n; i++) {
    snprintf(user, sizeof user, "[bench] request %lld", (long long)i);
    sq_llm_request req = {.system = "You write Python 3 programs.", .user = user};
    if (sq_llm_submit(c, &req, on_done, &t) != 0) {
      fprintf(stderr, "llm_bench: submit failed\n");
      return 1;
    }
  }
  while (sq_llm_outstanding(c) > 0) {
    if (sq_llm_poll(c, 100, -1) != 0) {
      fprintf(stderr, "llm_bench: %s\n", sq_llm_errstr(c));
      return 1;
    }
  }
  int64_t ms = sq_now_mono_ms() - t0;
  printf("llm_bench: %lld requests, %lld in flight, %.2f s, %.1f requests/s, %ld failed%s%s\n", (long long)n,
         (long long)in_flight, ms / 1000.0, ms > 0 ? n * 1000.0 / ms : 0.0, t.failed, t.failed ? ": " : "",
         t.first_error);
  sq_llm_free(c);
  return t.failed ? 1 : 0;
}
