/* job.c: one task's way to a result, as callbacks on the worker's event
 * loop: parse -> generate (LLM) -> risk verdict -> assemble program ->
 * check -> execute (jail pool) -> decide -> repair (LLM) -> done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "harness.h"
#include "log.h"
#include "reason.h"
#include "extract.h"
#include "util.h"
#include "verdict.h"
#include "workspace.h"
#include "test_hooks.h"
#include "audit_log.h"
#include "best_effort.h"
#include "budget_cache.h"
#include "code_prompt.h"
#include "compile_cache.h"
#include "expected.h"
#include "judge_plans.h"
#include "job.h"
#include "llm.h"
#include "metrics.h"
#include "pool.h"
#include "profiles.h"
#include "redis_link.h"

#define RISK_CACHE_NS "risk"

static void exec_start(job *j);
static void risk_start(job *j);

void sq__job_free(job *j) {
  if (!j) return;
  if (j->used_llm) j->w->llm_jobs--;
  sq_task_free(j->task);
  sq_claim_clear(&j->claim);
  free(j->code);
  free(j->program);
  free(j->input);
  free(j->listing);
  free(j->calls_program);
  sq_calls_results_clear(&j->calls_ref);
  free(j->llm_reply);
  sq_jail_outcome_clear(&j->out);
  sq_workspace_files_clear(&j->files);
  for (int i = 0; i < j->n_repairs; i++)
    free(j->repair_code[i]);
  free(j->repair_code);
  free(j->repairs);
  free(j->case_runs);
  free(j);
}

/* The job is finished: stamp it and queue it for storing. */
static void done(job *j) {
  worker *w = j->w;
  j->r.total_ms = sq_now_mono_ms() - j->t0_ms;
  j->r.finished_at_ms = sq_now_wall_ms();
  j->r.attempts = j->claim.attempt; /* earlier attempts were retried through the queue */
  if (j->claim.first_claimed_at_ms > 0) j->r.all_attempts_ms = j->r.finished_at_ms - j->claim.first_claimed_at_ms;
  sq_metrics_stage(w->metrics, SQ_METRICS_STAGE_TOTAL, j->r.total_ms);
  j->next = NULL;
  if (w->done_tail) w->done_tail->next = j;
  else {
    w->done_head = j;
    w->done_since_ms = sq_now_mono_ms();
  }
  w->done_tail = j;
  w->done_n++;
}

