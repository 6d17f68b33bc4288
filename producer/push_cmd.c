/* push.c: the producer's `push` and `status`: read a JSONL file, validate
 * every line before pushing any, stamp and push them in one pipeline, and
 * optionally wait for the batch's results. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "eval.h"
#include "log.h"
#include "name.h"
#include "producer.h"
#include "strmap.h"
#include "task.h"
#include "util.h"

#define MAX_FILE_BYTES ((size_t)1 << 30)
#define FULL_RETRY_MS 500 /* --block: how often to try a full queue again */

typedef struct {
  char *text; /* NUL-terminated, inside the file buffer */
  size_t len;
  size_t lineno;
} task_line;

typedef struct {
  char *buf;
  task_line *lines; /* non-blank lines only */
  size_t n;
} task_file;

static void task_file_clear(task_file *tf) {
  free(tf->buf);
  free(tf->lines);
  memset(tf, 0, sizeof *tf);
}

/* A line of white space only (a NUL byte is not white space: strchr would
 * find the terminator, and a line of NUL bytes passed for blank). */
static int is_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!s[i] || !strchr(" \t\r\f\v", s[i])) return 0;
  return 1;
}

/* Reads path and splits it into its non-blank lines (CRLF tolerated). */
static int read_task_file(const char *path, task_file *tf) {
  size_t len = 0;
  int rc = sq_file_read(path, MAX_FILE_BYTES, &tf->buf, &len);
  if (rc == SQ_EIO) {
    fprintf(stderr, "sandq-producer: cannot read %s: %s\n", path, strerror(errno));
    return rc;
  }
  if (rc) {
    fprintf(stderr, "sandq-producer: cannot read %s: %s\n", path, sq_strerror(rc));
    return rc;
  }
  size_t cap = 1;
  for (size_t i = 0; i < len; i++) cap += tf->buf[i] == '\n';
  if (!(tf->lines = calloc(cap, sizeof *tf->lines))) return SQ_ENOMEM;
  char *p = tf->buf, *end = tf->buf + len;
  for (size_t lineno = 1; p < end; lineno++) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *stop = nl ? nl : end;
    size_t n = (size_t)(stop - p);
    if (n && p[n - 1] == '\r') n--;
    p[n] = 0;
    if (!is_blank(p, n)) tf->lines[tf->n++] = (task_line){p, n, lineno};
    p = stop + 1;
  }
  return 0;
}

/* Validates every line: sq_task_parse, then duplicate ids. Prints
 * FILE:LINE: <reason> for each bad line and returns how many there were
 * (or a negative SQ_E* code). */
static long validate_lines(const char *path, const task_file *tf, size_t max_bytes) {
  long bad = 0;
  sq_strmap *seen = sq_strmap_new(); /* id -> its line (a hash: hsearch_r collided on ids sharing a prefix) */
  if (!seen) return SQ_ENOMEM;
  for (size_t i = 0; i < tf->n; i++) {
    const task_line *l = &tf->lines[i];
    sq_task *t = NULL;
    char err[512] = "";
    int rc = sq_task_parse(l->text, l->len, max_bytes, &t, err, sizeof err);
    if (rc) {
      char shown[sizeof err * 4]; /* field names come from the file: no escape codes to the terminal */
      fprintf(stderr, "%s:%zu: %s\n", path, l->lineno, err[0] ? sq_log_escape(err, shown, sizeof shown) : sq_strerror(rc));
      bad++;
    }
    size_t first = 0;
    int added = t && t->id ? sq_strmap_add(seen, t->id, l->lineno, &first) : 0;
    if (added == 1 && !rc) {
      fprintf(stderr, "%s:%zu: id '%s' is already used on line %zu\n", path, l->lineno, t->id, first);
      bad++;
    }
    sq_task_free(t);
    if (added < 0) {
      sq_strmap_free(seen);
      return added;
    }
  }
  sq_strmap_free(seen);
  return bad;
}

/* b-YYYYmmdd-HHMMSS-<4 hex>, UTC. */
static void make_batch_id(char *buf, size_t n) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  uint16_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) r = (uint16_t)(getpid() ^ sq_now_mono_ms());
  snprintf(buf, n, "b-%04d%02d%02d-%02d%02d%02d-%04x", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
           tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)r);
}

/* The queue's priority and idempotency key of one stamped payload (a
 * payload that does not parse goes at normal priority). *idem is malloc'd. */
