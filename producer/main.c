/* main.c: sandq-producer's command line: find the command (options may
 * come before it), parse its flags (cli.h: one table per command, options
 * anywhere, --help on every command, --version), build the configuration
 * (sq_config_build: defaults, --config file, environment, flags) and
 * dispatch: push (push_cmd.c), status (progress.c, report.c), wait,
 * batches and cancel (batch_cmd.c), dead,
 * metrics, health, rollout, audit, results, report, evaluate and import
 * (their own files; import needs no Redis and no configuration). Nothing
 * more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cli.h"
#include "config.h"
#include "errors.h"
#include "eval.h"
#include "log.h"
#include "producer.h"
#include "util.h"

/* Every command takes these; each table below starts with them. */
#define COMMON_FLAGS                                                                                \
  {"redis", "URL", "redis_url",                                                                     \
   "redis://[user:password@]host[:port][/db], unix:///path, redis-sentinel://HOST:PORT[,...]/MASTER " \
   "or redis-cluster://HOST:PORT[,...] (SANDQ_REDIS_URL)"},                                          \
      {"queue", "NAME", "queue", "queue name (SANDQ_QUEUE, default \"default\")"},                    \
      {"config", "FILE", NULL, "JSON configuration file"},                                          \
      {"log-level", "LEVEL", "log_level", "debug, info, warn or error (SANDQ_LOG_LEVEL)"}

static const sq_cli_flag push_flags[] = {
    COMMON_FLAGS,
    {"batch", "ID", NULL, "batch id (default b-YYYYmmdd-HHMMSS-xxxx), [A-Za-z0-9._:-]{1,128}"},
    {"wait", NULL, NULL, "wait until every task has a result, then print a summary"},
    {"timeout-s", "N", NULL, "with --wait: give up after N seconds (exit 3)"},
    {"out", "FILE.bson", NULL, "write the results as concatenated BSON (implies --wait)"},
    {"table", NULL, NULL, "print one row per task (implies --wait)"},
    {"no-validate", NULL, NULL, "push every non-blank line as it is (for testing workers)"},
    {"block", NULL, NULL, "wait while the queue is full (max_queue_len) instead of failing"},
    {"budget-usd", "X", NULL, "LLM spend cap for the batch; workers start no LLM work for it once spent"},
    {NULL, NULL, NULL, NULL},
};
static const sq_cli_flag wait_flags[] = {
    COMMON_FLAGS,
    {"timeout-s", "N", NULL, "give up after N seconds (exit 3); the batch keeps running"},
    {"out", "FILE.bson", NULL, "write the results as concatenated BSON"},
    {"table", NULL, NULL, "print one row per task"},
    {NULL, NULL, NULL, NULL},
};
static const sq_cli_flag batches_flags[] = {
    COMMON_FLAGS,
    {"json", NULL, NULL, "one JSON array for scripts"},
    {"limit", "N", NULL, "the N latest batches only"},
    {NULL, NULL, NULL, NULL},
};
static const sq_cli_flag cancel_flags[] = {
    COMMON_FLAGS,
    {"kill", NULL, NULL, "stop its running tasks too (each ends with status cancelled)"},
    {NULL, NULL, NULL, NULL},
};
static const sq_cli_flag common_flags[] = {COMMON_FLAGS, {NULL, NULL, NULL, NULL}};
static const sq_cli_flag dead_flags[] = {
    COMMON_FLAGS, {"all", NULL, NULL, "with requeue: every entry"}, {NULL, NULL, NULL, NULL}};
static const sq_cli_flag metrics_flags[] = {
    COMMON_FLAGS,
    {"listen", "HOST:PORT", NULL, "serve GET /metrics and /healthz there instead of printing (loopback by default)"},
    {NULL, NULL, NULL, NULL}};
static const sq_cli_flag api_flags[] = {
    COMMON_FLAGS,
    {"listen", "HOST:PORT", NULL, "where to serve SandboxFusion's API (default 127.0.0.1:8080; 0.0.0.0 for every interface)"},
    {"max-in-flight", "N", NULL, "requests waiting for a result at once; past it 503 (default 256)"},
    {"max-request-kib", "N", NULL, "the largest request body; past it 413 (default: max_task_kib)"},
    {"slack-s", "N", NULL, "a request's deadline: compile_timeout + run_timeout + N s, then 504 (default 8)"},
    {NULL, NULL, NULL, NULL}};
