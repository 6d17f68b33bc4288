/* result.c: an sq_result into one BSON document (libbson), in full or in
 * the compact form Redis stores, and a stored document back in full. The
 * layout is a contract: docs/formats.md. */
#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "run.h"
#include "utf8.h"
#include "util.h"

/* Appends s as a UTF-8 string made by sq_utf8_sanitize (utf8.h), so that
 * output from hostile programs is kept, never dropped. */
static bool append_text(bson_t *doc, const char *key, const char *s, size_t len) {
  if (!s) return bson_append_null(doc, key, -1);
  if (sq_utf8_clean(s, len)) return bson_append_utf8(doc, key, -1, s, (int)len);
  sq_buf b = {0};
  bool ok = sq_utf8_sanitize(s, len, &b) == 0 && bson_append_utf8(doc, key, -1, b.data, (int)b.len);
  sq_buf_clear(&b);
  return ok;
}

static bool append_cstr(bson_t *doc, const char *key, const char *s) {
  return append_text(doc, key, s, s ? strlen(s) : 0);
}

/* findings: [{kind, line, col, detail}], in position order. */
static bool append_findings(bson_t *doc, const sq_precheck_report *rep) {
  bson_t arr, item;
  if (!BSON_APPEND_ARRAY_BEGIN(doc, "findings", &arr)) return false;
  bool ok = true;
  for (size_t i = 0; ok && i < rep->n; i++) {
    const sq_precheck_finding *f = &rep->items[i];
    char key[16];
    const char *k;
    bson_uint32_to_string((uint32_t)i, &k, key, sizeof key);
    ok = BSON_APPEND_DOCUMENT_BEGIN(&arr, k, &item) && BSON_APPEND_UTF8(&item, "kind", sq_precheck_kind_name(f->kind)) &&
         BSON_APPEND_INT32(&item, "line", f->line) && BSON_APPEND_INT32(&item, "col", f->col) &&
         append_cstr(&item, "detail", f->detail) && bson_append_document_end(&arr, &item);
  }
  return bson_append_array_end(doc, &arr) && ok;
}

/* files: {NAME: binary}, files_truncated: [NAME] (names sanitized to UTF-8). */
static bool append_files(bson_t *doc, const sq_result_file *files, size_t n) {
  bson_t sub, arr;
  bool ok = BSON_APPEND_DOCUMENT_BEGIN(doc, "files", &sub);
  for (size_t i = 0; ok && i < n; i++) {
    sq_buf name = {0};
    ok = sq_utf8_sanitize(files[i].name, strlen(files[i].name), &name) == 0 &&
         bson_append_binary(&sub, name.data, (int)name.len, BSON_SUBTYPE_BINARY, files[i].data, (uint32_t)files[i].len);
    sq_buf_clear(&name);
  }
  ok = bson_append_document_end(doc, &sub) && ok && BSON_APPEND_ARRAY_BEGIN(doc, "files_truncated", &arr);
  uint32_t k = 0;
  for (size_t i = 0; ok && i < n; i++) {
    if (!files[i].truncated) continue;
    char key[16];
    const char *kp;
    bson_uint32_to_string(k++, &kp, key, sizeof key);
    ok = append_cstr(&arr, kp, files[i].name);
  }
  return ok && bson_append_array_end(doc, &arr);
}

/* risk: {level, action, reason, confidence, source, decision} */
static bool append_risk(bson_t *doc, const sq_result_risk *k) {
  bson_t sub;
  return BSON_APPEND_DOCUMENT_BEGIN(doc, "risk", &sub) && append_cstr(&sub, "level", k->level) &&
         append_cstr(&sub, "action", k->action) && append_cstr(&sub, "reason", k->reason) &&
         (k->confidence >= 0 ? BSON_APPEND_DOUBLE(&sub, "confidence", k->confidence)
                             : BSON_APPEND_NULL(&sub, "confidence")) &&
         append_cstr(&sub, "source", k->source) && append_cstr(&sub, "decision", k->decision) &&
         bson_append_document_end(doc, &sub);
}

