/* serve.c: `sandq-worker serve`: configuration, set-up and tear-down of
 * the worker; the event loop is loop.c, one task's way is job.c. */
#include <bson/bson.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "config.h"
#include "errors.h"
#include "compiled.h"
#include "http.h"
#include "jail.h"
#include "harness.h"
#include "workspace.h"
#include "llm.h"
#include "log.h"
#include "extract.h"
#include "result.h"
#include "task.h"
#include "util.h"
#include "test_hooks.h"
#include "verdict.h"
#include "audit_log.h"
#include "compile_cache.h"
#include "judge_plans.h"
#include "best_effort.h"
#include "budget_cache.h"
#include "expected.h"
#include "endpoint.h"
#include "heartbeat.h"
#include "housekeeping.h"
#include "loop.h"
#include "metrics.h"
#include "pool.h"
#include "profiles.h"
#include "redis_link.h"
#include "risk.h"
#include "worker.h"

#define SQ__WORKER_MIN_MIB 64 /* the worker, a warm zygote and a small run */

static void on_stop(int sig) {
  (void)sig;
  if (sq__worker_stop < 2) sq__worker_stop++; /* once: finish what is in flight; twice: now */
}

/* The queue library's notices (a reconnect, reloaded functions): it logs
 * nothing itself. */
static void queue_notice(const char *text, void *ud) {
  (void)ud;
  SQ_WARN("%s", text);
}

/* The LLM client's retries, decided while no caller waits: it logs nothing itself. */
static void llm_retry_note(const sq_llm_retry_note *n, void *ud) {
  (void)ud;
  SQ_LOGT(SQ_LOG_WARN, n->task_id, "%s; retry %d/%d in %lld ms", n->error, n->attempt, n->max_retries,
          (long long)n->delay_ms);
}

/* serve's flags: one line each; a flag with a config key is applied over
 * the file and the environment, in command-line order (cli.h). */
static const sq_cli_flag serve_flags[] = {
    {"redis", "URL", "redis_url",
     "redis://[user:password@]host[:port][/db], unix:///path, redis-sentinel://HOST:PORT[,...]/MASTER or "
     "redis-cluster://HOST:PORT[,...] (SANDQ_REDIS_URL)"},
    {"queue", "NAME", "queue", "queue name (SANDQ_QUEUE, default \"default\")"},
    {"config", "FILE", NULL, "JSON configuration file"},
    {"worker-id", "ID", "worker_id", "a stable id lets a restarted worker hand back what it held (SANDQ_WORKER_ID)"},
    {"log-level", "LEVEL", "log_level", "debug, info, warn or error (SANDQ_LOG_LEVEL)"},
    {"metrics-listen", "HOST:PORT", "metrics_listen",
     "serve GET /metrics and /healthz there (SANDQ_METRICS_LISTEN; loopback unless told otherwise)"},
    {"compile-cache-mib", "MIB", "compile_cache_mib",
     "compiled languages' builds kept in memory, so the same program is compiled once (SANDQ_COMPILE_CACHE_MIB, "
     "default 64; 0: none)"},
    {NULL, NULL, NULL, NULL},
};

/* Probes the toolchains (before any thread) and says which languages this
 * worker runs; a task in another one ends invalid_task naming these. */
static void say_languages(void) {
  char names[256];
  int n = sq_language_probe();
  sq_language_found_names(names, sizeof names);
  SQ_INFO("languages: %d of %d found: %s", n, (int)SQ_LANGUAGE__COUNT, names);
}

