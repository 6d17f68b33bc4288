/* main.c: sandq-worker entry point. Dispatches to a subcommand, nothing more. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: sandq-worker serve [--redis URL] [--queue NAME] [--config FILE]\n"
          "       sandq-worker run [--wall-ms N] [--cpu-ms N] [--memory-mib N] [--output-kib N]\n"
          "                        [--tests FILE] [--entry-point NAME] [--mode spawn|warm] FILE.py\n"
          "       sandq-worker check [--config FILE]\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "serve") == 0) return sq_cmd_serve(argc - 1, argv + 1);
  if (strcmp(argv[1], "run") == 0) return sq_cmd_run(argc - 1, argv + 1);
  if (strcmp(argv[1], "check") == 0) return sq_cmd_check(argc - 1, argv + 1);
  if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "sandq-worker: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
