/* llm_multi.c: the event loop of the LLM client: requests go on the wire
 * through libcurl's multi interface, each provider holding at most
 * max_in_flight of them (the rest wait in its FIFO); finished exchanges are
 * judged, retried after a backoff, or handed to their callback.
 *
 * The multi runs on its socket interface: curl names the sockets it wants
 * watched (an epoll set) and when its timer is due, and each poll acts on
 * the sockets that are ready. curl_multi_poll + curl_multi_perform would
 * walk every transfer on every wake-up: with a thousand requests in flight
 * and a wake-up per finished jail run, that walk was most of the worker's
 * own CPU per task. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "errors.h"
#include "llm_internal.h"

static void call_free(sq__llm_call *x) {
  sq_llm *c = x->c;
  if (x->all_prev) x->all_prev->all_next = x->all_next;
  else c->all = x->all_next;
  if (x->all_next) x->all_next->all_prev = x->all_prev;
  if (x->easy) curl_multi_remove_handle(c->multi, x->easy);
  sq__llm_unprepare(x);
  sq_buf_clear(&x->resp);
  sq_llm_reply_clear(&x->reply);
  free(x->system);
  free(x->user);
  free(x->task_id);
  free(x->model);
  free(x);
}

/* Hands the call to its callback and frees it. */
static void finish(sq__llm_call *x, int rc) {
  sq_llm *c = x->c;
  sq_llm_reply *r = &x->reply;
  if (rc == 0 && x->prov >= 0) {
    const sq_llm_provider *p = &c->prov[x->prov].cfg;
    r->error[0] = '\0';
    r->cost_usd = (double)r->prompt_tokens * p->price_in_usd_per_mtok / 1e6 +
                  (double)r->completion_tokens * p->price_out_usd_per_mtok / 1e6;
  } else {
    free(r->content);
    r->content = NULL;
    r->cost_usd = 0;
    sq__llm_redact(r->error, x->key);
  }
  r->latency_ms = sq_now_mono_ms() - x->t0_ms;
  c->outstanding--;
  x->fn(r, rc, x->ud);
  call_free(x);
}

/* Weighted random choice among providers whose breaker lets a request
 * through; -1 when none does. */
static int pick_provider(sq_llm *c, int64_t now_ms) {
  int64_t total = 0;
  for (int i = 0; i < c->n; i++)
    if (c->prov[i].weight > 0 && sq__breaker_available(&c->prov[i].br, now_ms)) total += c->prov[i].weight;
  if (total == 0) return -1;
  int64_t r = (int64_t)(sq__llm_rand(c) % (uint64_t)total);
  for (int i = 0; i < c->n; i++) {
    if (c->prov[i].weight <= 0 || !sq__breaker_available(&c->prov[i].br, now_ms)) continue;
    if (r < c->prov[i].weight) return i;
    r -= c->prov[i].weight;
  }
  return -1; /* unreachable */
}

static void start(sq__llm_call *x) {
  sq__llm_prov *p = &x->c->prov[x->prov];
  int rc = sq__llm_prepare(x);
  if (rc == 0 && curl_multi_add_handle(x->c->multi, x->easy) != CURLM_OK) rc = SQ_EHTTP;
  if (rc) {
    snprintf(x->reply.error, sizeof x->reply.error, "cannot start a request to provider '%s': %s", p->cfg.name,
             sq_strerror(rc));
    x->reply.transient = sq__llm_start_failure_transient(rc);
    finish(x, rc);
    return;
  }
  x->attempt_t0_ms = sq_now_mono_ms();
  p->active++;
}

/* Chooses a provider for the call's next attempt and starts it, or queues
 * it behind the provider's max_in_flight. */
