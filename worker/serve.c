/* serve.c: the worker loop, the only place that knows every module:
 * claim, generate, check, execute, record. */
#include <bson/bson.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "config.h"
#include "errors.h"
#include "heartbeat.h"
#include "jail.h"
#include "llm.h"
#include "log.h"
#include "policy.h"
#include "queue.h"
#include "reply.h"
#include "result.h"
#include "task.h"
#include "test_hooks.h"
#include "util.h"
#include "verdict.h"

static volatile sig_atomic_t g_stop;

static void on_stop(int sig) {
  (void)sig;
  g_stop = 1;
}

typedef struct {
  sq_config cfg;
  sq_queue *queue;
  sq_jail *jail;
  sq_llm *llm; /* NULL when no provider is configured */
} worker;

/* What the loop learned about one task; owns its strings. */
typedef struct {
  sq_result r;
  sq_task *task;
  char *program;
  char raw_id[32];
  char reason[512];
  bool transient;  /* a failure worth another attempt (LLM transport, 5xx, 429) */
  sq_jail_outcome out;
  sq_llm_reply reply;
  sq_policy_report findings;
} job;

static void job_clear(job *j) {
  sq_task_free(j->task);
  free(j->program);
  sq_jail_outcome_clear(&j->out);
  sq_llm_reply_clear(&j->reply);
  memset(j, 0, sizeof *j);
}

/* An id for a payload too broken to carry one: FNV-1a of its bytes. */
static void raw_id(const char *p, size_t n, char *out, size_t outlen) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
  snprintf(out, outlen, "raw-%016llx", (unsigned long long)h);
}

/* Asks the LLM for the task's code. Returns 0 with *code malloc'd, or fills
 * j->reason and returns an SQ_E* code (the task becomes llm_error). */
static int generate(worker *w, job *j, char **code) {
  const sq_task *t = j->task;
  if (!w->llm) {
    snprintf(j->reason, sizeof j->reason,
             "task has a prompt and no code, and no LLM provider is configured "
             "(set SANDQ_LLM_BASE_URL and SANDQ_LLM_MODEL, or providers in the config file)");
    return SQ_ELLM;
  }
  int64_t t0 = sq_now_mono_ms();
  int rc = sq_llm_complete(w->llm, w->cfg.system_prompt, t->prompt, t->id, &j->reply);
  j->r.llm_ms = sq_now_mono_ms() - t0;
  j->r.llm = (sq_result_llm){.called = true,
                             .provider = j->reply.provider,
                             .model = j->reply.model,
                             .prompt_tokens = j->reply.prompt_tokens,
                             .completion_tokens = j->reply.completion_tokens,
                             .cost_usd = j->reply.cost_usd,
                             .usage_estimated = j->reply.usage_estimated};
  if (rc) {
    snprintf(j->reason, sizeof j->reason, "llm: %s", j->reply.error[0] ? j->reply.error : sq_strerror(rc));
    int st = j->reply.http_status;
    j->transient = rc == SQ_EHTTP || (rc == SQ_ELLM && (st == 429 || (st >= 500 && st <= 599)));
    return rc;
  }
  char err[256] = "";
  rc = sq_reply_extract_code(j->reply.content, code, err, sizeof err);
  if (rc) snprintf(j->reason, sizeof j->reason, "llm reply: %s", err);
  return rc;
}

/* Runs one claimed payload to a result in j->r. Returns 0, or SQ_EJAIL when
 * the jail itself failed (the task is not the culprit and is handed back). */
