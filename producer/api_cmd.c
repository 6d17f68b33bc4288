/* api_cmd.c: `sandq-producer api`: SandboxFusion's HTTP API in front of
 * the queue (docs/api.md). The HTTP side (api_http.c) hands each /run_code
 * job here; one thread with one queue handle works in rounds: it pushes
 * the new jobs (all that came since its last round, in one call), reads
 * the results of every job in flight with one read of the server's batch,
 * answers each job whose result came, and answers 504 past a job's
 * deadline. With few jobs out a round runs as soon as a job comes and the
 * results are read every few ms; with many out (the queue ahead of the
 * workers is deep, so a few ms more per job cost no throughput) rounds are
 * BUSY_ROUND_MS apart, so that each push and each read of the results
 * carries several jobs: every call costs Redis and this process more than
 * the jobs it carries. Every task of a server goes into one batch of its
 * own (api-<time>-<random>), whose results are removed once read. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "errors.h"
#include "http.h"
#include "log.h"
#include "producer.h"
#include "util.h"

#define DEFAULT_LISTEN "127.0.0.1:8080" /* SandboxFusion's port, on loopback */
#define DEFAULT_MAX_IN_FLIGHT 256
#define DEFAULT_SLACK_S 8   /* under verl's 10 s, so it sees our 504 (and retries) before its own timeout */
#define POLL_MIN_MS 1       /* a young job's results are read this often */
#define POLL_MAX_MS 25      /* an old one's, at least this often */
#define BUSY_JOBS 16        /* this many jobs with the queue: its rounds are gathered */
#define BUSY_ROUND_MS 8     /* then at most one push and one read per this many ms */
#define STOP_GRACE_MS 10000 /* SIGTERM: jobs in flight get this long to finish */
#define ERROR_LOG_EVERY_MS 10000
#define NEVER INT64_MAX

struct sq__api_server {
  pthread_mutex_t mu; /* guards incoming, n_incoming, n_out, stopping, wake_on_job */
  pthread_cond_t cv;
  sq__api_job **incoming; /* submitted, not yet pushed */
  size_t n_incoming;
  size_t n_out, max_out; /* jobs with the queue side; the cap */
  bool stopping;
  bool wake_on_job; /* the queue thread waits for new jobs (else for its next round) */
  sq_queue *q;
  const char *batch;
  /* the queue thread's own */
  sq__api_job **pending; /* pushed, waiting for a result; job->state is its index */
  size_t n_pending;
  sq__api_job **by_seq; /* pending, by the sequence number of their id (open addressing) */
  size_t seq_mask;      /* by_seq has seq_mask + 1 slots: a power of two, at least 2 * max_out */
  sq__api_job **taken;  /* one round's from incoming */
  sq__api_job **answered; /* one round's answers, not yet handed back */
  size_t n_answered;
  sq_push_item *items;
  int64_t last_push_ms; /* the last push's time */
  int64_t last_error_ms;
};

/* A job's sequence number: its id is r<seq> (api_http.c); 0 for any other. */
static uint64_t id_seq(const char *id) {
  if (id[0] != 'r' || id[1] < '1' || id[1] > '9') return 0;
  uint64_t v = 0;
  for (const char *p = id + 1; *p; p++) {
    if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10) return 0;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  return v;
}

static size_t seq_slot(const sq__api_server *s, uint64_t seq) {
  return (size_t)(seq * 0x9E3779B97F4A7C15ull >> 20) & s->seq_mask;
}

static sq__api_job *seq_find(const sq__api_server *s, uint64_t seq) {
  for (size_t i = seq_slot(s, seq); s->by_seq[i]; i = (i + 1) & s->seq_mask)
    if (id_seq(s->by_seq[i]->id) == seq) return s->by_seq[i];
  return NULL;
}