static void end_with(job *j, sq_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void end_with(job *j, sq_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(j->reason, sizeof j->reason, fmt, ap);
  va_end(ap);
  j->r.status = status;
  j->r.reason = j->reason;
  /* A transient failure is not the task's end yet: redis_link.c logs it once
   * settled (retrying, waiting for the provider, or the final status). */
  SQ_LOGT(j->transient ? SQ_LOG_DEBUG : SQ_LOG_WARN, j->r.id, "%s: %s", sq_status_name(status), j->reason);
  done(j);
}

/* Adds one call's tokens, cost and time to the task and its batch. */
static void account(job *j, const sq_llm_reply *rep) {
  sq_result_llm *l = &j->r.llm;
  if (!l->called) {
    snprintf(j->provider, sizeof j->provider, "%s", rep->provider);
    snprintf(j->model, sizeof j->model, "%s", rep->model);
    l->provider = j->provider;
    l->model = j->model;
    l->called = true;
  }
  l->calls++;
  l->prompt_tokens += rep->prompt_tokens;
  l->completion_tokens += rep->completion_tokens;
  l->cost_usd += rep->cost_usd;
  l->usage_estimated = l->usage_estimated || rep->usage_estimated;
  j->r.llm_ms += rep->latency_ms;
  sq__budget_cache_add(j->w->budget, j->r.batch, rep->cost_usd);
  sq_metrics_stage(j->w->metrics, SQ_METRICS_STAGE_LLM, rep->latency_ms);
  sq_metrics_llm_usage(j->w->metrics, rep->provider, rep->prompt_tokens, rep->completion_tokens, rep->cost_usd);
}

/* Every LLM call goes through here, and every callback starts with
 * llm_back: w->llm_waiting counts the jobs waiting on a reply, w->llm_jobs
 * those that went to the LLM at all (loop.c claims by both). gen: a code or
 * repair request, which takes the task's model and temperature (a risk
 * review keeps the provider's, at 0). */
static int submit(job *j, bool gen, const char *system, const char *user, sq_llm_done_fn fn) {
  sq_llm_request req = {.system = system, .user = user, .task_id = j->r.id};
  if (gen) {
    req.model = j->task->model;
    req.temperature = j->task->temperature > 0 ? j->task->temperature : 0;
    j->r.llm.temperature = req.temperature;
  }
  j->w->llm_waiting++;
  if (!j->used_llm) j->w->llm_jobs++;
  j->used_llm = true;
  int rc = sq_llm_submit(j->w->llm, &req, fn, j);
  if (rc) j->w->llm_waiting--;
  return rc;
}

static void llm_back(job *j) { j->w->llm_waiting--; }

/* Asks for a program in the task's language: the configured system prompt
 * filled in for it (code_prompt.h). */
static int submit_code(job *j, const char *user, sq_llm_done_fn fn) {
  sq_buf sys = {0};
  int rc = sq__code_prompt_system(j->w->cfg.system_prompt, j->task->language, &sys);
  if (rc == 0) rc = submit(j, true, sys.data ? sys.data : "", user, fn);
  sq_buf_clear(&sys);
  return rc;
}

/* The task's language's wire name, as sq_extract_code takes it. */
static const char *language_name(const job *j) {
  const sq_language *l = sq_language_get(j->task->language);
  return l ? l->name : "python";
}

/* ---- generate ---- */

/* Keeps the reply in the result (store_llm_reply): its first
 * SQ_RESULT_LLM_REPLY_MAX bytes, cut where a UTF-8 character starts. */
static void keep_reply(job *j, const char *content) {
  size_t n = strlen(content);
  bool cut = n > SQ_RESULT_LLM_REPLY_MAX;
  if (cut) {
    n = SQ_RESULT_LLM_REPLY_MAX;
    while (n > 0 && ((unsigned char)content[n] & 0xC0) == 0x80) n--;
  }
  free(j->llm_reply);
  if (!(j->llm_reply = strndup(content, n))) return; /* the result goes without it */
  j->r.llm.reply = j->llm_reply;
  j->r.llm.reply_len = n;
  j->r.llm.reply_truncated = cut;
}

static void on_generated(sq_llm_reply *rep, int rc, void *ud) {
  job *j = ud;
  llm_back(j);
  account(j, rep);
  if (j->w->cfg.store_llm_reply && rep->content) keep_reply(j, rep->content);
  if (rc) {
    /* What may pass (the LLM client decides: rep->transient) gets another
     * attempt through the queue. */
    j->transient = rep->transient;
    j->outage = rep->outage;
    end_with(j, SQ_STATUS_LLM_ERROR, "llm: %s", rep->error[0] ? rep->error : sq_strerror(rc));
    return;
  }
  char err[256] = "";
  if (sq_extract_code(rep->content, language_name(j), &j->code, err, sizeof err) != 0) {
    sq_metrics_llm_error(j->w->metrics, rep->provider, SQ_METRICS_LLM_NO_CODE);
    end_with(j, SQ_STATUS_LLM_ERROR, "llm reply: %s", err);
    return;
  }
  j->generated = true;
  if (j->w->cfg.risk != SQ_RISK_SCOPE_OFF) risk_start(j);
  else exec_start(j);
}

static void generate(job *j) {
  worker *w = j->w;
  if (!w->llm) {
    end_with(j, SQ_STATUS_LLM_ERROR,
             "task has a prompt and no code, and no LLM provider is configured "
             "(set SANDQ_LLM_BASE_URL and SANDQ_LLM_MODEL, or providers in the config file)");
    return;
  }
  if (sq__budget_cache_exhausted(w->budget, j->r.batch)) {
    end_with(j, SQ_STATUS_LLM_ERROR, "budget exhausted: batch %s has spent its --budget-usd", j->r.batch);
    return;
  }
  int rc = submit_code(j, j->task->prompt, on_generated);
  if (rc) end_with(j, SQ_STATUS_LLM_ERROR, "llm: %s", sq_strerror(rc));
}

/* ---- risk ---- */

static void risk_decided(job *j) {
  sq_risk_result *k = &j->risk;
  j->risk_doc = (sq_result_risk){.level = sq_risk_level_name(k->v.level),
                                 .action = sq_risk_action_name(k->v.action),
                                 .reason = k->v.reason,
                                 .confidence = k->v.confidence,
                                 .source = sq_risk_source_name(k->source),
                                 .decision = sq_risk_action_name(k->decision)};
  j->r.risk = &j->risk_doc;
  if (k->decision == SQ_RISK_BLOCK) {
    j->r.code = j->code;
    end_with(j, SQ_STATUS_BLOCKED, "risk verdict (%s): %s: %s", j->risk_doc.source, j->risk_doc.level,
             k->v.reason[0] ? k->v.reason : "no reason given");
    return;
  }
  if (k->decision == SQ_RISK_WARN)
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "risk warning (%s): %s: %s", j->risk_doc.source, j->risk_doc.level, k->v.reason);
  exec_start(j);
}