static void route(sq__llm_call *x) {
  sq_llm *c = x->c;
  int64_t now = sq_now_mono_ms();
  int i = pick_provider(c, now);
  if (i < 0) {
    snprintf(x->reply.error, sizeof x->reply.error,
             "every provider's circuit breaker is open (too many recent failures)%s",
             x->attempt ? "; gave up retrying" : "");
    x->reply.transient = true; /* a breaker closes again after open_ms */
    x->reply.outage = true;
    finish(x, SQ_ELLM);
    return;
  }
  sq__llm_prov *p = &c->prov[i];
  sq__breaker_acquire(&p->br, now);
  x->prov = i;
  snprintf(x->reply.provider, sizeof x->reply.provider, "%s", p->cfg.name);
  snprintf(x->reply.model, sizeof x->reply.model, "%s", x->model ? x->model : p->cfg.model);
  if (p->active < p->cfg.max_in_flight) {
    start(x);
    return;
  }
  x->next = NULL;
  if (p->pend_tail) p->pend_tail->next = x;
  else p->pend_head = x;
  p->pend_tail = x;
}

int sq_llm_submit(sq_llm *c, const sq_llm_request *req, sq_llm_done_fn fn, void *ud) {
  if (!c || !req || !req->user || !fn) return SQ_EINVAL;
  sq__llm_call *x = calloc(1, sizeof *x);
  if (!x) return SQ_ENOMEM;
  x->c = c;
  x->all_next = c->all;
  if (c->all) c->all->all_prev = x;
  c->all = x;
  x->prov = -1;
  x->fn = fn;
  x->ud = ud;
  x->t0_ms = sq_now_mono_ms();
  x->user = strdup(req->user);
  x->system = sq_strdup(req->system);
  x->task_id = sq_strdup(req->task_id);
  x->model = req->model && req->model[0] ? strdup(req->model) : NULL;
  x->temperature = req->temperature > 0 ? req->temperature : 0;
  if (!x->user || (req->system && !x->system) || (req->task_id && !x->task_id) ||
      (req->model && req->model[0] && !x->model)) {
    call_free(x);
    return SQ_ENOMEM;
  }
  c->outstanding++;
  route(x);
  return 0;
}

/* Starts the queued calls of provider i while it has free slots. */
static void drain_pending(sq_llm *c, int i) {
  sq__llm_prov *p = &c->prov[i];
  while (p->pend_head && p->active < p->cfg.max_in_flight) {
    sq__llm_call *x = p->pend_head;
    p->pend_head = x->next;
    if (!p->pend_head) p->pend_tail = NULL;
    x->next = NULL;
    start(x);
  }
}

/* How an exchange ended, for the observer; rc is sq__llm_judge's. */
static sq_llm_outcome outcome_of(CURLcode crc, long status, bool too_big, int rc) {
  if (too_big) return SQ_LLM_OUTCOME_BAD_REPLY;
  if (crc != CURLE_OK) return SQ_LLM_OUTCOME_TRANSPORT;
  if (status == 429) return SQ_LLM_OUTCOME_HTTP_429;
  if (status >= 500) return SQ_LLM_OUTCOME_HTTP_5XX;
  if (status < 200 || status > 299) return SQ_LLM_OUTCOME_HTTP_4XX;
  return rc == 0 ? SQ_LLM_OUTCOME_OK : SQ_LLM_OUTCOME_BAD_REPLY;
}

