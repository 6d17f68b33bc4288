/* push.c: the producer's `push` and `status`: read a JSONL file, validate
 * every line before pushing any (a pass over the file), stamp and push
 * them a chunk at a time (another pass), and optionally wait for the
 * batch's results. One line is held at a time, whatever the file's size. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "eval.h"
#include "id_set.h"
#include "log.h"
#include "name.h"
#include "producer.h"
#include "strmap.h"
#include "task.h"
#include "util.h"

#define MAX_LINE_BYTES ((size_t)64 << 20) /* a longer line is refused, never held */
#define CHUNK_LINES 1024                     /* tasks stamped and pushed at a time */
#define FULL_RETRY_MS 500 /* --block: how often to try a full queue again */

/* The task file read a line at a time, as often as needed: each pass over
 * it holds one line (standard input is first copied to a temporary file,
 * so it can be read again). */
typedef struct {
  FILE *f;
  const char *path;
  sq_buf line;    /* the current line, NUL-terminated, CR LF / LF cut */
  size_t lineno;
  bool too_long;  /* the line ran past MAX_LINE_BYTES: the rest was skipped */
} task_reader;

static int reader_open(const char *path, task_reader *r) {
  memset(r, 0, sizeof *r);
  r->path = path;
  if (strcmp(path, "-") != 0) {
    if (!(r->f = fopen(path, "rb"))) {
      fprintf(stderr, "sandq-producer: cannot read %s: %s\n", path, strerror(errno));
      return SQ_EIO;
    }
    return 0;
  }
  char chunk[65536];
  size_t n;
  if (!(r->f = tmpfile())) {
    fprintf(stderr, "sandq-producer: cannot keep standard input in a temporary file: %s\n", strerror(errno));
    return SQ_EIO;
  }
  while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
    if (fwrite(chunk, 1, n, r->f) != n) break;
  if (ferror(stdin) || ferror(r->f) || fflush(r->f) != 0) {
    fprintf(stderr, "sandq-producer: cannot read -: %s\n", strerror(errno));
    return SQ_EIO;
  }
  return 0;
}

static void reader_close(task_reader *r) {
  if (r->f) fclose(r->f);
  sq_buf_clear(&r->line);
  memset(r, 0, sizeof *r);
}

/* From the top again. */
static void reader_rewind(task_reader *r) {
  rewind(r->f);
  r->lineno = 0;
}

/* How many lines the file has (the last one may lack its newline): the
 * size of push's id table, known before it fills. 0 on a read error (the
 * pass after explains it). */
static size_t count_lines(task_reader *r) {
  char chunk[65536];
  size_t n = 0, got;
  char last = '\n';
  reader_rewind(r);
  while ((got = fread(chunk, 1, sizeof chunk, r->f)) > 0) {
    for (const char *p = chunk; (p = memchr(p, '\n', (size_t)(chunk + got - p))); p++) n++;
    last = chunk[got - 1];
  }
  return ferror(r->f) ? 0 : n + (last != '\n');
}

/* A line of white space only (a NUL byte is not white space: strchr would
 * find the terminator, and a line of NUL bytes passed for blank). */
static int is_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!s[i] || !strchr(" \t\r\f\v", s[i])) return 0;
  return 1;
}

/* The next non-blank line into r->line: 1, or 0 at the end, or SQ_EIO /
 * SQ_ENOMEM (explained on stderr). */
static int reader_next(task_reader *r) {
  char piece[8192];
  for (;;) {
    r->line.len = 0;
    r->too_long = false;
    size_t k = 0, total = 0;
    int c = EOF;
    /* byte by byte (getc_unlocked): a NUL is data here, as in the file */
    while ((c = getc_unlocked(r->f)) != EOF) {
      total++;
      if (c == '\n') break;
      piece[k++] = (char)c;
      if (k == sizeof piece) {
        if (r->line.len + k > MAX_LINE_BYTES) r->too_long = true;
        else if (sq_buf_append(&r->line, piece, k) != 0) return SQ_ENOMEM;
        k = 0;
      }
    }
    if (ferror(r->f)) {
      fprintf(stderr, "sandq-producer: cannot read %s: %s\n", r->path, strerror(errno));
      return SQ_EIO;
    }
    if (total == 0) return 0;
    if (r->line.len + k > MAX_LINE_BYTES) r->too_long = true;
    else if (sq_buf_append(&r->line, piece, k) != 0) return SQ_ENOMEM;
    r->lineno++;
    size_t n = r->line.len;
    if (n && r->line.data[n - 1] == '\r') n--;
    if (sq_buf_append(&r->line, "", 1) != 0) return SQ_ENOMEM;
    r->line.data[n] = 0;
    r->line.len = n;
    if (r->too_long || !is_blank(r->line.data, n)) return 1;
  }
}