static void on_risk(sq_llm_reply *rep, int rc, void *ud) {
  job *j = ud;
  llm_back(j);
  worker *w = j->w;
  account(j, rep);
  char err[320];
  if (rc) {
    snprintf(err, sizeof err, "llm: %s", rep->error);
    sq_risk_fallback(&j->risk, err, &w->risk_policy);
  } else if (sq_extract_risk(rep->content, &j->risk.v, err, sizeof err) != 0) {
    sq_metrics_llm_error(w->metrics, rep->provider, SQ_METRICS_LLM_BAD_VERDICT);
    sq_risk_fallback(&j->risk, err, &w->risk_policy);
  } else {
    j->risk.source = SQ_RISK_FROM_MODEL;
    j->risk.decision = sq_risk_decide(&j->risk.v, j->risk.source, &w->risk_policy);
    char sha[65];
    sq_risk_code_sha256(j->code, strlen(j->code), sha);
    char *json = sq_risk_to_json(&j->risk.v);
    if (json) sq__best_effort_cache_set(w, RISK_CACHE_NS, sha, json, w->cfg.risk_cache_ttl_s);
    free(json);
  }
  risk_decided(j);
}

static void risk_start(job *j) {
  worker *w = j->w;
  char sha[65], *cached = NULL;
  size_t len = 0;
  sq_risk_code_sha256(j->code, strlen(j->code), sha);
  if (sq__best_effort_cache_get(w, RISK_CACHE_NS, sha, &cached, &len) == 0) {
    int rc = sq_risk_from_json(cached, len, &j->risk.v);
    free(cached);
    if (rc == 0) {
      j->risk.source = SQ_RISK_FROM_CACHE;
      j->risk.decision = sq_risk_decide(&j->risk.v, j->risk.source, &w->risk_policy);
      risk_decided(j);
      return;
    }
  }
  if (!w->llm) {
    sq_risk_fallback(&j->risk, "no LLM provider configured", &w->risk_policy);
  } else if (sq__budget_cache_exhausted(w->budget, j->r.batch)) {
    sq_risk_fallback(&j->risk, "budget exhausted", &w->risk_policy);
  } else {
    char *user = sq_risk_user_prompt(j->code);
    int rc = user ? submit(j, false, sq_risk_system_prompt(), user, on_risk) : SQ_ENOMEM;
    free(user);
    if (rc == 0) return;
    sq_risk_fallback(&j->risk, sq_strerror(rc), &w->risk_policy);
  }
  risk_decided(j);
}

/* ---- execute ---- */

/* j->program becomes workspace.py around it (the listing for a language
 * other than Python); the program's own limits are run's. A compiled
 * language's run takes its build from the compile cache when it holds
 * one, else asks for the build back (take_outcome keeps it). A task with
 * files compiles every time: its files may be part of the build. */
