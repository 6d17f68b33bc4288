/* test_cli.c: the command-line grammar every sandq program shares
 * (cli.h): options anywhere, --flag=VALUE, "--", "-", --help/--version,
 * one-line errors, config flags applied in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli.h"
#include "config.h"
#include "errors.h"

static const sq_cli_flag flags[] = {
    {"redis", "URL", "redis_url", "the URL"},
    {"queue", "NAME", "queue", "the queue"},
    {"config", "FILE", NULL, "the file"},
    {"log-level", "LEVEL", "log_level", "level"},
    {"wait", NULL, NULL, "a switch"},
    {"batch", "ID", NULL, "an id"},
    {"policy", "KIND=ACTION", "policy.actions.*", "repeatable"},
    {NULL, NULL, NULL, NULL},
};

static int parse(sq_cli *c, char *err, size_t n, int argc, char **argv) {
  return sq_cli_parse(flags, argc, argv, 1, -1, c, err, n);
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

/* The command's name among the options: found past the options before it
 * (and their values), left out of the operands. */
static void test_command(void) {
  char *argv[] = {"prog", "--redis", "status", "--wait", "-v", "status", "b1", "--queue=q", NULL};
  int at = sq_cli_command(flags, 8, argv, 1);
  CHECK_EQ(at, 5); /* "status" after --redis is its value, not the command */
  sq_cli c;
  char err[256] = "";
  CHECK_EQ(sq_cli_parse(flags, 8, argv, 1, at, &c, err, sizeof err), SQ_EINVAL); /* -v */
  char *ok[] = {"prog", "--redis", "status", "--wait", "status", "b1", "--queue=q", NULL};
  at = sq_cli_command(flags, 7, ok, 1);
  CHECK_EQ(at, 4);
  CHECK_EQ(sq_cli_parse(flags, 7, ok, 1, at, &c, err, sizeof err), 0);
  CHECK_EQ(c.n_operands, 1);
  CHECK_STR(c.operands[0], "b1");
  CHECK_STR(sq_cli_get(&c, "redis"), "status");
  CHECK_STR(sq_cli_get(&c, "queue"), "q");
  sq_cli_clear(&c);
  char *none[] = {"prog", "--wait", "--batch", "x", NULL};
  CHECK_EQ(sq_cli_command(flags, 4, none, 1), 4);
  /* a value-taking flag as the last word before the command's name
   * does not swallow the name once the name is known */
  char *tail[] = {"prog", "cmd", "--batch", NULL};
  CHECK_EQ(sq_cli_parse(flags, 3, tail, 1, 1, &c, err, sizeof err), SQ_EINVAL);
  CHECK(strstr(err, "--batch needs a value") != NULL);
}

static void test_nearest(void) {
  const char *const names[] = {"push", "status", "dead", "metrics", "health", "import", "results", "report"};
  size_t n = sizeof names / sizeof names[0];
  CHECK_STR(sq_cli_nearest("stauts", names, n), "status"); /* a swap */
  CHECK_STR(sq_cli_nearest("reprot", names, n), "report");
  CHECK_STR(sq_cli_nearest("metric", names, n), "metrics");
  CHECK_STR(sq_cli_nearest("imprt", names, n), "import");
  CHECK(sq_cli_nearest("frobnicate", names, n) == NULL);
  CHECK(sq_cli_nearest("", names, n) == NULL);
  char *argv[] = {"cmd", "--qeue", "q", NULL};
  sq_cli c;
  char err[256] = "";
  CHECK_EQ(parse(&c, err, sizeof err, 3, argv), SQ_EINVAL);
  CHECK_STR(err, "unrecognized option '--qeue' (did you mean --queue?)");
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
  /* "prefix.*": SUFFIX=VALUE, every one in order */
  char *pol[] = {"cmd", "--policy", "all=block", "--policy=import=record", "--policy", "eval", NULL};
  CHECK_EQ(parse(&c, err, sizeof err, 4, pol), 0);
  sq_config_defaults(&cfg);
  CHECK_EQ(sq_config_apply_flags(&cfg, &c, err, sizeof err), 0);
  CHECK_EQ(cfg.policy.action[SQ_FINDING_IMPORT], SQ_PRECHECK_RECORD);
  CHECK_EQ(cfg.policy.action[SQ_FINDING_EVAL], SQ_PRECHECK_BLOCK);
  sq_cli_clear(&c);
  CHECK_EQ(parse(&c, err, sizeof err, 6, pol), 0);
  CHECK(sq_config_apply_flags(&cfg, &c, err, sizeof err) != 0);
  CHECK_STR(err, "--policy: 'eval' is not KIND=ACTION");
  sq_cli_clear(&c);
}