/* The next line's task parsed (1, *t set, NULL when it is bad: *rc and
 * err say why), 0 at the end, or a negative SQ_E* code. */
static int next_task(task_reader *r, size_t max_bytes, sq_task **t, int *rc, char *err, size_t errlen) {
  *t = NULL;
  err[0] = 0;
  int more = reader_next(r);
  if (more != 1) return more;
  *rc = r->too_long ? SQ_ETOOBIG : sq_task_parse(r->line.data, r->line.len, max_bytes, t, err, errlen);
  if (*rc) sq_task_free(*t), *t = NULL;
  return 1;
}

/* The second pass, only when two ids shared a hash in the first: the ids
 * of suspect hashes compared whole; a repeat is reported with the line
 * that used it first. Returns how many repeats, or a negative SQ_E* code. */
static long confirm_duplicates(task_reader *r, size_t max_bytes, const sq__id_set *ids) {
  long bad = 0;
  int more, rc;
  char err[512];
  sq_task *t;
  sq_strmap *seen = sq_strmap_new(); /* suspect id -> its first line */
  if (!seen) return SQ_ENOMEM;
  reader_rewind(r);
  while ((more = next_task(r, max_bytes, &t, &rc, err, sizeof err)) == 1) {
    size_t first = 0;
    int added = t && t->id && sq__id_set_suspect(ids, t->id) ? sq_strmap_add(seen, t->id, r->lineno, &first) : 0;
    if (added == 1) {
      fprintf(stderr, "%s:%zu: id '%s' is already used on line %zu\n", r->path, r->lineno, t->id, first);
      bad++;
    }
    sq_task_free(t);
    if (added < 0) {
      more = added;
      break;
    }
  }
  sq_strmap_free(seen);
  return more < 0 ? more : bad;
}

/* Validates every line: sq_task_parse, then duplicate ids (a 64-bit hash
 * of each, id_set.h; the ids of a hash seen twice compared whole in a
 * second pass). Prints FILE:LINE: <reason> for each bad line and returns
 * how many there were (or a negative SQ_E* code); *n gets how many lines
 * hold a task. */