/* repairs: [{round, code, status, prompt_tokens, completion_tokens}] */
static bool append_repairs(bson_t *doc, const sq_result_repair *rp, int n) {
  bson_t arr, item;
  bool ok = BSON_APPEND_ARRAY_BEGIN(doc, "repairs", &arr);
  for (int i = 0; ok && i < n; i++) {
    char key[16];
    const char *k;
    bson_uint32_to_string((uint32_t)i, &k, key, sizeof key);
    ok = BSON_APPEND_DOCUMENT_BEGIN(&arr, k, &item) && BSON_APPEND_INT32(&item, "round", rp[i].round) &&
         append_cstr(&item, "code", rp[i].code) && append_cstr(&item, "status", rp[i].status) &&
         BSON_APPEND_INT64(&item, "prompt_tokens", rp[i].prompt_tokens) &&
         BSON_APPEND_INT64(&item, "completion_tokens", rp[i].completion_tokens) &&
         bson_append_document_end(&arr, &item);
  }
  return ok && bson_append_array_end(doc, &arr);
}

/* cases: [{status, wall_ms}] for those that ran; cases_total: all of them. */
static bool append_cases(bson_t *doc, const sq_result_case *c, size_t n, size_t total) {
  bson_t arr, item;
  bool ok = BSON_APPEND_INT64(doc, "cases_total", (int64_t)total) && BSON_APPEND_ARRAY_BEGIN(doc, "cases", &arr);
  for (size_t i = 0; ok && i < n; i++) {
    char key[24];
    const char *k;
    bson_uint32_to_string((uint32_t)i, &k, key, sizeof key);
    ok = BSON_APPEND_DOCUMENT_BEGIN(&arr, k, &item) && append_cstr(&item, "status", sq_status_name(c[i].status)) &&
         BSON_APPEND_INT64(&item, "wall_ms", c[i].wall_ms) && bson_append_document_end(&arr, &item);
  }
  return ok && bson_append_array_end(doc, &arr);
}

/* The layers' bit mask (run.h's order), or -1 when a name is not one of
 * them (then the result is stored in full). */
static int64_t layers_mask(const sq_result_jail *jl) {
  uint32_t mask = 0;
  for (int i = 0; i < SQ_RESULT_MAX_LAYERS && jl->layers[i]; i++) {
    int bit = 0;
    while (bit < SQ_JAIL_LAYER_COUNT && strcmp(sq_jail_layer_name(1u << bit), jl->layers[i]) != 0) bit++;
    if (bit == SQ_JAIL_LAYER_COUNT) return -1;
    mask |= 1u << bit;
  }
  return mask;
}

/* layers: an array of the names of the bits in mask, in bit order. */
static bool append_layer_names(bson_t *doc, uint32_t mask) {
  bson_t arr;
  bool ok = BSON_APPEND_ARRAY_BEGIN(doc, "layers", &arr);
  for (uint32_t bit = 0, i = 0; ok && bit < 32; bit++) {
    if (!(mask & (1u << bit))) continue;
    char key[16], unknown[16];
    const char *k, *name = sq_jail_layer_name(1u << bit);
    if (!name) snprintf(unknown, sizeof unknown, "bit%u", bit), name = unknown; /* a newer sandq's layer */
    bson_uint32_to_string(i++, &k, key, sizeof key);
    ok = BSON_APPEND_UTF8(&arr, k, name);
  }
  return ok && bson_append_array_end(doc, &arr);
}

/* jail: {mode, layers: [...], oom_killed[, standby]}; compact: layers as its bit mask. */
static bool append_jail(bson_t *doc, const sq_result_jail *jl, bool compact) {
  bson_t sub, arr;
  bool ok = BSON_APPEND_DOCUMENT_BEGIN(doc, "jail", &sub) && append_cstr(&sub, "mode", jl->mode);
  if (compact) {
    ok = ok && BSON_APPEND_INT32(&sub, "layers", (int32_t)layers_mask(jl));
  } else {
    ok = ok && BSON_APPEND_ARRAY_BEGIN(&sub, "layers", &arr);
    for (uint32_t i = 0; ok && i < SQ_RESULT_MAX_LAYERS && jl->layers[i]; i++) {
      char key[16];
      const char *k;
      bson_uint32_to_string(i, &k, key, sizeof key);
      ok = append_cstr(&arr, k, jl->layers[i]);
    }
    ok = ok && bson_append_array_end(&sub, &arr);
  }
  ok = ok && BSON_APPEND_BOOL(&sub, "oom_killed", jl->oom_killed);
  if (jl->standby) ok = ok && BSON_APPEND_BOOL(&sub, "standby", true);
  return ok && bson_append_document_end(doc, &sub);
}

