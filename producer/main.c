/* main.c: sandq-producer's command line: parse arguments (cli.h: options
 * anywhere, --help on every command, --version), build the configuration
 * (defaults, --config file, environment, flags) and dispatch to a command:
 * push (push.c), status (progress.c, report.c), dead, metrics, health,
 * rollout, audit, results and report (their own files); import (eval.h),
 * which needs no Redis, parses its own options. Nothing more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "errors.h"
#include "eval.h"
#include "log.h"
#include "producer.h"
#include "util.h"

/* Every command takes these; each table below starts with them. */
#define COMMON_FLAGS                                                                                    \
  {"redis", "URL", "redis_url",                                                                         \
   "redis://[user:password@]host[:port][/db], unix:///path, redis-sentinel://HOST:PORT[,...]/MASTER "  \
   "or redis-cluster://HOST:PORT[,...] (SANDQ_REDIS_URL)",                                              \
   false},                                                                                              \
      {"queue", "NAME", "queue", "queue name (SANDQ_QUEUE, default \"default\")", false},                  \
      {"config", "FILE", NULL, "JSON configuration file", false},                                        \
      {"log-level", "LEVEL", "log_level", "debug, info, warn or error (SANDQ_LOG_LEVEL)", false}

static const sq_cli_flag push_flags[] = {
    COMMON_FLAGS,
    {"batch", "ID", NULL, "batch id (default b-YYYYmmdd-HHMMSS-xxxx), [A-Za-z0-9._:-]{1,128}", false},
    {"wait", NULL, NULL, "wait until every task has a result, then print a summary", false},
    {"timeout-s", "N", NULL, "with --wait: give up after N seconds (exit 3)", false},
    {"out", "FILE.bson", NULL, "write the results as concatenated BSON (implies --wait)", false},
    {"table", NULL, NULL, "print one row per task (implies --wait)", false},
    {"no-validate", NULL, NULL, "push every non-blank line as it is (for testing workers)", false},
    {"block", NULL, NULL, "wait while the queue is full (max_queue_len) instead of failing", false},
    {"budget-usd", "X", NULL, "LLM spend cap for the batch; workers start no LLM work for it once spent", false},
    {NULL, NULL, NULL, NULL, false},
};
static const sq_cli_flag common_flags[] = {COMMON_FLAGS, {NULL, NULL, NULL, NULL, false}};
static const sq_cli_flag dead_flags[] = {
    COMMON_FLAGS, {"all", NULL, NULL, "with requeue: every entry", true}, {NULL, NULL, NULL, NULL, false}};
static const sq_cli_flag metrics_flags[] = {
    COMMON_FLAGS,
    {"listen", "HOST:PORT", NULL, "serve GET /metrics and /healthz there instead of printing (loopback by default)", true},
    {NULL, NULL, NULL, NULL, false}};
static const sq_cli_flag health_flags[] = {
    COMMON_FLAGS, {"json", NULL, NULL, "one JSON object for scripts", true}, {NULL, NULL, NULL, NULL, false}};
static const sq_cli_flag rollout_flags[] = {
    COMMON_FLAGS,
    {"force", NULL, NULL, "with start: even when no live worker has both providers configured", true},
    {NULL, NULL, NULL, NULL, false}};
static const sq_cli_flag audit_flags[] = {
    COMMON_FLAGS,
    {"batch", "B", NULL, "only this batch's programs", true},
    {"since", "T", NULL, "only entries from T on (ms since the epoch, or a stream id)", true},
    {"json", NULL, NULL, "JSON Lines instead of a table", true},
    {NULL, NULL, NULL, NULL, false}};
static const sq_cli_flag results_flags[] = {
    COMMON_FLAGS,
    {"format", "F", NULL, "bson (as stored, the default), jsonl (relaxed Extended JSON) or csv (a row per task)", true},
    {"out", "FILE", NULL, "write FILE whole (a temporary file, then a rename) instead of stdout", true},
    {NULL, NULL, NULL, NULL, false}};