static const sq_cli_flag health_flags[] = {
    COMMON_FLAGS, {"json", NULL, NULL, "one JSON object for scripts"}, {NULL, NULL, NULL, NULL}};
static const sq_cli_flag rollout_flags[] = {
    COMMON_FLAGS,
    {"force", NULL, NULL, "with start: even when no live worker has both providers configured"},
    {NULL, NULL, NULL, NULL}};
static const sq_cli_flag audit_flags[] = {
    COMMON_FLAGS,
    {"batch", "B", NULL, "only this batch's programs"},
    {"since", "T", NULL, "only entries from T on (ms since the epoch, or a stream id)"},
    {"json", NULL, NULL, "JSON Lines instead of a table"},
    {NULL, NULL, NULL, NULL}};
static const sq_cli_flag results_flags[] = {
    COMMON_FLAGS,
    {"format", "F", NULL, "bson (as stored, the default), jsonl (relaxed Extended JSON) or csv (a row per task)"},
    {"out", "FILE", NULL, "write FILE whole (a temporary file, then a rename) instead of stdout"},
    {"delete", NULL, NULL, "with --out: once FILE holds them, remove the batch's results from the queue"},
    {NULL, NULL, NULL, NULL}};
static const sq_cli_flag report_flags[] = {
    COMMON_FLAGS,
    {"json", NULL, NULL, "the report as JSON (schema sandq.report/1, docs/evaluation.md) instead of text"},
    {"html", "FILE", NULL, "also write a self-contained HTML page with plots (inline SVG, no scripts)"},
    {"k", "LIST", NULL, "the k of pass@k, comma-separated (default 1,10,100), by metadata.task_id"},
    {"allow-missing", NULL, NULL,
     "exit 0 although some samples have no verdict (llm_error, invalid_task, cancelled, ...; else exit 3)"},
    {NULL, NULL, NULL, NULL}};

/* import's flags but --batch (evaluate takes them too) */
#define IMPORT_FLAGS                                                                                                  \
  {"canonical", NULL, NULL, "one task per problem with its reference solution as code"}, \
    {"completions", "FILE", NULL, \
     "one task per line of FILE ({\"task_id\", \"completion\"}, .gz accepted; - reads standard input)"}, \
    {"samples", "N", NULL, "N prompt-only tasks per problem, for the workers' LLM (default 1)"}, \
    {"temperature", "T", NULL, "with --samples: the sampling temperature, 0..2 (default 0)"}, \
    {"model", "M", NULL, "with --samples: the model to ask for (default: the provider's)"}, \
    {"prompt-template", "FILE", NULL, \
     "with --samples: what each task asks, with {prompt}, {tests}, {entry_point} (HumanEval), {task_id}"}, \
    {"wall-ms", "N", NULL, "each task's wall-clock limit, 1..86400000 (default: the worker's, 10000)"}, \
    {"cpu-ms", "N", NULL, "each task's CPU-time limit, 1..86400000 (default: the worker's, 5000)"}, \
    {"memory-mib", "N", NULL, "each task's memory limit, 16..1048576 (default: the worker's, 512; the worker clamps each to its max_limits)"}, \
    {"max-cases", "N", NULL, "apps: keep each row's first N cases, 1..1000000 (default: all; said on stderr per row)"}, \
    {"split", "S", NULL, "MBPP's problems: test (11-510, what papers report; the default), validation, train, prompt or all"}

static const sq_cli_flag import_flags[] = {
    IMPORT_FLAGS,
    {"batch", "B", NULL,
     "the batch the tasks are for: each gets an idempotency_key, so pushing the file into B again resumes it"},
    {NULL, NULL, NULL, NULL}};

static const sq_cli_flag evaluate_flags[] = {
    COMMON_FLAGS,
    IMPORT_FLAGS,
    {"batch", "B", NULL,
     "the batch (default eval-YYYYmmdd-HHMMSS-xxxx); its tasks get idempotency keys, so on a fleet the same B resumes"},
    {"k", "LIST", NULL, "the k of pass@k, comma-separated (default 1,10,100)"},
    {"json", NULL, NULL, "the report as JSON (schema sandq.report/1) instead of text"},
    {"html", "FILE", NULL, "also write the report as a self-contained HTML page"},
    {"allow-missing", NULL, NULL, "exit 0 although some samples have no verdict (else exit 3)"},
    {"workers", "N", NULL,
     "without a Redis: the local workers to start, 1..64 (default: one per core the host allows, up to 8)"},
    {"timeout-s", "N", NULL, "give up after N seconds (exit 3)"},
    {NULL, NULL, NULL, NULL}};

