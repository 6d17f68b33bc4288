/* jail_pool.c: the warm pool: its zygotes (jail_zygote.c), one slot each,
 * started side by side on threads of their own, and the runs that take
 * them. Only a host failure fails a run: a zygote that cannot take a task
 * is replaced and the task goes to the fresh one once; a full zygote that
 * cannot start leaves the runs that import to the lean ones for a while. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "jail_zygote.h"
#include "log.h"
#include "util.h"

#define FULL_RETRY_MS 30000 /* a full zygote that could not start: not tried again for this long */

/* One zygote's first start, on a thread of its own (sq__jail_pool_new):
 * the zygote stays busy until it is done, then is free to take runs (one
 * that failed is started again by the run that takes it). */
typedef struct {
  sq__jail_pool *p;
  sq__jail_zygote *z;
  pthread_t thread;
  bool started;
} starter;

/* Two kinds of zygote: size with the common modules imported, for programs
 * that import, and the rest without, for those that do not: a lean
 * interpreter has half the memory to copy at each fork and to tear down at
 * each exit (docs/benchmarks.md). A run takes its own kind when one is
 * free, else the other (an import in a lean zygote works, only slower).
 * The lean ones start with the pool; the full ones, twice the start-up CPU
 * each, when the first run asks for one (acquire), and that run takes a
 * lean one meanwhile: a batch that never imports never pays for them. */
struct sq__jail_pool {
  sq_jail *jail;
  pthread_mutex_t lock;
  pthread_cond_t freed;
  int size, total; /* z[0, size): full; z[size, total): lean */
  starter *starters; /* one per zygote: its first start (joined by sq__jail_pool_free) */
  int starting, up;  /* first starts not finished yet; and succeeded */
  int phase_n, phase_up; /* the starts begun together (the lean ones, later the full ones); up of them */
  int64_t phase_ms;  /* when they began */
  bool full_started; /* the full zygotes' start has begun (until then they stay busy, never taken) */
  bool one_run;      /* one run only: the full ones never start (runs of any kind take a lean one) */
  int running, cores; /* zygotes taken by runs now; the CPUs online */
  int start_rc;      /* the last first start's failure */
  int64_t full_down_until_ms; /* a full zygote failed to start: runs that import take lean ones until then */
  uint64_t takes;    /* runs that took a zygote so far (acquire) */
  sq__jail_zygote z[];
};

/* A full zygote could not start (its imports failed, say): for the next
 * FULL_RETRY_MS runs that import take lean zygotes, where an import works,
 * only slower, instead of failing as a host failure. Under p->lock. */
static void full_down(sq__jail_pool *p) {
  if (p->size >= p->total) return; /* no lean zygote to fall back on */
  int64_t now = sq_now_mono_ms();
  if (now >= p->full_down_until_ms)
    SQ_WARN("warm pool: a zygote with the common modules imported could not start (see above); programs that "
            "import run on lean zygotes for %d s, then it is tried again", FULL_RETRY_MS / 1000);
  p->full_down_until_ms = now + FULL_RETRY_MS;
}

static void pool_start_done(sq__jail_pool *p, sq__jail_zygote *z, int rc) {
  pthread_mutex_lock(&p->lock);
  z->busy = false;
  p->starting--;
  if (rc == 0) p->up++, p->phase_up++;
  else p->start_rc = rc;
  if (rc != 0 && !z->lean) full_down(p);
  if (p->starting == 0) {
    long long ms = (long long)(sq_now_mono_ms() - p->phase_ms);
    if (p->phase_n == p->total)
      SQ_INFO("warm pool: %d of %d zygotes up in %lld ms", p->phase_up, p->phase_n, ms);
    else if (!p->full_started)
      SQ_INFO("warm pool: %d of %d lean zygotes up in %lld ms (the %d full ones start with the first task that "
              "imports)", p->phase_up, p->phase_n, ms, p->size);
    else
      SQ_INFO("warm pool: %d of %d full zygotes up in %lld ms (a task that imports started them)", p->phase_up,
              p->phase_n, ms);
  }
  pthread_cond_broadcast(&p->freed);
  pthread_mutex_unlock(&p->lock);
}

static void *start_one(void *arg) {
  starter *s = arg;
  pool_start_done(s->p, s->z, sq__jail_zygote_start(sq__jail_common_of(s->p->jail), s->z));
  return NULL;
}