static int process(worker *w, const char *payload, size_t len, job *j) {
  int64_t t0 = sq_now_mono_ms();
  sq_result *r = &j->r;
  r->worker = w->cfg.worker_id;
  r->exit_code = -1;
  char err[256] = "";
  int rc = sq_task_parse(payload, len, (size_t)w->cfg.max_task_kib * 1024, &j->task, err, sizeof err);
  if (j->task) {
    r->id = j->task->id;
    r->batch = j->task->batch;
    r->metadata_json = j->task->metadata_json;
    if (j->task->enqueued_at_ms > 0) {
      int64_t q = sq_now_wall_ms() - j->task->enqueued_at_ms;
      r->queue_ms = q > 0 ? q : 0;
    }
  } else {
    raw_id(payload, len, j->raw_id, sizeof j->raw_id);
    r->id = j->raw_id;
    r->batch = "_invalid";
  }
  if (rc) {
    SQ_LOGT(SQ_LOG_WARN, r->id, "invalid task: %s", err);
    r->status = SQ_STATUS_INVALID_TASK;
    snprintf(j->reason, sizeof j->reason, "%s", err);
    r->reason = j->reason;
    goto done;
  }

  sq__test_hook_task(j->task);
  char *generated = NULL;
  const char *code = j->task->code;
  if (!code) {
    if (generate(w, j, &generated) != 0) {
      SQ_LOGT(SQ_LOG_WARN, r->id, "%s", j->reason);
      r->status = SQ_STATUS_LLM_ERROR;
      r->reason = j->reason;
      goto done;
    }
    code = generated;
  }
  rc = sq_task_program(j->task, code, &j->program);
  free(generated);
  if (rc) return rc;
  r->code = j->program;

  /* The static pre-check: findings are recorded; a blocking one skips the jail. */
  sq_policy_check(&w->cfg.policy, j->program, strlen(j->program), &j->findings);
  r->findings = &j->findings;
  if (j->findings.blocked) {
    sq_policy_reason(&w->cfg.policy, &j->findings, j->reason, sizeof j->reason);
    SQ_LOGT(SQ_LOG_INFO, r->id, "blocked: %s", j->reason);
    r->status = SQ_STATUS_BLOCKED;
    r->reason = j->reason;
    goto done;
  }

  if (sq__test_exec_noop()) {
    r->status = SQ_STATUS_OK;
    r->exit_code = 0;
    goto done;
  }
  sq_jail_limits lim = j->task->limits;
  sq_jail_limits_apply(&lim, &w->cfg.default_limits, &w->cfg.max_limits);
  int64_t e0 = sq_now_mono_ms();
  rc = sq_jail_run(w->jail, j->program, strlen(j->program), &lim, r->id, &j->out);
  r->exec_ms = sq_now_mono_ms() - e0;
  if (rc) {
    SQ_LOGT(SQ_LOG_ERROR, r->id, "jail setup failed: %s", j->out.error);
    return SQ_EJAIL;
  }
  const sq_jail_outcome *o = &j->out;
  r->status = sq_verdict_decide(o, j->task->tests || j->task->entry_point, j->task->expected_stdout);
  r->exit_code = o->exit_code;
  r->signal = o->signal;
  r->stdout_buf = o->stdout_buf;
  r->stdout_len = o->stdout_len;
  r->stdout_truncated = o->stdout_truncated;
  r->stderr_buf = o->stderr_buf;
  r->stderr_len = o->stderr_len;
  r->stderr_truncated = o->stderr_truncated;
  r->cpu_ms = o->cpu_ms;
  r->memory_kib = o->memory_kib;
  r->blocked_syscall = o->blocked_syscall;
  if (r->status == SQ_STATUS_POLICY_VIOLATION) {
    snprintf(j->reason, sizeof j->reason, "killed by the seccomp policy%s%s", o->blocked_syscall[0] ? ": " : "",
             o->blocked_syscall);
    r->reason = j->reason;
  }
done:
  r->total_ms = sq_now_mono_ms() - t0;
  r->finished_at_ms = sq_now_wall_ms();
  return 0;
}

/* Encodes j's result, stores it and acknowledges c in one step. Returns 0
 * (stored, or refused: a result existed, or the lease was lost and another
 * worker owns the task), SQ_EREDIS, SQ_EREDIS_CONN or SQ_EBSON. */
static int record(worker *w, job *j, const sq_claim *c) {
  bson_t doc = BSON_INITIALIZER;
  int rc = sq_result_to_bson(&j->r, &doc);
  if (rc == 0) {
    sq_completion done = {.claim = c, .batch = j->r.batch, .id = j->r.id, .status = sq_status_name(j->r.status),
                          .bson = bson_get_data(&doc), .bson_len = doc.len};
    rc = sq_queue_complete(w->queue, &done);
    if (rc == SQ_EEXISTS) {
      SQ_LOGT(SQ_LOG_WARN, j->r.id, "a result for this task already exists in batch %s; kept the first", j->r.batch);
      rc = 0;
    } else if (rc == SQ_EFENCED) {
      rc = 0; /* logged by the queue; the task's result comes from its new owner */
    } else if (rc == 0) {
      SQ_LOGT(SQ_LOG_INFO, j->r.id, "batch=%s status=%s total_ms=%lld", j->r.batch, sq_status_name(j->r.status),
              (long long)j->r.total_ms);
    }
  }
  bson_destroy(&doc);
  return rc;
}