/* One exchange ended: judge it, then retry, or finish. */
static void on_done(sq_llm *c, CURL *easy, CURLcode crc) {
  sq__llm_call *x = NULL;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  curl_multi_remove_handle(c->multi, easy);
  int i = x->prov;
  sq__llm_prov *p = &c->prov[i];
  p->active--;
  x->attempt++;
  int64_t now = sq_now_mono_ms();
  sq__breaker_record(&p->br, now, sq__llm_provider_failure(crc, status));
  int rc = sq__llm_judge(x, crc, status);
  x->reply.transient = rc != 0 && sq__llm_transient(crc, status, x->too_big);
  x->reply.outage = x->reply.transient && sq__llm_provider_failure(crc, status);
  if (c->observe) c->observe(p->cfg.name, outcome_of(crc, status, x->too_big, rc), now - x->attempt_t0_ms, c->observe_ud);
  int64_t retry_after = x->retry_after_ms;
  sq__llm_unprepare(x);
  sq_buf_clear(&x->resp);
  if (rc == 1) {
    int64_t delay = sq__llm_backoff_ms(&c->opt, x->attempt - 1, retry_after, sq__llm_rand(c));
    if (c->on_retry) {
      sq_llm_retry_note note = {.task_id = x->task_id, .provider = p->cfg.name, .error = x->reply.error,
                                .attempt = x->attempt, .max_retries = p->cfg.max_retries, .delay_ms = delay};
      c->on_retry(&note, c->on_retry_ud);
    }
    x->due_ms = now + delay;
    x->next = c->waiting;
    c->waiting = x;
  } else {
    finish(x, rc);
  }
  drain_pending(c, i);
}

/* Routes every retry whose time has come. */
static void fire_due(sq_llm *c) {
  int64_t now = sq_now_mono_ms();
  sq__llm_call **pp = &c->waiting, *due = NULL;
  while (*pp) {
    sq__llm_call *x = *pp;
    if (x->due_ms <= now) {
      *pp = x->next;
      x->next = due;
      due = x;
    } else {
      pp = &x->next;
    }
  }
  while (due) {
    sq__llm_call *x = due;
    due = x->next;
    x->next = NULL;
    x->reply.error[0] = '\0';
    route(x);
  }
}

/* CURLMOPT_SOCKETFUNCTION: keeps the epoll set as curl wants it. A failed
 * epoll_ctl leaves that socket unwatched; its transfer then ends by its
 * own timeout, the error it would get from a dead socket anyway. */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
  (void)easy;
  (void)socketp;
  sq_llm *c = userp;
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(c->epfd, EPOLL_CTL_DEL, s, NULL); /* ENOENT/EBADF: already gone */
    return 0;
  }
  struct epoll_event ev = {.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0),
                           .data.fd = s};
  if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, s, &ev) != 0 && errno == ENOENT) epoll_ctl(c->epfd, EPOLL_CTL_ADD, s, &ev);
  return 0;
}

/* CURLMOPT_TIMERFUNCTION: when curl's own timeouts (connect, transfer,
 * a new handle's start) want sq_llm_poll to run them. */
static int on_timer(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  sq_llm *c = userp;
  c->timer_due_ms = timeout_ms < 0 ? -1 : sq_now_mono_ms() + timeout_ms;
  return 0;
}

int sq__llm_multi_init(sq_llm *c) {
  c->timer_due_ms = -1;
  if (!(c->multi = curl_multi_init())) return SQ_ENOMEM;
  if ((c->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) return SQ_ESYS;
  curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
  curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_timer);
  curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
  return 0;
}

/* Hands curl the ready sockets (up to a batch; the next poll takes the
 * rest) and, when due, its timer. */