static void push_fields(const char *payload, size_t len, sq_priority *prio, char **idem) {
  sq_task *t = NULL;
  char err[8];
  *prio = SQ_PRIORITY_NORMAL;
  *idem = NULL;
  if (sq_task_parse(payload, len, 0, &t, err, sizeof err) == 0) {
    *prio = t->priority == SQ_TASK_HIGH ? SQ_PRIORITY_HIGH : t->priority == SQ_TASK_LOW ? SQ_PRIORITY_LOW
                                                                                       : SQ_PRIORITY_NORMAL;
    *idem = t->idempotency_key;
    t->idempotency_key = NULL;
  }
  sq_task_free(t);
}

/* Stamps each line with the batch and the enqueue time. With no_validate a
 * line that is not a JSON object goes out as it is, counted in batch
 * SQ_TASK_INVALID_BATCH, where its result will be filed (no worker can read
 * another batch out of it): such lines are put last in items, and *n_raw
 * says how many. Without no_validate a line that the stamp takes past
 * max_bytes is refused, as the worker would refuse it: each is reported as
 * FILE:LINE and SQ_ETOOBIG returned once all were seen. A line whose
 * strings hold NUL cannot be stamped without losing bytes: reported, and
 * SQ_ETASK. Fills payloads/lens (malloc'd strings the caller frees) and
 * items (pointing into them, with malloc'd idempotency keys). */
static int stamp_lines(const char *path, const task_file *tf, const char *batch, bool no_validate,
                       size_t max_bytes, char **payloads, size_t *lens, sq_push_item *items, size_t *n_raw) {
  int64_t now_ms = sq_now_wall_ms();
  size_t front = 0, back = tf->n; /* stamped lines fill from the front, raw ones from the back */
  int bad = 0;
  for (size_t i = 0; i < tf->n; i++) {
    const task_line *l = &tf->lines[i];
    char *stamped = NULL;
    int rc = sq_task_stamp(l->text, l->len, batch, now_ms, &stamped);
    bool raw = rc == SQ_EPARSE && no_validate;
    size_t at = raw ? --back : front++;
    if (raw) {
      if (!(payloads[at] = strdup(l->text))) return SQ_ENOMEM;
      lens[at] = l->len;
      continue;
    }
    if (rc == SQ_ETASK) {
      fprintf(stderr, "%s:%zu: a string holds a NUL character (\\u0000); it cannot be stamped without "
              "losing bytes\n", path, l->lineno);
      bad = bad ? bad : rc;
      continue;
    }
    if (rc) return rc;
    payloads[at] = stamped;
    lens[at] = strlen(stamped);
    if (!no_validate && max_bytes && lens[at] > max_bytes) {
      fprintf(stderr, "%s:%zu: task: %zu bytes once stamped with batch and enqueued_at_ms (%zu in the file), "
              "more than the %zu allowed (max_task_kib)\n", path, l->lineno, lens[at], l->len, max_bytes);
      bad = bad ? bad : SQ_ETOOBIG;
    }
  }
  if (bad) return bad;
  *n_raw = tf->n - front;
  for (size_t a = front, b = tf->n - 1; a < b && b < tf->n; a++, b--) { /* raw ones back in file order */
    char *p = payloads[a];
    size_t n = lens[a];
    payloads[a] = payloads[b], lens[a] = lens[b];
    payloads[b] = p, lens[b] = n;
  }
  for (size_t i = 0; i < tf->n; i++) {
    char *idem = NULL;
    items[i] = (sq_push_item){.payload = payloads[i], .len = lens[i]};
    push_fields(payloads[i], lens[i], &items[i].priority, &idem);
    items[i].idempotency_key = idem;
  }
  return 0;
}

