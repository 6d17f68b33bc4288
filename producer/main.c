/* main.c: sandq-producer's command line: parse arguments, build the
 * configuration (defaults, --config file, environment, flags) and dispatch
 * to a command: push (push.c), status (progress.c, report.c), dead,
 * metrics, health and rollout (their own files). Nothing more. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "errors.h"
#include "log.h"
#include "producer.h"
#include "util.h"

static void usage(FILE *f) {
  fputs("usage: sandq-producer push [options] TASKS.jsonl\n"
        "       sandq-producer status [options] BATCH\n"
        "       sandq-producer dead [options] list | show ID | requeue ID | requeue --all\n"
        "       sandq-producer metrics [options] [FILE]      Prometheus text, fleet-wide\n"
        "       sandq-producer health [options] [WORKER]     exit 0 healthy, 1 not\n"
        "       sandq-producer rollout [options] start CANDIDATE BASELINE | status | abort | clear\n"
        "\n"
        "common options:\n"
        "  --redis URL       redis://[:password@]host[:port][/db], unix:///path,\n"
        "                    redis-sentinel://HOST:PORT[,...]/MASTER or redis-cluster://HOST:PORT[,...]\n"
        "                    (SANDQ_REDIS_URL)\n"
        "  --queue NAME      queue name (SANDQ_QUEUE, default \"default\")\n"
        "  --config FILE     JSON configuration file\n"
        "push options:\n"
        "  --batch ID        batch id (default b-YYYYmmdd-HHMMSS-xxxx), [A-Za-z0-9._:-]{1,128}\n"
        "  --wait            wait until every task has a result, then print a summary\n"
        "  --timeout-s N     with --wait: give up after N seconds (exit 3)\n"
        "  --out FILE.bson   write the results as concatenated BSON (implies --wait)\n"
        "  --table           print one row per task (implies --wait)\n"
        "  --no-validate     push every non-blank line as it is (for testing workers)\n"
        "  --block           wait while the queue is full (max_queue_len) instead of failing\n"
        "  --budget-usd X    LLM spend cap for the batch; workers start no LLM work for it once spent\n"
        "\n"
        "exit codes: 0 ok (every task has a result), 1 error or invalid tasks, 2 usage, 3 timeout,\n"
        "            4 expectation differed, 5 finished with tasks in the dead letter (no result)\n",
        f);
}

enum { OPT_REDIS = 256, OPT_QUEUE, OPT_CONFIG, OPT_BATCH, OPT_WAIT, OPT_TIMEOUT, OPT_OUT, OPT_TABLE, OPT_NOVALIDATE, OPT_BLOCK,
       OPT_BUDGET };

static const struct option long_opts[] = {
    {"redis", required_argument, NULL, OPT_REDIS},     {"queue", required_argument, NULL, OPT_QUEUE},
    {"config", required_argument, NULL, OPT_CONFIG},   {"batch", required_argument, NULL, OPT_BATCH},
    {"wait", no_argument, NULL, OPT_WAIT},             {"timeout-s", required_argument, NULL, OPT_TIMEOUT},
    {"out", required_argument, NULL, OPT_OUT},         {"table", no_argument, NULL, OPT_TABLE},
    {"no-validate", no_argument, NULL, OPT_NOVALIDATE}, {"block", no_argument, NULL, OPT_BLOCK},
    {"budget-usd", required_argument, NULL, OPT_BUDGET}, {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The queue library's notices (a reconnect, reloaded functions): it logs
 * nothing itself. */
static void queue_notice(const char *text, void *ud) {
  (void)ud;
  SQ_WARN("%s", text);
}

