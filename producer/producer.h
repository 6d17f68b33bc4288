/* producer.h: the pieces of sandq-producer that main.c wires together:
 * push (read, validate, stamp, push, wait) and report (counters, result
 * tables, the BSON output file). Private to the producer. */
#ifndef SQ_PRODUCER_H
#define SQ_PRODUCER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "config.h"
#include "queue.h"

/* Exit codes of sandq-producer. */
enum {
  SQ_EXIT_OK = 0,
  SQ_EXIT_ERROR = 1,    /* invalid tasks, redis or I/O failure */
  SQ_EXIT_USAGE = 2,    /* bad command line */
  SQ_EXIT_TIMEOUT = 3,  /* --timeout-s ran out before every task had a result */
  SQ_EXIT_MISMATCH = 4, /* a result's status differed from its metadata.expect */
  SQ_EXIT_INCOMPLETE = 5, /* the batch finished with tasks in the dead letter (no result), or its push did
                           * not complete */
  SQ_EXIT_BAD_RESULT = 6, /* a stored result is not BSON: named on stderr, left out of --out */
  SQ_EXIT_LOST = 7,       /* waiting: the batch vanished or went back (Redis lost it), named on stderr */
  SQ_EXIT_INTERRUPTED = 130, /* Ctrl-C while waiting: the batch keeps running (128 + SIGINT) */
};

typedef struct {
  const char *path;     /* the JSONL file */
  const char *batch;    /* NULL: generate one */
  bool wait;            /* poll until every task has a result */
  int64_t timeout_s;    /* 0: wait forever */
  const char *out_path; /* NULL: no BSON file */
  bool table;           /* one row per task */
  bool no_validate;     /* push lines as they are (testing workers) */
  bool block;           /* wait while the queue is at max_queue_len */
  double budget_usd;    /* < 0: no LLM budget for the batch */
} sq_push_opts;

/* `push`: returns an SQ_EXIT_* code; explains failures on stderr. */
int sq__push_run(const sq_config *cfg, const sq_push_opts *o);
/* `wait BATCH`: re-attaches to a pushed batch as `push --wait` does. */
typedef struct {
  const char *batch;
  int64_t timeout_s;    /* 0: wait forever */
  const char *out_path; /* NULL: no BSON file */
  bool table;           /* one row per task */
} sq_wait_opts;
int sq__wait_run(const sq_config *cfg, const sq_wait_opts *o);

/* `batches [--json] [--limit N]`: the queue's batches, latest push first. */
typedef struct {
  bool json;
  int64_t limit; /* 0: all */
} sq_batches_opts;
int sq__batches_run(const sq_config *cfg, const sq_batches_opts *o);

/* `cancel BATCH [--kill]`: ends the batch's waiting tasks, and with kill
 * stops its running ones (sq_queue_batch_cancel). */
int sq__cancel_run(const sq_config *cfg, const char *batch, bool kill);

/* `status BATCH`: returns an SQ_EXIT_* code. */
int sq__status_run(const sq_config *cfg, const char *batch);

/* `dead list|show ID|requeue ID|requeue --all`, `metrics [--listen
 * HOST:PORT | FILE]`, `health [--json] [WORKER]`, `rollout start [--force]
 * C B|status|abort|clear`, `audit [--batch B] [--since T] [--json]`: cfg
 * built from the command line (main.c), cli its flags (sq_cli_get) and
 * operands, parsed against the command's table there. Return an SQ_EXIT_*
 * code. */
int sq__dead_run(const sq_config *cfg, const sq_cli *cli);
int sq__metrics_run(const sq_config *cfg, const sq_cli *cli);
int sq__health_run(const sq_config *cfg, const sq_cli *cli);
int sq__rollout_run(const sq_config *cfg, const sq_cli *cli);
int sq__audit_run(const sq_config *cfg, const sq_cli *cli);
/* Counts workers whose health is fresh (live) and stale (metrics_cmd.c). */
int sq__health_count(sq_queue *q, const sq_config *cfg, int *live, int *stale);

/* Opens the configured queue, explaining a failure on stderr. */
int sq__open_queue(const sq_config *cfg, sq_queue **q);