static CURLMcode act(sq_llm *c) {
  struct epoll_event ev[256];
  int running = 0, n = epoll_wait(c->epfd, ev, (int)(sizeof ev / sizeof ev[0]), 0);
  CURLMcode mc = CURLM_OK;
  for (int i = 0; i < n && mc == CURLM_OK; i++) {
    int flags = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) | (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                (ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
    mc = curl_multi_socket_action(c->multi, ev[i].data.fd, flags, &running);
  }
  if (mc == CURLM_OK && c->timer_due_ms >= 0 && c->timer_due_ms <= sq_now_mono_ms()) {
    c->timer_due_ms = -1; /* on_timer may set the next one */
    mc = curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  }
  return mc;
}

int sq_llm_poll(sq_llm *c, int timeout_ms, int wake_fd) {
  int64_t now = sq_now_mono_ms(), next = INT64_MAX;
  for (sq__llm_call *x = c->waiting; x; x = x->next)
    if (x->due_ms < next) next = x->due_ms;
  if (c->timer_due_ms >= 0 && c->timer_due_ms < next) next = c->timer_due_ms;
  if (next != INT64_MAX) {
    int64_t wait = next - now;
    if (wait < 0) wait = 0;
    if (wait < timeout_ms) timeout_ms = (int)wait;
  }
  if (timeout_ms < 0) timeout_ms = 0;
  struct pollfd p[2] = {{.fd = c->epfd, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
  if (poll(p, wake_fd >= 0 ? 2 : 1, timeout_ms) < 0 && errno != EINTR) {
    snprintf(c->errstr, sizeof c->errstr, "poll: %s", strerror(errno));
    return SQ_EHTTP;
  }
  CURLMcode mc = act(c);
  if (mc != CURLM_OK) {
    snprintf(c->errstr, sizeof c->errstr, "curl multi: %s", curl_multi_strerror(mc));
    return SQ_EHTTP;
  }
  CURLMsg *m;
  int left;
  while ((m = curl_multi_info_read(c->multi, &left)) != NULL)
    if (m->msg == CURLMSG_DONE) on_done(c, m->easy_handle, m->data.result);
  fire_due(c);
  return 0;
}

void sq_llm_set_retry_observer(sq_llm *c, sq_llm_retry_fn fn, void *ud) {
  c->on_retry = fn;
  c->on_retry_ud = ud;
}

const char *sq_llm_errstr(const sq_llm *c) {
  if (!c) return "no LLM client";
  return c->errstr[0] ? c->errstr : "no error";
}

void sq_llm_set_observer(sq_llm *c, sq_llm_exchange_fn fn, void *ud) {
  c->observe = fn;
  c->observe_ud = ud;
}

int sq_llm_set_weight(sq_llm *c, const char *name, int weight) {
  if (weight < 0) return SQ_EINVAL;
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->prov[i].cfg.name, name) == 0) {
      c->prov[i].weight = weight;
      return 0;
    }
  return SQ_ENOTFOUND;
}

void sq_llm_reset_weights(sq_llm *c) {
  for (int i = 0; i < c->n; i++) c->prov[i].weight = c->prov[i].cfg.weight;
}

int sq_llm_n_providers(const sq_llm *c) { return c ? c->n : 0; }

const char *sq_llm_provider_name(const sq_llm *c, int i) {
  return c && i >= 0 && i < c->n ? c->prov[i].cfg.name : NULL;
}

int sq_llm_outstanding(const sq_llm *c) { return c ? c->outstanding : 0; }

void sq_llm_free(sq_llm *c) {
  if (!c) return;
  while (c->all) /* abandoned without their callbacks */
    call_free(c->all);
  if (c->multi) curl_multi_cleanup(c->multi); /* its sockets leave the epoll set first */
  if (c->epfd >= 0) close(c->epfd);
  free(c->prov);
  free(c);
}

/* ---- the blocking wrapper ---- */

typedef struct {
  bool done;
  int rc;
  sq_llm_reply *out;
} sync_call;

static void on_sync_done(sq_llm_reply *r, int rc, void *ud) {
  sync_call *s = ud;
  *s->out = *r;
  r->content = NULL; /* moved */
  s->rc = rc;
  s->done = true;
}

int sq_llm_complete(sq_llm *c, const char *system, const char *user, const char *task_id, sq_llm_reply *out) {
  if (!out) return SQ_EINVAL;
  memset(out, 0, sizeof *out);
  if (!c || !user) {
    snprintf(out->error, sizeof out->error, "no client or no prompt");
    return SQ_EINVAL;
  }
  sync_call s = {.out = out};
  sq_llm_request req = {.system = system, .user = user, .task_id = task_id};
  int rc = sq_llm_submit(c, &req, on_sync_done, &s);
  if (rc) {
    snprintf(out->error, sizeof out->error, "%s", sq_strerror(rc));
    return rc;
  }
  while (!s.done)
    if ((rc = sq_llm_poll(c, 1000, -1)) != 0) return rc;
  return s.rc;
}
