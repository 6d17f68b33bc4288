/* expected.c: evalplus's expected values, once per problem per worker
 * (expected.h): a small cache keyed by the exact tests text, the
 * reference run that fills it, the jobs waiting for that run, and the
 * fleet's copy of the values in Redis. */
#include "expected.h"

#include "jail.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "best_effort.h"
#include "errors.h"
#include "job.h"
#include "language.h"
#include "log.h"
#include "strmap.h"
#include "utf8.h"
#include "util.h"

typedef enum { PENDING, READY, FAILED } entry_state;

typedef struct {
  char *key;   /* the tests text (calls: the reference program); NULL: a free slot */
  char *value; /* READY: the reference's output line (JSON text; calls: the packed records) */
  entry_state state;
  int runs;    /* reference runs that ended, failed ones included */
  char why[256]; /* FAILED: how the last run ended */
  job *waiters; /* PENDING: jobs to resume, through job->next */
  char sha[65]; /* the Redis entry's sha256 (hex); "": not shared */
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

/* ---- the fleet's values in Redis ---- */

/* The Redis entry's name for a key text: sha256 of "plus\n" + the tests
 * (calls: "calls <language>\n" + the reference program), so texts of two
 * judges never share an entry. "" when the job's reference run may see
 * more than the text (the task's files or fetches): not shared. */
static void shared_sha(const job *j, const char *kind, const char *text, char hex[65]) {
  hex[0] = '\0';
  if (j->task->n_files || j->task->n_fetch) return;
  unsigned char md[32];
  unsigned int n = 0;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && EVP_DigestUpdate(ctx, kind, strlen(kind)) &&
            EVP_DigestUpdate(ctx, "\n", 1) && EVP_DigestUpdate(ctx, text, strlen(text)) &&
            EVP_DigestFinal_ex(ctx, md, &n) && n == 32;
  EVP_MD_CTX_free(ctx);
  for (int i = 0; ok && i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static bool is_str(const cJSON *a, int i) { return cJSON_IsString(cJSON_GetArrayItem(a, i)); }

/* One value in the tests' tagged encoding (import_plus.c's _sq_enc). */
static bool encoding_ok(const cJSON *e) {
  int n = cJSON_GetArraySize(e);
  const cJSON *tag = cJSON_GetArrayItem(e, 0), *v = cJSON_GetArrayItem(e, 1), *x;
  if (!cJSON_IsArray(e) || !cJSON_IsString(tag)) return false;
  const char *k = tag->valuestring;
  if (strcmp(k, "None") == 0) return n == 1;
  if (strcmp(k, "bool") == 0) return n == 2 && cJSON_IsBool(v);
  if (strcmp(k, "str") == 0 || strcmp(k, "int") == 0 || strcmp(k, "float") == 0 || strcmp(k, "bytes") == 0)
    return n == 2 && is_str(e, 1);
  if (strcmp(k, "complex") == 0) return n == 3 && is_str(e, 1) && is_str(e, 2);
  bool seq = strcmp(k, "list") == 0 || strcmp(k, "tuple") == 0 || strcmp(k, "set") == 0 || strcmp(k, "frozenset") == 0;
  bool dict = strcmp(k, "dict") == 0;
  if (!(seq || dict) || n != 2 || !cJSON_IsArray(v)) return false;
  cJSON_ArrayForEach(x, v) {
    if (seq ? !encoding_ok(x)
            : !cJSON_IsArray(x) || cJSON_GetArraySize(x) != 2 || !encoding_ok(cJSON_GetArrayItem(x, 0)) ||
                  !encoding_ok(cJSON_GetArrayItem(x, 1)))
      return false;
  }
  return true;
}

/* Whether v (len bytes) is values the judge can take: UTF-8 without NUL
 * (they become Python source), and for the tests (n_calls 0) a JSON list
 * of [encoding, CPU seconds], for the calls judge n_calls records, each
 * once. */
static bool well_formed(const char *v, size_t len, size_t n_calls) {
  if (len == 0 || len > SQ__EXPECTED_REDIS_MAX_BYTES || !sq_utf8_clean(v, len)) return false;
  if (n_calls) {
    sq_calls_results r;
    int rc = sq_calls_results_unpack(v, n_calls, &r);
    sq_calls_results_clear(&r);
    return rc == 0;
  }
  cJSON *root = cJSON_ParseWithLength(v, len), *x;
  bool ok = cJSON_IsArray(root);
  const cJSON *list = ok ? root : NULL;
  cJSON_ArrayForEach(x, list) {
    const cJSON *t = cJSON_GetArrayItem(x, 1);
    if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) != 2 || !encoding_ok(cJSON_GetArrayItem(x, 0)) ||
        !cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0) {
      ok = false;
      break;
    }
  }
  cJSON_Delete(root);
  return ok;
}

/* The fleet's values under sha (malloc'd), or NULL: none, Redis out of
 * reach, or a damaged entry (ignored: shared_put replaces it). */
static char *shared_get(job *j, const char *sha, size_t n_calls) {
  sq_queue *q = sha[0] ? sq__best_effort_queue(j->w) : NULL;
  char *v = NULL;
  size_t len = 0;
  if (!q) return NULL;
  int rc = sq_queue_cache_get(q, SQ__EXPECTED_REDIS_NS, sha, &v, &len);
  if (rc != SQ_ENOTFOUND) sq__best_effort_done(j->w, rc, "reading the shared expected values");
  if (rc) return NULL;
  if (!well_formed(v, len, n_calls)) {
    SQ_LOGT(SQ_LOG_WARN, j->r.id,
            "expected values: the entry in Redis (sha256 %s, %zu bytes) is damaged: ignored, the reference runs", sha,
            len);
    free(v);
    return NULL;
  }
  SQ_LOGT(SQ_LOG_INFO, j->r.id, "expected values: from Redis (sha256 %s, %zu bytes), no reference run", sha, len);
  return v;
}

/* Offers value (this worker's run, well-formed) to the fleet: returns the
 * value to use, the one stored first (value, or another worker's; the
 * other is freed). A damaged entry is replaced by value. */
static char *shared_put(job *j, const char *sha, char *value, size_t n_calls) {
  sq_queue *q = sq__best_effort_queue(j->w);
  char *stored = NULL;
  size_t len = 0, n = strlen(value);
  if (!q) return value;
  int rc = sq_queue_cache_add(q, SQ__EXPECTED_REDIS_NS, sha, value, n, SQ__EXPECTED_REDIS_TTL_S, &stored, &len);
  if (sq__best_effort_done(j->w, rc, "storing the shared expected values")) return value;
  if (!stored) {
    SQ_LOGT(SQ_LOG_INFO, j->r.id, "expected values: stored in Redis (sha256 %s, %zu bytes)", sha, n);
  } else if (well_formed(stored, len, n_calls)) {
    SQ_LOGT(SQ_LOG_INFO, j->r.id, "expected values: another worker stored them first (sha256 %s): using its values",
            sha);
    free(value);
    return stored;
  } else {
    rc = sq_queue_cache_set(q, SQ__EXPECTED_REDIS_NS, sha, value, n, SQ__EXPECTED_REDIS_TTL_S);
    if (!sq__best_effort_done(j->w, rc, "replacing damaged shared expected values"))
      SQ_LOGT(SQ_LOG_INFO, j->r.id, "expected values: replaced the damaged entry in Redis (sha256 %s)", sha);
  }
  free(stored);
  return value;
}

/* Keeps value (taken) in x as READY, when the cache has room for it;
 * returns false when it was not kept (the caller still owns value). */
static bool keep(sq__expected *c, entry *x, char *value) {
  if (!x || c->bytes + strlen(value) > SQ__EXPECTED_MAX_BYTES) return false;
  free(x->value);
  x->value = value;
  x->state = READY;
  c->bytes += strlen(value);
  return true;
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

/* The fleet's values for key from Redis into the cache (x, or a new
 * entry; sha its Redis name), before this worker runs the reference:
 * returns them (borrowed from the entry, or malloc'd into *own when the
 * cache could not keep them), or NULL when Redis has none to give. */
static const char *from_fleet(job *j, entry **x, const char *key, const char *sha, size_t n_calls, char **own) {
  sq__expected *c = j->w->expected;
  *own = NULL;
  char *v = shared_get(j, sha, n_calls);
  if (!v) return NULL;
  if (!*x && (*x = insert(c, key))) snprintf((*x)->sha, sizeof (*x)->sha, "%s", sha);
  if (keep(c, *x, v)) return v;
  if (*x) { /* no room for the value: the next job reads Redis again */
    (*x)->state = FAILED;
    snprintf((*x)->why, sizeof (*x)->why, "the values do not fit the worker's cache");
  }
  return *own = v;
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
  char sha[65];
  shared_sha(j, "plus", tests, sha);
  if (!j->expected_tried) { /* the fleet's values, before a reference run of this worker's */
    char *own;
    const char *v = from_fleet(j, &x, tests, sha, 0, &own);
    if (v) {
      *out = with_values(tests, v);
      free(own);
      return *out ? SQ__EXPECTED_READY : SQ_ENOMEM;
    }
  }
  if (x && (x->runs >= SQ__EXPECTED_TRIES || j->expected_tried)) { /* FAILED, and tried enough */
    snprintf(why, len, "the tests' expected values could not be computed (a problem of the tests, not the code): %s",
             x->why);
    return SQ__EXPECTED_FAILED;
  }
  if (x) x->state = PENDING; /* FAILED: tried again */
  else if (j->expected_tried || !(x = insert(c, tests))) return SQ__EXPECTED_READY; /* computed in the run */
  snprintf(x->sha, sizeof x->sha, "%s", sha);
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
  char sha[65], kind[64];
  snprintf(kind, sizeof kind, "calls %s", sq_language_get(j->task->language)->name);
  shared_sha(j, kind, plan->reference, sha);
  if (!j->expected_tried) { /* the fleet's values (well-formed: they fit the calls) */
    char *own;
    const char *v = from_fleet(j, &x, plan->reference, sha, plan->n_calls, &own);
    if (v) {
      int rc = sq_calls_results_unpack(v, plan->n_calls, ref);
      free(own);
      return rc ? rc : SQ__EXPECTED_READY;
    }
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
  snprintf(x->sha, sizeof x->sha, "%s", sha);
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
  size_t n_calls = j->expected_calls;
  char *value = n_calls ? calls_value_of(j, why, sizeof why) : value_of(j);
  j->expected_calls = 0;
  x->runs++;
  if (value && x->sha[0] && well_formed(value, strlen(value), n_calls))
    value = shared_put(j, x->sha, value, n_calls); /* the first value stored is the fleet's */
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