static int build(const sq_result *r, bool compact, bson_t *doc, char *note, size_t notelen);

int sq_result_to_bson(const sq_result *r, bson_t *doc, char *note, size_t notelen) {
  return build(r, false, doc, note, notelen);
}

int sq_result_to_stored_bson(const sq_result *r, bson_t *doc, char *note, size_t notelen) {
  /* compact only where the full form comes back exactly: an id and a batch
   * that need no sanitizing (the key and field hold them as they are) */
  bool compact = r->id && r->batch && sq_utf8_clean(r->id, strlen(r->id)) && sq_utf8_clean(r->batch, strlen(r->batch)) &&
                 (!r->jail.ran || layers_mask(&r->jail) >= 0);
  return build(r, compact, doc, note, notelen);
}

/* A stored jail sub-document with layers as its mask, in full. */
static bool expand_jail(bson_t *out, const bson_iter_t *jail) {
  bson_iter_t it;
  bson_t sub;
  bool ok = bson_iter_recurse(jail, &it) && BSON_APPEND_DOCUMENT_BEGIN(out, "jail", &sub);
  while (ok && bson_iter_next(&it))
    ok = strcmp(bson_iter_key(&it), "layers") == 0 && BSON_ITER_HOLDS_INT32(&it)
             ? append_layer_names(&sub, (uint32_t)bson_iter_int32(&it))
             : bson_append_iter(&sub, NULL, 0, &it);
  return ok && bson_append_document_end(out, &sub);
}

int sq_result_from_stored(const char *id, const char *batch, const uint8_t *stored, size_t len, bson_t *out) {
  bson_t doc;
  bson_iter_t it;
  if (!bson_init_static(&doc, stored, len) || !bson_validate(&doc, BSON_VALIDATE_NONE, NULL) ||
      !bson_iter_init(&it, &doc))
    return SQ_EBSON;
  if (bson_iter_next(&it) && strcmp(bson_iter_key(&it), "_id") == 0) { /* stored in full */
    bson_copy_to(&doc, out);
    return 0;
  }
  bson_init(out);
  bool ok = BSON_APPEND_UTF8(out, "_id", id) && BSON_APPEND_UTF8(out, "batch", batch) && bson_iter_init(&it, &doc);
  while (ok && bson_iter_next(&it))
    ok = strcmp(bson_iter_key(&it), "jail") == 0 && BSON_ITER_HOLDS_DOCUMENT(&it) ? expand_jail(out, &it)
                                                                                  : bson_append_iter(out, NULL, 0, &it);
  if (!ok) bson_destroy(out);
  return ok ? 0 : SQ_EBSON;
}

