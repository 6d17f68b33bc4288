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
  char *key;   /* the tests text (calls: the reference program); NULL: a free slot */
  char *value; /* READY: the reference's output line (JSON text; calls: the packed records) */
  entry_state state;
  int runs;    /* reference runs that ended, failed ones included */
  char why[256]; /* FAILED: how the last run ended */
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

int sq__expected_prepare(job *j, const char *tests, char **out, char *why, size_t len) {
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
  if (x && (x->runs >= SQ__EXPECTED_TRIES || j->expected_tried)) { /* FAILED, and tried enough */
    snprintf(why, len, "the tests' expected values could not be computed (a problem of the tests, not the code): %s",
             x->why);
    return SQ__EXPECTED_FAILED;
  }
  if (x) x->state = PENDING; /* FAILED: tried again */
  else if (j->expected_tried || !(x = insert(c, tests))) return SQ__EXPECTED_READY; /* computed in the run */
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
  j->expected_calls = 0;
  SQ_LOGT(SQ_LOG_INFO, j->r.id, "expected values: running the reference once for these tests (%zu bytes)",
          strlen(tests));
  sq__job_submit(j);
  return SQ__EXPECTED_WAIT;
}

int sq__expected_calls(job *j, const sq_calls_plan *plan, sq_calls_results *ref, char *why, size_t len) {
  worker *w = j->w;
  if (!w->expected && !(w->expected = calloc(1, sizeof *w->expected))) return SQ_ENOMEM;
  sq__expected *c = w->expected;
  entry *x = find(c, plan->reference);
  if (x && x->state == READY) {
    int rc = sq_calls_results_unpack(x->value, plan->n_calls, ref);
    if (rc == SQ_EINVAL) snprintf(why, len, "the tests' reference values do not fit their calls");
    return rc == SQ_EINVAL ? SQ__EXPECTED_FAILED : rc ? rc : SQ__EXPECTED_READY;
  }
  if (x && x->state == PENDING) {
    j->next = x->waiters;
    x->waiters = j;
    return SQ__EXPECTED_WAIT;
  }
  if (x && (x->runs >= SQ__EXPECTED_TRIES || j->expected_tried)) {
    snprintf(why, len, "the tests' expected values could not be computed (a problem of the tests, not the code): %s",
             x->why);
    return SQ__EXPECTED_FAILED;
  }
  if (x) x->state = PENDING;
  else if (!(x = insert(c, plan->reference))) {
    snprintf(why, len, "the tests' expected values could not be computed: the worker's reference cache is busy");
    return SQ__EXPECTED_FAILED;
  }
  char *program = strdup(plan->reference);
  if (!program) {
    x->state = FAILED;
    snprintf(x->why, sizeof x->why, "out of memory");
    return SQ_ENOMEM;
  }
  j->expected_slot = (size_t)(x - c->e);
  j->expected_run = true;
  j->expected_tried = true;
  j->expected_calls = plan->n_calls;
  SQ_LOGT(SQ_LOG_INFO, j->r.id, "expected values: running the reference of %zu call(s) once (%zu bytes)",
          plan->n_calls, strlen(program));
  sq__job_run_reference(j, program);
  return SQ__EXPECTED_WAIT;
}

/* The calls judge's reference run: its records, packed; NULL (why said)
 * when it did not end well or missed a record. */
static char *calls_value_of(job *j, char *why, size_t len) {
  if (j->jail_rc) {
    snprintf(why, len, "%s", j->out.error[0] ? j->out.error : "the jail could not run it");
    return NULL;
  }
  return sq_calls_reference_take(&j->out, j->expected_calls, why, len);
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
  char why[sizeof x->why] = "";
  char *value = j->expected_calls ? calls_value_of(j, why, sizeof why) : value_of(j);
  j->expected_calls = 0;
  x->runs++;
  if (value && c->bytes + strlen(value) > SQ__EXPECTED_MAX_BYTES) { /* full: not kept, each run computes them */
    free(value);
    value = NULL;
  }
  x->value = value;
  x->state = value ? READY : FAILED;
  if (!value) snprintf(x->why, sizeof x->why, "%s", why[0] ? why : j->jail_rc ? j->out.error : sq_jail_end_name(j->out.end));
  c->bytes += value ? strlen(value) : 0;
  job *waiters = x->waiters;
  x->waiters = NULL;
  if (!value)
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "expected values: the reference run did not end well (%s), run %d of %d",
            x->why, x->runs, SQ__EXPECTED_TRIES);
  sq_jail_outcome_clear(&j->out);
  sq__job_exec_resume(j);
  while (waiters) {
    job *next = waiters->next;
    waiters->next = NULL;
    sq__job_exec_resume(waiters);
    waiters = next;
  }
}