/* Polls the batch's counters until the server marks it finished (its
 * finished flag, read through sq1_batch_get: every task has a result, sits
 * in the dead letter, or was cancelled) and no push into it is under way
 * (sq_queue_push_mark), showing a progress bar on a terminal and plain
 * lines otherwise (stderr). Rides out Redis outages. A batch that
 * vanishes (Redis restarted without its data, or evicted it) or whose
 * total falls (Redis went back to older data: pushed tasks lost) is named
 * on stderr and SQ_EXIT_LOST returned; results lost while their tasks run
 * again are said once and waited for. Ctrl-C (SIGINT, SIGTERM) stops the
 * wait, not the batch: says how to re-attach and returns
 * SQ_EXIT_INTERRUPTED. Returns SQ_EXIT_OK, SQ_EXIT_TIMEOUT,
 * SQ_EXIT_INTERRUPTED, SQ_EXIT_LOST or SQ_EXIT_ERROR with the last
 * counters in *st. With h (NULL: none), h->check(h->ud) runs before each look at
 * the counters and returns 0 to go on, or the SQ_EXIT_* code to stop
 * with (having said why); with h->private_fleet the batch ends with this
 * process (evaluate's own Redis), so Ctrl-C prints no re-attach hint;
 * h->expect_total (0: none) is a total the batch is known to have reached
 * (push --wait: the tasks it pushed), so a batch found smaller from the
 * first look went back. */
typedef struct {
  int (*check)(void *ud);
  void *ud;
  bool private_fleet;
  int64_t expect_total;
} sq_wait_hooks;
int sq__wait_batch_hooked(sq_queue *q, const char *batch, int64_t timeout_s, sq_batch_stats *st,
                          const sq_wait_hooks *h);

/* Waits for batch (sq__wait_batch_hooked; expect_total as its hook's), prints
 * its counters and the time it took, then reads its results
 * (sq__report_results: out_path, table); a batch whose push did not
 * complete is said and gives SQ_EXIT_INCOMPLETE. The end of `push --wait`
 * and of `wait`. Returns an SQ_EXIT_* code. */
int sq__wait_report(sq_queue *q, const char *batch, int64_t expect_total, int64_t timeout_s, const char *out_path,
                    bool table);

/* "pushing", "incomplete push" or NULL (complete, or none recorded): what
 * status, batches and wait show of a batch's push. */
const char *sq__push_state_text(sq_push_state p);

/* Prints a batch's counters: total, done, dead and one row per status. */
void sq__report_counts(FILE *f, const char *batch, const sq_batch_stats *st);

/* Whether --out path can be written: a new path or a regular file (a
 * symlink, FIFO, directory or device is refused, explained on stderr).
 * Returns 0, SQ_EINVAL or SQ_EIO. */
int sq__out_check(const char *path);

/* Reads every result of batch; writes the valid ones to out_path (a new
 * path or a regular file; via a temporary file in its directory and a
 * rename) when not NULL, prints one row per task sorted by id on f when
 * table, and checks metadata.expect. Returns SQ_EXIT_OK, SQ_EXIT_BAD_RESULT
 * (values that are not BSON, named on stderr), SQ_EXIT_MISMATCH (the
 * differing tasks named on stderr) or SQ_EXIT_ERROR. */
int sq__report_results(sq_queue *q, const char *batch, const char *out_path, bool table, FILE *f);

/* The batch's done count (tasks with a result), read before its results
 * are, for sq__results_short; -1 when its counters are damaged (said on
 * stderr). Returns 0 or an SQ_E* code (explained on stderr). */
int sq__results_done(sq_queue *q, const char *batch, int64_t *done);

/* Whether an --out file would hold fewer results than the batch has done
 * (stored: the results read, readable or not; done: sq__results_done's,
 * read before them, so results arriving meanwhile only add), or done is
 * unknown (-1) and out_path exists: then nothing may replace out_path, and
 * the reason is said on stderr. Returns 0 or SQ_ENOTFOUND. */
int sq__results_short(const char *batch, const char *out_path, size_t stored, int64_t done);

#endif