static int push_cmd(const sq_config *cfg, const sq_cli *cli);
static int status_cmd(const sq_config *cfg, const sq_cli *cli);
static int wait_cmd(const sq_config *cfg, const sq_cli *cli);
static int batches_cmd(const sq_config *cfg, const sq_cli *cli);
static int cancel_cmd(const sq_config *cfg, const sq_cli *cli);

/* A command reads its own flags from cli (sq_cli_get) and its operands;
 * cfg is NULL for a command that needs none. */
typedef struct {
  const char *name, *synopsis;
  const char *about; /* more lines for --help, or NULL */
  const sq_cli_flag *flags;
  bool needs_config;
  int (*run)(const sq_config *cfg, const sq_cli *cli);
} command;

static const command commands[] = {
    {"push", "push [options] TASKS.jsonl|-   (- reads standard input)", NULL, push_flags, true, push_cmd},
    {"status", "status [options] BATCH", NULL, common_flags, true, status_cmd},
    {"wait", "wait [options] BATCH [--out FILE] [--table] [--timeout-s N]   re-attach to a batch", NULL, wait_flags,
     true, wait_cmd},
    {"batches", "batches [options] [--json] [--limit N]   the queue's batches, latest first", NULL, batches_flags,
     true, batches_cmd},
    {"cancel", "cancel [options] BATCH [--kill]   end its waiting tasks (status cancelled); running ones finish, "
     "or with --kill are stopped", NULL, cancel_flags, true, cancel_cmd},
    {"dead", "dead [options] list | show ID | requeue ID | requeue --all", NULL, dead_flags, true, sq__dead_run},
    {"metrics", "metrics [options] [--listen HOST:PORT | FILE]   Prometheus text, fleet-wide", NULL, metrics_flags,
     true, sq__metrics_run},
    {"api", "api [options] [--listen HOST:PORT]   SandboxFusion's HTTP API (/run_code) on the queue; "
     "SANDQ_API_TOKEN asks a bearer token", NULL, api_flags, true, sq__api_run_cmd},
    {"health", "health [options] [--json] [WORKER]   exit 0 healthy, 1 not", NULL, health_flags, true,
     sq__health_run},
    {"rollout", "rollout [options] start [--force] CANDIDATE BASELINE | status | abort | clear", NULL,
     rollout_flags, true, sq__rollout_run},
    {"audit", "audit [options] [--batch B] [--since T] [--json]   programs run, oldest first", NULL, audit_flags,
     true, sq__audit_run},
    {"results", "results [options] BATCH [--format bson|jsonl|csv] [--out FILE [--delete]]", NULL, results_flags, true,
     sq__results_run},
    {"report", "report [options] BATCH [BATCH_B] [--json] [--html FILE] [--k 1,10,100]", NULL, report_flags,
     true, sq__report_cmd_run},
    {"evaluate", "evaluate DATASET FILE (--canonical | --completions F | --samples N) [--k LIST] [--json] [--html F] "
     "[--workers N]",
     "  import, push, wait and report in one command. With a Redis given (SANDQ_REDIS_URL, --redis, a config\n"
     "  file), on that fleet; else on a private redis-server and N local sandq-worker serve it starts, and\n"
     "  stops when done or interrupted. Exit: report's (0, 3 samples without a verdict, 6 unreadable results).",
     evaluate_flags, true, sq__evaluate_run},
    {"import", "import humaneval|mbpp|apps|humaneval+|mbpp+|multipl-e FILE|- [--canonical | --completions F | --samples N] ...",
     "  FILE: the dataset, JSONL or JSONL.gz (HumanEval.jsonl.gz, mbpp.jsonl, APPS/TACO, evalplus, MultiPL-E rows);\n"
     "  - reads standard input.\n"
     "Task JSONL goes to stdout; ids are <problem id>/<sample index>, metadata.task_id the problem's.",
     import_flags, false, sq__import_run},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    fprintf(f, "%s sandq-producer %s\n", i ? "      " : "usage:", commands[i].synopsis);
  fputs("       sandq-producer COMMAND --help      the command's options\n"
        "       sandq-producer --version\n"
        "\n"
        "options go anywhere, before or after the command; every command but import takes --redis, --queue,\n"
        "--config, --log-level.\n"
        "exit codes: 0 ok, 1 error (Redis, I/O, invalid tasks), 2 usage or configuration (also a Redis\n"
        "            that refuses the credentials), 3 timeout (report, evaluate: samples without a verdict),\n"
        "            4 expectation differed, 5 finished with tasks\n"
        "            in the dead letter, 6 a stored result is not BSON, 130 interrupted (the batch keeps running;\n"
        "            docs/configuration.md, \"Exit codes\")\n",
        f);
}