/* sq_config_build: defaults, file, environment, flags, validated last;
 * a malformed Redis URL is a configuration error naming no secret. */
static void test_build(void) {
  char path[] = "/tmp/test_cli_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  static const char text[] = "{\"queue\": \"fromfile\", \"redis_url\": \"redis://file:1\", \"log_level\": \"warn\"}";
  CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
  close(fd);
  setenv("SANDQ_QUEUE", "fromenv", 1);
  unsetenv("SANDQ_REDIS_URL");
  unsetenv("SANDQ_LOG_LEVEL");
  char *argv[] = {"cmd", "--config", path, "--redis", "redis://flag:2", NULL};
  sq_cli c;
  char err[512] = "";
  sq_config cfg;
  CHECK_EQ(parse(&c, err, sizeof err, 5, argv), 0);
  CHECK_EQ(sq_config_build(&cfg, &c, err, sizeof err), 0);
  CHECK_STR(cfg.queue, "fromenv");          /* the environment over the file */
  CHECK_STR(cfg.redis_url, "redis://flag:2"); /* a flag over both */
  CHECK_EQ(cfg.log_level, SQ_LOG_WARN);       /* the file over the default */
  CHECK(cfg.worker_id[0] != 0);               /* validated: filled */
  sq_cli_clear(&c);
  unsetenv("SANDQ_QUEUE");
  unlink(path);
  static const struct {
    const char *url, *want;
  } bad[] = {
      {"redis://h:0", "port '0' is not a number in 1..65535"},
      {"redis-sentinel://h:1", "the master's name is missing"},
      {"redis-cluster://h:0", "address 'h:0' is not host:port"},
      {"redis://u:ab12/SECRET@h:1", "the credentials hold a '/'"},
      {"redis-cluster://u:ab12/SECRET@h:1", "the credentials hold a '/'"},
      {"redis://:pw@", "missing host"},
      {"redis://h:1/x", "database 'x' is not a number"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *a[] = {"cmd", "--redis", (char *)bad[i].url, NULL};
    CHECK_EQ(parse(&c, err, sizeof err, 3, a), 0);
    CHECK_EQ(sq_config_build(&cfg, &c, err, sizeof err), SQ_ECONFIG);
    if (!strstr(err, bad[i].want)) fprintf(stderr, "%s: got '%s', want '%s'\n", bad[i].url, err, bad[i].want);
    CHECK(strstr(err, bad[i].want) != NULL);
    CHECK(strstr(err, "SECRET") == NULL && strstr(err, "ab12") == NULL && strstr(err, "pw") == NULL);
    sq_cli_clear(&c);
  }
  char *empty[] = {"cmd", "--config", "", NULL};
  CHECK_EQ(parse(&c, err, sizeof err, 3, empty), 0);
  CHECK_EQ(sq_config_build(&cfg, &c, err, sizeof err), SQ_ECONFIG);
  CHECK_STR(err, "--config needs a file name");
  sq_cli_clear(&c);
}

int main(void) {
  test_anywhere();
  test_command();
  test_nearest();
  test_help_version();
  test_errors();
  test_config();
  test_build();
  return sq_check_done("test_cli");
}
