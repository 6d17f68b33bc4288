/* pool.c: the jail runs on a bounded pool of threads (one per core by
 * default), so slow programs never stall the event loop. Finished jobs are
 * handed back through a list and a pipe the loop polls. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiled.h"
#include "errors.h"
#include "log.h"
#include "test_hooks.h"
#include "job.h"
#include "pool.h"

struct jail_pool {
  sq_jail *jail;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  job *todo_head, *todo_tail;
  int todo_n; /* jobs in todo: submitted, no thread has them yet */
  job **running; /* each thread's job (NULL: none), for sq__pool_each */
  job *done_head, *done_tail;
  bool stop;
  int wake[2];
  int n;
  pthread_t *threads;
};

static void push(job **head, job **tail, job *j) {
  j->next = NULL;
  if (*tail) (*tail)->next = j;
  else *head = j;
  *tail = j;
}

static job *pop(job **head, job **tail) {
  job *j = *head;
  if (j) {
    *head = j->next;
    if (!*head) *tail = NULL;
    j->next = NULL;
  }
  return j;
}

/* A pool thread's start: its pool and its slot in p->running. */
typedef struct {
  jail_pool *p;
  int slot;
} thread_arg;

static void *run(void *arg) {
  jail_pool *p = ((thread_arg *)arg)->p;
  int slot = ((thread_arg *)arg)->slot;
  free(arg);
  for (;;) {
    pthread_mutex_lock(&p->mu);
    while (!p->stop && !p->todo_head)
      pthread_cond_wait(&p->cv, &p->mu);
    job *j = p->stop ? NULL : pop(&p->todo_head, &p->todo_tail);
    if (j) p->todo_n--;
    p->running[slot] = j;
    pthread_mutex_unlock(&p->mu);
    if (!j) return NULL;
    if (atomic_load(&j->kill)) { /* stopped before it started: nothing runs */
      j->out = (sq_jail_outcome){.end = SQ_JAIL_SETUP_ERROR, .exit_code = -1};
      j->jail_rc = SQ_EINTERRUPTED;
    } else if (sq__test_jail_fails(j->task)) { /* a test hook: what a host failure looks like */
      j->out = (sq_jail_outcome){.end = SQ_JAIL_SETUP_ERROR, .exit_code = -1};
      snprintf(j->out.error, sizeof j->out.error, "test hook: a host failure");
      j->jail_rc = SQ_EJAIL;
    } else {
      j->jail_rc = sq_jail_run_task(j->jail ? j->jail : p->jail, j->program, strlen(j->program), j->listing, strlen(j->listing),
                                    j->input, j->input_len, &j->lim, &j->run_opts, j->r.id, &j->out);
    }
    pthread_mutex_lock(&p->mu);
    p->running[slot] = NULL;
    push(&p->done_head, &p->done_tail, j);
    pthread_mutex_unlock(&p->mu);
    char b = 1;
    while (write(p->wake[1], &b, 1) < 0 && errno == EINTR) {
    } /* EAGAIN: the pipe is full, the loop wakes anyway */
  }
}

int sq__pool_new(sq_jail *jail, int n_threads, jail_pool **out) {
  *out = NULL;
  if (n_threads <= 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    n_threads = cores > 0 ? (int)cores : 1;
  }
  jail_pool *p = calloc(1, sizeof *p);
  if (!p) return SQ_ENOMEM;
  p->jail = jail;
  p->wake[0] = p->wake[1] = -1;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->threads = calloc((size_t)n_threads, sizeof *p->threads);
  p->running = calloc((size_t)n_threads, sizeof *p->running);
  if (!p->threads || !p->running || pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    sq__pool_free(p);
    return SQ_ESYS;
  }
  for (int i = 0; i < n_threads; i++) {
    thread_arg *a = malloc(sizeof *a);
    if (a) *a = (thread_arg){.p = p, .slot = i};
    if (!a || pthread_create(&p->threads[i], NULL, run, a) != 0) {
      free(a);
      sq__pool_free(p);
      return SQ_ESYS;
    }
    p->n++;
  }
  SQ_INFO("jail pool: %d thread(s)", p->n);
  *out = p;
  return 0;
}

int sq__pool_fd(const jail_pool *p) { return p->wake[0]; }

void sq__pool_submit(jail_pool *p, job *j) {
  pthread_mutex_lock(&p->mu);
  push(&p->todo_head, &p->todo_tail, j);
  p->todo_n++;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

int sq__pool_waiting(jail_pool *p) {
  pthread_mutex_lock(&p->mu);
  int n = p->todo_n;
  pthread_mutex_unlock(&p->mu);
  return n;
}

void sq__pool_each(jail_pool *p, void (*fn)(job *j, void *ud), void *ud) {
  pthread_mutex_lock(&p->mu);
  for (job *j = p->todo_head; j; j = j->next) fn(j, ud);
  for (int i = 0; i < p->n; i++)
    if (p->running[i]) fn(p->running[i], ud);
  pthread_mutex_unlock(&p->mu);
}

job *sq__pool_take_all(jail_pool *p) {
  /* The wake-up bytes first, then the list: a job finished after the read
   * has written its byte after it, so the loop wakes again for it. One
   * read: bytes left over only wake the loop once more, for nothing. */
  char buf[256];
  if (read(p->wake[0], buf, sizeof buf) < 0) { /* EAGAIN: nothing finished since the last take */
  }
  pthread_mutex_lock(&p->mu);
  job *j = p->done_head;
  p->done_head = p->done_tail = NULL;
  pthread_mutex_unlock(&p->mu);
  return j;
}

void sq__pool_free(jail_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n; i++)
    pthread_join(p->threads[i], NULL);
  if (p->wake[0] >= 0) close(p->wake[0]);
  if (p->wake[1] >= 0) close(p->wake[1]);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  free(p->threads);
  free(p->running);
  free(p);
}

/* Compiles one source in the jail; on failure tasks carry its text. */
static void precompile(sq_jail *jail, sq_compiled_id id, const char *what) {
  const char *prog = sq_compiled_program();
  char *input = sq_compiled_input(id);
  sq_jail_limits lim = {.wall_ms = 10000, .cpu_ms = 5000, .memory_mib = 256, .output_kib = 1024};
  sq_jail_outcome o = {0};
  int rc = input ? sq_jail_run_task(jail, prog, strlen(prog), NULL, 0, input, strlen(input), &lim, NULL, "compile", &o)
                 : SQ_ENOMEM;
  if (rc == 0 && o.end == SQ_JAIL_EXITED_OK && !o.stdout_truncated)
    rc = sq_compiled_set(id, o.stdout_buf, o.stdout_len);
  else if (rc == 0)
    rc = SQ_EJAIL;
  if (rc) /* each task then compiles it itself: slower, the same verdicts */
    SQ_WARN("%s: could not compile it once in the jail (%s, ended %s): each task compiles it", what,
            sq_strerror(rc), sq_jail_end_name(o.end));
  sq_jail_outcome_clear(&o);
  free(input);
}

void sq__pool_precompile(sq_jail *jail) {
  precompile(jail, SQ_COMPILED_JUDGE, "judge.py");
  precompile(jail, SQ_COMPILED_WORKSPACE, "workspace.py");
}
