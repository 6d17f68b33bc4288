/* api_http.c: the HTTP side of `sandq-producer api` on libmicrohttpd: one
 * thread serves every connection; a /run_code request is read whole (up to
 * the size cap), turned into a task (api_sf.c), handed to the queue side
 * and its connection suspended until the queue side hands the answer back,
 * so no thread waits per request. A /submit is read into its /run_code
 * bodies (api_submit.c), whose jobs go to the queue side together and are
 * answered together. The bearer token, the size cap, an access-log line
 * per request and the server's own GET /metrics (every request counted on
 * this one thread, so the counters need no lock) are here. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "errors.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

#define IDLE_TIMEOUT_S 60 /* a connection reading a request or idle between requests */
#define DROP_MAX_BYTES                                                                                       \
  ((size_t)64 << 20) /* past the cap, a body is dropped up to this, then its connection closed */

/* The paths counted apart (anything else is "other": a bounded label set). */
static const char *const paths[] = {"/run_code",      "/submit",  "/v1/ping",
                                    "/list_datasets", "/metrics", "other"};
#define N_PATHS (sizeof paths / sizeof paths[0])
#define MAX_STATUS 600 /* HTTP statuses counted; 0: the connection closed before an answer */

/* The server's own figures, touched on the server's thread only. */
typedef struct {
  uint64_t requests[N_PATHS][MAX_STATUS];
  uint64_t bucket[N_PATHS][SQ_METRICS_N_BUCKETS]; /* per bucket, not cumulative */
  double sum_s[N_PATHS];
  uint64_t count[N_PATHS];
  double le_s[SQ_METRICS_N_BUCKETS]; /* the project's latency buckets' bounds */
} api_metrics;

struct sq__api_http {
  struct MHD_Daemon *d;
  int fd, port;
  sq__api_http_opts o;
  sq__api_server *s;
  uint64_t seq;    /* task ids, on the server's thread only */
  atomic_int live; /* requests not yet completed */
  api_metrics m;
};

/* One request, from its headers to its completion. */
typedef struct {
  int64_t start_ms, start_us;
  size_t path_i; /* into paths[] */
  char method[16], path[160], peer[64];
  sq_buf body;
  bool responded; /* a response is queued: the rest of the body is dropped */
  bool too_big;   /* the body ran past the cap: dropped as it comes */
  size_t dropped;
  bool job_out; /* the job is the queue side's (the connection is suspended) */
  sq__api_job job;
  int status;
  size_t reply_bytes;
  const char *outcome; /* static */
  /* a /submit: its runs' jobs, answered together */
  sq__api_eval *eval;
  sq__api_job *jobs;
  size_t n_jobs;
  sq__api_group group;
  bool group_out; /* the jobs are the queue side's (the connection is suspended) */
} req;

static int64_t mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void metrics_init(api_metrics *m) {
  for (int b = 0; b < SQ_METRICS_N_BUCKETS; b++)
    m->le_s[b] = strtod(sq_metrics_bucket_le(b), NULL); /* "+Inf" reads as infinity */
}

/* One request answered (status 0: never) after seconds. */
static void metrics_record(api_metrics *m, size_t path_i, int status, double seconds) {
  m->requests[path_i][status > 0 && status < MAX_STATUS ? status : 0]++;
  int b = 0;
  while (b < SQ_METRICS_N_BUCKETS - 1 && seconds > m->le_s[b])
    b++;
  m->bucket[path_i][b]++;
  m->sum_s[path_i] += seconds;
  m->count[path_i]++;
}