/* Pushes every item; with block, waits while the queue is full. */
static int push_all(sq_queue *q, const char *batch, const sq_push_item *items, size_t n, bool block,
                    size_t *pushed, size_t *dups) {
  size_t off = 0;
  bool told = false;
  *pushed = *dups = 0;
  for (;;) {
    size_t p = 0, d = 0;
    int rc = sq_queue_push_items(q, batch, items + off, n - off, &p, &d);
    *pushed += p;
    *dups += d;
    off += p + d;
    if (rc != SQ_EFULL || !block) return rc;
    if (!told) fprintf(stderr, "sandq-producer: %s; waiting (--block)\n", sq_queue_errstr(q));
    told = true;
    struct timespec ts = {.tv_sec = FULL_RETRY_MS / 1000, .tv_nsec = (FULL_RETRY_MS % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
}

int sq__wait_report(sq_queue *q, const char *batch, int64_t timeout_s, const char *out_path, bool table) {
  sq_batch_stats st;
  int64_t t0 = sq_now_mono_ms();
  int code = sq__wait_batch(q, batch, timeout_s, &st);
  if (code != SQ_EXIT_OK) return code;
  sq__report_counts(stdout, batch, &st);
  printf("elapsed: %.1f s\n", (double)(sq_now_mono_ms() - t0) / 1000.0);
  fflush(stdout);
  code = sq__report_results(q, batch, out_path, table, stdout);
  if (st.duplicate > 0)
    fprintf(stderr, "sandq-producer: %lld task(s) of batch %s repeated an id that had a result already: they ran, "
            "but the first result of each id is the one kept (docs/formats.md)\n", (long long)st.duplicate, batch);
  if (code == SQ_EXIT_OK && st.dead > 0) {
    fprintf(stderr, "sandq-producer: %lld task(s) of batch %s are in the dead letter without a result "
            "(sandq-producer dead list)\n", (long long)st.dead, batch);
    code = SQ_EXIT_INCOMPLETE;
  }
  return code;
}

int sq__push_run(const sq_config *cfg, const sq_push_opts *o) {
  task_file tf = {0};
  char **payloads = NULL;
  size_t *lens = NULL;
  sq_push_item *items = NULL;
  sq_queue *q = NULL;
  char batch[SQ_TASK_ID_MAX + 1];
  int code = SQ_EXIT_ERROR;

  if (o->batch) {
    if (!sq_name_ok(o->batch, SQ_NAME_BATCH_MAX)) {
      fprintf(stderr, "sandq-producer: --batch '%s' must be 1-%d characters of A-Z a-z 0-9 . _ : -\n", o->batch,
              SQ_TASK_ID_MAX);
      return SQ_EXIT_USAGE;
    }
    snprintf(batch, sizeof batch, "%s", o->batch);
  } else {
    make_batch_id(batch, sizeof batch);
  }
  /* A wrong --out path is found now, not after the whole batch ran. */
  if (o->out_path && sq__out_check(o->out_path) != 0) return SQ_EXIT_USAGE;
  if (read_task_file(o->path, &tf) != 0) goto out;
  if (tf.n == 0) {
    fprintf(stderr, "sandq-producer: %s holds no tasks\n", o->path);
    goto out;
  }
  if (!o->no_validate) {
    long bad = validate_lines(o->path, &tf, (size_t)cfg->max_task_kib * 1024);
    if (bad < 0) {
      fprintf(stderr, "sandq-producer: %s\n", sq_strerror((int)bad));
      goto out;
    }
    if (bad > 0) {
      fprintf(stderr, "sandq-producer: %s: %ld invalid line(s); nothing was pushed\n", o->path, bad);
      goto out;
    }
  }
  payloads = calloc(tf.n, sizeof *payloads);
  lens = calloc(tf.n, sizeof *lens);
  items = calloc(tf.n, sizeof *items);
  if (!payloads || !lens || !items) goto out;
  size_t n_raw = 0;
  int rc = stamp_lines(o->path, &tf, batch, o->no_validate, (size_t)cfg->max_task_kib * 1024, payloads, lens,
                       items, &n_raw);
  if (rc == SQ_ETOOBIG || rc == SQ_ETASK) {
    fprintf(stderr, "sandq-producer: %s: nothing was pushed\n", o->path);
    goto out;
  }
  if (rc) {
    fprintf(stderr, "sandq-producer: stamping tasks: %s\n", sq_strerror(rc));
    goto out;
  }
  if ((rc = sq__open_queue(cfg, &q))) goto out;
  /* The budget lands before the tasks, so no worker sees the batch without it. */
  if (o->budget_usd >= 0 && (rc = sq_queue_batch_set_budget(q, batch, o->budget_usd))) {
    fprintf(stderr, "sandq-producer: setting the budget failed: %s\n", sq_queue_errstr(q));
    goto out;
  }
  size_t pushed = 0, dups = 0, raw_pushed = 0, raw_dups = 0, n_stamped = tf.n - n_raw;
  if ((rc = push_all(q, batch, items, n_stamped, o->block, &pushed, &dups)) == 0 && n_raw > 0)
    rc = push_all(q, SQ_TASK_INVALID_BATCH, items + n_stamped, n_raw, o->block, &raw_pushed, &raw_dups);
  if (rc) {
    fprintf(stderr, "sandq-producer: push failed after %zu of %zu task(s): %s%s\n",
            pushed + dups + raw_pushed + raw_dups, tf.n, sq_queue_errstr(q),
            rc == SQ_EFULL ? " (--block waits for room)" : "");
    goto out;
  }
  if (n_raw > 0)
    fprintf(stderr, "sandq-producer: %zu line(s) are not JSON objects: pushed as they are, counted in batch %s "
            "(where their invalid_task results go)\n", n_raw, SQ_TASK_INVALID_BATCH);
  pushed += raw_pushed;
  dups += raw_dups;
  printf("%s\n", batch);
  fflush(stdout);
  if (dups) fprintf(stderr, "sandq-producer: %zu task(s) skipped: their idempotency_key was already pushed\n", dups);
  SQ_INFO("pushed %zu task(s) to queue %s as batch %s", pushed, cfg->queue, batch);
  if (o->wait && pushed == 0) {
    /* Nothing went into the batch, so it will never exist, let alone finish. */
    fprintf(stderr, "sandq-producer: batch %s has no tasks to wait for: every task was skipped (their results "
            "are filed under the batches that first pushed them)%s\n", batch, o->out_path ? "; --out not written" : "");
    code = SQ_EXIT_OK;
    goto out;
  }
  code = o->wait ? sq__wait_report(q, batch, o->timeout_s, o->out_path, o->table) : SQ_EXIT_OK;
out:
  for (size_t i = 0; payloads && i < tf.n; i++) free(payloads[i]);
  for (size_t i = 0; items && i < tf.n; i++) free((char *)items[i].idempotency_key);
  free(items);
  free(payloads);
  free(lens);
  sq_queue_free(q);
  task_file_clear(&tf);
  return code;
}

int sq__status_run(const sq_config *cfg, const char *batch) {
  sq_queue *q = NULL;
  sq_batch_stats st;
  int code = SQ_EXIT_ERROR;
  if (!sq_name_ok(batch, SQ_NAME_BATCH_MAX)) {
    fprintf(stderr, "sandq-producer: batch '%s' must be 1-%d characters of A-Z a-z 0-9 . _ : -\n", batch,
            SQ_TASK_ID_MAX);
    return SQ_EXIT_USAGE;
  }
  int rc = sq__open_queue(cfg, &q);
  if (rc) return SQ_EXIT_ERROR;
  if ((rc = sq_queue_batch_stats(q, batch, &st))) {
    fprintf(stderr, "sandq-producer: %s\n", sq_queue_errstr(q));
    goto out;
  }
  if (st.total == 0 && st.done == 0 && st.n_statuses == 0) {
    fprintf(stderr, "sandq-producer: batch %s is unknown to queue %s\n", batch, cfg->queue);
    goto out;
  }
  sq__report_counts(stdout, batch, &st);
  code = st.finished_at_ms && st.dead > 0 ? SQ_EXIT_INCOMPLETE : SQ_EXIT_OK;
out:
  sq_queue_free(q);
  return code;
}

/* What the queue library notes while a handle opens (a queue whose
 * recorded shard count overrides the configuration's): said on stderr. */
static void open_notice(const char *text, void *ud) {
  (void)ud;
  fprintf(stderr, "sandq-producer: %s\n", text);
}

int sq__open_queue(const sq_config *cfg, sq_queue **q) {
  char err[300];
  sq_queue_set_notice(open_notice, NULL);
  int rc = sq_queue_new_opts(cfg->redis_url, cfg->queue, &cfg->queue_opts, q, err, sizeof err);
  sq_queue_set_notice(NULL, NULL);
  if (rc) fprintf(stderr, "sandq-producer: cannot open queue '%s': %s (%s)\n", cfg->queue, sq_strerror(rc), err);
  /* Credentials are configuration: every command fails fast with the usage
   * code, whatever it would do with an unreachable Redis (docs/configuration.md,
   * "Exit codes"). */
  if (rc == SQ_EREDIS_AUTH) exit(SQ_EXIT_USAGE);
  return rc;
}