static void command_usage(FILE *f, const command *c) {
  fprintf(f, "usage: sandq-producer %s\n", c->synopsis);
  if (c->about) fprintf(f, "%s\n", c->about);
  fprintf(f, "\noptions:\n");
  sq_cli_print_flags(f, c->flags);
}

/* The queue library's notices (a reconnect, reloaded functions): it logs
 * nothing itself. */
static void queue_notice(const char *text, void *ud) {
  (void)ud;
  SQ_WARN("%s", text);
}

/* --timeout-s N into *out; SQ_EXIT_USAGE after saying why. */
static int timeout_opt(const sq_cli *cli, int64_t *out) {
  const char *v = sq_cli_get(cli, "timeout-s");
  if (v && sq_parse_i64(v, 1, 366LL * 24 * 3600, out) != 0) {
    fprintf(stderr, "sandq-producer: --timeout-s '%s' must be a whole number of seconds >= 1\n", v);
    return SQ_EXIT_USAGE;
  }
  return 0;
}

/* push's own flags into o; returns 0 or SQ_EXIT_USAGE after saying why. */
static int push_opts(const sq_cli *cli, sq_push_opts *o) {
  const char *v;
  o->batch = sq_cli_get(cli, "batch");
  o->wait = sq_cli_get(cli, "wait") != NULL;
  o->out_path = sq_cli_get(cli, "out");
  o->table = sq_cli_get(cli, "table") != NULL;
  o->no_validate = sq_cli_get(cli, "no-validate") != NULL;
  o->block = sq_cli_get(cli, "block") != NULL;
  if (o->out_path && !o->out_path[0]) {
    fprintf(stderr, "sandq-producer: --out needs a file name\n");
    return SQ_EXIT_USAGE;
  }
  if (timeout_opt(cli, &o->timeout_s)) return SQ_EXIT_USAGE;
  if ((v = sq_cli_get(cli, "budget-usd"))) {
    char *end = NULL;
    o->budget_usd = strtod(v, &end);
    if (!*v || *end || !(o->budget_usd >= 0) || o->budget_usd > 1e9) {
      fprintf(stderr, "sandq-producer: --budget-usd '%s' must be a number of dollars >= 0\n", v);
      return SQ_EXIT_USAGE;
    }
  }
  if (o->out_path || o->table) o->wait = true;
  if (o->timeout_s && !o->wait) {
    fprintf(stderr, "sandq-producer: --timeout-s needs --wait\n");
    return SQ_EXIT_USAGE;
  }
  return 0;
}

static int push_cmd(const sq_config *cfg, const sq_cli *cli) {
  sq_push_opts o = {.budget_usd = -1};
  int code = push_opts(cli, &o);
  if (code) return code;
  o.path = cli->operands[0];
  return sq__push_run(cfg, &o);
}

static int status_cmd(const sq_config *cfg, const sq_cli *cli) { return sq__status_run(cfg, cli->operands[0]); }

static int wait_cmd(const sq_config *cfg, const sq_cli *cli) {
  sq_wait_opts o = {.batch = cli->operands[0], .out_path = sq_cli_get(cli, "out"),
                    .table = sq_cli_get(cli, "table") != NULL};
  if (o.out_path && !o.out_path[0]) {
    fprintf(stderr, "sandq-producer: --out needs a file name\n");
    return SQ_EXIT_USAGE;
  }
  if (timeout_opt(cli, &o.timeout_s)) return SQ_EXIT_USAGE;
  return sq__wait_run(cfg, &o);
}

