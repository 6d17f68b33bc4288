/* test_compile_cache.c: the worker's compile cache (compile_cache.h): a
 * build put is got back under its key and counted; the least recently
 * used goes first when the budget is full; a build over the size limit,
 * an empty one or a second one under a held key is left to the caller;
 * a cache of 0 bytes holds nothing; keys differ with every input that
 * decides the compiler's output, and a language without a compile step or
 * without a known toolchain has none. The toolchain probe runs the host's
 * gcc when it is there (else that part is left out, saying so). */
#include "compile_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "log.h"

/* A build of one file of n bytes of c. */
static sq_workspace_build make(size_t n, char c) {
  sq_workspace_build b = {0};
  b.files = calloc(1, sizeof *b.files);
  b.files[0].name = strdup("main");
  b.files[0].data = malloc(n ? n : 1);
  memset(b.files[0].data, c, n);
  b.files[0].len = n;
  b.files[0].executable = true;
  b.n = 1;
  b.bytes = n;
  return b;
}

static void key_of(unsigned char key[32], int i) {
  memset(key, 0, 32);
  key[0] = (unsigned char)i;
}

static void test_lru(void) {
  sq__compile_cache *c = NULL;
  CHECK_EQ(sq__compile_cache_new(4u << 20, &c), 0);
  CHECK_EQ(sq__compile_cache_build_max(c), 1u << 20); /* a quarter of the budget */
  unsigned char k[5][32];
  for (int i = 0; i < 5; i++) key_of(k[i], i + 1);
  CHECK(sq__compile_cache_get(c, k[0]) == NULL);
  for (int i = 0; i < 4; i++) { /* four of the largest fit */
    sq_workspace_build b = make(1000 * 1000, (char)('a' + i));
    CHECK_EQ(sq__compile_cache_put(c, k[i], &b), 0);
    CHECK_EQ(b.n, 0); /* taken */
  }
  const sq_workspace_build *got = sq__compile_cache_get(c, k[0]); /* now the most recently used */
  CHECK(got && got->n == 1 && got->files[0].len == 1000 * 1000 && got->files[0].data[0] == 'a');
  CHECK(got && got->files[0].executable && strcmp(got->files[0].name, "main") == 0);
  sq_workspace_build b = make(1000 * 1000, 'e'); /* no room for five: k[1], the least recently used, goes */
  CHECK_EQ(sq__compile_cache_put(c, k[4], &b), 0);
  CHECK(sq__compile_cache_get(c, k[1]) == NULL);
  CHECK(sq__compile_cache_get(c, k[0]) != NULL && sq__compile_cache_get(c, k[2]) != NULL);
  got = sq__compile_cache_get(c, k[4]);
  CHECK(got && got->files[0].data[0] == 'e');
  sq__compile_cache_stats s;
  sq__compile_cache_stats_get(c, &s);
  CHECK_EQ(s.entries, 4);
  CHECK_EQ(s.evicted, 1);
  CHECK_EQ(s.hits, 4);
  CHECK_EQ(s.misses, 2);
  CHECK(s.bytes > 4 * 1000 * 1000 && s.bytes <= 4 << 20);

  /* left to the caller: too large, empty, a key already held */
  sq_workspace_build big = make((1u << 20) + 1, 'x'), none = {0}, again = make(10, 'y');
  unsigned char k9[32];
  key_of(k9, 9);
  CHECK_EQ(sq__compile_cache_put(c, k9, &big), 0);
  CHECK_EQ(big.n, 1);
  CHECK(sq__compile_cache_get(c, k9) == NULL);
  CHECK_EQ(sq__compile_cache_put(c, k9, &none), 0);
  CHECK_EQ(sq__compile_cache_put(c, k[0], &again), 0);
  CHECK_EQ(again.n, 1);
  got = sq__compile_cache_get(c, k[0]);
  CHECK(got && got->files[0].data[0] == 'a');
  sq_workspace_build_clear(&big);
  sq_workspace_build_clear(&again);
  sq__compile_cache_free(c);

  /* 0 bytes: no cache, every call a no-op */
  CHECK_EQ(sq__compile_cache_new(0, &c), 0);
  CHECK(c == NULL);
  CHECK_EQ(sq__compile_cache_build_max(c), 0);
  sq_workspace_build one = make(10, 'z');
  CHECK_EQ(sq__compile_cache_put(c, k[0], &one), 0);
  CHECK_EQ(one.n, 1);
  CHECK(sq__compile_cache_get(c, k[0]) == NULL);
  sq_workspace_build_clear(&one);
  sq__compile_cache_free(NULL);
}

static void test_keys(void) {
  unsigned char a[32], b[32];
  CHECK(!sq__compile_cache_key(SQ_LANGUAGE_PYTHON, "x", 1, 512, a)); /* no compile step */
  CHECK(!sq__compile_cache_key(SQ_LANGUAGE_C, "x", 1, 512, a));      /* before the probe */
  sq_language_probe();
  if (!sq_language_available(SQ_LANGUAGE_C)) {
    fprintf(stderr, "test_keys: no gcc here, left out\n");
    return;
  }
  sq__compile_toolchains_start();
  sq__compile_toolchains_finish(10000);
  CHECK_CONTAINS(sq__compile_toolchain(SQ_LANGUAGE_C), "gcc");
  CHECK_STR(sq__compile_toolchain(SQ_LANGUAGE_PYTHON), "");
  const char *src = "int main(void) { return 0; }";
  CHECK(sq__compile_cache_key(SQ_LANGUAGE_C, src, strlen(src), 512, a));
  CHECK(sq__compile_cache_key(SQ_LANGUAGE_C, src, strlen(src), 512, b));
  CHECK(memcmp(a, b, 32) == 0); /* the same inputs, the same key */
  CHECK(sq__compile_cache_key(SQ_LANGUAGE_C, src, strlen(src) - 1, 512, b));
  CHECK(memcmp(a, b, 32) != 0);
  CHECK(sq__compile_cache_key(SQ_LANGUAGE_C, src, strlen(src), 256, b));
  CHECK(memcmp(a, b, 32) != 0);
  if (sq_language_available(SQ_LANGUAGE_CPP)) {
    CHECK(sq__compile_cache_key(SQ_LANGUAGE_CPP, src, strlen(src), 512, b));
    CHECK(memcmp(a, b, 32) != 0);
  }
}

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  sq_log_init("test_compile_cache", SQ_LOG_WARN);
  test_lru();
  test_keys();
  return sq_check_done("test_compile_cache");
}
