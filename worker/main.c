/* main.c: sandq-worker entry point. Dispatches to a subcommand, nothing more. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: sandq-worker serve [--redis URL] [--queue NAME] [--config FILE] [--worker-id ID]\n"
          "                          [--log-level LEVEL]\n"
          "       sandq-worker run [--wall-ms N] [--cpu-ms N] [--memory-mib N] [--output-kib N]\n"
          "                        [--tests FILE] [--entry-point NAME] [--mode spawn|warm] FILE.py|-\n"
          "       sandq-worker check [--config FILE]\n"
          "       sandq-worker COMMAND --help      the command's options\n"
          "       sandq-worker --version\n"
          "options go anywhere after the command; exit codes: 0 ok, 1 error, 2 usage or configuration\n"
          "(docs/configuration.md, \"Exit codes\")\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "serve") == 0) return sq_cmd_serve(argc - 1, argv + 1);
  if (strcmp(argv[1], "run") == 0) return sq_cmd_run(argc - 1, argv + 1);
  if (strcmp(argv[1], "check") == 0) return sq_cmd_check(argc - 1, argv + 1);
  if (strcmp(argv[1], "--version") == 0) {
    printf("sandq-worker %s\n", SQ_VERSION);
    return 0;
  }
  if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "sandq-worker: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
