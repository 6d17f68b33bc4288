/* audit.c: the audit trail's entry in its stream form both ways, and
 * reading the trail (audit.h) from a point in time, filtered by batch. */
#include "audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

void sq_audit_form_fill(sq_audit_form *f, const sq_audit_entry *e) {
  snprintf(f->text[0], sizeof f->text[0], "%lld", (long long)e->exit_code);
  snprintf(f->text[1], sizeof f->text[1], "%lld", (long long)e->wall_ms);
  snprintf(f->text[2], sizeof f->text[2], "%lld", (long long)e->round);
  snprintf(f->text[3], sizeof f->text[3], "%lld", (long long)e->time_ms);
  const char *const names[SQ_AUDIT_FIELDS] = {"task",     "batch",           "sha256",    "status", "worker",
                                              "provider", "model",           "jail_mode", "blocked_syscall",
                                              "exit_code", "wall_ms",        "round",     "time_ms",
                                              "language", "profile"};
  const char *const vals[SQ_AUDIT_FIELDS] = {e->task,      e->batch,      e->sha256,     e->status,    e->worker,
                                             e->provider,  e->model,      e->jail_mode,  e->blocked_syscall,
                                             f->text[0],   f->text[1],    f->text[2],    f->text[3],
                                             e->language, e->profile};
  size_t n = 0;
  for (size_t i = 0; i < SQ_AUDIT_FIELDS; i++) {
    if (!vals[i][0]) continue; /* provider, model, blocked_syscall: only when there is one */
    f->fields[n] = names[i];
    f->values[n++] = vals[i];
  }
  f->entry = (sq_queue_stream_entry){.fields = f->fields, .values = f->values, .n = n};
}

void sq_audit_parse(const char *const *fields, const char *const *values, size_t n, sq_audit_entry *e) {
  memset(e, 0, sizeof *e);
  e->exit_code = -1;
  for (size_t i = 0; i < n; i++) {
    const char *k = fields[i], *v = values[i];
#define STR(name)                                                                                                      \
  if (strcmp(k, #name) == 0) {                                                                                         \
    snprintf(e->name, sizeof e->name, "%s", v);                                                                        \
    continue;                                                                                                          \
  }
#define NUM(name)                                                                                                      \
  if (strcmp(k, #name) == 0) {                                                                                         \
    e->name = strtoll(v, NULL, 10);                                                                                    \
    continue;                                                                                                          \
  }
    STR(task) STR(batch) STR(sha256) STR(status) STR(worker) STR(provider) STR(model) STR(jail_mode)
    STR(blocked_syscall) NUM(exit_code) NUM(wall_ms) NUM(round) NUM(time_ms) STR(language) STR(profile)
#undef STR
#undef NUM
  }
}

typedef struct {
  const char *batch;
  int64_t since_ms;
  sq_audit_fn fn;
  void *ud;
} read_ctx;

static int on_entry(const char *id, const char *const *fields, const char *const *values, size_t n, void *ud) {
  read_ctx *c = ud;
  sq_audit_entry e;
  sq_audit_parse(fields, values, n, &e);
  if (c->batch && strcmp(c->batch, e.batch) != 0) return 0;
  if (e.time_ms < c->since_ms) return 0; /* the id's time is the write's; the run ended a little earlier */
  return c->fn(id, &e, c->ud);
}

int sq_audit_read(sq_queue *q, const char *batch, int64_t since_ms, sq_audit_fn fn, void *ud) {
  read_ctx c = {batch, since_ms, fn, ud};
  char start[32] = "";
  /* Stream ids start with the write's time in ms: skip older pages at
   * once (a minute of slack for runs that waited in the worker). */
  if (since_ms > 60000) snprintf(start, sizeof start, "%lld", (long long)(since_ms - 60000));
  return sq_queue_stream_range(q, SQ_AUDIT_STREAM, start, on_entry, &c);
}