static int wrap_workspace(job *j, const sq_jail_limits *run) {
  sq__compile_cache *cc = j->w->compile_cache;
  sq_workspace_build_use use = {0};
  j->run_lim = *run;
  j->compile_keyed = j->compile_hit = false;
  const char *inner = j->program ? j->program : j->calls_program ? j->calls_program : j->listing;
  if (cc && !j->program && j->task->n_files == 0 &&
      sq__compile_cache_key(j->task->language, inner, strlen(inner), run->memory_mib, j->compile_key)) {
    j->compile_keyed = true;
    use.cached = sq__compile_cache_get(cc, j->compile_key);
    j->compile_hit = use.cached != NULL;
    sq_metrics_compile_cache(j->w->metrics, j->task->language, j->compile_hit);
    if (!use.cached) use.emit_max_bytes = sq__compile_cache_build_max(cc);
  }
  char *wrapped = NULL;
  if (sq_workspace_standby(j->task, run, j->standby, sizeof j->standby) < 0) return SQ_ENOMEM;
  sq_jail *jail = j->jail ? j->jail : j->w->jail; /* the profile's, else the worker's (pool.c) */
  int rc = sq_workspace_program(j->task, inner, run, &use, sq_jail_prelude_in_force(jail), &wrapped);
  free(j->program);
  j->program = wrapped;
  return rc;
}

/* The task's profile: its runner into j->jail. An unknown one ends the
 * task as invalid_task, before any LLM call (-1). */
static int choose_profile(job *j) {
  char why[sizeof j->reason];
  sq_jail_limits def, max;
  if (sq__profiles_find(j->w->profiles, j->task->profile, &j->jail, &def, &max, why, sizeof why) != 0) {
    end_with(j, SQ_STATUS_INVALID_TASK, "%s", why);
    return -1;
  }
  j->r.profile = j->task->profile ? j->task->profile : SQ_PROFILE_DEFAULT;
  return 0;
}

/* A task in a language whose toolchain this worker lacks ends here,
 * naming what it has; returns whether it did. */
static bool language_missing(job *j) {
  if (sq_language_available(j->task->language)) return false;
  char have[256];
  sq_language_found_names(have, sizeof have);
  end_with(j, SQ_STATUS_INVALID_TASK, "language: %s is not installed on this worker (it runs: %s)",
           sq_language_get(j->task->language)->name, have);
  return true;
}

/* Another language's tests (calls.h): the candidate's program into
 * j->calls_program and the reference's values into j->calls_ref. Returns
 * 0 when the run can start, 1 when the job waits for or runs the
 * reference, or ended (tests of no form the judge takes: invalid_task),
 * SQ_ENOMEM. */
static int calls_prepare(job *j) {
  sq_calls_plan plan;
  char err[sizeof j->reason];
  int rc = sq_calls_plan_build(j->task->language, j->code, j->task->tests, &plan, err, sizeof err);
  if (rc == SQ_EINVAL) {
    end_with(j, SQ_STATUS_INVALID_TASK, "%s", err);
    return 1;
  }
  if (rc) return rc;
  rc = sq__expected_calls(j, &plan, &j->calls_ref, err, sizeof err);
  if (rc == SQ__EXPECTED_READY) {
    j->calls_program = plan.candidate;
    plan.candidate = NULL;
  }
  sq_calls_plan_clear(&plan);
  if (rc == SQ__EXPECTED_FAILED) {
    end_with(j, SQ_STATUS_INVALID_TASK, "%s", err);
    return 1;
  }
  return rc == SQ__EXPECTED_WAIT ? 1 : rc;
}

void sq__job_run_reference(job *j, char *program) {
  free(j->program);
  free(j->listing);
  j->program = program;
  j->listing = strdup(program);
  j->input_len = 0;
  sq_jail_limits run = j->w->cfg.default_limits;
  sq_jail_limits_apply(&run, &j->w->cfg.default_limits, &j->w->cfg.max_limits);
  if (!j->listing || (sq_workspace_applies(j->task) && wrap_workspace(j, &run) != 0)) {
    sq__expected_done(j); /* as a reference run that failed */
    return;
  }
  sq__job_submit(j);
}

