/* cli.h: one command-line grammar for every sandq program and subcommand:
 * options anywhere among the operands ("--flag VALUE" or "--flag=VALUE"),
 * "--" ends the options, "-" is an operand (standard input), -h/--help
 * and --version everywhere. A command declares its flags in a table; flags
 * that name a configuration key are applied over the file and the
 * environment, in command-line order (the last one wins). docs/configuration.md,
 * "Command line", lists every flag. */
#ifndef SQ_CLI_H
#define SQ_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>


/* The version every program prints for --version (CMake's project version). */
#ifndef SQ_VERSION
#define SQ_VERSION "0.0.0"
#endif

/* One flag of a command. A table ends with an entry whose name is NULL. */
typedef struct {
  const char *name;       /* "redis" for --redis */
  const char *arg;        /* NULL: a switch; else the value's placeholder in the usage ("URL") */
  const char *config_key; /* not NULL: the value sets this configuration key (config.h, sq_config_apply_flags) */
  const char *help;       /* one line for the usage */
  bool pass_on;           /* true: also handed to the command among its operands, before the others,
                           * as written ("--all"; "--listen" "ADDR" or "--listen=ADDR"), for a
                           * command that reads its own options (getopt with "+" works on them) */
} sq_cli_flag;

typedef struct {
  const sq_cli_flag *flag; /* into the command's table */
  const char *value;       /* argv's own string; NULL for a switch */
} sq_cli_opt;

/* A parsed command line. Arrays point into argv and the flag table; the
 * caller owns the struct and releases the arrays with sq_cli_clear. */
typedef struct {
  sq_cli_opt *opts;   /* in command-line order, repeats kept */
  size_t n_opts;
  char **operands;    /* pass_on options first, then everything that is not an option, in order */
  size_t n_operands;
  bool help;          /* -h or --help was given */
  bool version;       /* --version was given */
} sq_cli;

/* Parses argv[first..argc-1] against flags into *out (cleared first). An
 * unknown flag, a missing value or a value given to a switch is an error:
 * returns SQ_EINVAL with a one-line message in err ("unknown option
 * '--frobnicate'"), SQ_ENOMEM, or 0. On an error *out holds nothing: there is
 * nothing to clear. */
int sq_cli_parse(const sq_cli_flag *flags, int argc, char **argv, int first, sq_cli *out, char *err,
                 size_t errlen);

/* Frees the arrays of c (the struct itself is the caller's); NULL is a no-op. */
void sq_cli_clear(sq_cli *c);

/* The last value given for --name (a switch's: ""), or NULL when absent. */
const char *sq_cli_get(const sq_cli *c, const char *name);

/* Prints one line per flag of the table ("  --redis URL   help"), plus
 * -h/--help and --version. */
void sq_cli_print_flags(FILE *f, const sq_cli_flag *flags);

#endif
