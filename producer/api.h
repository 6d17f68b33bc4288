/* api.h: `sandq-producer api`, a SandboxFusion-compatible HTTP front on
 * the queue (docs/api.md). Three parts, private to the producer:
 *   api_sf.c   SandboxFusion's schemas: a /run_code body into a task, a
 *              result into its response, FastAPI's error shapes (pure);
 *   api_submit.c /submit with the problem inline (config.provided_data):
 *              a body into /run_code bodies, their answers into an
 *              EvalResult (pure);
 *   api_http.c the HTTP side on libmicrohttpd: one thread, suspended
 *              connections while their task runs, the bounds, the log;
 *   api_cmd.c  the command and the one Redis thread: pushes the tasks,
 *              polls the results for every request in flight, deadlines. */
#ifndef SQ_API_H
#define SQ_API_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "config.h"
#include "language.h"

/* What a /run_code request asked, beyond its task: how to read its result
 * back into SandboxFusion's shape. */
typedef struct {
  sq_language_id language;
  bool compiles;     /* the language has a compile step: compile_result is not null */
  bool stdin_case;   /* stdin went in as one case: the case's verdict is not the run's */
  int64_t budget_ms; /* compile_timeout + run_timeout: the deadline before its slack */
} sq__api_run;

/* Reads a /run_code body (len bytes) into a task for batch with id.
 * Returns 200 with *task (malloc'd JSON, NUL-terminated, checked by
 * sq_task_parse against max_task_bytes) and *run set; 422 with *reply
 * FastAPI's validation error (malloc'd JSON); or 200 with *reply a
 * SandboxError response (a language sandq does not run, a file name or
 * size the task format refuses). The caller frees *task and *reply. */
int sq__api_run_code_task(const char *body, size_t len, const char *batch, const char *id, int64_t now_ms,
                          size_t max_task_bytes, char **task, sq__api_run *run, char **reply);

/* The /run_code response (malloc'd JSON; NULL when out of memory) for a
 * stored result (BSON, len bytes) of a task made by sq__api_run_code_task;
 * *outcome gets its status (static: Success, Failed, SandboxError). */
char *sq__api_run_code_reply(const sq__api_run *run, const uint8_t *bson, size_t len, const char **outcome);

/* {"detail": detail} as FastAPI words its HTTPExceptions (malloc'd). */
char *sq__api_detail(const char *detail);

/* GET /list_datasets: the datasets `sandq-producer import` reads (static). */
const char *sq__api_datasets_json(void);

/* Parses a request body (len bytes) that must be one JSON object. Returns
 * it (the caller deletes it), or NULL with *reply FastAPI's 422 (malloc'd;
 * NULL when out of memory). */
cJSON *sq__api_parse_object(const char *body, size_t len, char **reply);
/* Appends one pydantic error to detail (a cJSON array): loc "body", then
 * the fields of path ("a.b": two), then index when >= 0; input is copied
 * (NULL: {}); ctx is taken (may be NULL). */
void sq__api_add_error(cJSON *detail, const char *type, const char *path, int index, const char *msg,
                       const cJSON *input, cJSON *ctx);
/* {"detail": detail} (taken), FastAPI's 422 body (malloc'd; NULL: out of memory). */
char *sq__api_validation_reply(cJSON *detail);
/* Whether name is one of SandboxFusion's language names. */
bool sq__api_language_known(const char *name);
/* The literal's expected text ('python', 'cpp', ... or 'racket') into buf. */
void sq__api_languages_expected(char *buf, size_t n);

/* ---- POST /submit (api_submit.c) ---- */

/* A /submit request read: the /run_code bodies it runs, and what its
 * answer needs (its id, the extracted code, the tests). Opaque. */
typedef struct sq__api_eval sq__api_eval;

/* Reads a SubmitRequest body whose config.provided_data holds the problem
 * (CommonOJDataset: stdin/stdout tests; AutoEvalDataset: a test program).
 * Returns 200 and *out, or 400 / 422 with *reply (malloc'd JSON, FastAPI's
 * shapes). Free *out with sq__api_eval_free (NULL: no-op). */
