/* run_cmd.c: `sandq-worker run`: one file through the jail, no Redis
 * and no LLM; prints one JSON object describing the run on stdout.
 *
 * Exit codes: 0 the program ran (whatever the verdict), 1 the jail could
 * not be set up, 2 a usage or configuration error. */
#include <cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "cli.h"
#include "cmds.h"
#include "config.h"
#include "errors.h"
#include "harness.h"
#include "jail.h"
#include "log.h"
#include "precheck.h"
#include "profiles.h"
#include "reason.h"
#include "status.h"
#include "task.h"
#include "utf8.h"
#include "util.h"
#include "verdict.h"
#include "workspace.h"

#define DEFAULT_MAX_FILE_BYTES (4u << 20) /* when the config sets no max_task_kib */
#define LIMIT_FLAG_MAX (INT64_C(1) << 40)

/* run's flags: the limits of this run, its tests and expectations; --mode
 * and --policy are configuration keys, applied over the file and the
 * environment in command-line order. */
static const sq_cli_flag run_flags[] = {
    {"wall-ms", "N", NULL, "wall-clock limit of the run (default: the configuration's default_limits)"},
    {"cpu-ms", "N", NULL, "CPU-time limit"},
    {"memory-mib", "N", NULL, "memory limit"},
    {"output-kib", "N", NULL, "stdout and stderr kept, each"},
    {"tests", "FILE", NULL, "tests run against the program (the harness, docs/formats.md)"},
    {"entry-point", "NAME", NULL, "with --tests: the function the tests call"},
    {"expected-stdout", "TEXT", NULL, "the verdict compares stdout with TEXT"},
    {"language", "L", NULL, "the file's language: python (default), bash, javascript, typescript, c, cpp, go, rust, "
                            "java, ruby, php, lua, perl"},
    {"mode", "spawn|warm", "jail_mode", "fork+exec per run, or a warm zygote (SANDQ_JAIL_MODE)"},
    {"profile", "NAME", NULL, "the interpreter profile the program runs in (default: default)"},
    {"config", "FILE", NULL, "JSON configuration file"},
    {"policy", "KIND=ACTION", "policy.actions.*",
     "the pre-check's action (record|block) for one finding kind, or all=; repeatable, applied in order"},
    {NULL, NULL, NULL, NULL},
};

typedef struct {
  sq_jail_limits lim;
  const char *tests_path;
  const char *entry_point;
  const char *expected_stdout;
  const char *program_path;
  sq_language_id language;
} run_args;