static void exec_start(job *j) {
  worker *w = j->w;
  free(j->program);
  free(j->input);
  free(j->listing);
  free(j->calls_program);
  j->program = j->listing = j->input = j->calls_program = NULL;
  sq_calls_results_clear(&j->calls_ref);
  j->r.language = sq_language_get(j->task->language)->name;
  if (language_missing(j)) return;
  j->lim = j->task->limits;
  sq_jail_limits_apply(&j->lim, &w->cfg.default_limits, &w->cfg.max_limits);
  /* The listing is what the result shows and the pre-check reads; when
   * there are tests the jail runs the code under the judge, which reads
   * them on its stdin (harness.h). */
  bool python = j->task->language == SQ_TASK_PYTHON;
  char *base_tests = j->task->tests, *judged_tests = NULL;
  if (j->in_plus) j->task->tests = j->task->plus_tests; /* the plus tier: the same program, its own tests */
  /* evalplus's expected values: the worker's, or a reference run first (the job comes back) */
  char ref_why[sizeof j->reason];
  int rc = python ? sq__expected_prepare(j, j->task->tests, &judged_tests, ref_why, sizeof ref_why) : 0;
  if (rc == SQ__EXPECTED_WAIT || rc == SQ__EXPECTED_FAILED) {
    j->task->tests = base_tests;
    if (rc == SQ__EXPECTED_FAILED) end_with(j, SQ_STATUS_INVALID_TASK, "%s", ref_why);
    return;
  }
  if (!rc) rc = sq_task_program(j->task, j->code, &j->listing); /* shown without the values */
  if (judged_tests) j->task->tests = judged_tests;
  const void *plan = NULL;
  size_t plan_len = 0;
  j->plan_keyed = j->plan_given = false;
  if (!rc && python && sq_harness_applies(j->task)) { /* the tests' plan, when a judge worked it out already */
    sq__plans_key(j->task, j->r.profile, j->plan_key);
    j->plan_keyed = true;
    plan = sq__plans_get(j->w->plans, j->plan_key, &plan_len);
    j->plan_given = plan != NULL;
  }
  if (!rc && python) rc = sq_harness_judge(j->task, j->code, plan, plan_len, &j->program, &j->input, &j->input_len);
  if (!rc && !python && j->task->tests) {
    int c = calls_prepare(j);
    if (c > 0) return; /* waits for the reference, runs it, or ended */
    rc = c;
  }
  if (!rc && sq_workspace_applies(j->task)) rc = wrap_workspace(j, &j->lim);
  j->task->tests = base_tests;
  free(judged_tests);
  if (rc) {
    end_with(j, SQ_STATUS_LLM_ERROR, "out of memory assembling the program");
    return;
  }
  j->r.code = j->listing;
  /* The static pre-check (it reads Python): findings are recorded; a blocking one skips the jail. */
  int64_t t0 = sq_now_mono_ms();
  if (python) sq_precheck_check(&w->cfg.policy, j->listing, strlen(j->listing), &j->findings);
  sq_metrics_stage(w->metrics, SQ_METRICS_STAGE_PRECHECK, sq_now_mono_ms() - t0);
  j->r.findings = &j->findings;
  if (j->findings.blocked) {
    char why[sizeof j->reason];
    sq_precheck_reason(&w->cfg.policy, &j->findings, why, sizeof why);
    end_with(j, SQ_STATUS_BLOCKED, "%s", why);
    return;
  }
  if (j->task->n_cases && sq__job_cases_start(j) != 0) {
    end_with(j, SQ_STATUS_LLM_ERROR, "out of memory assembling the cases");
    return;
  }
  if (sq__test_exec_noop()) { /* a test hook: the queue without the jail */
    j->r.status = SQ_STATUS_OK;
    j->r.exit_code = 0;
    done(j);
    return;
  }
  sq__job_submit(j);
}

void sq__job_exec_resume(job *j) { exec_start(j); }

void sq__job_submit(job *j) {
  worker *w = j->w;
  sq_jail_limits def, max;
  sq__profiles_find(w->profiles, j->task->profile, &j->jail, &def, &max, NULL, 0); /* known: sq__job_begin */
  /* a reference run (expected.h) is the worker's, under the profile's
   * defaults: nothing of the task's limits reaches it */
  j->lim = j->expected_run ? def : j->task->limits;
  sq_jail_limits_apply(&j->lim, &def, &max);
  sq_language_limits(j->task->language, &j->lim); /* a compiler's budget on top */
  /* A later case of a program compiled by an earlier one takes its build. */
  if (j->compile_keyed && !j->compile_hit && j->case_at > 0) {
    char *compiling = j->program; /* kept when the new one cannot be made */
    j->program = NULL;
    sq_jail_limits run = j->run_lim;
    if (wrap_workspace(j, &run) == 0) {
      free(compiling);
    } else {
      j->program = compiling;
      j->compile_hit = false;
    }
  }
  /* Room for the files' block and the build's, the same on a cache hit as
   * on a miss; the program's own output is held to its cap after. */
  j->extra_output_kib = j->task->n_fetch ? SQ_WORKSPACE_OUTPUT_KIB : 0;
  if (j->compile_keyed) j->extra_output_kib += (int64_t)(sq__compile_cache_build_max(w->compile_cache) / 3 * 4 / 1024) + 64;
  j->lim.output_kib += j->extra_output_kib;
  if (j->expected_run && j->lim.output_kib < SQ__EXPECTED_OUTPUT_KIB) j->lim.output_kib = SQ__EXPECTED_OUTPUT_KIB;
  j->run_opts = (sq_jail_run_opts){.widenings = sq_language_widenings(j->task->language), .stop = &j->kill,
                                   .standby = j->standby[0] && sq_workspace_applies(j->task) ? j->standby : NULL};
  sq_jail_outcome_clear(&j->out);
  j->jail_t0_ms = sq_now_mono_ms();
  w->in_jail++;
  sq__pool_submit(w->pool, j);
}