static int build(const sq_result *r, bool compact, bson_t *doc, char *note, size_t notelen) {
  if (note && notelen) note[0] = '\0';
  bson_t sub;
  bool ok = (compact || (append_cstr(doc, "_id", r->id) && append_cstr(doc, "batch", r->batch))) &&
            BSON_APPEND_UTF8(doc, "status", sq_status_name(r->status));
  if (ok && r->reason) ok = append_cstr(doc, "reason", r->reason);
  if (ok && r->language) ok = append_cstr(doc, "language", r->language);
  if (ok && r->compile_step) ok = BSON_APPEND_BOOL(doc, "compile_cached", r->compile_cached);
  ok = ok && (r->exit_code >= 0 ? BSON_APPEND_INT32(doc, "exit_code", r->exit_code)
                                : BSON_APPEND_NULL(doc, "exit_code"));
  ok = ok && BSON_APPEND_INT32(doc, "signal", r->signal) &&
       append_text(doc, "stdout", r->stdout_buf ? r->stdout_buf : "", r->stdout_len) &&
       BSON_APPEND_BOOL(doc, "stdout_truncated", r->stdout_truncated) &&
       append_text(doc, "stderr", r->stderr_buf ? r->stderr_buf : "", r->stderr_len) &&
       BSON_APPEND_BOOL(doc, "stderr_truncated", r->stderr_truncated) && append_cstr(doc, "code", r->code);
  if (ok && r->blocked_syscall && r->blocked_syscall[0])
    ok = append_cstr(doc, "blocked_syscall", r->blocked_syscall);

  ok = ok && BSON_APPEND_DOCUMENT_BEGIN(doc, "timings", &sub) && BSON_APPEND_INT64(&sub, "queue_ms", r->queue_ms) &&
       BSON_APPEND_INT64(&sub, "llm_ms", r->llm_ms) && BSON_APPEND_INT64(&sub, "exec_ms", r->exec_ms) &&
       BSON_APPEND_INT64(&sub, "total_ms", r->total_ms) &&
       BSON_APPEND_INT64(&sub, "all_attempts_ms", r->all_attempts_ms >= r->total_ms ? r->all_attempts_ms : r->total_ms) &&
       bson_append_document_end(doc, &sub);
  ok = ok && BSON_APPEND_INT32(doc, "attempts", r->attempts > 0 ? r->attempts : 1);

  ok = ok && BSON_APPEND_DOCUMENT_BEGIN(doc, "resources", &sub) && BSON_APPEND_INT64(&sub, "cpu_ms", r->cpu_ms) &&
       BSON_APPEND_INT64(&sub, "cpu_wait_ms", r->cpu_wait_ms) && BSON_APPEND_INT64(&sub, "memory_kib", r->memory_kib) &&
       bson_append_document_end(doc, &sub);

  if (ok && r->llm.called) {
    ok = BSON_APPEND_DOCUMENT_BEGIN(doc, "llm", &sub) && append_cstr(&sub, "provider", r->llm.provider) &&
         append_cstr(&sub, "model", r->llm.model) &&
         BSON_APPEND_INT64(&sub, "prompt_tokens", r->llm.prompt_tokens) &&
         BSON_APPEND_INT64(&sub, "completion_tokens", r->llm.completion_tokens) &&
         BSON_APPEND_DOUBLE(&sub, "cost_usd", r->llm.cost_usd) &&
         BSON_APPEND_BOOL(&sub, "usage_estimated", r->llm.usage_estimated) &&
         BSON_APPEND_INT32(&sub, "calls", r->llm.calls > 0 ? r->llm.calls : 1) &&
         BSON_APPEND_DOUBLE(&sub, "temperature", r->llm.temperature) &&
         (!r->llm.reply || (append_text(&sub, "reply", r->llm.reply, r->llm.reply_len) &&
                            BSON_APPEND_BOOL(&sub, "reply_truncated", r->llm.reply_truncated))) &&
         bson_append_document_end(doc, &sub);
  }
  if (ok && r->judge) ok = append_cstr(doc, "judge", r->judge);
  if (ok && r->judge && r->judge_reason) ok = append_cstr(doc, "judge_reason", r->judge_reason);
  if (ok && r->jail.ran) ok = append_jail(doc, &r->jail, compact);
  if (ok && r->profile) ok = append_cstr(doc, "profile", r->profile);
  if (ok && r->risk) ok = append_risk(doc, r->risk);
  if (ok && r->n_repairs > 0) ok = append_repairs(doc, r->repairs, r->n_repairs);
  ok = ok && append_cstr(doc, "worker", r->worker) && BSON_APPEND_DATE_TIME(doc, "finished_at", r->finished_at_ms);
  if (ok && r->metadata_json) {
    bson_error_t berr;
    bson_t *meta = bson_new_from_json((const uint8_t *)r->metadata_json, -1, &berr);
    if (!meta) {
      if (note && notelen) snprintf(note, notelen, "metadata not representable in BSON: %s", berr.message);
      ok = BSON_APPEND_NULL(doc, "metadata");
    } else {
      ok = BSON_APPEND_DOCUMENT(doc, "metadata", meta);
      bson_destroy(meta);
    }
  }
  if (ok && r->findings) ok = append_findings(doc, r->findings);
  if (ok && r->fetched) ok = append_files(doc, r->files, r->n_files);
  if (ok && r->n_cases_total) ok = append_cases(doc, r->cases, r->n_cases, r->n_cases_total);
  if (ok && r->tiered) {
    bson_t tiers;
    ok = BSON_APPEND_DOCUMENT_BEGIN(doc, "tiers", &tiers) && append_cstr(&tiers, "base", sq_status_name(r->tier_base)) &&
         append_cstr(&tiers, "plus", sq_status_name(r->tier_plus)) && bson_append_document_end(doc, &tiers);
  }
  return ok ? 0 : SQ_EBSON;
}