/* Starts z[from, to) side by side, each on a thread of its own; each is
 * busy until it is up (or failed). */
static void start_range(sq__jail_pool *p, int from, int to) {
  pthread_mutex_lock(&p->lock);
  if (p->starting == 0) { /* else these join the starts still going */
    p->phase_n = p->phase_up = 0;
    p->phase_ms = sq_now_mono_ms();
  }
  p->phase_n += to - from;
  for (int i = from; i < to; i++) {
    p->z[i].busy = true;
    p->starting++;
  }
  pthread_mutex_unlock(&p->lock);
  for (int i = from; i < to; i++) {
    starter *s = &p->starters[i];
    *s = (starter){.p = p, .z = &p->z[i]};
    s->started = pthread_create(&s->thread, NULL, start_one, s) == 0;
    if (!s->started) start_one(s); /* no thread: start it here */
  }
}

int sq__jail_pool_new(sq_jail *j, int size, bool one_run, sq__jail_pool **out) {
  *out = NULL;
  const sq__jail_common *c = sq__jail_common_of(j);
  if (!(c->layers & SQ_JAIL_LAYER_PID_NS) || !(c->layers & SQ_JAIL_LAYER_NEW_ROOT)) {
    SQ_ERROR("warm pool: needs pid and mount namespaces (run as root; see `sandq-worker check`)");
    return SQ_EJAIL;
  }
  /* As many lean zygotes as full ones, within half the slots (the rest
   * stay for spawn runs). */
  int n_lean = SQ__JAIL_MAX_SLOTS / 2 - size;
  if (n_lean > size) n_lean = size;
  if (n_lean < 0) n_lean = 0;
  int total = size + n_lean;
  sq__jail_pool *p = calloc(1, sizeof *p + (size_t)total * sizeof(sq__jail_zygote));
  if (!p) return SQ_ENOMEM;
  p->jail = j;
  p->one_run = one_run && n_lean > 0;
  p->size = size;
  p->total = total;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  p->cores = cores > 0 ? (int)cores : 1;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->freed, NULL);
  for (int i = 0; i < total; i++) {
    p->z[i] = (sq__jail_zygote){.slot = -1, .pidfd = -1, .ctl = -1, .result_fd = -1, .notify = -1, .lean = i >= size};
  }
  /* The zygotes start side by side (each its own thread: its imports are
   * most of a worker's start-up), and the pool is ready as soon as the
   * first one is up: runs take the others as they come up, so tasks
   * waiting at start do not wait for the whole pool (docs/benchmarks.md).
   * The pool fails only when no zygote could start. */
  int rc = 0;
  p->starters = calloc((size_t)total, sizeof *p->starters);
  if (!p->starters) rc = SQ_ENOMEM;
  for (int i = 0; i < total && rc == 0; i++) {
    p->z[i].slot = sq__jail_slot_take();
    if (p->z[i].slot < 0) rc = SQ_EJAIL;
  }
  /* The lean ones now; the full ones, dormant (busy, never taken) until
   * the first run that asks for one (acquire). A pool of full ones only
   * starts them now. */
  int from = n_lean > 0 ? size : 0;
  for (int i = 0; rc == 0 && i < from; i++) p->z[i].busy = true;
  p->full_started = from == 0;
  if (rc == 0) start_range(p, from, total);
  pthread_mutex_lock(&p->lock);
  while (rc == 0 && p->up == 0 && p->starting > 0) pthread_cond_wait(&p->freed, &p->lock);
  if (rc == 0 && p->up == 0) rc = p->start_rc ? p->start_rc : SQ_EJAIL;
  pthread_mutex_unlock(&p->lock);
  if (rc != 0) {
    sq__jail_pool_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

void sq__jail_pool_free(sq__jail_pool *p) {
  if (!p) return;
  for (int i = 0; p->starters && i < p->total; i++)
    if (p->starters[i].started) pthread_join(p->starters[i].thread, NULL);
  free(p->starters);
  for (int i = 0; i < p->total; i++) {
    sq__jail_zygote_stop(&p->z[i]);
    sq__jail_slot_give(p->z[i].slot);
  }
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->freed);
  free(p);
}

