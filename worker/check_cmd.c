/* check_cmd.c: `sandq-worker check`: which containment layers this host
 * can enforce, one line each ("ok"/"MISSING", name, detail), then a real
 * run in each mode. Exit 0 when every layer is there and both runs
 * passed, 1 otherwise, 2 on a usage or configuration error. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"
#include "config.h"
#include "errors.h"
#include "jail.h"
#include "log.h"

/* Runs a two-line program in mode; prints one line; returns true when it
 * printed what it should, in its own root, as an unprivileged uid. A run
 * that fails says how: the jail's error, or how the program ended and the
 * first line of its stderr; warm mode that fell back to spawn says why. */
static bool try_run(const sq_config *cfg, sq_jail_mode mode) {
  sq_jail_config jc = {.python_path = cfg->python_path, .scratch_root = cfg->scratch_root, .mode = mode,
                       .pool_size = 1, .one_run = true};
  sq_jail *j = NULL;
  int rc = sq_jail_new(&jc, &j);
  bool ok = false;
  if (rc == 0) {
    static const char prog[] = "import os\nprint(os.getcwd(), os.getuid() != 0, os.path.exists('/home'))\n";
    sq_jail_limits lim = {.wall_ms = 10000, .cpu_ms = 5000, .memory_mib = 256, .output_kib = 16};
    sq_jail_outcome o;
    const char *fell_back = NULL;
    sq_jail_mode_in_force(j, &fell_back);
    rc = sq_jail_run(j, prog, sizeof prog - 1, &lim, NULL, &o);
    ok = rc == 0 && o.end == SQ_JAIL_EXITED_OK && o.stdout_buf && strstr(o.stdout_buf, " True False") != NULL;
    char detail[512];
    if (rc != 0)
      snprintf(detail, sizeof detail, "the jail could not be set up: %s", o.error);
    else if (o.end != SQ_JAIL_EXITED_OK)
      snprintf(detail, sizeof detail, "the program ended %s (exit %d): %.200s", sq_jail_end_name(o.end), o.exit_code,
               o.stderr_buf ? strtok(o.stderr_buf, "\n") : "no stderr");
    else
      snprintf(detail, sizeof detail, "%s%s", o.stdout_buf ? strtok(o.stdout_buf, "\n") : "",
               ok ? "" : " (want: its own directory, not root, no /home)");
    printf("%-8s run_%-13s %s%s%s%s\n", ok ? "ok" : "FAILED", sq_jail_mode_name(mode), fell_back ? "ran in spawn mode: " : "",
           fell_back ? fell_back : "", fell_back ? "; " : "", detail);
    sq_jail_outcome_clear(&o);
  } else {
    printf("%-8s run_%-13s the jail could not start: %s\n", "FAILED", sq_jail_mode_name(mode), sq_strerror(rc));
  }
  sq_jail_free(j);
  return ok;
}

static const sq_cli_flag check_flags[] = {
    {"config", "FILE", NULL, "JSON configuration file (python, scratch_root, jail_pool_size)"},
    {NULL, NULL, NULL, NULL},
};

static int check(const sq_cli *cli) {
  if (cli->n_operands > 0) {
    fprintf(stderr, "sandq-worker check: unexpected argument '%s' (check takes options only)\n", cli->operands[0]);
    return 2;
  }
  sq_config cfg;
  if (sq_cmd_config("check", &cfg, cli) != 0) return 2;
  sq_log_init("sandq-worker", SQ_LOG_ERROR); /* the lines below say it all */
  sq_jail_probe_line lines[SQ_JAIL_LAYER_COUNT];
  int n = sq_jail_probe(cfg.python_path, lines, SQ_JAIL_LAYER_COUNT);
  bool all = true;
  for (int i = 0; i < n; i++) {
    printf("%-8s %-17s %s\n", lines[i].ok ? "ok" : "MISSING", sq_jail_layer_name(lines[i].layer), lines[i].detail);
    all = all && lines[i].ok;
  }
  all = try_run(&cfg, SQ_JAIL_MODE_SPAWN) && all;
  all = try_run(&cfg, SQ_JAIL_MODE_WARM) && all;
  printf("%s\n", all ? "all layers enforced" : "some layers are missing: see docs/security.md");
  return all ? 0 : 1;
}

const sq_worker_cmd sq_cmd_check = {
    "check", "check [options]",
    "which containment layers this host enforces, then a real run in each mode;\n"
    "exit 0 all there, 1 some missing (named), 2 usage or configuration",
    check_flags, check};