static void take_outcome(job *j) {
  sq_result *r = &j->r;
  sq_jail_outcome *o = &j->out;
  sq_verdict_input in = {.has_tests = j->task->language == SQ_TASK_PYTHON && sq_harness_applies(j->task),
                         .expected_stdout = j->task->expected_stdout};
  sq_workspace_files_clear(&j->files);
  if (sq_workspace_applies(j->task)) {
    int64_t own_kib = j->extra_output_kib ? j->lim.output_kib - j->extra_output_kib : 0;
    if (sq_workspace_take_files(o, own_kib, &j->files) != 0) SQ_LOGT(SQ_LOG_WARN, r->id, "out of memory reading files");
    if (j->compile_keyed && !j->compile_hit) {
      SQ_LOGT(SQ_LOG_DEBUG, r->id, "compile cache: the compile step sent %zu file(s), %zu bytes", j->files.build.n,
              j->files.build.bytes);
      if (sq__compile_cache_put(j->w->compile_cache, j->compile_key, &j->files.build) != 0)
        SQ_LOGT(SQ_LOG_WARN, r->id, "out of memory keeping the build");
    }
    r->compile_step = sq_language_get(j->task->language)->compile[0] != NULL;
    r->compile_cached = j->compile_hit;
    r->fetched = j->task->n_fetch > 0;
    r->files = j->files.files;
    r->n_files = j->files.n;
  }
  if (in.has_tests) sq_harness_take_marks(o, &in.marks);
  if (in.marks.plan && j->plan_keyed && !j->plan_given &&
      sq__plans_put(j->w->plans, j->plan_key, in.marks.plan, in.marks.plan_len) != 0)
    SQ_LOGT(SQ_LOG_WARN, r->id, "out of memory keeping the judge's plan");
  sq_harness_marks_clear(&in.marks); /* its strings stay: the plan alone is allocated */
  in.compile_error = j->files.compile_error;
  sq_calls_results got = {0};
  char calls_why[sizeof j->reason] = "";
  if (j->calls_program) {
    in.calls = true;
    if (sq_calls_take(o->stdout_buf, &o->stdout_len, j->calls_ref.n, &got) != 0)
      snprintf(calls_why, sizeof calls_why, "out of memory reading the calls' results");
    else in.calls_passed = sq_calls_judge(&got, &j->calls_ref, calls_why, sizeof calls_why);
    in.calls_why = calls_why;
    sq_calls_results_clear(&got);
  }
  const char *why = NULL;
  r->status = sq_verdict_decide(o, &in, &why);
  snprintf(j->judge, sizeof j->judge, "%s", in.marks.judge);
  snprintf(j->judge_reason, sizeof j->judge_reason, "%s", in.marks.judge_why);
  r->judge = j->judge[0] ? j->judge : NULL;
  r->judge_reason = j->judge_reason[0] ? j->judge_reason : NULL;
  r->exit_code = o->exit_code;
  r->signal = o->signal;
  r->stdout_buf = o->stdout_buf;
  r->stdout_len = o->stdout_len;
  r->stdout_truncated = o->stdout_truncated;
  r->stderr_buf = o->stderr_buf;
  r->stderr_len = o->stderr_len;
  r->stderr_truncated = o->stderr_truncated;
  r->cpu_ms = o->cpu_ms;
  r->cpu_wait_ms = o->cpu_wait_ms;
  r->memory_kib = o->memory_kib;
  r->exec_ms += o->wall_ms;
  r->blocked_syscall = o->blocked_syscall;
  r->jail = (sq_result_jail){
      .ran = true, .mode = sq_jail_mode_name(o->mode), .oom_killed = o->oom_killed, .standby = j->files.standby};
  sq_jail_layers_names(o->layers, r->jail.layers, SQ_RESULT_MAX_LAYERS);
  /* Why a failing status failed: the harness's own finding (a shortcut
   * around the tests) when there is one, else reason.c from the run. */
  if (why) snprintf(j->reason, sizeof j->reason, "%s", why);
  else if (r->status == SQ_STATUS_COMPILE_ERROR) sq_workspace_compile_reason(o, j->reason, sizeof j->reason);
  else sq_reason_build(r->status, o, &j->lim, j->task->expected_stdout, j->reason, sizeof j->reason);
  r->reason = j->reason[0] ? j->reason : NULL;
  /* A run the backstop ended while the host kept it waiting for a CPU says
   * nothing of the program: it gets another attempt through the queue (the
   * last one's timeout is stored, its reason saying so). */
  if (o->starved) j->transient = true;
}