/* GET /metrics: Prometheus text (malloc'd; NULL: out of memory). */
static char *metrics_text(sq__api_http *h) {
  const api_metrics *m = &h->m;
  sq_buf b = {0};
  char labels[96], name[64];
  int rc = sq_metrics_text_header(&b, "sandq_api_requests_total", "counter",
                                  "HTTP requests answered by `sandq-producer api`, by path and status "
                                  "(code 0: the connection closed before an answer).");
  for (size_t p = 0; rc == 0 && p < N_PATHS; p++)
    for (int st = 0; rc == 0 && st < MAX_STATUS; st++) {
      if (!m->requests[p][st]) continue;
      snprintf(labels, sizeof labels, "path=\"%s\",code=\"%d\"", paths[p], st);
      rc = sq_metrics_text_sample(&b, "sandq_api_requests_total", labels, (double)m->requests[p][st]);
    }
  if (!rc)
    rc = sq_metrics_text_header(&b, "sandq_api_requests_in_flight", "gauge",
                                "Requests being read or waiting for their answer (this scrape not counted).");
  if (!rc) rc = sq_metrics_text_sample(&b, "sandq_api_requests_in_flight", NULL, atomic_load(&h->live) - 1);
  if (!rc)
    rc = sq_metrics_text_header(&b, "sandq_api_request_duration_seconds", "histogram",
                                "From a request's headers to its answer sent, by path.");
  for (size_t p = 0; rc == 0 && p < N_PATHS; p++) {
    if (!m->count[p]) continue;
    uint64_t cum = 0;
    for (int k = 0; rc == 0 && k < SQ_METRICS_N_BUCKETS; k++) {
      cum += m->bucket[p][k];
      snprintf(labels, sizeof labels, "path=\"%s\",le=\"%s\"", paths[p], sq_metrics_bucket_le(k));
      rc = sq_metrics_text_sample(&b, "sandq_api_request_duration_seconds_bucket", labels, (double)cum);
    }
    snprintf(labels, sizeof labels, "path=\"%s\"", paths[p]);
    snprintf(name, sizeof name, "sandq_api_request_duration_seconds_sum");
    if (!rc) rc = sq_metrics_text_sample(&b, name, labels, m->sum_s[p]);
    snprintf(name, sizeof name, "sandq_api_request_duration_seconds_count");
    if (!rc) rc = sq_metrics_text_sample(&b, name, labels, (double)m->count[p]);
  }
  if (rc) {
    sq_buf_clear(&b);
    return NULL;
  }
  return b.data;
}

static enum MHD_Result respond_as(struct MHD_Connection *c, req *r, int status, char *body, bool auth,
                                  const char *type) {
  if (!body) body = sq__api_detail("out of memory"), status = 500;
  size_t len = body ? strlen(body) : 0;
  struct MHD_Response *resp = MHD_create_response_from_buffer(
      len, body ? body : (void *)"", body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (!resp) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (auth) MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
  r->status = status;
  r->reply_bytes = len;
  r->responded = true;
  enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, resp);
  MHD_destroy_response(resp);
  return ok;
}

static enum MHD_Result respond(struct MHD_Connection *c, req *r, int status, char *body, bool auth) {
  return respond_as(c, r, status, body, auth, "application/json");
}

/* Whether the request carries "Authorization: Bearer <token>" (compared
 * in time independent of where it differs). */
static bool authorized(struct MHD_Connection *c, const char *token) {
  const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  if (!v || strncasecmp(v, "Bearer ", 7) != 0) return false;
  v += 7;
  size_t n = strlen(v), m = strlen(token);
  unsigned char diff = n != m;
  for (size_t i = 0; i < m; i++)
    diff |= (unsigned char)(token[i] ^ (i < n ? v[i] : 0));
  return diff == 0;
}

static void peer_of(struct MHD_Connection *c, char *buf, size_t n) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  snprintf(buf, n, "-");
  if (!ci || !ci->client_addr) return;
  const struct sockaddr *sa = ci->client_addr;
  if (sa->sa_family == AF_INET)
    inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)n);
  else if (sa->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)n);
}

/* POST /run_code, its body read: 422 or a SandboxError now, or the job to
 * the queue side and the connection suspended. */
