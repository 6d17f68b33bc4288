/* test_audit.c: the audit entry's stream form both ways (common/fleet/audit.c):
 * every field out and back, empty optional fields left out, unknown ones
 * ignored. */
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "check.h"

static void test_round_trip(void) {
  sq_audit_entry e = {.exit_code = 3, .wall_ms = 12, .round = 1, .time_ms = 1764516386253};
  snprintf(e.task, sizeof e.task, "t-1");
  snprintf(e.batch, sizeof e.batch, "b1");
  snprintf(e.sha256, sizeof e.sha256, "%064d", 7);
  snprintf(e.status, sizeof e.status, "policy_violation");
  snprintf(e.worker, sizeof e.worker, "w1");
  snprintf(e.provider, sizeof e.provider, "fake");
  snprintf(e.model, sizeof e.model, "fake-coder");
  snprintf(e.jail_mode, sizeof e.jail_mode, "warm");
  snprintf(e.blocked_syscall, sizeof e.blocked_syscall, "ptrace");
  snprintf(e.language, sizeof e.language, "rust");
  snprintf(e.profile, sizeof e.profile, "data");
  sq_audit_form f;
  sq_audit_form_fill(&f, &e);
  CHECK_EQ(f.entry.n, SQ_AUDIT_FIELDS);
  CHECK_STR(f.entry.fields[0], "task");
  CHECK_STR(f.entry.values[0], "t-1");
  sq_audit_entry back;
  sq_audit_parse(f.entry.fields, f.entry.values, f.entry.n, &back);
  CHECK(memcmp(&back, &e, sizeof e) == 0);
  CHECK_EQ(back.time_ms, 1764516386253);
  CHECK_STR(back.blocked_syscall, "ptrace");
  CHECK_STR(back.language, "rust");
  CHECK_STR(back.profile, "data");

  /* given code: no provider, model, blocked syscall in the entry */
  e.provider[0] = e.model[0] = e.blocked_syscall[0] = '\0';
  sq_audit_form_fill(&f, &e);
  CHECK_EQ(f.entry.n, SQ_AUDIT_FIELDS - 3);
  for (size_t i = 0; i < f.entry.n; i++) {
    CHECK(strcmp(f.entry.fields[i], "provider") != 0);
    CHECK(strcmp(f.entry.fields[i], "blocked_syscall") != 0);
  }
  /* unknown fields (a newer worker) are ignored; missing ones stay empty */
  const char *fields[] = {"task", "future_field", "status"}, *values[] = {"x", "?", "ok"};
  sq_audit_parse(fields, values, 3, &back);
  CHECK_STR(back.task, "x");
  CHECK_STR(back.status, "ok");
  CHECK_STR(back.sha256, "");
  CHECK_EQ(back.exit_code, -1);
}

int main(void) {
  test_round_trip();
  return sq_check_done("test_audit");
}
