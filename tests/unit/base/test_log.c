/* test_log.c: the logger escapes control characters, so a field name, a
 * task id or a provider's text cannot forge a log line or reach the
 * terminal as an escape sequence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "log.h"

int main(void) {
  char path[] = "/tmp/sq-test-log-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return sq_check_done("test_log");
  int saved = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  sq_log_init("test_log", SQ_LOG_INFO);
  /* a field name as a task's error reports it, forging a whole line */
  const char *field = "x\n2026-01-01T00:00:00.000Z sandq-worker[1] ERROR forged:1 FORGED";
  SQ_LOGT(SQ_LOG_WARN, "t\r1", "%s: unknown field", field);
  SQ_INFO("colour \x1b[31mred\x1b[0m, bell \a, del \x7f, csi \xc2\x9b" "2J, tab\there, caf\xc3\xa9");
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  char out[4096] = "";
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
  out[n] = 0;
  if (f) fclose(f);
  unlink(path);
  int lines = 0;
  for (char *p = out; *p; p++) lines += *p == '\n';
  CHECK_EQ(lines, 2);
  CHECK(strchr(out, '\x1b') == NULL);
  CHECK(strchr(out, '\r') == NULL);
  CHECK(strstr(out, "\nFORGED") == NULL && strstr(out, "\n2026-01-01") == NULL);
  CHECK_CONTAINS(out, "task=t\\r1 x\\n2026-01-01T00:00:00.000Z sandq-worker[1] ERROR forged:1 FORGED: unknown field");
  CHECK_CONTAINS(out, "colour \\x1b[31mred\\x1b[0m, bell \\x07, del \\x7f, csi \\u009b2J, tab\\there, caf\xc3\xa9\n");

  char small[8];
  CHECK_STR(sq_log_escape("a\nbcdef", small, sizeof small), "a\\nbcde");
  CHECK_STR(sq_log_escape("\x01\x01", small, 6), "\\x01");
  CHECK_STR(sq_log_escape(NULL, small, sizeof small), "");
  return sq_check_done("test_log");
}
