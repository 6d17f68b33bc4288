/* job.h: one claimed task on its way to a result (job.c moves it through
 * generate -> risk -> check -> execute -> repair). */
#ifndef SQ_WORKER_JOB_H
#define SQ_WORKER_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "calls.h"
#include "jail.h"
#include "precheck.h"
#include "queue.h"
#include "result.h"
#include "risk.h"
#include "task.h"
#include "worker.h"
#include "workspace.h"

/* Owns every string it points to. */
struct job {
  job *next;              /* done list or pool queue */
  worker *w;
  sq_claim claim;         /* the task's payload, fencing token and lease */
  sq_result r;
  sq_task *task;
  char *code;             /* the code being judged (generated, repaired or the task's) */
  char *program;          /* what the jail runs (the listing, or the judge around the code) */
  char *input;            /* the run's stdin (the judge's tests), or NULL */
  size_t input_len;
  char *listing;          /* code, tests, check(entry_point): what the result shows */
  char *llm_reply;        /* the code request's reply, capped (store_llm_reply), or NULL */
  char raw_id[SQ_TASK_ID_MAX + 1];    /* the result's id when the task has none of its own */
  char raw_batch[SQ_TASK_ID_MAX + 1]; /* and its batch, read out of the payload (sq_task_salvage) */
  char reason[512];
  char judge[16];         /* the result's "judge" (sq_harness_marks) */
  char judge_reason[160];
  sq_jail_limits lim;
  sq_jail_run_opts run_opts; /* the run's widenings and standby; run_opts.stop points at kill */
  atomic_int kill;        /* set by kill_watch.c (another thread reads it): stop, end 'cancelled' */
  sq_jail *jail;          /* the task's profile's runner; NULL: the worker's own (profile default) */
  sq_jail_outcome out;
  sq_workspace_files files; /* fetched off the outcome's stderr (workspace.h) */
  int jail_rc;
  bool generated;         /* code came from the LLM */
  bool transient;         /* worth another attempt: the LLM client says so (sq_llm_reply.transient) */
  bool outage;            /* of those, the provider was unavailable (sq_llm_reply.outage): the task
                             waits for it without spending an attempt (llm_outage_max_s) */
  bool used_llm;          /* counted in w->llm_jobs */
  sq_precheck_report findings; /* the static pre-check's */
  char provider[64], model[128];
  sq_risk_result risk;
  sq_result_risk risk_doc;
  sq_result_repair *repairs; /* cfg.max_repairs slots */
  char **repair_code;
  int n_repairs;
  int64_t t0_ms;
  int64_t jail_t0_ms;     /* handed to the pool */
  sq_result_case *case_runs; /* a task with cases: the ones run so far (task->n_cases slots) */
  size_t case_at;         /* the case running now */
  int64_t cases_cpu_ms;   /* their CPU time, summed */
  int64_t cases_memory_kib; /* their largest peak */
  char case_reason[512];  /* the first failing case's reason */
  bool in_plus;           /* a task with plus_tests: the run is the plus tier's */
  sq_jail_limits run_lim; /* the program's own limits its workspace was assembled with */
  int64_t extra_output_kib; /* added to lim.output_kib for workspace.py's blocks; held back after */
  unsigned char compile_key[32]; /* compile_cache.h: the build's key, when compile_keyed */
  char standby[SQ_WORKSPACE_STANDBY_MAX + 1]; /* the run's standby request (workspace.h; "": none) */
  unsigned char plan_key[32]; /* judge_plans.h: the tests' plan's key, when plan_keyed */
  bool plan_keyed;        /* a judged Python task: its judge may offer a plan */
  bool plan_given;        /* ... and its input carries the cached one */
  bool compile_keyed;     /* a compiled language whose build the cache may hold */
  bool compile_hit;       /* the run places the cached build instead of compiling */
  bool parked;            /* its result waits for a damaged key's repair (w->parked) */
  bool expected_run;      /* the run is the reference's alone (expected.h) */
  bool expected_tried;    /* this job started a reference run already */
  size_t expected_slot;   /* the cache slot that run fills */
  size_t expected_calls;  /* the reference run is the calls judge's, writing this many records */
  char *calls_program;    /* another language's tests: the candidate's program (calls.h), or NULL */
  sq_calls_results calls_ref; /* ... and the reference's values its records must equal */
};

/* Starts a claimed task (ownership of the claim moves to the job); it
 * reaches the done list through LLM callbacks, the pool, or at once. */
void sq__job_begin(worker *w, sq_claim *claim);
/* The pool ran the job's program: decide, maybe repair, else finish. */
void sq__job_executed(job *j);
/* NULL: no-op. */
void sq__job_free(job *j);
/* Hands the job's program to the pool under the task's limits. */
void sq__job_submit(job *j);
/* Runs program (taken) as the reference of the job's tests, alone, under
 * the profile's default limits rather than the task's (expected.h). */
void sq__job_run_reference(job *j, char *program);
/* Starts (again) the job's run of its code: after the reference run it
 * waited for (expected.h). */
void sq__job_exec_resume(job *j);

/* Cases (job_cases.c). Sets the job up for its first case: its stdin is
 * the run's input. Returns 0 or SQ_ENOMEM. */
int sq__job_cases_start(job *j);
/* A case's run has been taken into j->r: judges it by the task's checker
 * and either submits the next case (true: the job is in the pool again) or
 * settles the task's status, reason and totals (false). */
bool sq__job_cases_next(job *j);

#endif
