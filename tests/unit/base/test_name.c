/* test_name.c: the one name check for Redis-key parts (queue, worker id,
 * batch), and that config, the queue handle and the task parser all use it. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "name.h"
#include "task.h"

static void test_alphabet(void) {
  CHECK(sq_name_ok("default", SQ_NAME_QUEUE_MAX));
  CHECK(sq_name_ok("A-z.0_9:x", SQ_NAME_QUEUE_MAX));
  CHECK(!sq_name_ok("", SQ_NAME_QUEUE_MAX));
  CHECK(!sq_name_ok(NULL, SQ_NAME_QUEUE_MAX));
  static const char *const bad[] = {"a{b", "a}b", "a b", "a\tb", "a\nb", "a/b", "a*b", "a\x7f", "caf\xc3\xa9", "a,b"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (sq_name_ok(bad[i], SQ_NAME_QUEUE_MAX)) fprintf(stderr, "accepted '%s'\n", bad[i]);
    CHECK(!sq_name_ok(bad[i], SQ_NAME_QUEUE_MAX));
  }
  for (int c = 0; c < 256; c++) {
    int want = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
               c == '_' || c == ':' || c == '-';
    if (sq_name_char_ok(c) != want) fprintf(stderr, "char %d\n", c);
    CHECK_EQ(sq_name_char_ok(c), want);
  }
}

static void test_lengths(void) {
  char s[200];
  memset(s, 'q', sizeof s);
  s[SQ_NAME_QUEUE_MAX] = '\0';
  CHECK(sq_name_ok(s, SQ_NAME_QUEUE_MAX));
  s[SQ_NAME_QUEUE_MAX] = 'q';
  s[SQ_NAME_QUEUE_MAX + 1] = '\0';
  CHECK(!sq_name_ok(s, SQ_NAME_QUEUE_MAX));
  CHECK(sq_name_ok(s, SQ_NAME_BATCH_MAX));
  CHECK_EQ(SQ_NAME_BATCH_MAX, SQ_TASK_ID_MAX);
}

/* config refuses what the check refuses, naming the key */
static void test_callers(void) {
  sq_config c;
  char err[512] = "";
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_set(&c, "queue", "a{b}", err, sizeof err), 0);
  CHECK(sq_config_validate(&c, err, sizeof err) != 0);
  CHECK_CONTAINS(err, "queue: 'a{b}' must be 1-63 characters of A-Z a-z 0-9 . _ : -");
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_set(&c, "worker_id", "w 1", err, sizeof err), 0);
  CHECK(sq_config_validate(&c, err, sizeof err) != 0);
  CHECK_CONTAINS(err, "worker_id: 'w 1' must be characters of");
  /* an empty worker id is filled from the host name, made a valid name */
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  CHECK(sq_name_ok(c.worker_id, SQ_NAME_WORKER_MAX));

  /* the task parser: a bad batch is refused, naming the field */
  const char *line = "{\"id\":\"t1\",\"batch\":\"b{1}\",\"code\":\"print(1)\"}";
  sq_task *t = NULL;
  CHECK(sq_task_parse(line, strlen(line), 0, &t, err, sizeof err) != 0);
  CHECK_CONTAINS(err, "batch: must be 1-128 characters of A-Z a-z 0-9 . _ : -");
  CHECK(t != NULL);
  if (t) CHECK_STR(t->batch, "default"); /* recovered for the error result, under a valid batch */
  sq_task_free(t);
}

int main(void) {
  test_alphabet();
  test_lengths();
  test_callers();
  return sq_check_done("test_name");
}