static bool is_identifier(const char *s) {
  if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

/* run's own flags and FILE.py into a; returns 0, or 2 after a message
 * naming the flag. */
static int read_args(const sq_cli *cli, run_args *a) {
  static const struct {
    const char *name;
    size_t offset;
  } limit_flags[] = {
      {"wall-ms", offsetof(sq_jail_limits, wall_ms)},
      {"cpu-ms", offsetof(sq_jail_limits, cpu_ms)},
      {"memory-mib", offsetof(sq_jail_limits, memory_mib)},
      {"output-kib", offsetof(sq_jail_limits, output_kib)},
  };
  for (size_t k = 0; k < sizeof limit_flags / sizeof *limit_flags; k++) {
    const char *v = sq_cli_get(cli, limit_flags[k].name);
    int64_t *field = (int64_t *)(void *)((char *)&a->lim + limit_flags[k].offset);
    if (v && sq_parse_i64(v, 1, LIMIT_FLAG_MAX, field) != 0) {
      fprintf(stderr, "sandq-worker run: --%s: '%s' is not a positive integer\n", limit_flags[k].name, v);
      return 2;
    }
  }
  const char *lang = sq_cli_get(cli, "language");
  if (lang && sq_language_find(lang, &a->language) != 0) {
    fprintf(stderr, "sandq-worker run: --language: '%s' is not one of: %s\n", lang, sq_language_all_names());
    return 2;
  }
  if (a->language != SQ_LANGUAGE_PYTHON && sq_cli_get(cli, "entry-point")) {
    fprintf(stderr, "sandq-worker run: --entry-point: only with --language python\n");
    return 2;
  }
  a->tests_path = sq_cli_get(cli, "tests");
  a->expected_stdout = sq_cli_get(cli, "expected-stdout");
  a->entry_point = sq_cli_get(cli, "entry-point");
  if (a->entry_point && !is_identifier(a->entry_point)) {
    fprintf(stderr, "sandq-worker run: --entry-point: '%s' is not a Python identifier\n", a->entry_point);
    return 2;
  }
  if (a->tests_path && !a->tests_path[0]) {
    fprintf(stderr, "sandq-worker run: --tests needs a file name\n");
    return 2;
  }
  if (cli->n_operands != 1) {
    if (cli->n_operands == 0) fprintf(stderr, "sandq-worker run: missing FILE.py (or - for standard input)\n");
    else fprintf(stderr, "sandq-worker run: unexpected argument '%s' (run takes one FILE.py)\n", cli->operands[1]);
    return 2;
  }
  a->program_path = cli->operands[0];
  return 0;
}

static int add_text(cJSON *obj, const char *key, const char *s, size_t len) {
  sq_buf clean = {0};
  cJSON *item = NULL;
  if (sq_utf8_sanitize(s, s ? len : 0, &clean) == 0) item = cJSON_AddStringToObject(obj, key, clean.data);
  sq_buf_clear(&clean);
  return item ? 0 : SQ_ENOMEM;
}

/* The pre-check's findings as [{kind, line, col, detail}]. */
static int add_findings(cJSON *root, const sq_precheck_report *rep) {
  cJSON *arr = cJSON_AddArrayToObject(root, "findings");
  for (size_t i = 0; arr && i < rep->n; i++) {
    const sq_precheck_finding *f = &rep->items[i];
    cJSON *item = cJSON_CreateObject();
    if (!item || !cJSON_AddItemToArray(arr, item)) {
      cJSON_Delete(item);
      return SQ_ENOMEM;
    }
    if (!cJSON_AddStringToObject(item, "kind", sq_precheck_kind_name(f->kind)) ||
        !cJSON_AddNumberToObject(item, "line", f->line) || !cJSON_AddNumberToObject(item, "col", f->col) ||
        add_text(item, "detail", f->detail, strlen(f->detail)) != 0)
      return SQ_ENOMEM;
  }
  return arr ? 0 : SQ_ENOMEM;
}

/* Prints the run as one JSON line on stdout; a blocked program did not run
 * (end "not_run", reason set). Returns 0 or SQ_ENOMEM. */
static int print_outcome(const sq_jail_outcome *o, sq_status status, const sq_precheck_report *rep,
                         const char *reason, const sq_harness_marks *marks, const char *profile) {
  int rc = SQ_ENOMEM;
  char *text = NULL;
  cJSON *root = cJSON_CreateObject();
  if (!root) return SQ_ENOMEM;
  bool ran = status != SQ_STATUS_BLOCKED;
  if (!cJSON_AddStringToObject(root, "status", sq_status_name(status)) ||
      (reason && add_text(root, "reason", reason, strlen(reason)) != 0) ||
      !cJSON_AddStringToObject(root, "end", ran && status != SQ_STATUS_INVALID_TASK ? sq_jail_end_name(o->end) : "not_run") ||
      !cJSON_AddNumberToObject(root, "exit_code", o->exit_code) ||
      !cJSON_AddNumberToObject(root, "signal", o->signal))
    goto out;
  if (add_text(root, "stdout", o->stdout_buf, o->stdout_len) != 0 ||
      add_text(root, "stderr", o->stderr_buf, o->stderr_len) != 0)
    goto out;
  if (!cJSON_AddBoolToObject(root, "stdout_truncated", o->stdout_truncated) ||
      !cJSON_AddBoolToObject(root, "stderr_truncated", o->stderr_truncated) ||
      !cJSON_AddNumberToObject(root, "wall_ms", (double)o->wall_ms) ||
      !cJSON_AddNumberToObject(root, "cpu_ms", (double)o->cpu_ms) ||
      !cJSON_AddNumberToObject(root, "cpu_wait_ms", (double)o->cpu_wait_ms) ||
      !cJSON_AddNumberToObject(root, "memory_kib", (double)o->memory_kib))
    goto out;
  if (o->blocked_syscall[0] && !cJSON_AddStringToObject(root, "blocked_syscall", o->blocked_syscall))
    goto out;
  if (marks && marks->judge[0] &&
      (!cJSON_AddStringToObject(root, "judge", marks->judge) ||
       (marks->judge_why[0] && !cJSON_AddStringToObject(root, "judge_reason", marks->judge_why))))
    goto out;
  if (!cJSON_AddStringToObject(root, "mode", sq_jail_mode_name(o->mode)) ||
      !cJSON_AddBoolToObject(root, "oom_killed", o->oom_killed) ||
      !cJSON_AddStringToObject(root, "profile", profile ? profile : SQ_PROFILE_DEFAULT))
    goto out;
  cJSON *layers = cJSON_AddArrayToObject(root, "layers");
  if (!layers) goto out;
  const char *names[SQ_JAIL_LAYER_COUNT];
  for (int i = 0, n = sq_jail_layers_names(o->layers, names, SQ_JAIL_LAYER_COUNT); i < n; i++) {
    cJSON *name = cJSON_CreateString(names[i]);
    if (!name || !cJSON_AddItemToArray(layers, name)) {
      cJSON_Delete(name);
      goto out;
    }
  }
  if (add_findings(root, rep) != 0) goto out;
  text = cJSON_PrintUnformatted(root);
  if (!text) goto out;
  printf("%s\n", text);
  rc = fflush(stdout) == 0 ? 0 : SQ_EIO;
out:
  free(text);
  cJSON_Delete(root);
  return rc;
}

/* Reads a file named by a flag; prints a message naming it on failure. */
static int read_named(const char *what, const char *path, size_t max_bytes, char **out) {
  int rc = sq_file_read(path, max_bytes, out, NULL);
  if (rc == SQ_ETOOBIG)
    fprintf(stderr, "sandq-worker run: %s '%s' is larger than %zu bytes\n", what, path, max_bytes);
  else if (rc != 0)
    fprintf(stderr, "sandq-worker run: %s '%s': cannot read it\n", what, path);
  return rc;
}

/* Whether this host lacks id's toolchain; says so, naming what it has. */
static bool language_missing(sq_language_id id) {
  sq_language_probe();
  if (sq_language_available(id)) return false;
  char have[256];
  sq_language_found_names(have, sizeof have);
  fprintf(stderr, "sandq-worker run: --language %s: not installed here (found: %s)\n", sq_language_get(id)->name,
          have);
  return true;
}

static int run(const sq_cli *cli) {
  run_args a = {0};
  int ret = read_args(cli, &a);
  if (ret != 0) return ret;
  sq_config cfg;
  if (sq_cmd_config("run", &cfg, cli) != 0) return 2;
  sq_log_init("sandq-worker", cfg.log_level);
  sq_jail_limits lim = a.lim;

  size_t max_bytes = cfg.max_task_kib > 0 ? (size_t)cfg.max_task_kib * 1024 : DEFAULT_MAX_FILE_BYTES;
  char *code = NULL, *tests = NULL, *program = NULL, *listing = NULL, *input = NULL, *packed = NULL;
  sq_calls_plan plan = {0};
  sq_calls_results ref = {0}, got = {0};
  const sq_precheck_report no_findings = {0};
  size_t input_len = 0;
  sq_jail *jail = NULL;
  sq__profiles *profiles = NULL;
  sq_jail_outcome o = {0};
  int rc;
  ret = 2;
  if (read_named("FILE.py", a.program_path, max_bytes, &code) != 0) goto out;
  if (a.tests_path && read_named("--tests", a.tests_path, max_bytes, &tests) != 0) goto out;

  sq_task task = {.id = "run", .code = code, .tests = tests, .entry_point = (char *)a.entry_point,
                  .language = a.language};
  bool python = a.language == SQ_LANGUAGE_PYTHON;
  if (!python && language_missing(a.language)) goto out;
  ret = 1;
  /* Another language's tests: the candidate's program and the reference
   * (calls.h); tests of no form the judge takes end invalid_task. */
  if (!python && tests) {
    char err[512];
    rc = sq_calls_plan_build(a.language, code, tests, &plan, err, sizeof err);
    if (rc == SQ_EINVAL) {
      o.exit_code = -1;
      if (print_outcome(&o, SQ_STATUS_INVALID_TASK, &no_findings, err, NULL, sq_cli_get(cli, "profile")) == 0) ret = 0;
      goto out;
    }
    if (rc) {
      fprintf(stderr, "sandq-worker run: out of memory\n");
      goto out;
    }
  }
  /* The pre-check reads the listing; the jail runs it through the test
   * harness when there are tests (as the worker does, harness.h); another
   * language runs through workspace.py (workspace.h). */
  if (sq_task_program(&task, code, &listing) != 0 ||
      (python ? sq_harness_judge(&task, code, NULL, 0, &program, &input, &input_len)
              : sq_workspace_program(&task, plan.candidate ? plan.candidate : listing, &lim, NULL, false, &program)) != 0) {
    fprintf(stderr, "sandq-worker run: out of memory\n");
    goto out;
  }
  sq_precheck_report rep = {0};
  if (python) sq_precheck_check(&cfg.policy, listing, strlen(listing), &rep);
  if (rep.blocked) {
    char reason[1024];
    o.exit_code = -1;
    sq_precheck_reason(&cfg.policy, &rep, reason, sizeof reason);
    if (print_outcome(&o, SQ_STATUS_BLOCKED, &rep, reason, NULL, sq_cli_get(cli, "profile")) != 0) goto out;
    ret = 0;
    goto out;
  }
  /* One run: one lean zygote is enough (a program that imports runs on it). */
  sq_jail_config jcfg = {.python_path = cfg.python_path, .scratch_root = cfg.scratch_root,
                         .mode = cfg.jail_mode, .pool_size = 1, .one_run = true};
  const char *profile = sq_cli_get(cli, "profile");
  sq_jail *run_jail = NULL;
  sq_jail_limits def, max;
  char pwhy[512];
  if ((rc = sq__profiles_open(&cfg, &jcfg, profile, &profiles, pwhy, sizeof pwhy)) != 0 ||
      (rc = sq__profiles_find(profiles, profile, &run_jail, &def, &max, pwhy, sizeof pwhy)) != 0) {
    fprintf(stderr, "sandq-worker run: --profile: %s\n", pwhy);
    if (rc == SQ_ECONFIG || rc == SQ_ENOTFOUND) ret = 2;
    goto out;
  }
  sq_jail_limits_apply(&lim, &def, &max);
  rc = run_jail ? 0 : sq_jail_new(&jcfg, &jail);
  if (!run_jail) run_jail = jail;
  if (rc != 0) {
    fprintf(stderr, "sandq-worker run: cannot set up the jail (python %s, scratch root %s): %s\n",
            cfg.python_path, cfg.scratch_root, sq_strerror(rc));
    goto out;
  }
  if (plan.reference) { /* the reference alone first, under the profile's defaults */
    sq_jail_limits ref_lim = def;
    sq_jail_limits_apply(&ref_lim, &def, &max);
    char *ref_program = NULL, why[512];
    if (sq_workspace_program(&task, plan.reference, &ref_lim, NULL, false, &ref_program) != 0) {
      fprintf(stderr, "sandq-worker run: out of memory\n");
      goto out;
    }
    sq_language_limits(a.language, &ref_lim);
    rc = sq_jail_run_task(run_jail, ref_program, strlen(ref_program), plan.reference, strlen(plan.reference), NULL, 0,
                          &ref_lim, &(sq_jail_run_opts){.widenings = sq_language_widenings(a.language)}, NULL, &o);
    free(ref_program);
    if (rc != 0) {
      fprintf(stderr, "sandq-worker run: the jail could not be set up: %s\n", o.error);
      goto out;
    }
    packed = sq_calls_reference_take(&o, plan.n_calls, why, sizeof why);
    sq_jail_outcome_clear(&o);
    if (!packed || sq_calls_results_unpack(packed, plan.n_calls, &ref) != 0) {
      char reason[640];
      snprintf(reason, sizeof reason, "the tests' expected values could not be computed (a problem of the tests, "
               "not the code): %s", why);
      o.exit_code = -1;
      if (print_outcome(&o, SQ_STATUS_INVALID_TASK, &no_findings, reason, NULL, profile) == 0) ret = 0;
      goto out;
    }
  }
  sq_jail_limits jail_lim = lim;
  sq_language_limits(a.language, &jail_lim);
  rc = sq_jail_run_task(run_jail, program, strlen(program), listing, strlen(listing), input, input_len, &jail_lim,
                        &(sq_jail_run_opts){.widenings = sq_language_widenings(a.language)}, NULL, &o);
  if (rc != 0) {
    fprintf(stderr, "sandq-worker run: the jail could not be set up: %s\n", o.error);
    goto out;
  }
  sq_verdict_input in = {.has_tests = python && sq_harness_applies(&task), .expected_stdout = a.expected_stdout};
  char calls_why[512] = "";
  if (plan.candidate) {
    in.calls = true;
    if (sq_calls_take(o.stdout_buf, &o.stdout_len, plan.n_calls, &got) != 0) {
      fprintf(stderr, "sandq-worker run: out of memory\n");
      goto out;
    }
    in.calls_passed = sq_calls_judge(&got, &ref, calls_why, sizeof calls_why);
    in.calls_why = calls_why;
  }
  if (in.has_tests) sq_harness_take_marks(&o, &in.marks);
  sq_harness_marks_clear(&in.marks); /* one run: its plan is kept by no one */
  sq_workspace_files files = {0};
  if (!python && sq_workspace_take_files(&o, 0, &files) != 0) {
    fprintf(stderr, "sandq-worker run: out of memory\n");
    goto out;
  }
  in.compile_error = files.compile_error;
  sq_workspace_files_clear(&files);
  const char *why = NULL;
  sq_status status = sq_verdict_decide(&o, &in, &why);
  char reason[512] = "";
  if (status == SQ_STATUS_COMPILE_ERROR) sq_workspace_compile_reason(&o, reason, sizeof reason);
  else if (!python && !why && status != SQ_STATUS_PASSED && status != SQ_STATUS_OK)
    sq_reason_build(status, &o, &jail_lim, a.expected_stdout, reason, sizeof reason);
  if (!why && reason[0]) why = reason;
  if (print_outcome(&o, status, &rep, why, &in.marks, profile) != 0) {
    fprintf(stderr, "sandq-worker run: cannot print the result\n");
    goto out;
  }
  ret = 0;
out:
  sq_calls_plan_clear(&plan);
  sq_calls_results_clear(&ref);
  sq_calls_results_clear(&got);
  free(packed);
  sq_jail_outcome_clear(&o);
  sq_jail_free(jail);
  sq__profiles_free(profiles);
  free(program);
  free(input);
  free(listing);
  free(tests);
  free(code);
  return ret;
}

const sq_worker_cmd sq_cmd_run = {
    "run", "run [options] FILE|-   (- reads standard input)",
    "one program through the jail, no Redis, no LLM; one JSON object on stdout\n"
    "exit 0 the program ran (whatever its verdict), 1 the jail could not be set up, 2 usage or configuration",
    run_flags, run};