int sq__api_eval_parse(const char *body, size_t len, sq__api_eval **out, char **reply);
void sq__api_eval_free(sq__api_eval *e);
/* How many /run_code requests it makes, and the i-th one's body (JSON, owned by e). */
size_t sq__api_eval_runs(const sq__api_eval *e);
const char *sq__api_eval_run_body(const sq__api_eval *e, size_t i);
/* The EvalResult (malloc'd JSON; NULL: out of memory) from each run's
 * /run_code answer (replies[i], a RunCodeResponse). *accepted gets its verdict. */
char *sq__api_eval_reply(const sq__api_eval *e, char *const *replies, bool *accepted);

/* ---- the HTTP side (api_http.c) and the queue side (api_cmd.c) ---- */

typedef struct sq__api_job sq__api_job;
typedef struct sq__api_server sq__api_server;

/* Jobs answered together (a /submit's runs): the connection resumes once
 * the last one is handed back. */
typedef struct {
  atomic_size_t remaining;
  void *conn; /* the suspended connection (MHD) */
} sq__api_group;

/* One /run_code request handed to the queue side. The HTTP side fills
 * payload, id, run and deadline_ms, and owns the job again once
 * sq__api_job_done hands it back. */
struct sq__api_job {
  char id[48];
  char *payload; /* the task JSON; freed by the HTTP side */
  size_t len;
  sq__api_run run;
  int64_t deadline_ms;  /* monotonic clock: 504 at this moment */
  int64_t pushed_ms;    /* set by the queue side */
  int state;            /* the queue side's (api_cmd.c): its index among the pending jobs */
  int http_status;      /* the answer, set by the queue side */
  char *reply;          /* malloc'd JSON */
  const char *outcome;  /* static: Success, Failed, SandboxError, ... for the log */
  void *conn;           /* the suspended connection (MHD); NULL for a group's job */
  sq__api_group *group; /* NULL: a job of its own */
};

/* The queue side's entry points for the HTTP side. Submit returns 0 (the
 * job is the queue side's until sq__api_job_done), or 503 when the cap on
 * requests in flight is reached or the server is stopping. */
int sq__api_submit(sq__api_server *s, sq__api_job *job);
/* The same for n jobs at once: all are taken, or none (503). */
int sq__api_submit_many(sq__api_server *s, sq__api_job *const *jobs, size_t n);
/* The queue side hands a job back (reply set): resumes its connection. */
void sq__api_job_done(sq__api_job *job);

typedef struct {
  const char *listen; /* HOST:PORT */
  const char *token;  /* NULL: no bearer token asked */
  size_t max_request_bytes;
  size_t max_task_bytes;
  size_t max_connections;
  size_t max_in_flight; /* the queue side's cap, for messages */
  int64_t slack_ms;     /* a /run_code's deadline: its compile and run timeouts plus this */
  const char *batch;    /* the batch every task of this server goes into */
} sq__api_http_opts;

typedef struct sq__api_http sq__api_http;

/* Binds o->listen and serves from a thread of its own, handing /run_code
 * jobs to s. Returns 0 and *out, or SQ_EINVAL / SQ_EEXISTS / SQ_ESYS with
 * err saying why. o's strings must outlive the server. */
int sq__api_http_start(const sq__api_http_opts *o, sq__api_server *s, sq__api_http **out, char *err,
                       size_t errlen);
/* The port bound. */
int sq__api_http_port(const sq__api_http *h);
/* Stops accepting connections (the answers in flight still go out). */
void sq__api_http_quiesce(sq__api_http *h);
/* Stops and frees, once no job is with the queue side; NULL: no-op. */
void sq__api_http_stop(sq__api_http *h);

/* `sandq-producer api [--listen HOST:PORT] ...`: returns an SQ_EXIT_* code. */
int sq__api_run_cmd(const sq_config *cfg, const sq_cli *cli);

#endif