static const sq_cli_flag report_flags[] = {
    COMMON_FLAGS,
    {"json", NULL, NULL, "the report as JSON (schema sandq.report/1, docs/evaluation.md) instead of text", true},
    {"html", "FILE", NULL, "also write a self-contained HTML page with plots (inline SVG, no scripts)", true},
    {"k", "LIST", NULL, "the k of pass@k, comma-separated (default 1,10,100), by metadata.task_id", true},
    {NULL, NULL, NULL, NULL, false}};

/* A command that reads options of its own (dead's --all) declares them
 * pass_on: they are checked here like any flag, and handed to it ahead of
 * its operands, so getopt("+...") there sees them wherever they were given. */
typedef struct {
  const char *name, *synopsis;
  const sq_cli_flag *flags;
  int (*run)(const sq_config *, int, char **); /* NULL: push and status, handled here */
} command;

static const command commands[] = {
    {"push", "push [options] TASKS.jsonl|-   (- reads standard input)", push_flags, NULL},
    {"status", "status [options] BATCH", common_flags, NULL},
    {"dead", "dead [options] list | show ID | requeue ID | requeue --all", dead_flags, sq__dead_run},
    {"metrics", "metrics [options] [--listen HOST:PORT | FILE]   Prometheus text, fleet-wide", metrics_flags,
     sq__metrics_run},
    {"health", "health [options] [--json] [WORKER]   exit 0 healthy, 1 not", health_flags, sq__health_run},
    {"rollout", "rollout [options] start [--force] CANDIDATE BASELINE | status | abort | clear", rollout_flags,
     sq__rollout_run},
    {"audit", "audit [options] [--batch B] [--since T] [--json]   programs run, oldest first", audit_flags,
     sq__audit_run},
    {"results", "results [options] BATCH [--format bson|jsonl|csv] [--out FILE]", results_flags, sq__results_run},
    {"report", "report [options] BATCH [BATCH_B] [--json] [--html FILE] [--k 1,10,100]", report_flags, sq__report_cmd_run},
};

/* Commands that parse every option themselves (eval.h): import. */
static const struct {
  const char *name, *synopsis;
  int (*run)(int, char **);
} own_parsers[] = {
    {"import", "import humaneval|mbpp FILE [--canonical | --completions F | --samples N] ...", sq__import_run},
};
#define N_OWN (sizeof own_parsers / sizeof own_parsers[0])
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    fprintf(f, "%s sandq-producer %s\n", i ? "      " : "usage:", commands[i].synopsis);
  for (size_t i = 0; i < N_OWN; i++) fprintf(f, "       sandq-producer %s\n", own_parsers[i].synopsis);
  fputs("       sandq-producer COMMAND --help      the command's options\n"
        "       sandq-producer --version\n"
        "\n"
        "options go anywhere after the command; every command takes --redis, --queue, --config, --log-level.\n"
        "exit codes: 0 ok, 1 error (Redis, I/O, invalid tasks), 2 usage or configuration (also a Redis\n"
        "            that refuses the credentials), 3 timeout, 4 expectation differed, 5 finished with tasks\n"
        "            in the dead letter, 6 a stored result is not BSON (docs/configuration.md, \"Exit codes\")\n",
        f);
}

static void command_usage(FILE *f, const command *c) {
  fprintf(f, "usage: sandq-producer %s\n\noptions:\n", c->synopsis);
  sq_cli_print_flags(f, c->flags);
}

/* The queue library's notices (a reconnect, reloaded functions): it logs
 * nothing itself. */
static void queue_notice(const char *text, void *ud) {
  (void)ud;
  SQ_WARN("%s", text);
}

/* Defaults, file, environment, flags; validated last. Explains a failure on
 * stderr and returns its code. */
