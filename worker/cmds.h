/* cmds.h: the worker's subcommands; main.c dispatches to them. Each takes
 * the arguments after the subcommand name (argv[0] is the subcommand) and
 * returns the process exit code. */
#ifndef SQ_WORKER_CMDS_H
#define SQ_WORKER_CMDS_H

/* sandq-worker serve: claim, generate, check, execute, record. */
int sq_cmd_serve(int argc, char **argv);
/* sandq-worker run: one file in the jail, no Redis, no LLM; prints JSON. */
int sq_cmd_run(int argc, char **argv);
/* sandq-worker check: which jail layers this host enforces; exit 0/1. */
int sq_cmd_check(int argc, char **argv);

#endif