/* A transient failure: schedule another attempt. Returns true when the task
 * is settled that way (retried, or no longer ours); false when attempts ran
 * out and j must be stored as it is. */
static bool retry_later(worker *w, job *j, const sq_claim *c) {
  int64_t delay_ms = 0;
  int rc = sq_queue_retry(w->queue, c, -1, j->reason, &delay_ms);
  if (rc == 0) {
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "transient failure, retrying in %lld ms: %s", (long long)delay_ms, j->reason);
    return true;
  }
  if (rc == SQ_EEXHAUSTED) {
    size_t n = strlen(j->reason);
    snprintf(j->reason + n, sizeof j->reason - n, " (after %lld attempts)", (long long)w->cfg.queue_opts.max_attempts);
    return false;
  }
  /* Fenced, or Redis trouble: the lease (or the reaper) settles it. */
  SQ_LOGT(SQ_LOG_WARN, j->r.id, "could not schedule a retry (%s); the lease will expire and requeue it",
          sq_strerror(rc));
  return true;
}

/* Reconnects after a Redis failure, with capped exponential backoff, until
 * connected, or asked to stop with no task in hand (with one, the heartbeat
 * thread's grace clock ends the wait). */
static int reconnect(worker *w, bool in_flight) {
  int64_t delay_ms = 100;
  sq_queue_free(w->queue);
  w->queue = NULL;
  for (;;) {
    if (sq_queue_new_opts(w->cfg.redis_url, w->cfg.queue, &w->cfg.queue_opts, &w->queue) == 0) {
      sq_queue_set_stop(w->queue, &g_stop);
      SQ_INFO("reconnected to redis");
      return 0;
    }
    if (g_stop && !in_flight) return SQ_EINTERRUPTED;
    usleep((useconds_t)delay_ms * 1000);
    delay_ms = delay_ms * 2 > 5000 ? 5000 : delay_ms * 2;
  }
}

static int loop(worker *w) {
  while (!g_stop) {
    if (!w->queue && reconnect(w, false) != 0) break;
    sq_claim c = {0};
    int rc = sq_queue_claim(w->queue, w->cfg.worker_id, (int)w->cfg.claim_timeout_ms, &c);
    if (rc == SQ_EEMPTY || rc == SQ_EINTERRUPTED) continue;
    if (rc) {
      SQ_WARN("claim failed: %s; reconnecting", sq_queue_errstr(w->queue));
      sq_queue_free(w->queue);
      w->queue = NULL;
      continue;
    }
    job j = {0};
    rc = process(w, c.payload, c.len, &j);
    if (rc == SQ_EJAIL) {
      /* Not the task's fault: hand it back and stop, so a healthy worker takes it. */
      sq_queue_release(w->queue, &c);
      job_clear(&j);
      sq_claim_clear(&c);
      return 1;
    }
    if (j.transient && retry_later(w, &j, &c)) {
      job_clear(&j);
      sq_claim_clear(&c);
      continue;
    }
    /* Until stored, the claim stays ours under its lease (kept alive by the
     * heartbeat thread), so a Redis outage here loses nothing. */
    while ((rc = record(w, &j, &c)) != 0) {
      SQ_LOGT(SQ_LOG_WARN, j.r.id, "storing the result failed (%s); retrying", sq_strerror(rc));
      if (reconnect(w, true) != 0) break;
    }
    job_clear(&j);
    sq_claim_clear(&c);
  }
  return 0;
}

static void usage(FILE *f) {
  fprintf(f, "usage: sandq-worker serve [--redis URL] [--queue NAME] [--config FILE] [--worker-id ID]\n"
             "                          [--log-level debug|info|warn|error]\n");
}