static enum MHD_Result run_code(sq__api_http *h, struct MHD_Connection *c, req *r) {
  char *task = NULL, *reply = NULL;
  snprintf(r->job.id, sizeof r->job.id, "r%llu", (unsigned long long)++h->seq);
  int status = sq__api_run_code_task(r->body.data ? r->body.data : "", r->body.len, h->o.batch, r->job.id,
                                     sq_now_wall_ms(), h->o.max_task_bytes, &task, &r->job.run, &reply);
  sq_buf_clear(&r->body);
  if (!task) {
    r->outcome = status == 422 ? "invalid" : "SandboxError";
    return respond(c, r, status, reply, false);
  }
  r->job.payload = task;
  r->job.len = strlen(task);
  r->job.deadline_ms = sq_now_mono_ms() + r->job.run.budget_ms + h->o.slack_ms;
  r->job.conn = c;
  /* suspended before the queue side can hand it back */
  MHD_suspend_connection(c);
  r->job_out = true;
  if (sq__api_submit(h->s, &r->job) != 0) {
    r->job.http_status = 503;
    r->job.reply = sq__api_detail("too many requests in flight (--max-in-flight), or the server is stopping; "
                                  "try again");
    r->job.outcome = "busy";
    sq__api_job_done(&r->job);
  }
  return MHD_YES;
}

static enum MHD_Result submit_answer(struct MHD_Connection *c, req *r);

/* POST /submit, its body read: 400/422 now, or its runs' jobs to the queue
 * side together and the connection suspended until the last is answered. */
static enum MHD_Result submit(sq__api_http *h, struct MHD_Connection *c, req *r) {
  char *reply = NULL;
  int status = sq__api_eval_parse(r->body.data ? r->body.data : "", r->body.len, &r->eval, &reply);
  sq_buf_clear(&r->body);
  if (!r->eval) {
    r->outcome = status == 422 ? "invalid" : "refused";
    return respond(c, r, status, reply, false);
  }
  size_t n = sq__api_eval_runs(r->eval), queued = 0;
  sq__api_job **todo = calloc(n, sizeof *todo);
  if (!todo || !(r->jobs = calloc(n, sizeof *r->jobs))) {
    free(todo);
    return respond(c, r, 500, sq__api_detail("out of memory"), false);
  }
  r->n_jobs = n;
  int64_t now_ms = sq_now_mono_ms();
  for (size_t i = 0; i < n; i++) {
    sq__api_job *j = &r->jobs[i];
    const char *b = sq__api_eval_run_body(r->eval, i);
    char *task = NULL;
    snprintf(j->id, sizeof j->id, "r%llu", (unsigned long long)++h->seq);
    j->http_status = sq__api_run_code_task(b, strlen(b), h->o.batch, j->id, sq_now_wall_ms(),
                                           h->o.max_task_bytes, &task, &j->run, &j->reply);
    if (!task) continue; /* answered now: a SandboxError (or a 422) */
    j->payload = task;
    j->len = strlen(task);
    j->deadline_ms = now_ms + j->run.budget_ms + h->o.slack_ms;
    j->group = &r->group;
    todo[queued++] = j;
  }
  r->group.conn = c;
  atomic_store(&r->group.remaining, queued);
  r->group_out = true;
  if (queued) {
    MHD_suspend_connection(c); /* before the queue side can hand any back */
    if (sq__api_submit_many(h->s, todo, queued) != 0) {
      for (size_t i = 0; i < queued; i++) {
        todo[i]->http_status = 503;
        todo[i]->reply = sq__api_detail(
            queued > h->o.max_in_flight
                ? "more tests than requests may be in flight (--max-in-flight); send fewer at once"
                : "too many requests in flight (--max-in-flight), or the server is stopping; try again");
        todo[i]->outcome = "busy";
      }
      atomic_store(&r->group.remaining, 0);
      MHD_resume_connection(c);
    }
    free(todo);
    return MHD_YES;
  }
  free(todo);
  return submit_answer(c, r); /* every run answered already */
}

/* A /submit whose runs are all answered: the EvalResult, or the first run's
 * answer that is not 200 (503, 504, 422). */