static int batches_cmd(const sq_config *cfg, const sq_cli *cli) {
  sq_batches_opts o = {.json = sq_cli_get(cli, "json") != NULL};
  const char *v = sq_cli_get(cli, "limit");
  if (cli->n_operands) {
    fprintf(stderr, "sandq-producer: batches takes no operand ('%s')\n", cli->operands[0]);
    return SQ_EXIT_USAGE;
  }
  if (v && sq_parse_i64(v, 1, 1000000, &o.limit) != 0) {
    fprintf(stderr, "sandq-producer: --limit '%s' must be a whole number >= 1\n", v);
    return SQ_EXIT_USAGE;
  }
  return sq__batches_run(cfg, &o);
}

static int cancel_cmd(const sq_config *cfg, const sq_cli *cli) {
  return sq__cancel_run(cfg, cli->operands[0], sq_cli_get(cli, "kill") != NULL);
}

static int run_command(const command *c, const sq_cli *cli) {
  bool one_batch = c->run == status_cmd || c->run == wait_cmd || c->run == cancel_cmd;
  if ((c->run == push_cmd || one_batch) && cli->n_operands != 1) {
    fprintf(stderr, "sandq-producer: %s takes exactly one %s\n", c->name,
            c->run == push_cmd ? "TASKS.jsonl file (or -)" : "BATCH id");
    command_usage(stderr, c);
    return SQ_EXIT_USAGE;
  }
  if (!c->needs_config) return c->run(NULL, cli);
  sq_config cfg;
  char err[512];
  if (sq_config_build(&cfg, cli, err, sizeof err) != 0) {
    fprintf(stderr, "sandq-producer: configuration: %s\n", err);
    return SQ_EXIT_USAGE;
  }
  sq_log_init("sandq-producer", cfg.log_level);
  sq_queue_set_notice(queue_notice, NULL);
  return c->run(&cfg, cli);
}

/* No command among the arguments: the program's --help, --version or usage. */
static int no_command(int argc, char **argv) {
  sq_cli cli;
  char err[256];
  if (sq_cli_parse(common_flags, argc, argv, 1, -1, &cli, err, sizeof err) != 0) {
    fprintf(stderr, "sandq-producer: %s\n", err);
    return SQ_EXIT_USAGE;
  }
  int code = cli.help || cli.version ? SQ_EXIT_OK : SQ_EXIT_USAGE;
  if (cli.version) printf("sandq-producer %s\n", SQ_VERSION);
  else usage(code ? stderr : stdout);
  sq_cli_clear(&cli);
  return code;
}

int main(int argc, char **argv) {
  const command *c = NULL;
  int at = argc;
  for (size_t i = 0; i < N_COMMANDS && !c; i++) {
    at = sq_cli_command(commands[i].flags, argc, argv, 1);
    if (at < argc && strcmp(argv[at], commands[i].name) == 0) c = &commands[i];
  }
  if (!c) {
    at = sq_cli_command(common_flags, argc, argv, 1);
    if (at == argc) return no_command(argc, argv);
    if (strcmp(argv[at], "help") == 0) {
      usage(stdout);
      return SQ_EXIT_OK;
    }
    const char *names[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++) names[i] = commands[i].name;
    const char *near = sq_cli_nearest(argv[at], names, N_COMMANDS);
    if (near) fprintf(stderr, "sandq-producer: unknown command '%s' (did you mean %s?)\n", argv[at], near);
    else fprintf(stderr, "sandq-producer: unknown command '%s' (sandq-producer --help lists the commands)\n", argv[at]);
    return SQ_EXIT_USAGE;
  }
  sq_cli cli;
  char err[256];
  if (sq_cli_parse(c->flags, argc, argv, 1, at, &cli, err, sizeof err) != 0) {
    fprintf(stderr, "sandq-producer %s: %s\n", c->name, err);
    return SQ_EXIT_USAGE;
  }
  int code;
  if (cli.help) {
    command_usage(stdout, c);
    code = SQ_EXIT_OK;
  } else if (cli.version) {
    printf("sandq-producer %s\n", SQ_VERSION);
    code = SQ_EXIT_OK;
  } else {
    code = run_command(c, &cli);
  }
  sq_cli_clear(&cli);
  return code;
}