/* Defaults, file, environment, flags; validated last. */
static int build_config(sq_config *cfg, const char *file, const char *redis, const char *queue) {
  char err[512] = "";
  int rc;
  sq_config_defaults(cfg);
  if (file && (rc = sq_config_load_file(cfg, file, err, sizeof err))) goto fail;
  if ((rc = sq_config_load_env(cfg, err, sizeof err))) goto fail;
  if (redis && (rc = sq_config_set(cfg, "redis_url", redis, err, sizeof err))) goto fail;
  if (queue && (rc = sq_config_set(cfg, "queue", queue, err, sizeof err))) goto fail;
  if ((rc = sq_config_validate(cfg, err, sizeof err))) goto fail;
  return 0;
fail:
  fprintf(stderr, "sandq-producer: configuration: %s\n", err[0] ? err : sq_strerror(rc));
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? SQ_EXIT_USAGE : SQ_EXIT_OK;
  }
  const char *cmd = argv[1];
  static const struct {
    const char *name;
    int (*run)(const sq_config *, int, char **);
  } ops[] = {{"dead", sq__dead_run}, {"metrics", sq__metrics_run}, {"health", sq__health_run},
             {"rollout", sq__rollout_run}};
  int (*op)(const sq_config *, int, char **) = NULL;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(cmd, ops[i].name) == 0) op = ops[i].run;
  bool is_push = strcmp(cmd, "push") == 0, is_dead = op != NULL;
  if (!is_push && !is_dead && strcmp(cmd, "status") != 0) {
    fprintf(stderr, "sandq-producer: unknown command '%s'\n", cmd);
    usage(stderr);
    return SQ_EXIT_USAGE;
  }
  const char *redis = NULL, *queue = NULL, *file = NULL;
  sq_push_opts o = {.budget_usd = -1};
  int c;
  optind = 2;
  /* "requeue --all": --all is an operand of dead, not an option */
  while ((c = getopt_long(argc, argv, is_dead ? "+h" : "h", long_opts, NULL)) != -1) {
    bool push_only = c == OPT_BATCH || c == OPT_WAIT || c == OPT_TIMEOUT || c == OPT_OUT || c == OPT_TABLE ||
                     c == OPT_NOVALIDATE || c == OPT_BLOCK || c == OPT_BUDGET;
    if (push_only && !is_push) {
      fprintf(stderr, "sandq-producer: %s is an option of push only\n", argv[optind - 1]);
      return SQ_EXIT_USAGE;
    }
    switch (c) {
    case OPT_REDIS: redis = optarg; break;
    case OPT_QUEUE: queue = optarg; break;
    case OPT_CONFIG: file = optarg; break;
    case OPT_BATCH: o.batch = optarg; break;
    case OPT_WAIT: o.wait = true; break;
    case OPT_TIMEOUT:
      if (sq_parse_i64(optarg, 1, 366LL * 24 * 3600, &o.timeout_s) != 0) {
        fprintf(stderr, "sandq-producer: --timeout-s '%s' must be a whole number of seconds >= 1\n", optarg);
        return SQ_EXIT_USAGE;
      }
      break;
    case OPT_OUT: o.out_path = optarg; break;
    case OPT_TABLE: o.table = true; break;
    case OPT_NOVALIDATE: o.no_validate = true; break;
    case OPT_BLOCK: o.block = true; break;
    case OPT_BUDGET: {
      char *end = NULL;
      o.budget_usd = strtod(optarg, &end);
      if (!*optarg || *end || !(o.budget_usd >= 0) || o.budget_usd > 1e9) {
        fprintf(stderr, "sandq-producer: --budget-usd '%s' must be a number of dollars >= 0\n", optarg);
        return SQ_EXIT_USAGE;
      }
      break;
    }
    case 'h': usage(stdout); return SQ_EXIT_OK;
    default: usage(stderr); return SQ_EXIT_USAGE;
    }
  }
  if (is_dead) {
    sq_config cfg;
    if (build_config(&cfg, file, redis, queue) != 0) return SQ_EXIT_USAGE;
    sq_log_init("sandq-producer", cfg.log_level);
    sq_queue_set_notice(queue_notice, NULL);
    return op(&cfg, argc - optind, argv + optind);
  }
  if (optind != argc - 1) {
    fprintf(stderr, "sandq-producer: %s takes exactly one %s\n", cmd, is_push ? "TASKS.jsonl file" : "BATCH id");
    usage(stderr);
    return SQ_EXIT_USAGE;
  }
  if (o.out_path || o.table) o.wait = true;
  if (o.timeout_s && !o.wait) {
    fprintf(stderr, "sandq-producer: --timeout-s needs --wait\n");
    return SQ_EXIT_USAGE;
  }
  sq_config cfg;
  if (build_config(&cfg, file, redis, queue) != 0) return SQ_EXIT_USAGE;
  sq_log_init("sandq-producer", cfg.log_level);
  sq_queue_set_notice(queue_notice, NULL);
  if (!is_push) return sq__status_run(&cfg, argv[optind]);
  o.path = argv[optind];
  return sq__push_run(&cfg, &o);
}