static int serve(const sq_cli *cli) {
  if (cli->n_operands > 0) {
    fprintf(stderr, "sandq-worker serve: unexpected argument '%s' (serve takes options only)\n", cli->operands[0]);
    return 2;
  }
  worker w = {0};
  if (sq_cmd_config("serve", &w.cfg, cli) != 0) return 2;
  char listen_host[256], err[512];
  int listen_port;
  if (w.cfg.metrics_listen[0] &&
      sq_http_listen_parse(w.cfg.metrics_listen, listen_host, sizeof listen_host, &listen_port, err, sizeof err) != 0) {
    fprintf(stderr, "sandq-worker serve: configuration: %s\n", err); /* what a valid address looks like */
    return 2;
  }
  int rc;
  sq_log_init("sandq-worker", w.cfg.log_level);
  /* Sizing nobody set comes from the host (docs/configuration.md). */
  int64_t start_ms = sq_now_mono_ms();
  sq_config_host host;
  char sizing[512];
  sq_config_host_probe(&host);
  sq_config_derive(&w.cfg, &host, sizing, sizeof sizing);
  SQ_INFO("sizing: %s", sizing);
  /* A cgroup too small for the worker gets it OOM-killed at start with
   * nothing in its log: say so and stop instead. */
  if (host.memory_limited && host.memory_mib < SQ__WORKER_MIN_MIB) {
    SQ_ERROR("this worker's cgroup allows %lld MiB of memory; a worker needs at least %d MiB (itself, its warm "
             "zygotes, a task's run): raise the cgroup's memory limit (systemd MemoryMax=, docker --memory)",
             (long long)host.memory_mib, SQ__WORKER_MIN_MIB);
    return 1;
  }
  if (host.memory_limited && host.memory_mib < SQ__WORKER_MIN_MIB + w.cfg.default_limits.memory_mib)
    SQ_WARN("this worker's cgroup allows %lld MiB of memory and a task's run may use default_limits.memory_mib = "
            "%lld MiB: a task near its limit can get the whole worker OOM-killed; raise the cgroup's limit or lower "
            "default_limits.memory_mib", (long long)host.memory_mib, (long long)w.cfg.default_limits.memory_mib);
  /* SCHED_BATCH, before any thread: every thread of the worker, the jail's
   * processes and every task inherit it. A batch thread never preempts the
   * one running when it wakes: a task closing its output runs on to its
   * exit instead of stopping for its supervisor at each close, which saves
   * CPU per task (docs/benchmarks.md), and the worker does not preempt a
   * host's interactive work either. Time slices are unchanged. */
  if (sched_setscheduler(0, SCHED_BATCH, &(struct sched_param){0}) != 0)
    SQ_WARN("SCHED_BATCH: %s (running with the default policy)", strerror(errno));

  struct sigaction sa = {0};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  int exit_code = 1;
  say_languages();
  /* The compilers say their versions once the worker runs (loop.c starts
   * them, compile_cache.h). */
  /* The jail (and a warm pool's zygotes) before the LLM client. */
  sq_jail_config jc = {.python_path = w.cfg.python_path, .scratch_root = w.cfg.scratch_root,
                       .mode = w.cfg.jail_mode, .pool_size = (int)w.cfg.jail_pool_size,
                       .prelude = w.cfg.warm_prelude ? sq_harness_prelude() : NULL};
  if ((rc = sq_jail_new(&jc, &w.jail)) != 0) {
    SQ_ERROR("jail: %s (scratch_root %s)", sq_strerror(rc), w.cfg.scratch_root);
    goto out;
  }
  char pwhy[512];
  if ((rc = sq__profiles_open(&w.cfg, &jc, NULL, &w.profiles, pwhy, sizeof pwhy)) != 0) {
    SQ_ERROR("%s", pwhy);
    if (rc == SQ_ECONFIG) exit_code = 2; /* the operator's to fix (docs/configuration.md, "Profiles") */
    goto out;
  }
  sq__pool_precompile(w.jail);
  if ((rc = sq__plans_new(&w.plans)) != 0) {
    SQ_ERROR("judge plans: %s", sq_strerror(rc));
    goto out;
  }
  if ((rc = sq__compile_cache_new((size_t)w.cfg.compile_cache_mib << 20, &w.compile_cache)) != 0) {
    SQ_ERROR("compile cache: %s", sq_strerror(rc));
    goto out;
  }
  if ((rc = sq__pool_new(w.jail, (int)w.cfg.jail_threads, &w.pool)) != 0) {
    SQ_ERROR("jail pool: %s", sq_strerror(rc));
    goto out;
  }
  char lerr[256];
  if (w.cfg.n_providers > 0 &&
      (rc = sq_llm_new(w.cfg.providers, w.cfg.n_providers, &w.llm, lerr, sizeof lerr)) != 0) {
    SQ_ERROR("llm: %s", lerr);
    goto out;
  }
  if (w.llm) sq_llm_set_options(w.llm, &w.cfg.llm);
  if (w.llm) sq_llm_set_retry_observer(w.llm, llm_retry_note, NULL);
  w.risk_policy = w.cfg.risk_policy;
  if (!w.llm) SQ_WARN("no LLM provider configured: tasks without code will end as llm_error");
  if ((rc = sq__housekeeping_new(&w)) != 0) {
    SQ_ERROR("metrics: %s", sq_strerror(rc));
    goto out;
  }
  if ((rc = sq__budget_cache_new(&sq__best_effort_budget_store, &w, &w.budget)) != 0 ||
      (rc = sq__audit_log_new(w.cfg.worker_id, w.cfg.audit_max_len, &w.audit)) != 0 ||
      (rc = sq__backoff_new(&w.best_effort)) != 0) {
    SQ_ERROR("worker: %s", sq_strerror(rc));
    goto out;
  }
  if ((rc = sq__endpoint_start(&w)) != 0) { /* logged; a busy port or a bad address is the operator's to fix */
    if (rc == SQ_EINVAL || rc == SQ_EEXISTS) exit_code = 2;
    goto out;
  }
  sq__test_hooks_init();
  sq_queue_set_notice(queue_notice, NULL); /* before any handle: the heartbeat thread's too */
  if ((rc = sq__redis_open(&w)) != 0) {
    if (rc == SQ_EREDIS_AUTH) exit_code = 2; /* configuration (docs/configuration.md, "Exit codes") */
    goto out;
  }
  if (sq_heartbeat_start(&w.cfg, &sq__worker_stop, &w.heartbeat) != 0) goto out;
  SQ_INFO("worker %s serving queue %s (up to %lld tasks in flight, lease %lld ms, heartbeat %lld ms, risk %s, "
          "max_repairs %lld)",
          w.cfg.worker_id, w.cfg.queue, (long long)w.cfg.max_tasks_in_flight, (long long)w.cfg.queue_opts.lease_ms,
          (long long)w.cfg.heartbeat_ms, sq_risk_scope_name(w.cfg.risk), (long long)w.cfg.max_repairs);
  SQ_INFO("worker %s ready in %lld ms (%s mode, %lld jail thread(s)%s; claiming)", w.cfg.worker_id,
          (long long)(sq_now_mono_ms() - start_ms), sq_jail_mode_name(w.cfg.jail_mode), (long long)w.cfg.jail_threads,
          w.cfg.jail_mode == SQ_JAIL_MODE_WARM ? ", a warm zygote up" : "");
  exit_code = sq__worker_loop(&w);
  if (exit_code != 0) sq__redis_hand_back(&w);
  sq__housekeeping_final(&w);
  SQ_INFO("worker %s stopping", w.cfg.worker_id);
out:
  sq__endpoint_stop(&w);
  sq_heartbeat_stop(w.heartbeat);
  sq__pool_free(w.pool); /* waits for runs in progress */
  sq__redis_close(&w);
  sq_llm_free(w.llm);
  sq__audit_log_free(w.audit);
  sq__budget_cache_free(w.budget);
  sq__expected_free(w.expected);
  sq__backoff_free(w.best_effort);
  sq__housekeeping_free(w.housekeeping);
  sq_metrics_free(w.metrics);
  sq__profiles_free(w.profiles);
  sq__compile_cache_free(w.compile_cache);
  sq__plans_free(w.plans);
  sq__compile_toolchains_finish(0);
  sq_jail_free(w.jail);
  sq_compiled_clear();
  return exit_code;
}

const sq_worker_cmd sq_cmd_serve = {"serve", "serve [options]", NULL, serve_flags, serve};