static enum MHD_Result submit_answer(struct MHD_Connection *c, req *r) {
  r->group_out = false;
  for (size_t i = 0; i < r->n_jobs; i++) {
    sq__api_job *j = &r->jobs[i];
    if (j->http_status == 200) continue;
    r->outcome = j->outcome ? j->outcome : "invalid";
    char *reply = j->reply;
    j->reply = NULL;
    return respond(c, r, j->http_status, reply, false);
  }
  char **replies = calloc(r->n_jobs ? r->n_jobs : 1, sizeof *replies);
  if (!replies) return respond(c, r, 500, sq__api_detail("out of memory"), false);
  for (size_t i = 0; i < r->n_jobs; i++)
    replies[i] = r->jobs[i].reply;
  bool accepted = false;
  char *reply = sq__api_eval_reply(r->eval, replies, &accepted);
  free(replies);
  r->outcome = accepted ? "accepted" : "rejected";
  return respond(c, r, 200, reply, false);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_len,
                                  void **con_cls) {
  (void)version;
  sq__api_http *h = cls;
  req *r = *con_cls;
  if (!r) {
    if (!(r = calloc(1, sizeof *r))) return MHD_NO;
    *con_cls = r;
    atomic_fetch_add(&h->live, 1);
    r->start_ms = sq_now_mono_ms();
    snprintf(r->method, sizeof r->method, "%s", method);
    sq_log_escape(url, r->path, sizeof r->path);
    r->start_us = mono_us();
    r->path_i = N_PATHS - 1;
    for (size_t i = 0; i + 1 < N_PATHS; i++)
      if (strcmp(url, paths[i]) == 0) r->path_i = i;
    peer_of(c, r->peer, sizeof r->peer);
    bool ping = strcmp(url, "/v1/ping") == 0;
    if (h->o.token && !ping && !authorized(c, h->o.token))
      return respond(c, r, 401, sq__api_detail("Not authenticated"), true);
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > h->o.max_request_bytes) {
      char msg[128];
      snprintf(msg, sizeof msg, "request body larger than %zu bytes (--max-request-kib)",
               h->o.max_request_bytes);
      return respond(c, r, 413, sq__api_detail(msg), false);
    }
    return MHD_YES;
  }
  if (r->responded) { /* an early answer: what is left of the body is dropped */
    *upload_len = 0;
    return MHD_YES;
  }
  if (*upload_len) {
    /* a body without a length that runs past the cap: the rest is read
     * and dropped, for the 413 to reach the client, up to a bound */
    if (r->too_big || r->body.len + *upload_len > h->o.max_request_bytes) {
      r->too_big = true;
      r->dropped += *upload_len;
      sq_buf_clear(&r->body);
      *upload_len = 0;
      return r->dropped > DROP_MAX_BYTES ? MHD_NO : MHD_YES;
    }
    if (sq_buf_append(&r->body, upload, *upload_len) != 0) return MHD_NO;
    *upload_len = 0;
    return MHD_YES;
  }
  if (r->too_big) {
    char msg[128];
    snprintf(msg, sizeof msg, "request body larger than %zu bytes (--max-request-kib)",
             h->o.max_request_bytes);
    return respond(c, r, 413, sq__api_detail(msg), false);
  }
  if (r->group_out && atomic_load(&r->group.remaining) == 0) return submit_answer(c, r);
  if (r->job_out) { /* resumed: the queue side handed the answer back */
    r->job_out = false;
    r->outcome = r->job.outcome;
    char *reply = r->job.reply;
    r->job.reply = NULL;
    return respond(c, r, r->job.http_status, reply, false);
  }
  bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0, post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
  if (strcmp(url, "/v1/ping") == 0) {
    if (get) return respond(c, r, 200, strdup("\"pong\""), false);
  } else if (strcmp(url, "/list_datasets") == 0) {
    if (get) return respond(c, r, 200, strdup(sq__api_datasets_json()), false);
  } else if (strcmp(url, "/run_code") == 0) {
    if (post) return run_code(h, c, r);
  } else if (strcmp(url, "/submit") == 0) {
    if (post) return r->group_out ? MHD_YES : submit(h, c, r);
  } else if (strcmp(url, "/metrics") == 0) {
    if (get) return respond_as(c, r, 200, metrics_text(h), false, "text/plain; version=0.0.4; charset=utf-8");
  } else {
    return respond(c, r, 404, sq__api_detail("Not Found"), false);
  }
  return respond(c, r, 405, sq__api_detail("Method Not Allowed"), false);
}