static long validate_lines(task_reader *r, size_t max_bytes, size_t *n) {
  long bad = 0;
  int more, rc;
  char err[512];
  sq_task *t;
  sq__id_set *ids = sq__id_set_new(NULL, count_lines(r));
  if (!ids) return SQ_ENOMEM;
  *n = 0;
  reader_rewind(r);
  while ((more = next_task(r, max_bytes, &t, &rc, err, sizeof err)) == 1) {
    ++*n;
    if (rc) {
      char shown[sizeof err * 4]; /* field names come from the file: no escape codes to the terminal */
      if (r->too_long) snprintf(err, sizeof err, "task: longer than %zu bytes", MAX_LINE_BYTES);
      fprintf(stderr, "%s:%zu: %s\n", r->path, r->lineno, err[0] ? sq_log_escape(err, shown, sizeof shown) : sq_strerror(rc));
      bad++;
    }
    int added = t && t->id ? sq__id_set_add(ids, t->id) : 0;
    sq_task_free(t);
    if (added < 0) {
      more = added;
      break;
    }
  }
  if (more == 0 && sq__id_set_suspects(ids) > 0) {
    long dups = confirm_duplicates(r, max_bytes, ids);
    if (dups < 0) more = (int)dups;
    else bad += dups;
  }
  sq__id_set_free(ids);
  return more < 0 ? more : bad;
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

/* The queue's priority, idempotency key and (id not NULL) task id of one
 * stamped payload (a payload that does not parse goes at normal priority,
 * without either). *idem and *id are malloc'd. */
static void push_fields(const char *payload, size_t len, sq_priority *prio, char **idem, char **id) {
  sq_task *t = NULL;
  char err[8];
  *prio = SQ_PRIORITY_NORMAL;
  *idem = NULL;
  if (id) *id = NULL;
  if (sq_task_parse(payload, len, 0, &t, err, sizeof err) == 0) {
    *prio = t->priority == SQ_TASK_HIGH ? SQ_PRIORITY_HIGH : t->priority == SQ_TASK_LOW ? SQ_PRIORITY_LOW
                                                                                       : SQ_PRIORITY_NORMAL;
    *idem = t->idempotency_key;
    t->idempotency_key = NULL;
    if (id) {
      *id = t->id;
      t->id = NULL;
    }
  }
  sq_task_free(t);
}

/* Checks that every line can be stamped with the batch and the enqueue
 * time, before anything is pushed. With no_validate a line that is not a
 * JSON object will go out as it is, counted in batch
 * SQ_TASK_INVALID_BATCH, where its result will be filed (no worker can
 * read another batch out of it): *n_raw says how many. Without no_validate
 * a line that the stamp takes past max_bytes is refused, as the worker
 * would refuse it: each is reported as FILE:LINE and SQ_ETOOBIG returned
 * once all were seen. A line whose strings hold NUL cannot be stamped
 * without losing bytes: reported, and SQ_ETASK. *n gets the lines. */
static int check_stamps(task_reader *r, const char *batch, bool no_validate, size_t max_bytes, size_t *n,
                        size_t *n_raw) {
  int64_t now_ms = sq_now_wall_ms();
  int bad = 0, more;
  *n = *n_raw = 0;
  reader_rewind(r);
  while ((more = reader_next(r)) == 1) {
    ++*n;
    if (r->too_long) { /* only with no_validate: validate_lines refused it otherwise */
      fprintf(stderr, "%s:%zu: task: longer than %zu bytes\n", r->path, r->lineno, MAX_LINE_BYTES);
      bad = bad ? bad : SQ_ETOOBIG;
      continue;
    }
    char *stamped = NULL;
    int rc = sq_task_stamp(r->line.data, r->line.len, batch, now_ms, &stamped);
    size_t len = stamped ? strlen(stamped) : 0;
    free(stamped);
    if (rc == SQ_EPARSE && no_validate) {
      ++*n_raw;
    } else if (rc == SQ_ETASK) {
      fprintf(stderr, "%s:%zu: a string holds a NUL character (\\u0000); it cannot be stamped without "
              "losing bytes\n", r->path, r->lineno);
      bad = bad ? bad : rc;
    } else if (rc) {
      return rc;
    } else if (!no_validate && max_bytes && len > max_bytes) {
      fprintf(stderr, "%s:%zu: task: %zu bytes once stamped with batch and enqueued_at_ms (%zu in the file), "
              "more than the %zu allowed (max_task_kib)\n", r->path, r->lineno, len, r->line.len, max_bytes);
      bad = bad ? bad : SQ_ETOOBIG;
    }
  }
  return more < 0 ? more : bad;
}

/* One push of tasks into one batch: its counts, and the id of its record
 * in the batch (sq_queue_push_mark; "" for none, the raw lines' batch). */
typedef struct {
  sq_push_counts c;
  char mark[24];
} push_run;

/* Renews the push's record (its lease) in batch; a failure here is the
 * next push step's to report. */
static void push_alive(sq_queue *q, const char *batch, const push_run *pr) {
  if (pr->mark[0]) (void)sq_queue_push_mark(q, batch, pr->mark, SQ_PUSH_MARK_ALIVE);
}

/* Pushes every item (ids[i] its task id, or NULL); with block, waits
 * while the queue is full (keeping the push's record alive). Adds to pr->c. */
static int push_all(sq_queue *q, const char *batch, const sq_push_item *items, const char *const *ids, size_t n,
                    bool block, push_run *pr) {
  size_t off = 0;
  bool told = false;
  for (;;) {
    sq_push_counts c = {0};
    int rc = sq_queue_push_counted(q, batch, items + off, ids ? ids + off : NULL, n - off, &c);
    pr->c.pushed += c.pushed;
    pr->c.duplicates += c.duplicates;
    pr->c.already += c.already;
    off += c.pushed + c.duplicates + c.already;
    push_alive(q, batch, pr);
    if (rc != SQ_EFULL || !block) return rc;
    if (!told) fprintf(stderr, "sandq-producer: %s; waiting (--block)\n", sq_queue_errstr(q));
    told = true;
    struct timespec ts = {.tv_sec = FULL_RETRY_MS / 1000, .tv_nsec = (FULL_RETRY_MS % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
}

/* Pushes the file's lines CHUNK_LINES at a time (check_stamps passed):
 * the stamped ones into batch, or with raw the lines that are not JSON
 * objects (no_validate) as they are, into SQ_TASK_INVALID_BATCH. With
 * ids (validated lines: no id twice) each task carries its id, so one
 * already in the batch (this push run before) is skipped. Adds to pr.
 * Returns 0 or the first error (explained by the caller). */
static int push_lines(task_reader *r, sq_queue *q, const char *batch, bool raw, bool ids, bool block, push_run *pr) {
  char *payloads[CHUNK_LINES], *tids[CHUNK_LINES];
  sq_push_item items[CHUNK_LINES];
  size_t n = 0;
  int64_t now_ms = sq_now_wall_ms();
  int rc = 0, more;
  reader_rewind(r);
  do {
    more = reader_next(r);
    if (more == 1) {
      char *stamped = NULL;
      int st = sq_task_stamp(r->line.data, r->line.len, batch, now_ms, &stamped);
      if (st == SQ_EPARSE ? !raw : raw || st != 0) { /* the other pass's line, or checked before */
        free(stamped);
        if (st && st != SQ_EPARSE) rc = st;
        continue;
      }
      if (raw && !(stamped = strdup(r->line.data))) rc = SQ_ENOMEM;
      if (rc) break;
      char *idem = NULL;
      payloads[n] = stamped;
      items[n] = (sq_push_item){.payload = stamped, .len = strlen(stamped)};
      push_fields(stamped, items[n].len, &items[n].priority, &idem, ids && !raw ? &tids[n] : NULL);
      if (!ids || raw) tids[n] = NULL;
      items[n++].idempotency_key = idem;
    }
    if (n && (n == CHUNK_LINES || more != 1)) {
      rc = push_all(q, raw ? SQ_TASK_INVALID_BATCH : batch, items, (const char *const *)tids, n, block, pr);
      for (size_t i = 0; i < n; i++) free(payloads[i]), free(tids[i]), free((char *)items[i].idempotency_key);
      n = 0;
    }
  } while (more == 1 && !rc);
  for (size_t i = 0; i < n; i++) free(payloads[i]), free(tids[i]), free((char *)items[i].idempotency_key);
  return rc ? rc : more < 0 ? more : 0;
}

int sq__wait_report(sq_queue *q, const char *batch, int64_t expect_total, int64_t timeout_s, const char *out_path,
                    bool table) {
  sq_batch_stats st;
  int64_t t0 = sq_now_mono_ms();
  sq_wait_hooks hooks = {.expect_total = expect_total};
  int code = sq__wait_batch_hooked(q, batch, timeout_s, &st, &hooks);
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
  if (code == SQ_EXIT_OK && st.push == SQ_PUSH_INCOMPLETE) {
    fprintf(stderr, "sandq-producer: batch %s: its push did not complete (%lld task(s) went in; the pushing process "
            "ended midway): run the same push again to add the rest (tasks already in the batch are skipped)\n",
            batch, (long long)st.total);
    code = SQ_EXIT_INCOMPLETE;
  }
  return code;
}

/* A fresh id for one push's record in its batch (sq_queue_push_mark). */
static void make_push_mark(char *buf, size_t n) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) r = (uint64_t)getpid() << 32 ^ (uint64_t)sq_now_wall_ms();
  snprintf(buf, n, "%016llx", (unsigned long long)r);
}

int sq__push_run(const sq_config *cfg, const sq_push_opts *o) {
  task_reader tr = {0};
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
  if (reader_open(o->path, &tr) != 0) goto out;
  /* Every line checked before any is pushed: passes over the file, one line held at a time. */
  size_t n = 0, n_raw = 0;
  if (!o->no_validate) {
    long bad = validate_lines(&tr, (size_t)cfg->max_task_kib * 1024, &n);
    if (bad < 0) {
      fprintf(stderr, "sandq-producer: %s\n", sq_strerror((int)bad));
      goto out;
    }
    if (bad > 0) {
      fprintf(stderr, "sandq-producer: %s: %ld invalid line(s); nothing was pushed\n", o->path, bad);
      goto out;
    }
  }
  int rc = check_stamps(&tr, batch, o->no_validate, (size_t)cfg->max_task_kib * 1024, &n, &n_raw);
  if (rc == SQ_ETOOBIG || rc == SQ_ETASK) {
    fprintf(stderr, "sandq-producer: %s: nothing was pushed\n", o->path);
    goto out;
  }
  if (rc) {
    fprintf(stderr, "sandq-producer: stamping tasks: %s\n", sq_strerror(rc));
    goto out;
  }
  if (n == 0) {
    fprintf(stderr, "sandq-producer: %s holds no tasks\n", o->path);
    goto out;
  }
  if ((rc = sq__open_queue(cfg, &q))) goto out;
  /* The budget lands before the tasks, so no worker sees the batch without it. */
  if (o->budget_usd >= 0 && (rc = sq_queue_batch_set_budget(q, batch, o->budget_usd))) {
    fprintf(stderr, "sandq-producer: setting the budget failed: %s\n", sq_queue_errstr(q));
    goto out;
  }
  /* The batch records this push as under way until it ends: a push that
   * dies midway leaves it "incomplete push", and running it again adds
   * only the tasks the batch lacks (validated lines carry their ids). */
  push_run pr = {0}, raw_pr = {0};
  make_push_mark(pr.mark, sizeof pr.mark);
  if ((rc = sq_queue_push_mark(q, batch, pr.mark, SQ_PUSH_MARK_BEGIN))) {
    fprintf(stderr, "sandq-producer: recording the push in batch %s failed: %s\n", batch, sq_queue_errstr(q));
    goto out;
  }
  if ((rc = push_lines(&tr, q, batch, false, !o->no_validate, o->block, &pr)) == 0 && n_raw > 0)
    rc = push_lines(&tr, q, batch, true, false, o->block, &raw_pr);
  if (!rc && (rc = sq_queue_push_mark(q, batch, pr.mark, pr.c.pushed + pr.c.already ? SQ_PUSH_MARK_END
                                                                                        : SQ_PUSH_MARK_DROP)))
    fprintf(stderr, "sandq-producer: every task was pushed, but recording the push's end in batch %s failed: %s\n",
            batch, sq_queue_errstr(q));
  size_t pushed = pr.c.pushed, dups = pr.c.duplicates, already = pr.c.already;
  if (rc) {
    fprintf(stderr, "sandq-producer: push failed after %zu of %zu task(s): %s%s\n",
            pushed + dups + already + raw_pr.c.pushed + raw_pr.c.duplicates, n,
            rc == SQ_ENOMEM || rc == SQ_EIO ? sq_strerror(rc) : sq_queue_errstr(q),
            rc == SQ_EFULL ? " (--block waits for room)" : "");
    if (!o->no_validate)
      fprintf(stderr, "sandq-producer: batch %s shows an incomplete push: run the same push again to add the rest "
              "(tasks already in the batch are skipped)\n", batch);
    goto out;
  }
  size_t raw_pushed = raw_pr.c.pushed, raw_dups = raw_pr.c.duplicates;
  if (n_raw > 0)
    fprintf(stderr, "sandq-producer: %zu line(s) are not JSON objects: pushed as they are, counted in batch %s "
            "(where their invalid_task results go)\n", n_raw, SQ_TASK_INVALID_BATCH);
  pushed += raw_pushed;
  dups += raw_dups;
  printf("%s\n", batch);
  fflush(stdout);
  if (dups) fprintf(stderr, "sandq-producer: %zu task(s) skipped: their idempotency_key was already pushed\n", dups);
  if (already)
    fprintf(stderr, "sandq-producer: %zu of %zu task(s) were already in batch %s (pushed before): not pushed again; "
            "%zu new\n", already, n, batch, pushed);
  SQ_INFO("pushed %zu task(s) to queue %s as batch %s", pushed, cfg->queue, batch);
  reader_close(&tr); /* the file is not needed while waiting */
  if (o->wait && pushed == 0 && already == 0) {
    /* Nothing went into the batch, so it will never exist, let alone finish. */
    fprintf(stderr, "sandq-producer: batch %s has no tasks to wait for: every task was skipped (their results "
            "are filed under the batches that first pushed them)%s\n", batch, o->out_path ? "; --out not written" : "");
    code = SQ_EXIT_OK;
    goto out;
  }
  code = o->wait ? sq__wait_report(q, batch, (int64_t)(pushed + already), o->timeout_s, o->out_path, o->table)
                 : SQ_EXIT_OK;
out:
  sq_queue_free(q);
  reader_close(&tr);
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
  if (st.total == 0 && st.done == 0 && st.n_statuses == 0 && st.push == SQ_PUSH_NONE) {
    fprintf(stderr, "sandq-producer: batch %s is unknown to queue %s\n", batch, cfg->queue);
    goto out;
  }
  sq__report_counts(stdout, batch, &st);
  code = st.finished_at_ms && st.dead > 0 ? SQ_EXIT_INCOMPLETE : SQ_EXIT_OK;
  if (st.push == SQ_PUSH_INCOMPLETE)
    fprintf(stderr, "sandq-producer: batch %s: its push did not complete (the pushing process ended midway): run the "
            "same push again to add the rest (tasks already in the batch are skipped)\n", batch);
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