static void seq_add(sq__api_server *s, sq__api_job *job) {
  size_t i = seq_slot(s, id_seq(job->id));
  while (s->by_seq[i])
    i = (i + 1) & s->seq_mask;
  s->by_seq[i] = job;
}

/* Removes job, moving back the entries after it that its slot let
 * through (linear probing without tombstones). */
static void seq_remove(sq__api_server *s, const sq__api_job *job) {
  size_t i = seq_slot(s, id_seq(job->id));
  while (s->by_seq[i] != job)
    i = (i + 1) & s->seq_mask;
  for (size_t j = (i + 1) & s->seq_mask; s->by_seq[j]; j = (j + 1) & s->seq_mask) {
    size_t home = seq_slot(s, id_seq(s->by_seq[j]->id));
    /* the entry at j may move to i when its home is not in (i, j] */
    if (((j - home) & s->seq_mask) >= ((j - i) & s->seq_mask)) {
      s->by_seq[i] = s->by_seq[j];
      i = j;
    }
  }
  s->by_seq[i] = NULL;
}

static void add_pending(sq__api_server *s, sq__api_job *job) {
  job->state = (int)s->n_pending;
  s->pending[s->n_pending++] = job;
  seq_add(s, job);
}

static void take_pending(sq__api_server *s, sq__api_job *job) {
  size_t i = (size_t)job->state;
  s->pending[i] = s->pending[--s->n_pending];
  s->pending[i]->state = (int)i;
  seq_remove(s, job);
}

