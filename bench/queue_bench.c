/* queue_bench.c: queue-only throughput, execution stubbed: push N tasks,
 * then W forked consumers claim them in batches of B (one round trip) and
 * complete them in pipelines of B, with every lease and fencing check in
 * place. Prints tasks/s. Usage: queue_bench REDIS_URL N W B
 * (any URL form: redis://, redis-sentinel://, redis-cluster://). The
 * environment adds queue options: SQ_BENCH_SHARDS (shards),
 * SQ_BENCH_WAIT_REPLICAS (wait_replicas; bench/ha.sh). */
#include <bson/bson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors.h"
#include "log.h"
#include "queue.h"
#include "util.h"

/* A handle on queue "bench" with the options the environment asks for. */
static int open_bench(const char *url, sq_queue **q) {
  sq_queue_options o;
  char err[256];
  sq_queue_options_default(&o);
  const char *v = getenv("SQ_BENCH_SHARDS");
  if (v && *v) o.shards = atol(v);
  if ((v = getenv("SQ_BENCH_WAIT_REPLICAS")) && *v) o.wait_replicas = atol(v);
  int rc = sq_queue_new_opts(url, "bench", &o, q, err, sizeof err);
  if (rc) fprintf(stderr, "queue_bench: %s\n", err);
  return rc;
}

static int consume(const char *url, int w, size_t b) {
  sq_queue *q = NULL;
  char id[32];
  snprintf(id, sizeof id, "bench-%d", w);
  if (open_bench(url, &q)) return 1;
  sq_claim *c = calloc(b, sizeof *c);
  sq_completion *k = calloc(b, sizeof *k);
  int *rcs = calloc(b, sizeof *rcs);
  bson_t *doc = BCON_NEW("status", "ok", "exit_code", BCON_INT32(0));
  for (;;) {
    size_t n = 0;
    int rc = sq_queue_claim_many(q, id, 0, c, b, &n);
    if (rc == SQ_EEMPTY) break;
    if (rc) return 1;
    for (size_t i = 0; i < n; i++)
      k[i] = (sq_completion){.claim = &c[i], .batch = "bench", .id = c[i].payload, .status = "ok",
                             .bson = bson_get_data(doc), .bson_len = doc->len};
    if (sq_queue_complete_many(q, k, n, rcs)) return 1;
    for (size_t i = 0; i < n; i++) sq_claim_clear(&c[i]);
  }
  bson_destroy(doc);
  sq_queue_free(q);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: queue_bench REDIS_URL N WORKERS CLAIM_BATCH\n");
    return 2;
  }
  sq_log_init("queue_bench", SQ_LOG_ERROR);
  const char *url = argv[1];
  size_t n = (size_t)atol(argv[2]), b = (size_t)atol(argv[4]);
  int workers = atoi(argv[3]);
  sq_queue *q = NULL;
  if (open_bench(url, &q)) return 1;
  char **p = calloc(n, sizeof *p);
  size_t *l = calloc(n, sizeof *l);
  for (size_t i = 0; i < n; i++) {
    p[i] = malloc(32);
    l[i] = (size_t)snprintf(p[i], 32, "t%07zu", i);
  }
  int64_t t0 = sq_now_mono_ms();
  if (sq_queue_push(q, "bench", (const char *const *)p, l, n)) return 1;
  int64_t t1 = sq_now_mono_ms();
  for (int w = 0; w < workers; w++)
    if (fork() == 0) _exit(consume(url, w, b));
  int bad = 0;
  for (int w = 0; w < workers; w++) {
    int st;
    wait(&st);
    bad |= !WIFEXITED(st) || WEXITSTATUS(st);
  }
  int64_t t2 = sq_now_mono_ms();
  sq_batch_stats st;
  sq_queue_batch_stats(q, "bench", &st);
  printf("push %zu: %.0f tasks/s; claim+complete by %d consumer(s), batch %zu: %.0f tasks/s; results %lld/%zu\n", n,
         (double)n * 1000.0 / (double)(t1 - t0 ? t1 - t0 : 1), workers, b,
         (double)n * 1000.0 / (double)(t2 - t1 ? t2 - t1 : 1), (long long)st.done, n);
  for (size_t i = 0; i < n; i++) free(p[i]);
  free(p);
  free(l);
  sq_queue_free(q);
  return bad || st.done != (int64_t)n;
}