static int build_config_cli(sq_config *cfg, const sq_cli *cli) {
  char err[512] = "";
  int rc;
  const char *file = sq_cli_get(cli, "config");
  sq_config_defaults(cfg);
  if (file && (rc = sq_config_load_file(cfg, file, err, sizeof err))) goto fail;
  if ((rc = sq_config_load_env(cfg, err, sizeof err))) goto fail;
  if ((rc = sq_config_apply_flags(cfg, cli, err, sizeof err))) goto fail;
  if ((rc = sq_config_validate(cfg, err, sizeof err))) goto fail;
  return 0;
fail:
  fprintf(stderr, "sandq-producer: configuration: %s\n", err[0] ? err : sq_strerror(rc));
  return rc;
}

int sq__config_build(sq_config *cfg, const char *file, const char *redis, const char *queue) {
  char *argv[6];
  int argc = 0;
  if (file) argv[argc++] = "--config", argv[argc++] = (char *)file;
  if (redis) argv[argc++] = "--redis", argv[argc++] = (char *)redis;
  if (queue) argv[argc++] = "--queue", argv[argc++] = (char *)queue;
  sq_cli cli;
  char err[256];
  int rc = sq_cli_parse(common_flags, argc, argv, 0, &cli, err, sizeof err);
  if (!rc) rc = build_config_cli(cfg, &cli);
  sq_cli_clear(&cli);
  return rc;
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
  if ((v = sq_cli_get(cli, "timeout-s")) && sq_parse_i64(v, 1, 366LL * 24 * 3600, &o->timeout_s) != 0) {
    fprintf(stderr, "sandq-producer: --timeout-s '%s' must be a whole number of seconds >= 1\n", v);
    return SQ_EXIT_USAGE;
  }
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

static int run_command(const command *c, sq_cli *cli) {
  sq_push_opts o = {.budget_usd = -1};
  bool is_push = strcmp(c->name, "push") == 0;
  if (!c->run && cli->n_operands != 1) {
    fprintf(stderr, "sandq-producer: %s takes exactly one %s\n", c->name, is_push ? "TASKS.jsonl file (or -)" : "BATCH id");
    command_usage(stderr, c);
    return SQ_EXIT_USAGE;
  }
  if (is_push && push_opts(cli, &o) != 0) return SQ_EXIT_USAGE;
  sq_config cfg;
  if (build_config_cli(&cfg, cli) != 0) return SQ_EXIT_USAGE;
  sq_log_init("sandq-producer", cfg.log_level);
  sq_queue_set_notice(queue_notice, NULL);
  if (c->run) { /* pass_on flags lead the operands; argv[-1] is the command's name, for its getopt */
    char **args = calloc(cli->n_operands + 2, sizeof *args);
    if (!args) return SQ_EXIT_ERROR;
    args[0] = (char *)c->name;
    memcpy(args + 1, cli->operands, cli->n_operands * sizeof *args);
    int code = c->run(&cfg, (int)cli->n_operands, args + 1);
    free(args);
    return code;
  }
  if (!is_push) return sq__status_run(&cfg, cli->operands[0]);
  o.path = cli->operands[0];
  return sq__push_run(&cfg, &o);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return SQ_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
    usage(stdout);
    return SQ_EXIT_OK;
  }
  if (strcmp(name, "--version") == 0) {
    printf("sandq-producer %s\n", SQ_VERSION);
    return SQ_EXIT_OK;
  }
  for (size_t i = 0; i < N_OWN; i++) {
    if (strcmp(name, own_parsers[i].name) != 0) continue;
    for (int a = 2; a < argc && strcmp(argv[a], "--") != 0; a++)
      if (strcmp(argv[a], "--version") == 0) { /* as every other command takes it */
        printf("sandq-producer %s\n", SQ_VERSION);
        return SQ_EXIT_OK;
      }
    return own_parsers[i].run(argc - 1, argv + 1);
  }
  const command *c = NULL;
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp(name, commands[i].name) == 0) c = &commands[i];
  if (!c) {
    fprintf(stderr, "sandq-producer: unknown command '%s'\n", name);
    usage(stderr);
    return SQ_EXIT_USAGE;
  }
  sq_cli cli;
  char err[256];
  if (sq_cli_parse(c->flags, argc, argv, 2, &cli, err, sizeof err) != 0) {
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
