/* test_strmap.c: the string-to-index hash table: adds, repeats, lookups
 * across growth, and keys that share long prefixes (glibc's hsearch_r
 * collided on those). */
#include <stdio.h>

#include "check.h"
#include "errors.h"
#include "strmap.h"

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  sq_strmap *m = sq_strmap_new();
  CHECK(m != NULL);
  size_t v = 99;
  CHECK(!sq_strmap_get(m, "absent", &v));
  CHECK_EQ(v, 99);
  char key[64];
  for (size_t i = 0; i < 20000; i++) {
    snprintf(key, sizeof key, "HumanEval/problem/%zu/0", i);
    CHECK_EQ(sq_strmap_add(m, key, i, NULL), 0);
  }
  CHECK_EQ(sq_strmap_count(m), 20000);
  for (size_t i = 0; i < 20000; i += 7) {
    snprintf(key, sizeof key, "HumanEval/problem/%zu/0", i);
    CHECK(sq_strmap_get(m, key, &v));
    CHECK_EQ(v, i);
    size_t old = 0;
    CHECK_EQ(sq_strmap_add(m, key, 5, &old), 1); /* a repeat keeps the first value */
    CHECK_EQ(old, i);
  }
  CHECK(!sq_strmap_get(m, "HumanEval/problem/20000/0", NULL));
  CHECK(!sq_strmap_get(m, "HumanEval/problem/1", NULL));
  CHECK_EQ(sq_strmap_add(m, "", 7, NULL), 0); /* the empty key is a key */
  CHECK(sq_strmap_get(m, "", &v));
  CHECK_EQ(v, 7);
  CHECK_EQ(sq_strmap_count(m), 20001);
  sq_strmap_free(m);
  sq_strmap_free(NULL);
  return sq_check_done("test_strmap");
}