/* A free zygote, of the kind asked for when one is free, else of the other;
 * waits while none is. Of those, the one idle longest: after each task a
 * zygote reaps it, checks its scratch and forks the next task's child,
 * which on a busy machine may still be under way when the next task comes
 * one round trip later; one task at a time then alternates between the
 * zygotes of its kind and finds a child ready (docs/jail-performance.md). */
static sq__jail_zygote *acquire(sq__jail_pool *p, bool lean) {
  pthread_mutex_lock(&p->lock);
  sq__jail_zygote *z = NULL;
  /* The first run that asks for a full one starts them (unless no run is to come). */
  bool start_full = !lean && !p->full_started && !p->one_run;
  if (start_full) p->full_started = true;
  /* While the full kind cannot start (full_down), none that is down is
   * taken: its start would fail again. */
  bool down = sq_now_mono_ms() < p->full_down_until_ms;
  if (down) lean = true;
  while (!z) {
    for (int pass = 0; pass < 2 && !z; pass++)
      for (int i = 0; i < p->total; i++)
        if (!p->z[i].busy && (pass == 1 || p->z[i].lean == lean) && !(down && !p->z[i].lean && p->z[i].init <= 0) &&
            (!z || p->z[i].taken < z->taken))
          z = &p->z[i];
    if (!z) pthread_cond_wait(&p->freed, &p->lock);
  }
  z->busy = true;
  z->taken = ++p->takes;
  z->look_early = ++p->running <= p->cores;
  pthread_mutex_unlock(&p->lock);
  if (start_full) start_range(p, 0, p->size);
  return z;
}

static void release(sq__jail_pool *p, sq__jail_zygote *z) {
  pthread_mutex_lock(&p->lock);
  z->busy = false;
  p->running--;
  pthread_cond_signal(&p->freed);
  pthread_mutex_unlock(&p->lock);
}

int sq__jail_pool_run(sq__jail_pool *p, const char *program, size_t len, const char *input, size_t input_len,
                      bool lean, const sq__jail_plan *plan, const sq_jail_run_opts *opts, const char *task_id,
                      sq_jail_outcome *o) {
  const sq__jail_common *c = sq__jail_common_of(p->jail);
  sq__jail_zygote *z = acquire(p, lean);
  int ret = 0, prog_fd = -1, in_fd = -1;
  char why[160] = "";
  if (len > SQ__ZYGOTE_INLINE_MAX && (prog_fd = sq__jail_program_memfd(program, len)) < 0) {
    snprintf(o->error, sizeof o->error, "memfd for a program of %zu bytes: %s", len, strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  if (input && (in_fd = sq__jail_input_memfd(input, input_len)) < 0) {
    snprintf(o->error, sizeof o->error, "memfd for an input of %zu bytes: %s", input_len, strerror(errno));
    ret = SQ_EJAIL;
    goto out;
  }
  /* A zygote that cannot take the task (a task before broke it in a way
   * only its child could see) is replaced, and the task tried once more. */
  for (int attempt = 0;; attempt++) {
    if ((ret = sq__jail_zygote_ready(c, z, task_id, o)) != 0 && !z->lean && p->size < p->total) {
      /* The full kind cannot start: a lean zygote runs it (full_down). */
      pthread_mutex_lock(&p->lock);
      full_down(p);
      pthread_mutex_unlock(&p->lock);
      release(p, z);
      z = acquire(p, true);
      o->error[0] = '\0';
      ret = sq__jail_zygote_ready(c, z, task_id, o);
    }
    if (ret != 0) break;
    ret = sq__jail_zygote_run(z, c->prelude != NULL, program, len, prog_fd, in_fd, plan, opts, o, why, sizeof why);
    if (ret != SQ__JAIL_ZYGOTE_TRY_AGAIN) break;
    sq_jail_mode mode = o->mode;
    sq_jail_outcome_clear(o);
    o->mode = mode;
    o->exit_code = -1;
    o->end = SQ_JAIL_SETUP_ERROR;
    if (attempt == 1) {
      snprintf(o->error, sizeof o->error, "warm pool: a fresh zygote could not take the task either: %s", why);
      ret = SQ_EJAIL;
      break;
    }
    SQ_LOGT(SQ_LOG_WARN, task_id, "warm pool: zygote of slot %d could not take the task (%s); replacing it",
            z->slot, why);
  }
out:
  if (prog_fd >= 0) close(prog_fd);
  if (in_fd >= 0) close(in_fd);
  release(p, z);
  return ret;
}