/* ---- repair ---- */

static void on_repaired(sq_llm_reply *rep, int rc, void *ud) {
  job *j = ud;
  llm_back(j);
  account(j, rep);
  sq_result_repair *round = &j->repairs[j->n_repairs];
  *round = (sq_result_repair){.round = j->n_repairs + 1,
                              .prompt_tokens = rep->prompt_tokens,
                              .completion_tokens = rep->completion_tokens,
                              .status = "llm_error"};
  char *code = NULL;
  char err[256] = "";
  if (rc == 0 && sq_extract_code(rep->content, language_name(j), &code, err, sizeof err) == 0) {
    j->repair_code[j->n_repairs] = code;
    round->code = code;
    round->status = NULL; /* filled when it has run */
  }
  j->n_repairs++;
  j->r.repairs = j->repairs;
  j->r.n_repairs = j->n_repairs;
  if (!code) { /* keep the last run's result */
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "repair round %d: %s", j->n_repairs, rc ? rep->error : err);
    done(j);
    return;
  }
  free(j->code);
  j->code = strdup(code);
  if (!j->code) {
    done(j);
    return;
  }
  if (j->w->cfg.risk != SQ_RISK_SCOPE_OFF) risk_start(j);
  else exec_start(j);
}

/* Asks for a fixed program; returns false when no round can start. */
static bool repair(job *j) {
  worker *w = j->w;
  if (!j->generated || !w->llm || j->n_repairs >= w->cfg.max_repairs) return false;
  if (!j->repairs) {
    j->repairs = calloc((size_t)w->cfg.max_repairs, sizeof *j->repairs);
    j->repair_code = calloc((size_t)w->cfg.max_repairs, sizeof *j->repair_code);
    if (!j->repairs || !j->repair_code) return false;
  }
  if (sq__budget_cache_exhausted(w->budget, j->r.batch)) {
    SQ_LOGT(SQ_LOG_WARN, j->r.id, "no repair: batch budget exhausted");
    return false;
  }
  /* The tail of stderr holds the traceback's point. */
  size_t cap = (size_t)w->cfg.repair_error_kib * 1024, n = j->out.stderr_len;
  const char *err = j->out.stderr_buf ? j->out.stderr_buf : "";
  if (n > cap) err += n - cap, n = cap;
  sq_buf b = {0};
  int rc = sq__code_prompt_repair(j->task->language, sq_status_name(j->r.status), j->task->prompt, j->code, err, n, &b);
  if (rc == 0) rc = submit_code(j, b.data, on_repaired);
  sq_buf_clear(&b);
  return rc == 0;
}

/* A task with plus_tests (evalplus's tiers): the base tier's tests run
 * first; when they pass, the same code runs again under the plus tier's.
 * The task's status is the plus tier's, which is the base's when the base
 * did not pass. Returns true when the plus run was started. */
static bool tier_next(job *j) {
  sq_result *r = &j->r;
  r->tiered = true;
  if (!j->in_plus) {
    r->tier_base = r->tier_plus = r->status;
    if (r->status != SQ_STATUS_PASSED) return false;
    j->in_plus = true;
    exec_start(j);
    return true;
  }
  r->tier_plus = r->status;
  j->in_plus = false; /* a repair starts again at the base */
  return false;
}

