/* test_cli.c: the command-line grammar every sandq program shares
 * (cli.h): options anywhere, --flag=VALUE, "--", "-", --help/--version,
 * one-line errors, config flags applied in order. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "config.h"
#include "errors.h"

static const sq_cli_flag flags[] = {
    {"redis", "URL", "redis_url", "the URL", false},
    {"log-level", "LEVEL", "log_level", "level", false},
    {"wait", NULL, NULL, "a switch", false},
    {"batch", "ID", NULL, "an id", false},
    {"listen", "ADDR", NULL, "read by the command itself", true},
    {"all", NULL, NULL, "read by the command itself", true},
    {NULL, NULL, NULL, NULL, false},
};

static int parse(sq_cli *c, char *err, size_t n, int argc, char **argv) {
  return sq_cli_parse(flags, argc, argv, 1, c, err, n);
}

static void test_anywhere(void) {
  char *argv[] = {"cmd", "list", "--redis", "redis://h:1", "x", "--wait", "--batch=b1", "-", "--", "--wait", NULL};
  sq_cli c;
  char err[256] = "";
  CHECK_EQ(parse(&c, err, sizeof err, 10, argv), 0);
  CHECK_EQ(c.n_operands, 4);
  CHECK_STR(c.operands[0], "list");
  CHECK_STR(c.operands[1], "x");
  CHECK_STR(c.operands[2], "-");      /* stdin is an operand */
  CHECK_STR(c.operands[3], "--wait"); /* after "--": an operand */
  CHECK_STR(sq_cli_get(&c, "redis"), "redis://h:1");
  CHECK_STR(sq_cli_get(&c, "batch"), "b1");
  CHECK_STR(sq_cli_get(&c, "wait"), "");
  CHECK(sq_cli_get(&c, "log-level") == NULL);
  CHECK(!c.help && !c.version);
  sq_cli_clear(&c);
  sq_cli_clear(NULL);
}

/* pass_on flags are handed on ahead of the operands, as written */
static void test_pass_on(void) {
  char *argv[] = {"cmd", "file", "--listen", "h:1", "x", "--all", "--listen=h:2", NULL};
  sq_cli c;
  char err[256] = "";
  CHECK_EQ(parse(&c, err, sizeof err, 7, argv), 0);
  CHECK_EQ(c.n_operands, 6);
  const char *want[] = {"--listen", "h:1", "--all", "--listen=h:2", "file", "x"};
  for (size_t i = 0; i < 6 && i < c.n_operands; i++) CHECK_STR(c.operands[i], want[i]);
  CHECK_STR(sq_cli_get(&c, "listen"), "h:2");
  sq_cli_clear(&c);
}

static void test_help_version(void) {
  char *argv[] = {"cmd", "a", "-h", "--version", NULL};
  sq_cli c;
  char err[256];
  CHECK_EQ(parse(&c, err, sizeof err, 4, argv), 0);
  CHECK(c.help && c.version);
  sq_cli_clear(&c);
}

static void test_errors(void) {
  struct {
    char *arg, *arg2;
    const char *want;
  } cases[] = {
      {"--frobnicate", NULL, "unrecognized option '--frobnicate'"},
      {"--batch", NULL, "--batch needs a value (ID)"},
      {"--wait=yes", NULL, "--wait takes no value"},
      {"-x", NULL, "unknown option '-x'"},
      {"--redi", "u", "unrecognized option '--redi'"}, /* no abbreviations */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *argv[] = {"cmd", cases[i].arg, cases[i].arg2, NULL};
    sq_cli c;
    char err[256] = "";
    CHECK_EQ(parse(&c, err, sizeof err, cases[i].arg2 ? 3 : 2, argv), SQ_EINVAL);
    if (!strstr(err, cases[i].want)) fprintf(stderr, "got '%s', want '%s'\n", err, cases[i].want);
    CHECK(strstr(err, cases[i].want) != NULL);
    CHECK(strchr(err, '\n') == NULL);
    sq_cli_clear(&c);
  }
}

static void test_config(void) {
  char *argv[] = {"cmd", "--log-level", "debug", "--redis", "redis://a:1", "--redis=redis://b:2", NULL};
  sq_cli c;
  char err[256] = "";
  sq_config cfg;
  sq_config_defaults(&cfg);
  CHECK_EQ(parse(&c, err, sizeof err, 6, argv), 0);
  CHECK_EQ(sq_config_apply_flags(&cfg, &c, err, sizeof err), 0);
  CHECK_STR(cfg.redis_url, "redis://b:2"); /* the last one wins */
  CHECK_EQ(cfg.log_level, SQ_LOG_DEBUG);
  sq_cli_clear(&c);
  char *bad[] = {"cmd", "--log-level", "loud", NULL};
  CHECK_EQ(parse(&c, err, sizeof err, 3, bad), 0);
  CHECK(sq_config_apply_flags(&cfg, &c, err, sizeof err) != 0);
  CHECK(strncmp(err, "--log-level: ", 13) == 0);
  sq_cli_clear(&c);
}

int main(void) {
  test_anywhere();
  test_pass_on();
  test_help_version();
  test_errors();
  test_config();
  return sq_check_done("test_cli");
}