int sq__api_submit_many(sq__api_server *s, sq__api_job *const *jobs, size_t n) {
  pthread_mutex_lock(&s->mu);
  bool room = !s->stopping && n <= s->max_out - s->n_out;
  if (room) {
    bool first = s->n_incoming == 0;
    for (size_t i = 0; i < n; i++)
      s->incoming[s->n_incoming++] = jobs[i];
    s->n_out += n;
    if (first && s->wake_on_job) pthread_cond_signal(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return room ? 0 : 503;
}

int sq__api_submit(sq__api_server *s, sq__api_job *job) { return sq__api_submit_many(s, &job, 1); }

/* Sets job's answer (reply taken; NULL: out of memory); hand_back hands
 * it to the HTTP side with the others of its round. */
static void finish(sq__api_server *s, sq__api_job *job, int status, char *reply, const char *outcome) {
  job->http_status = reply ? status : 500;
  job->reply = reply ? reply : sq__api_detail("out of memory");
  job->outcome = outcome;
  s->answered[s->n_answered++] = job;
}

/* Hands the answered jobs back: their room under the cap first (one lock
 * for all), then their connections resume. */
static void hand_back(sq__api_server *s) {
  if (!s->n_answered) return;
  pthread_mutex_lock(&s->mu);
  s->n_out -= s->n_answered;
  pthread_mutex_unlock(&s->mu);
  for (size_t i = 0; i < s->n_answered; i++)
    sq__api_job_done(s->answered[i]); /* the HTTP side's from here on */
  s->n_answered = 0;
}

/* A failure of the queue, logged at most every ERROR_LOG_EVERY_MS. The
 * clients get a line that names no address. */
static void queue_error(sq__api_server *s, const char *what, int rc) {
  int64_t now = sq_now_mono_ms();
  if (now - s->last_error_ms < ERROR_LOG_EVERY_MS) return;
  s->last_error_ms = now;
  SQ_WARN("api: %s failed: %s", what, rc == SQ_ENOMEM ? "out of memory" : sq_queue_errstr(s->q));
}

/* One round's reading of the results. */
typedef struct {
  sq__api_server *s;
  size_t seen;
} round_ctx;

static int on_result(const char *id, const uint8_t *bson, size_t len, void *ud) {
  round_ctx *r = ud;
  sq__api_server *s = r->s;
  r->seen++;
  uint64_t seq = id_seq(id);
  sq__api_job *job = seq ? seq_find(s, seq) : NULL;
  for (size_t i = 0; !seq && !job && i < s->n_pending; i++) /* an id of another shape: looked for in full */
    if (strcmp(s->pending[i]->id, id) == 0) job = s->pending[i];
  if (!job || strcmp(job->id, id) != 0) return 0; /* answered already (504), or not ours */
  const char *outcome = "SandboxError";
  char *reply = sq__api_run_code_reply(&job->run, bson, len, &outcome);
  take_pending(s, job);
  finish(s, job, 200, reply, outcome);
  return 0;
}

/* Reads the batch's results, answers the jobs they belong to, then
 * removes what was read (unless more came meanwhile: they are read again
 * next round, and a result whose job is gone, answered 504, is dropped). */
static void poll_results(sq__api_server *s) {
  round_ctx r = {.s = s};
  int rc = sq_queue_batch_results(s->q, s->batch, on_result, &r);
  if (rc) {
    queue_error(s, "reading results", rc);
    return;
  }
  if (r.seen == 0) return;
  int64_t dropped = 0;
  rc = sq_queue_batch_results_drop(s->q, s->batch, (int64_t)r.seen, &dropped);
  if (rc && rc != SQ_ECONFLICT) queue_error(s, "removing read results", rc);
}

/* Pushes the jobs taken from incoming in one call; a job the queue did not
 * take is answered 503 at once. */
static void push_jobs(sq__api_server *s, sq__api_job **jobs, size_t n, sq_push_item *items) {
  for (size_t i = 0; i < n; i++)
    items[i] = (sq_push_item){.payload = jobs[i]->payload, .len = jobs[i]->len};
  size_t pushed = 0, dups = 0;
  int rc = sq_queue_push_items(s->q, s->batch, items, n, &pushed, &dups);
  int64_t now = sq_now_mono_ms();
  if (pushed) s->last_push_ms = now;
  for (size_t i = 0; i < n; i++) {
    if (i < pushed) {
      jobs[i]->pushed_ms = now;
      add_pending(s, jobs[i]);
      continue;
    }
    if (i == pushed) queue_error(s, "pushing tasks", rc);
    finish(s, jobs[i], 503,
           sq__api_detail(rc == SQ_EFULL ? "the queue is full (max_queue_len); try again"
                                         : "the queue is unavailable; try again"),
           "unavailable");
  }
}

/* When the next read of the results is due: soon after a push (a
 * trivial task takes a few ms), less often as the jobs age (a quarter of
 * the time since the last push, within POLL_MIN_MS..POLL_MAX_MS), and no
 * sooner than the next round when busy. */
static int64_t next_poll_at(const sq__api_server *s, int64_t now) {
  int64_t wait = (now - s->last_push_ms) / 4;
  if (wait < POLL_MIN_MS) wait = POLL_MIN_MS;
  if (wait > POLL_MAX_MS) wait = POLL_MAX_MS;
  if (s->n_pending >= BUSY_JOBS && wait < BUSY_ROUND_MS) wait = BUSY_ROUND_MS;
  return now + wait;
}

/* Answers 504 to every job past its deadline. */
static void expire_jobs(sq__api_server *s, int64_t now) {
  for (size_t i = s->n_pending; i-- > 0;) {
    sq__api_job *job = s->pending[i];
    if (now < job->deadline_ms) continue;
    take_pending(s, job);
    finish(s, job, 504,
           sq__api_detail("no result within the request's compile_timeout + run_timeout + slack "
                          "(--slack-s): the workers are busy or gone; try again"),
           "timeout");
  }
}

static void *queue_main(void *arg) {
  sq__api_server *s = arg;
  sq__api_job **taken = s->taken;
  sq_push_item *items = s->items;
  int64_t next_poll = NEVER, stop_at = 0;
  for (;;) {
    /* Waits for the next round: new jobs to push, the next read of the
     * results, or the stop. */
    pthread_mutex_lock(&s->mu);
    int64_t now;
    for (;;) {
      now = sq_now_mono_ms();
      if (s->stopping && !stop_at) break;
      bool busy = s->n_pending >= BUSY_JOBS;
      int64_t due = s->n_pending ? next_poll : NEVER;
      if (s->n_incoming) { /* pushed at once, or at most every BUSY_ROUND_MS when busy */
        int64_t at = busy ? s->last_push_ms + BUSY_ROUND_MS : now;
        if (at < due) due = at;
      }
      if (due <= now) break;
      /* a new job changes nothing while busy: it waits for the round */
      s->wake_on_job = !busy;
      if (due == NEVER) {
        if (s->stopping) break;
        pthread_cond_wait(&s->cv, &s->mu);
        continue;
      }
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      int64_t ns = ts.tv_nsec + (due - now) * 1000000L;
      ts.tv_sec += ns / 1000000000L;
      ts.tv_nsec = ns % 1000000000L;
      pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    s->wake_on_job = false;
    size_t n = s->n_incoming;
    memcpy(taken, s->incoming, n * sizeof *taken);
    s->n_incoming = 0;
    bool stopping = s->stopping;
    pthread_mutex_unlock(&s->mu);
    if (n) { /* new jobs: their results are read soon, whatever older ones wait for */
      push_jobs(s, taken, n, items);
      now = sq_now_mono_ms();
      int64_t soon = now + (s->n_pending >= BUSY_JOBS ? BUSY_ROUND_MS : POLL_MIN_MS);
      if (next_poll > soon) next_poll = soon;
    }
    if (s->n_pending && now >= next_poll) {
      poll_results(s);
      now = sq_now_mono_ms();
    }
    if (now >= next_poll) next_poll = s->n_pending ? next_poll_at(s, now) : NEVER;
    expire_jobs(s, now);
    hand_back(s);
    if (stopping) {
      if (!stop_at) stop_at = now + STOP_GRACE_MS;
      if (s->n_pending == 0 || now >= stop_at) break;
    }
  }
  while (s->n_pending) {
    sq__api_job *job = s->pending[s->n_pending - 1];
    take_pending(s, job);
    finish(s, job, 503, sq__api_detail("the server is stopping; try again"), "stopping");
  }
  hand_back(s);
  return NULL;
}

/* api-YYYYmmdd-HHMMSS-<4 hex>, UTC: this server's batch. */
static void make_batch(char *buf, size_t n) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  uint16_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
    r = (uint16_t)(getpid() ^ sq_now_mono_ms());
  snprintf(buf, n, "api-%04d%02d%02d-%02d%02d%02d-%04x", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
           tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)r);
}

static volatile sig_atomic_t stop_flag;
static void on_stop(int sig) {
  (void)sig;
  stop_flag = 1;
}

/* --NAME N in [min, max] into *out (unchanged when absent); SQ_EXIT_USAGE after saying why. */
static int int_flag(const sq_cli *cli, const char *name, int64_t min, int64_t max, int64_t *out) {
  const char *v = sq_cli_get(cli, name);
  if (v && sq_parse_i64(v, min, max, out) != 0) {
    fprintf(stderr, "sandq-producer: api --%s '%s' must be a whole number in %lld..%lld\n", name, v,
            (long long)min, (long long)max);
    return SQ_EXIT_USAGE;
  }
  return 0;
}

int sq__api_run_cmd(const sq_config *cfg, const sq_cli *cli) {
  int64_t max_in_flight = DEFAULT_MAX_IN_FLIGHT, slack_s = DEFAULT_SLACK_S,
          max_request_kib = cfg->max_task_kib;
  const char *listen = sq_cli_get(cli, "listen");
  if (!listen) listen = DEFAULT_LISTEN;
  if (cli->n_operands) {
    fprintf(stderr, "sandq-producer: api takes no operand ('%s')\n", cli->operands[0]);
    return SQ_EXIT_USAGE;
  }
  if (int_flag(cli, "max-in-flight", 1, 65536, &max_in_flight) ||
      int_flag(cli, "slack-s", 0, 3600, &slack_s) ||
      int_flag(cli, "max-request-kib", 1, 1048576, &max_request_kib))
    return SQ_EXIT_USAGE;
  char host[256], err[512], batch[64];
  int port;
  if (sq_http_listen_parse(listen, host, sizeof host, &port, err, sizeof err) != 0) {
    fprintf(stderr, "sandq-producer: api --listen: %s\n", err);
    return SQ_EXIT_USAGE;
  }
  const char *token = getenv("SANDQ_API_TOKEN");
  if (token && !*token) token = NULL;
  make_batch(batch, sizeof batch);
  sq__api_server s = {.max_out = (size_t)max_in_flight, .batch = batch};
  s.incoming = calloc(s.max_out, sizeof *s.incoming);
  s.pending = calloc(s.max_out, sizeof *s.pending);
  s.taken = calloc(s.max_out, sizeof *s.taken);
  s.items = calloc(s.max_out, sizeof *s.items);
  for (s.seq_mask = 1; s.seq_mask + 1 < 2 * s.max_out; s.seq_mask = 2 * s.seq_mask + 1) {}
  s.by_seq = calloc(s.seq_mask + 1, sizeof *s.by_seq);
  s.answered = calloc(s.max_out, sizeof *s.answered);
  int code = SQ_EXIT_ERROR;
  if (!s.incoming || !s.pending || !s.taken || !s.items || !s.by_seq || !s.answered) {
    fprintf(stderr, "sandq-producer: api: out of memory\n");
    goto out;
  }
  if (sq__open_queue(cfg, &s.q) != 0) goto out;
  pthread_mutex_init(&s.mu, NULL);
  pthread_cond_init(&s.cv, NULL);
  struct sigaction sa = {0};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &old); /* the threads inherit the mask: signals come here */
  code = SQ_EXIT_OK;
  pthread_t th;
  bool started = pthread_create(&th, NULL, queue_main, &s) == 0;
  sq__api_http_opts o = {.listen = listen,
                         .token = token,
                         .max_request_bytes = (size_t)max_request_kib * 1024,
                         .max_task_bytes = (size_t)cfg->max_task_kib * 1024,
                         .max_connections = (size_t)max_in_flight + 64,
                         .max_in_flight = (size_t)max_in_flight,
                         .slack_ms = slack_s * 1000,
                         .batch = batch};
  sq__api_http *h = NULL;
  int rc = started ? sq__api_http_start(&o, &s, &h, err, sizeof err) : SQ_ESYS;
  if (rc) {
    if (!started) snprintf(err, sizeof err, "cannot start the queue thread");
    fprintf(stderr, "sandq-producer: api --listen: %s\n", err);
    code = rc == SQ_ESYS && !started ? SQ_EXIT_ERROR : SQ_EXIT_USAGE;
  } else {
    fprintf(stderr,
            "sandq-producer: serving queue %s's SandboxFusion API on http://%s/ (port %d, batch %s%s)\n",
            cfg->queue, listen, sq__api_http_port(h), batch, token ? ", bearer token required" : "");
    while (!stop_flag)
      sigsuspend(&old);
    sq__api_http_quiesce(h); /* no new connections; the answers in flight still go out */
  }
  if (started) {
    pthread_mutex_lock(&s.mu);
    s.stopping = true;
    pthread_cond_signal(&s.cv);
    pthread_mutex_unlock(&s.mu);
    pthread_join(th, NULL);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  sq__api_http_stop(h);
  pthread_cond_destroy(&s.cv);
  pthread_mutex_destroy(&s.mu);
out:
  sq_queue_free(s.q);
  free(s.incoming);
  free(s.pending);
  free(s.taken);
  free(s.items);
  free(s.by_seq);
  free(s.answered);
  return code;
}