void sq__job_executed(job *j) {
  j->w->in_jail--;
  if (j->expected_run) { /* the reference alone: its values kept, then the job's own run */
    sq__expected_done(j);
    return;
  }
  if (atomic_load(&j->kill)) { /* its batch was cancelled with --kill: whatever the run did */
    if (j->jail_rc == 0) {
      take_outcome(j);
      sq__audit_log_note(j->w->audit, j);
    }
    j->transient = false;
    end_with(j, SQ_STATUS_CANCELLED, "stopped by sandq-producer cancel --kill");
    return;
  }
  if (j->jail_rc == SQ_ETOOBIG || j->jail_rc == SQ_EINVAL) { /* the program, not the host */
    end_with(j, SQ_STATUS_INVALID_TASK, "%s", j->out.error);
    return;
  }
  if (j->jail_rc) { /* only a host failure gets here: this worker stops */
    SQ_LOGT(SQ_LOG_ERROR, j->r.id, "jail setup failed: %s", j->out.error);
    sq__redis_stall(j->w, j, j->out.error); /* a stall: a task that keeps doing this ends in the dead letter */
    j->w->fatal = true;
    snprintf(j->w->host_error, sizeof j->w->host_error, "%s", j->out.error[0] ? j->out.error : "jail setup failed");
    j->w->in_flight--;
    sq__job_free(j);
    return;
  }
  sq_metrics_stage(j->w->metrics, SQ_METRICS_STAGE_JAIL, sq_now_mono_ms() - j->jail_t0_ms);
  take_outcome(j);
  sq__audit_log_note(j->w->audit, j); /* every program run goes into the audit trail */
  if (j->task->n_cases && sq__job_cases_next(j)) return;
  if (j->task->plus_tests && tier_next(j)) return;
  if (j->n_repairs > 0) j->repairs[j->n_repairs - 1].status = sq_status_name(j->r.status);
  if ((j->r.status == SQ_STATUS_FAILED || j->r.status == SQ_STATUS_RUNTIME_ERROR) && repair(j)) return;
  done(j);
}

/* ---- begin ---- */

/* An id for a payload too broken to carry one: FNV-1a of its bytes. */
static void raw_id(const char *p, size_t n, char *out, size_t outlen) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
  snprintf(out, outlen, "raw-%016llx", (unsigned long long)h);
}

void sq__job_begin(worker *w, sq_claim *claim) {
  job *j = calloc(1, sizeof *j);
  if (!j) {
    /* The claim stays under its lease; when it expires the reaper requeues it. */
    SQ_ERROR("out of memory: task left claimed until its lease expires");
    sq_claim_clear(claim);
    return;
  }
  w->in_flight++;
  j->w = w;
  j->claim = *claim; /* the job owns the payload now */
  memset(claim, 0, sizeof *claim);
  const char *payload = j->claim.payload;
  size_t len = j->claim.len;
  j->t0_ms = sq_now_mono_ms();
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
      sq_metrics_stage(w->metrics, SQ_METRICS_STAGE_QUEUE, r->queue_ms);
    }
  } else {
    /* Filed under the payload's own batch (which counted it) and id when
     * they can be read, so that batch still finishes (docs/formats.md). */
    sq_task_salvage(payload, len, j->raw_id, j->raw_batch);
    if (!j->raw_id[0]) raw_id(payload, len, j->raw_id, sizeof j->raw_id);
    r->id = j->raw_id;
    r->batch = j->raw_batch;
  }
  if (rc) {
    end_with(j, SQ_STATUS_INVALID_TASK, "%s", err);
    return;
  }
  r->language = sq_language_get(j->task->language)->name; /* every task that was read says its language */
  if (choose_profile(j) != 0) return;
  sq__test_hook_task(j->task); /* a no-op unless SANDQ_TEST_HOOKS=1 */
  if (!j->task->code) {
    generate(j);
    return;
  }
  if (!(j->code = strdup(j->task->code))) {
    end_with(j, SQ_STATUS_LLM_ERROR, "out of memory");
    return;
  }
  if (w->cfg.risk == SQ_RISK_SCOPE_ALL) risk_start(j);
  else exec_start(j);
}
