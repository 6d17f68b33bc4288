/* expected.c: evalplus's expected values, once per problem per worker
 * (expected.h): a small cache keyed by the exact tests text, the
 * reference run that fills it, and the jobs waiting for that run. */
#include "expected.h"

#include "jail.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "job.h"
#include "log.h"
#include "strmap.h"
#include "util.h"

typedef enum { PENDING, READY, FAILED } entry_state;

typedef struct {
  char *key;   /* the tests text; NULL: a free slot */
  char *value; /* READY: the reference's output line (JSON text) */
  entry_state state;
  job *waiters; /* PENDING: jobs to resume, through job->next */
} entry;

struct sq__expected {
  entry e[SQ__EXPECTED_MAX_ENTRIES];
  size_t next;  /* the slot a new entry takes (a ring: the oldest goes first) */
  size_t bytes; /* keys and values held */
  sq_strmap *map; /* key -> slot; rebuilt when a slot is reused (strmap has no removal) */
};

void sq__expected_free(sq__expected *c) {
  if (!c) return;
  for (size_t i = 0; i < SQ__EXPECTED_MAX_ENTRIES; i++) free(c->e[i].key), free(c->e[i].value);
  sq_strmap_free(c->map);
  free(c);
}

static size_t entry_bytes(const entry *x) {
  return (x->key ? strlen(x->key) : 0) + (x->value ? strlen(x->value) : 0);
}

static int rebuild_map(sq__expected *c) {
  sq_strmap *m = sq_strmap_new();
  for (size_t i = 0; m && i < SQ__EXPECTED_MAX_ENTRIES; i++)
    if (c->e[i].key && sq_strmap_add(m, c->e[i].key, i, NULL) != 0) sq_strmap_free(m), m = NULL;
  if (!m) return SQ_ENOMEM;
  sq_strmap_free(c->map);
  c->map = m;
  return 0;
}

/* A new PENDING entry for key in the oldest slot, or NULL when that slot's
 * run is still going (then nothing is cached) or out of memory. */
static entry *insert(sq__expected *c, const char *key) {
  entry *x = &c->e[c->next];
  if (x->key && x->state == PENDING) return NULL;
  c->bytes -= entry_bytes(x);
  free(x->key), free(x->value);
  *x = (entry){.key = strdup(key), .state = PENDING};
  if (!x->key || rebuild_map(c) != 0) {
    free(x->key);
    x->key = NULL;
    return NULL;
  }
  c->bytes += entry_bytes(x);
  c->next = (c->next + 1) % SQ__EXPECTED_MAX_ENTRIES;
  return x;
}

static entry *find(sq__expected *c, const char *key) {
  size_t i;
  return c->map && sq_strmap_get(c->map, key, &i) ? &c->e[i] : NULL;
}

/* tests with the reference's values appended as _SQ_EXPECTED. */
static char *with_values(const char *tests, const char *value) {
  cJSON *s = cJSON_CreateString(value);
  char *lit = s ? cJSON_PrintUnformatted(s) : NULL; /* a JSON string is a Python str literal */
  sq_buf b = {0};
  char *out = NULL;
  if (lit && sq_buf_appendf(&b, "%s\n_SQ_EXPECTED = %s\n", tests, lit) == 0) out = b.data;
  else sq_buf_clear(&b);
  free(lit);
  cJSON_Delete(s);
  return out;
}

int sq__expected_prepare(job *j, const char *tests, char **out) {
  *out = NULL;
  if (!tests || strncmp(tests, SQ__EXPECTED_MARK, strlen(SQ__EXPECTED_MARK)) != 0) return SQ__EXPECTED_READY;
  worker *w = j->w;
  if (!w->expected && !(w->expected = calloc(1, sizeof *w->expected))) return SQ_ENOMEM;
  sq__expected *c = w->expected;
  entry *x = find(c, tests);
  if (x && x->state == READY) return (*out = with_values(tests, x->value)) ? SQ__EXPECTED_READY : SQ_ENOMEM;
  if (x && x->state == PENDING) {
    j->next = x->waiters;
    x->waiters = j;
    return SQ__EXPECTED_WAIT;
  }
  if (x || j->expected_tried || !(x = insert(c, tests))) return SQ__EXPECTED_READY; /* computed in the run */
  /* The reference alone: the tests define _sq_dump, which prints each
   * input's value and CPU time on the last line of stdout. */
  sq_buf b = {0};
  if (sq_buf_appendf(&b, "%s\nimport sys as _sq_sys\n_sq_sys.stdout.write('\\n' + _sq_dump() + '\\n')\n", tests) != 0 ||
      !(j->listing = strdup(b.data))) {
    sq_buf_clear(&b);
    x->state = FAILED;
    return SQ_ENOMEM;
  }
  j->program = b.data;
  j->input_len = 0;
  j->expected_slot = (size_t)(x - c->e);
  j->expected_run = true;
  j->expected_tried = true;
  SQ_LOGT(SQ_LOG_INFO, j->r.id, "expected values: running the reference once for these tests (%zu bytes)",
          strlen(tests));
  sq__job_submit(j);
  return SQ__EXPECTED_WAIT;
}

/* The last non-empty line of the reference run's stdout, malloc'd; NULL
 * when the run did not end well. */
static char *value_of(const job *j) {
  const sq_jail_outcome *o = &j->out;
  if (j->jail_rc || o->end != SQ_JAIL_EXITED_OK || o->stdout_truncated || !o->stdout_buf) return NULL;
  size_t n = o->stdout_len;
  while (n && o->stdout_buf[n - 1] == '\n') n--;
  size_t start = n;
  while (start && o->stdout_buf[start - 1] != '\n') start--;
  return n > start ? strndup(o->stdout_buf + start, n - start) : NULL;
}

void sq__expected_done(job *j) {
  sq__expected *c = j->w->expected;
  j->expected_run = false;
  entry *x = &c->e[j->expected_slot]; /* a PENDING slot is never reused */
  char *value = value_of(j);
  if (value && c->bytes + strlen(value) > SQ__EXPECTED_MAX_BYTES) { /* full: not kept, each run computes them */
    free(value);
    value = NULL;
  }
  x->value = value;
  x->state = value ? READY : FAILED;
  c->bytes += value ? strlen(value) : 0;
  job *waiters = x->waiters;
  x->waiters = NULL;
  if (!value)
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "expected values: the reference run did not end well (%s): each run computes them",
            j->jail_rc ? j->out.error : sq_jail_end_name(j->out.end));
  sq_jail_outcome_clear(&j->out);
  sq__job_exec_resume(j);
  while (waiters) {
    job *next = waiters->next;
    waiters->next = NULL;
    sq__job_exec_resume(waiters);
    waiters = next;
  }
}