/* The access-log line, and the request's memory. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  (void)c;
  sq__api_http *h = cls;
  req *r = *con_cls;
  if (!r) return;
  *con_cls = NULL;
  metrics_record(&h->m, r->path_i, r->responded ? r->status : 0, (double)(mono_us() - r->start_us) / 1e6);
  const sq_language *l = r->job.payload ? sq_language_get(r->job.run.language) : NULL;
  SQ_INFO("api: %s \"%s %s\" %d %zu %lld ms%s%s%s%s%s", r->peer, r->method, r->path,
          r->responded ? r->status : 0, r->reply_bytes, (long long)(sq_now_mono_ms() - r->start_ms),
          l ? " " : "", l ? l->name : "", r->outcome ? " " : "", r->outcome ? r->outcome : "",
          toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed early)");
  if (r->job_out || (r->group_out && atomic_load(&r->group.remaining) > 0))
    return; /* the queue side still holds it: only at a stop, which waits for it */
  free(r->job.payload);
  free(r->job.reply);
  for (size_t i = 0; i < r->n_jobs; i++)
    free(r->jobs[i].payload), free(r->jobs[i].reply);
  free(r->jobs);
  sq__api_eval_free(r->eval);
  sq_buf_clear(&r->body);
  free(r);
  atomic_fetch_sub(&h->live, 1);
}

void sq__api_job_done(sq__api_job *job) {
  if (!job->group)
    MHD_resume_connection(job->conn);
  else if (atomic_fetch_sub(&job->group->remaining, 1) == 1)
    MHD_resume_connection(job->group->conn);
}

int sq__api_http_start(const sq__api_http_opts *o, sq__api_server *s, sq__api_http **out, char *err,
                       size_t errlen) {
  char host[256];
  int port, rc;
  *out = NULL;
  if ((rc = sq_http_listen_parse(o->listen, host, sizeof host, &port, err, errlen))) return rc;
  sq__api_http *h = calloc(1, sizeof *h);
  if (!h) return sq_errf(err, errlen, SQ_ENOMEM, "out of memory");
  h->o = *o;
  h->s = s;
  metrics_init(&h->m);
  if ((h->fd = sq_http_listen_socket(o->listen, host, port, 512, err, errlen)) < 0) {
    rc = h->fd;
    free(h);
    return rc;
  }
  struct sockaddr_storage sa;
  socklen_t salen = sizeof sa;
  h->port = port;
  if (getsockname(h->fd, (struct sockaddr *)&sa, &salen) == 0)
    h->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                             : ((struct sockaddr_in *)&sa)->sin_port);
  h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME, 0, NULL,
                          NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_CONNECTION_TIMEOUT,
                          (unsigned int)IDLE_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
                          (unsigned int)o->max_connections, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                          MHD_OPTION_END);
  if (!h->d) {
    close(h->fd);
    free(h);
    return sq_errf(err, errlen, SQ_ESYS, "cannot serve on %s: libmicrohttpd did not start", o->listen);
  }
  *out = h;
  return 0;
}

int sq__api_http_port(const sq__api_http *h) { return h ? h->port : 0; }

void sq__api_http_quiesce(sq__api_http *h) {
  if (!h || h->fd < 0) return;
  MHD_socket fd = MHD_quiesce_daemon(h->d);
  if (fd != MHD_INVALID_SOCKET) close(fd);
  h->fd = -1;
}

void sq__api_http_stop(sq__api_http *h) {
  if (!h) return;
  sq__api_http_quiesce(h);
  /* the answers the queue side handed back go out first (up to 2 s) */
  for (int i = 0; i < 200 && atomic_load(&h->live) > 0; i++)
    usleep(10000);
  MHD_stop_daemon(h->d);
  free(h);
}
