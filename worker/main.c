/* main.c: sandq-worker entry point: finds the command (options may come
 * before it), parses its flags (cli.h), answers --help and --version, and
 * dispatches. Nothing more. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"
#include "config.h"

static const sq_worker_cmd *const commands[] = {&sq_cmd_serve, &sq_cmd_run, &sq_cmd_check};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    fprintf(f, "%s sandq-worker %s\n", i ? "      " : "usage:", commands[i]->synopsis);
  fprintf(f, "       sandq-worker COMMAND --help      the command's options\n"
             "       sandq-worker --version\n"
             "options go anywhere, before or after the command; exit codes: 0 ok, 1 error, 2 usage or\n"
             "configuration (docs/configuration.md, \"Exit codes\")\n");
}

static void command_usage(FILE *f, const sq_worker_cmd *c) {
  fprintf(f, "usage: sandq-worker %s\n", c->synopsis);
  if (c->about) fprintf(f, "%s\n", c->about);
  fprintf(f, "\noptions:\n");
  sq_cli_print_flags(f, c->flags);
}

int sq_cmd_config(const char *cmd, sq_config *cfg, const sq_cli *cli) {
  char err[512];
  if (sq_config_build(cfg, cli, err, sizeof err) == 0) return 0;
  fprintf(stderr, "sandq-worker %s: configuration: %s\n", cmd, err);
  return 2;
}

int main(int argc, char **argv) {
  const sq_worker_cmd *c = NULL;
  int at = argc;
  for (size_t i = 0; i < N_COMMANDS && !c; i++) {
    at = sq_cli_command(commands[i]->flags, argc, argv, 1);
    if (at < argc && strcmp(argv[at], commands[i]->name) == 0) c = commands[i];
  }
  if (!c) {
    static const sq_cli_flag none[] = {{NULL, NULL, NULL, NULL}};
    at = sq_cli_command(none, argc, argv, 1);
    if (at == argc) { /* no command: the program's --help, --version or usage */
      sq_cli cli;
      char err[256];
      if (sq_cli_parse(none, argc, argv, 1, -1, &cli, err, sizeof err) != 0) {
        fprintf(stderr, "sandq-worker: %s\n", err);
        return 2;
      }
      int code = cli.help || cli.version ? 0 : 2;
      if (cli.version) printf("sandq-worker %s\n", SQ_VERSION);
      else usage(code ? stderr : stdout);
      sq_cli_clear(&cli);
      return code;
    }
    if (strcmp(argv[at], "help") == 0) {
      usage(stdout);
      return 0;
    }
    const char *names[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++) names[i] = commands[i]->name;
    const char *near = sq_cli_nearest(argv[at], names, N_COMMANDS);
    if (near) fprintf(stderr, "sandq-worker: unknown command '%s' (did you mean %s?)\n", argv[at], near);
    else fprintf(stderr, "sandq-worker: unknown command '%s' (sandq-worker --help lists the commands)\n", argv[at]);
    return 2;
  }
  sq_cli cli;
  char err[256];
  if (sq_cli_parse(c->flags, argc, argv, 1, at, &cli, err, sizeof err) != 0) {
    fprintf(stderr, "sandq-worker %s: %s\n", c->name, err);
    return 2;
  }
  int code;
  if (cli.help) {
    command_usage(stdout, c);
    code = 0;
  } else if (cli.version) {
    printf("sandq-worker %s\n", SQ_VERSION);
    code = 0;
  } else {
    code = c->run(&cli);
  }
  sq_cli_clear(&cli);
  return code;
}