int sq_cmd_serve(int argc, char **argv) {
  static const struct option opts[] = {{"redis", required_argument, 0, 'r'},
                                       {"queue", required_argument, 0, 'q'},
                                       {"config", required_argument, 0, 'c'},
                                       {"worker-id", required_argument, 0, 'w'},
                                       {"log-level", required_argument, 0, 'l'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *config_path = NULL;
  struct flag {
    const char *key, *val;
  } flags[8];
  int n_flags = 0;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'r': flags[n_flags++] = (struct flag){"redis_url", optarg}; break;
    case 'q': flags[n_flags++] = (struct flag){"queue", optarg}; break;
    case 'w': flags[n_flags++] = (struct flag){"worker_id", optarg}; break;
    case 'l': flags[n_flags++] = (struct flag){"log_level", optarg}; break;
    case 'c': config_path = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "sandq-worker serve: unexpected argument '%s'\n", argv[optind]);
    usage(stderr);
    return 2;
  }

  worker w = {0};
  char err[512];
  sq_config_defaults(&w.cfg);
  int rc = config_path ? sq_config_load_file(&w.cfg, config_path, err, sizeof err) : 0;
  if (!rc) rc = sq_config_load_env(&w.cfg, err, sizeof err);
  for (int i = 0; !rc && i < n_flags; i++) {
    char inner[256];
    rc = sq_config_set(&w.cfg, flags[i].key, flags[i].val, inner, sizeof inner);
    if (rc) snprintf(err, sizeof err, "--%s", inner);
  }
  if (!rc) rc = sq_config_validate(&w.cfg, err, sizeof err);
  if (rc) {
    fprintf(stderr, "sandq-worker: config: %s\n", err);
    return 2;
  }
  sq_log_init("sandq-worker", w.cfg.log_level);

  struct sigaction sa = {0};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  int exit_code = 1;
  sq_heartbeat *hb = NULL;
  /* The jail (and a warm pool's zygotes) before the LLM client. */
  sq_jail_config jc = {.python_path = w.cfg.python_path, .scratch_root = w.cfg.scratch_root,
                       .mode = w.cfg.jail_mode, .pool_size = (int)w.cfg.jail_pool_size};
  if ((rc = sq_jail_new(&jc, &w.jail)) != 0) {
    SQ_ERROR("jail: %s (scratch_root %s)", sq_strerror(rc), w.cfg.scratch_root);
    goto out;
  }
  if (w.cfg.n_providers > 0 && (rc = sq_llm_new(w.cfg.providers, w.cfg.n_providers, &w.llm)) != 0) {
    SQ_ERROR("llm: %s", sq_strerror(rc));
    goto out;
  }
  if (!w.llm) SQ_WARN("no LLM provider configured: tasks without code will end as llm_error");
  sq__test_hooks_init();
  if (sq_queue_new_opts(w.cfg.redis_url, w.cfg.queue, &w.cfg.queue_opts, &w.queue) != 0) {
    SQ_WARN("redis at start-up unreachable; retrying with backoff");
    w.queue = NULL;
    if (reconnect(&w, false) != 0) goto out;
  }
  sq_queue_set_stop(w.queue, &g_stop);
  sq_queue_check_server(w.queue);
  size_t requeued = 0, dead = 0;
  if (sq_queue_recover(w.queue, w.cfg.worker_id, &requeued, &dead) == 0 && (requeued || dead))
    SQ_WARN("an earlier run of %s left %zu task(s): %zu requeued, %zu to the dead letter", w.cfg.worker_id,
            requeued + dead, requeued, dead);
  if (sq_heartbeat_start(&w.cfg, &g_stop, &hb) != 0) goto out;
  SQ_INFO("worker %s serving queue %s (lease %lld ms, heartbeat %lld ms)", w.cfg.worker_id, w.cfg.queue,
          (long long)w.cfg.queue_opts.lease_ms, (long long)w.cfg.heartbeat_ms);
  exit_code = loop(&w);
  SQ_INFO("worker %s stopping", w.cfg.worker_id);
out:
  sq_heartbeat_stop(hb);
  sq_queue_free(w.queue);
  sq_llm_free(w.llm);
  sq_jail_free(w.jail);
  return exit_code;
}
