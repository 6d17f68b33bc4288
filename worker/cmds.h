/* cmds.h: the worker's subcommands; main.c finds the command among the
 * options, parses the command line against its flag table (cli.h), answers
 * --help and --version, and runs it. */
#ifndef SQ_WORKER_CMDS_H
#define SQ_WORKER_CMDS_H

#include "cli.h"
#include "config.h"

typedef struct {
  const char *name;
  const char *synopsis;    /* after "usage: sandq-worker " */
  const char *about;       /* a line or two for --help; may be NULL */
  const sq_cli_flag *flags;
  int (*run)(const sq_cli *cli); /* returns the process exit code; cli lives until it returns */
} sq_worker_cmd;

/* sandq-worker serve: claim, generate, check, execute, record. */
extern const sq_worker_cmd sq_cmd_serve;
/* sandq-worker run: one file in the jail, no Redis, no LLM; prints JSON. */
extern const sq_worker_cmd sq_cmd_run;
/* sandq-worker check: which jail layers this host enforces; exit 0/1. */
extern const sq_worker_cmd sq_cmd_check;

/* sq_config_build over cli; a failure is said on stderr as
 * "sandq-worker CMD: configuration: ..." Returns 0 or 2 (the usage code). */
int sq_cmd_config(const char *cmd, sq_config *cfg, const sq_cli *cli);

#endif
