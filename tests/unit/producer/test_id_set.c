/* test_id_set.c: push's set of id hashes: no suspect among many distinct
 * ids, a repeat always a suspect, a shared hash (a weak hash makes them)
 * a suspect for both ids and no others, and the bytes per id bounded. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "id_set.h"

static uint64_t by_length(const char *id) { return strlen(id); }

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  char id[64];
  const size_t n = 200000;
  sq__id_set *s = sq__id_set_new(NULL, 0); /* unknown count: it doubles */
  CHECK(s != NULL);
  CHECK(!sq__id_set_suspect(s, "none yet"));
  for (size_t i = 0; i < n; i++) {
    snprintf(id, sizeof id, "large-%07zu", i);
    CHECK_EQ(sq__id_set_add(s, id), 0);
  }
  CHECK_EQ(sq__id_set_suspects(s), 0);
  /* 8-byte slots at most 4/5 full before doubling, 2/5 after: <= 20 bytes an id */
  CHECK(sq__id_set_bytes(s) <= n * 20 + 1024 * 8);
  CHECK_EQ(sq__id_set_add(s, "large-0000042"), 1);
  CHECK_EQ(sq__id_set_add(s, "large-0000042"), 1); /* a third use: still one suspect */
  CHECK_EQ(sq__id_set_suspects(s), 1);
  CHECK(sq__id_set_suspect(s, "large-0000042"));
  CHECK(!sq__id_set_suspect(s, "large-0000043"));
  CHECK_EQ(sq__id_set_add(s, ""), 0); /* the empty id is an id */
  sq__id_set_free(s);
  sq__id_set_free(NULL);

  /* the count known beforehand: one table of 10 bytes an id, never doubled */
  s = sq__id_set_new(NULL, n);
  CHECK(s != NULL);
  size_t bytes = sq__id_set_bytes(s);
  CHECK(bytes <= n * 10 + 16 * 8);
  for (size_t i = 0; i < n; i++) {
    snprintf(id, sizeof id, "sized-%zu", i);
    CHECK_EQ(sq__id_set_add(s, id), 0);
  }
  CHECK_EQ(sq__id_set_bytes(s), bytes);
  CHECK_EQ(sq__id_set_add(s, "sized-7"), 1);
  sq__id_set_free(s);

  /* a weak hash: ids of one length collide, and are only suspects */
  s = sq__id_set_new(by_length, 0);
  CHECK(s != NULL);
  CHECK_EQ(sq__id_set_add(s, "ab"), 0);
  CHECK_EQ(sq__id_set_add(s, "xyz"), 0);
  CHECK_EQ(sq__id_set_add(s, "cd"), 1);
  CHECK_EQ(sq__id_set_suspects(s), 1);
  CHECK(sq__id_set_suspect(s, "ab") && sq__id_set_suspect(s, "zz"));
  CHECK(!sq__id_set_suspect(s, "xyz"));
  sq__id_set_free(s);
  return sq_check_done("test_id_set");
}
