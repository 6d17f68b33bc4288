/* config.c: defaults, then a JSON file, then the environment, then flags;
 * validated last with messages that name the field. */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include "errors.h"
#include "json_scan.h"
#include "name.h"
#include "redis_url.h"
#include "util.h"

#define MAX_CONFIG_FILE_BYTES (1024 * 1024)
#define MAX_PRICE_USD_PER_MTOK 1e6 /* beyond any real price: a typo */

/* Every config error is SQ_ECONFIG with a message naming the field. */
#define fail(err, errlen, ...) sq_errf(err, errlen, SQ_ECONFIG, __VA_ARGS__)

void sq_config_defaults(sq_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  snprintf(cfg->redis_url, sizeof cfg->redis_url, "redis://127.0.0.1:6379");
  snprintf(cfg->queue, sizeof cfg->queue, "default");
  cfg->log_level = SQ_LOG_INFO;
  cfg->max_task_kib = 256;
  cfg->claim_timeout_ms = 1000;
  sq_queue_options_default(&cfg->queue_opts);
  cfg->heartbeat_ms = 10000;
  cfg->shutdown_grace_ms = 30000;
  snprintf(cfg->python_path, sizeof cfg->python_path, "/usr/bin/python3");
  snprintf(cfg->scratch_root, sizeof cfg->scratch_root, "/tmp/sandq-scratch");
  cfg->default_limits = (sq_jail_limits){.wall_ms = 10000, .cpu_ms = 5000, .memory_mib = 512, .output_kib = 64};
  cfg->max_limits = (sq_jail_limits){.wall_ms = 60000, .cpu_ms = 30000, .memory_mib = 2048, .output_kib = 1024};
  cfg->jail_mode = SQ_JAIL_MODE_WARM;
  cfg->jail_pool_size = SQ_CONFIG_AUTO; /* these five: sq_config_derive */
  snprintf(cfg->system_prompt, sizeof cfg->system_prompt,
           "You write {language} programs. Reply with one complete program in a single ```{fence} "
           "code block, with no explanation.");
  sq_precheck_defaults(&cfg->policy);
  cfg->max_tasks_in_flight = SQ_CONFIG_AUTO;
  cfg->jail_threads = SQ_CONFIG_AUTO;
  cfg->claim_batch = SQ_CONFIG_AUTO;
  cfg->claim_prefetch = SQ_CONFIG_AUTO;
  sq_llm_options_defaults(&cfg->llm);
  cfg->risk = SQ_RISK_SCOPE_GENERATED;
  cfg->risk_policy = (sq_risk_policy){.block_level = SQ_RISK_HIGH, .fallback = SQ_RISK_WARN};
  cfg->risk_cache_ttl_s = 7 * 24 * 3600;
  cfg->max_repairs = 0;
  cfg->llm_outage_max_s = 900;
  cfg->compile_cache_mib = 64;
  cfg->warm_prelude = true;
  cfg->repair_error_kib = 2;
  cfg->metrics_flush_ms = 1000;
  cfg->metrics = (sq_metrics_options){.window_s = 10, .retention_s = 900};
  cfg->health_stale_ms = 15000;
  sq_rollout_plan_defaults(&cfg->rollout);
  cfg->audit_max_len = 100000;
}

/* ---- scalar fields, addressed by their config-file key ---- */

typedef enum { F_STR, F_I64, F_BOOL, F_LOGLEVEL, F_JAILMODE, F_RISK_SCOPE, F_RISK_LEVEL, F_RISK_FALLBACK } field_type;

typedef struct {
  const char *key;
  field_type type;
  size_t offset;
  size_t size;          /* F_STR: buffer size */
  int64_t min, max;     /* F_I64 */
} field;

#define STR(k, m) {k, F_STR, offsetof(sq_config, m), sizeof(((sq_config *)0)->m), 0, 0}
#define I64(k, m, lo, hi) {k, F_I64, offsetof(sq_config, m), sizeof(int64_t), lo, hi}

static const field fields[] = {
    STR("redis_url", redis_url),
    STR("queue", queue),
    STR("worker_id", worker_id),
    {"log_level", F_LOGLEVEL, offsetof(sq_config, log_level), 0, 0, 0},
    I64("max_task_kib", max_task_kib, 1, 64 * 1024),
    I64("claim_timeout_ms", claim_timeout_ms, 10, 60000),
    I64("lease_ms", queue_opts.lease_ms, 100, 24 * 3600 * 1000),
    I64("heartbeat_ms", heartbeat_ms, 20, 3600 * 1000),
    I64("max_stalls", queue_opts.max_stalls, 1, 1000),
    I64("max_attempts", queue_opts.max_attempts, 1, 1000),
    I64("backoff_base_ms", queue_opts.backoff_base_ms, 0, 24 * 3600 * 1000),
    I64("backoff_max_ms", queue_opts.backoff_max_ms, 0, 24 * 3600 * 1000),
    I64("retention_s", queue_opts.retention_s, 1, 10LL * 365 * 24 * 3600),
    I64("max_queue_len", queue_opts.max_queue_len, 0, INT64_MAX),
    I64("reap_interval_ms", queue_opts.reap_interval_ms, 10, 3600 * 1000),
    I64("dead_retention_s", queue_opts.dead_retention_s, 0, 10LL * 365 * 24 * 3600),
    I64("shards", queue_opts.shards, 1, 64),
    I64("wait_replicas", queue_opts.wait_replicas, 0, 16),
    I64("wait_timeout_ms", queue_opts.wait_timeout_ms, 10, 600000),
    I64("shutdown_grace_ms", shutdown_grace_ms, 0, 3600 * 1000),
    STR("python", python_path),
    STR("scratch_root", scratch_root),
    {"jail_mode", F_JAILMODE, offsetof(sq_config, jail_mode), 0, 0, 0},
    I64("jail_pool_size", jail_pool_size, 1, 64),
    STR("system_prompt", system_prompt),
    {"store_llm_reply", F_BOOL, offsetof(sq_config, store_llm_reply), 0, 0, 0},
    {"warm_prelude", F_BOOL, offsetof(sq_config, warm_prelude), 0, 0, 0},
    I64("default_limits.wall_ms", default_limits.wall_ms, 1, 24 * 3600 * 1000),
    I64("default_limits.cpu_ms", default_limits.cpu_ms, 1, 24 * 3600 * 1000),
    I64("default_limits.memory_mib", default_limits.memory_mib, 16, 1024 * 1024),
    I64("default_limits.output_kib", default_limits.output_kib, 1, 1024 * 1024),
    I64("max_limits.wall_ms", max_limits.wall_ms, 1, 24 * 3600 * 1000),
    I64("max_limits.cpu_ms", max_limits.cpu_ms, 1, 24 * 3600 * 1000),
    I64("max_limits.memory_mib", max_limits.memory_mib, 16, 1024 * 1024),
    I64("max_limits.output_kib", max_limits.output_kib, 1, 1024 * 1024),
    STR("policy.import_allowlist", policy.import_allowlist),
    I64("max_tasks_in_flight", max_tasks_in_flight, 1, 10000),
    I64("jail_threads", jail_threads, 0, 1024),
    I64("claim_batch", claim_batch, 1, 1000),
    I64("claim_prefetch", claim_prefetch, 0, 1000),
    I64("llm_backoff_base_ms", llm.backoff_base_ms, 1, 600000),
    I64("llm_backoff_cap_ms", llm.backoff_cap_ms, 1, 3600000),
    I64("llm_retry_after_cap_ms", llm.retry_after_cap_ms, 0, 3600000),
    I64("breaker_window_ms", llm.breaker_window_ms, 100, 3600000),
    I64("breaker_min_samples", llm.breaker_min_samples, 1, 256),
    I64("breaker_error_pct", llm.breaker_error_pct, 1, 100),
    I64("breaker_open_ms", llm.breaker_open_ms, 1, 3600000),
    I64("llm_outage_max_s", llm_outage_max_s, 0, 24 * 3600),
    {"risk", F_RISK_SCOPE, offsetof(sq_config, risk), 0, 0, 0},
    {"risk_fallback", F_RISK_FALLBACK, offsetof(sq_config, risk_policy.fallback), 0, 0, 0},
    {"risk_block_level", F_RISK_LEVEL, offsetof(sq_config, risk_policy.block_level), 0, 0, 0},
    I64("risk_cache_ttl_s", risk_cache_ttl_s, 0, 365LL * 24 * 3600),
    I64("max_repairs", max_repairs, 0, 10),
    I64("compile_cache_mib", compile_cache_mib, 0, 64 * 1024),
    I64("repair_error_kib", repair_error_kib, 1, 64),
    I64("metrics_flush_ms", metrics_flush_ms, 100, 60000),
    I64("metrics_window_s", metrics.window_s, 1, 3600),
    I64("metrics_retention_s", metrics.retention_s, 10, 7 * 24 * 3600),
    I64("health_stale_ms", health_stale_ms, 1000, 24 * 3600 * 1000),
    STR("rollout_stages", rollout.stages),
    I64("rollout_hold_s", rollout.hold_s, 1, 7 * 24 * 3600),
    I64("rollout_min_requests", rollout.min_requests, 1, 1000000000),
    I64("rollout_min_samples", rollout.min_samples, 1, 1000000000),
    I64("rollout_window_s", rollout.window_s, 1, 24 * 3600),
    I64("rollout_max_error_pct", rollout.max_error_pct, 0, 100),
    I64("rollout_error_margin_pct", rollout.error_margin_pct, 0, 100),
    I64("rollout_p95_ratio_pct", rollout.p95_ratio_pct, 100, 100000),
    I64("rollout_p95_margin_ms", rollout.p95_margin_ms, 0, 3600 * 1000),
    I64("rollout_max_p95_ms", rollout.max_p95_ms, 0, 3600 * 1000),
    STR("metrics_listen", metrics_listen),
    I64("audit_max_len", audit_max_len, 0, 1000000000),
};

/* policy.actions.<kind> (or .all) = record | block */
static int set_policy_action(sq_config *cfg, const char *key, const char *value, char *err, size_t errlen) {
  const char *kind_name = key + strlen("policy.actions.");
  sq_precheck_action action;
  sq_finding_kind kind;
  if (sq_precheck_action_parse(value, &action) != 0)
    return fail(err, errlen, "%s: '%s' is not record or block", key, value);
  if (strcmp(kind_name, "all") == 0) {
    for (int i = 0; i < SQ_FINDING__COUNT; i++) cfg->policy.action[i] = action;
    return 0;
  }
  if (sq_precheck_kind_parse(kind_name, &kind) != 0) {
    char kinds[256] = "all";
    for (int i = 0; i < SQ_FINDING__COUNT; i++)
      snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), ", %s", sq_precheck_kind_name((sq_finding_kind)i));
    return fail(err, errlen, "%s: unknown finding kind '%s' (one of %s)", key, kind_name, kinds);
  }
  cfg->policy.action[kind] = action;
  return 0;
}

int sq_config_set(sq_config *cfg, const char *key, const char *value, char *err, size_t errlen) {
  if (strncmp(key, "policy.actions.", strlen("policy.actions.")) == 0)
    return set_policy_action(cfg, key, value, err, errlen);
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const field *f = &fields[i];
    if (strcmp(f->key, key) != 0) continue;
    char *p = (char *)cfg + f->offset;
    switch (f->type) {
    case F_STR:
      if (strlen(value) >= f->size)
        return fail(err, errlen, "%s: longer than %zu bytes", key, f->size - 1);
      memcpy(p, value, strlen(value) + 1);
      return 0;
    case F_I64:
      if (sq_parse_i64(value, f->min, f->max, (int64_t *)(void *)p) != 0)
        return fail(err, errlen, "%s: '%s' is not an integer in [%lld, %lld]", key, value,
                    (long long)f->min, (long long)f->max);
      return 0;
    case F_BOOL: /* a file's true and false, or the same words from the environment */
      if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0)
        return fail(err, errlen, "%s: '%s' must be true or false", key, value);
      *(bool *)(void *)p = value[0] == 't';
      return 0;
    case F_LOGLEVEL:
      if (sq_log_level_parse(value, (sq_log_level *)(void *)p) != 0)
        return fail(err, errlen, "%s: '%s' is not one of debug, info, warn, error", key, value);
      return 0;
    case F_JAILMODE:
      if (sq_jail_mode_parse(value, (sq_jail_mode *)(void *)p) != 0)
        return fail(err, errlen, "%s: '%s' is not one of spawn, warm", key, value);
      return 0;
    /* The risk settings take their exact lower-case names only (the parsers
     * are lenient for a model's reply). */
    case F_RISK_SCOPE: {
      sq_risk_scope v;
      if (sq_risk_scope_parse(value, &v) != 0 || strcmp(value, sq_risk_scope_name(v)) != 0)
        return fail(err, errlen, "%s: '%s' must be off, generated or all", key, value);
      *(sq_risk_scope *)(void *)p = v;
      return 0;
    }
    case F_RISK_LEVEL: {
      sq_risk_level v;
      if (sq_risk_level_parse(value, &v) != 0 || strcmp(value, sq_risk_level_name(v)) != 0)
        return fail(err, errlen, "%s: '%s' must be none, low, medium, high or critical", key, value);
      *(sq_risk_level *)(void *)p = v;
      return 0;
    }
    case F_RISK_FALLBACK: {
      sq_risk_action v;
      if (sq_risk_action_parse(value, &v) != 0 || strcmp(value, sq_risk_action_name(v)) != 0 ||
          v == SQ_RISK_ALLOW)
        return fail(err, errlen, "%s: '%s' must be warn or block", key, value);
      *(sq_risk_action *)(void *)p = v;
      return 0;
    }
    }
  }
  return fail(err, errlen, "%s: unknown setting", key);
}

/* Whether key is a true/false setting (a JSON boolean in a file). */
static bool is_bool_setting(const char *key) {
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    if (fields[i].type == F_BOOL && strcmp(fields[i].key, key) == 0) return true;
  return false;
}

/* A JSON scalar as the text sq_config_set takes: a string as it is (its
 * length is judged there, against the field), a number in buf (len bytes):
 * a whole number in the int64 range as an integer, anything else as %.17g,
 * which sq_config_set then refuses naming the range. Returns NULL when v is
 * neither, or (*nonfinite set) an infinity (1e309 parses as one). */
static const char *json_scalar(const cJSON *v, char *buf, size_t len, bool *nonfinite) {
  *nonfinite = false;
  if (cJSON_IsString(v)) return v->valuestring;
  if (!cJSON_IsNumber(v)) return NULL;
  double d = v->valuedouble;
  if (!isfinite(d)) {
    *nonfinite = true;
    return NULL;
  }
  /* -2^63 <= d < 2^63 before the cast: outside, the conversion is undefined */
  if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0)
    snprintf(buf, len, "%lld", (long long)d);
  else
    snprintf(buf, len, "%.17g", d);
  return buf;
}

/* "policy": {"import_allowlist": "a, b" or ["a", "b"], "actions": {"import": "block", ...}} */
static int load_policy(sq_config *cfg, const cJSON *obj, char *err, size_t errlen) {
  if (!cJSON_IsObject(obj)) return fail(err, errlen, "policy: must be an object");
  const cJSON *m;
  cJSON_ArrayForEach(m, obj) {
    char key[128];
    snprintf(key, sizeof key, "policy.%s", m->string);
    if (strcmp(m->string, "import_allowlist") == 0 && cJSON_IsArray(m)) {
      char *list = cfg->policy.import_allowlist;
      size_t n = 0, cap = sizeof cfg->policy.import_allowlist;
      const cJSON *e;
      list[0] = '\0';
      cJSON_ArrayForEach(e, m) {
        if (!cJSON_IsString(e)) return fail(err, errlen, "%s: must hold strings", key);
        n += (size_t)snprintf(list + n, n < cap ? cap - n : 0, "%s%s", n ? ", " : "", e->valuestring);
        if (n >= cap) return fail(err, errlen, "%s: longer than %zu bytes", key, cap - 1);
      }
    } else if (strcmp(m->string, "import_allowlist") == 0 && cJSON_IsString(m)) {
      int rc = sq_config_set(cfg, key, m->valuestring, err, errlen);
      if (rc) return rc;
    } else if (strcmp(m->string, "actions") == 0 && cJSON_IsObject(m)) {
      const cJSON *a;
      cJSON_ArrayForEach(a, m) {
        snprintf(key, sizeof key, "policy.actions.%s", a->string);
        if (!cJSON_IsString(a)) return fail(err, errlen, "%s: must be \"record\" or \"block\"", key);
        int rc = sq_config_set(cfg, key, a->valuestring, err, errlen);
        if (rc) return rc;
      }
    } else {
      return fail(err, errlen, "%s: unknown key or wrong type (import_allowlist: string or array; actions: object)",
                  key);
    }
  }
  return 0;
}

/* ---- providers ---- */

static int load_provider(sq_llm_provider *p, const cJSON *obj, int idx, char *err, size_t errlen) {
  memset(p, 0, sizeof *p);
  p->timeout_ms = 60000;
  p->max_retries = 2;
  p->max_in_flight = 16;
  p->weight = 1;
  if (!cJSON_IsObject(obj)) return fail(err, errlen, "providers[%d]: must be an object", idx);
  const cJSON *m;
  cJSON_ArrayForEach(m, obj) {
    const char *k = m->string;
    char *dst = NULL;
    size_t dlen = 0;
    if (strcmp(k, "name") == 0) dst = p->name, dlen = sizeof p->name;
    else if (strcmp(k, "base_url") == 0) dst = p->base_url, dlen = sizeof p->base_url;
    else if (strcmp(k, "model") == 0) dst = p->model, dlen = sizeof p->model;
    else if (strcmp(k, "api_key_env") == 0) dst = p->api_key_env, dlen = sizeof p->api_key_env;
    if (dst) {
      if (!cJSON_IsString(m) || strlen(m->valuestring) >= dlen)
        return fail(err, errlen, "providers[%d].%s: must be a string of at most %zu bytes", idx, k, dlen - 1);
      memcpy(dst, m->valuestring, strlen(m->valuestring) + 1);
      continue;
    }
    if (strcmp(k, "api_key") == 0)
      return fail(err, errlen, "providers[%d].api_key: keys are never read from files; name the "
                  "environment variable that holds it in api_key_env", idx);
    /* Each number is checked as a range before it is converted. */
    static const struct {
      const char *key;
      double lo, hi;
      bool whole;
    } nums[] = {
        {"price_in_usd_per_mtok", 0, MAX_PRICE_USD_PER_MTOK, false},
        {"price_out_usd_per_mtok", 0, MAX_PRICE_USD_PER_MTOK, false},
        {"timeout_ms", 1, 3600000, true},
        {"max_retries", 0, 20, true},
        {"max_in_flight", 1, 10000, true},
        {"weight", 0, 1000000, true},
    };
    size_t j = 0;
    while (j < sizeof nums / sizeof nums[0] && strcmp(k, nums[j].key) != 0) j++;
    if (j == sizeof nums / sizeof nums[0])
      return fail(err, errlen, "providers[%d].%s: unknown key (known: name, base_url, model, api_key_env, "
                  "price_in_usd_per_mtok, price_out_usd_per_mtok, timeout_ms, max_retries, max_in_flight, weight)",
                  idx, k);
    double d = cJSON_IsNumber(m) ? m->valuedouble : NAN;
    if (!isfinite(d) || d < nums[j].lo || d > nums[j].hi || (nums[j].whole && d != floor(d))) {
      if (nums[j].whole)
        return fail(err, errlen, "providers[%d].%s: must be an integer in [%.0f, %.0f]", idx, k, nums[j].lo,
                    nums[j].hi);
      return fail(err, errlen, "providers[%d].%s: must be a finite number in [%g, %g]", idx, k, nums[j].lo,
                  nums[j].hi);
    }
    switch (j) {
    case 0: p->price_in_usd_per_mtok = d; break;
    case 1: p->price_out_usd_per_mtok = d; break;
    case 2: p->timeout_ms = (int64_t)d; break;
    case 3: p->max_retries = (int)d; break;
    case 4: p->max_in_flight = (int)d; break;
    default: p->weight = (int)d; break;
    }
  }
  return 0;
}

int sq_config_load_file(sq_config *cfg, const char *path, char *err, size_t errlen) {
  char *text = NULL;
  size_t len = 0;
  int rc = sq_file_read(path, MAX_CONFIG_FILE_BYTES, &text, &len);
  if (rc == SQ_ETOOBIG) return fail(err, errlen, "%s: larger than 1 MiB", path);
  if (rc != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return SQ_EIO;
  }
  rc = sq_config_load_json(cfg, text, len, path, err, errlen);
  free(text);
  return rc;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Refuses a setting given twice at any level of v (where: its key, "" at
 * the top): cJSON keeps both and the loader would take the last, so the
 * file would not say one thing. Sorted names: n log n per object. */
static int refuse_twice(const cJSON *v, const char *where, char *err, size_t errlen) {
  if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) return 0;
  const cJSON *c;
  size_t n = 0, i = 0;
  cJSON_ArrayForEach(c, v) n++;
  if (cJSON_IsObject(v) && n > 1) {
    const char **names = malloc(n * sizeof *names);
    if (!names) return SQ_ENOMEM;
    cJSON_ArrayForEach(c, v) names[i++] = c->string;
    qsort(names, n, sizeof *names, name_cmp);
    const char *twice = NULL;
    for (i = 1; i < n && !twice; i++)
      if (strcmp(names[i - 1], names[i]) == 0) twice = names[i];
    int rc = twice ? fail(err, errlen, "%s%s%.64s: given twice (each setting once)", where, *where ? "." : "", twice)
                   : 0;
    free(names);
    if (rc) return rc;
  }
  i = 0;
  cJSON_ArrayForEach(c, v) {
    char sub[160];
    if (cJSON_IsArray(v)) snprintf(sub, sizeof sub, "%s[%zu]", where, i++);
    else snprintf(sub, sizeof sub, "%s%s%.64s", where, *where ? "." : "", c->string);
    int rc = refuse_twice(c, sub, err, errlen);
    if (rc) return rc;
  }
  return 0;
}

int sq_config_load_json(sq_config *cfg, const char *text, size_t len, const char *path, char *err,
                        size_t errlen) {
  int rc;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return fail(err, errlen, "%s: not a JSON object", path);
  }
  size_t trailing = sq_json_trailing_at(text, len, end);
  if (trailing < len) {
    cJSON_Delete(root);
    return fail(err, errlen, "%s: trailing data after the JSON object at byte %zu", path, trailing);
  }
  if ((rc = refuse_twice(root, "", err, errlen)) != 0) {
    cJSON_Delete(root);
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s: %s", path, err);
    snprintf(err, errlen, "%s", tmp);
    return rc;
  }
  /* cJSON cuts strings at a NUL: refused, naming the setting. */
  size_t n_members = (size_t)cJSON_GetArraySize(root), idx = 0;
  bool *nul = calloc(n_members + 1, sizeof *nul);
  if (!nul) {
    cJSON_Delete(root);
    return SQ_ENOMEM;
  }
  sq_json_nul_members(text, len, nul, n_members);
  rc = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, root) {
    char val[64], key[128];
    bool nonfinite = false;
    const char *sval;
    if (nul[idx++]) {
      rc = fail(err, errlen, "%s: holds a NUL character (\\u0000), which settings cannot carry", m->string);
      break;
    }
    if (strcmp(m->string, "providers") == 0) {
      if (!cJSON_IsArray(m)) {
        rc = fail(err, errlen, "providers: must be an array");
        break;
      }
      int n = cJSON_GetArraySize(m);
      if (n > SQ_CONFIG_MAX_PROVIDERS) {
        rc = fail(err, errlen, "providers: at most %d", SQ_CONFIG_MAX_PROVIDERS);
        break;
      }
      for (int i = 0; i < n && rc == 0; i++)
        rc = load_provider(&cfg->providers[i], cJSON_GetArrayItem(m, i), i, err, errlen);
      if (rc) break;
      cfg->n_providers = n;
    } else if (strcmp(m->string, "policy") == 0) {
      if ((rc = load_policy(cfg, m, err, errlen)) != 0) break;
    } else if (strcmp(m->string, "profiles") == 0) {
      if ((rc = sq_config_load_profiles(cfg, m, err, errlen)) != 0) break;
    } else if (strcmp(m->string, "default_limits") == 0 || strcmp(m->string, "max_limits") == 0) {
      if (!cJSON_IsObject(m)) {
        rc = fail(err, errlen, "%s: must be an object", m->string);
        break;
      }
      const cJSON *l;
      cJSON_ArrayForEach(l, m) {
        snprintf(key, sizeof key, "%s.%s", m->string, l->string);
        if (!(sval = json_scalar(l, val, sizeof val, &nonfinite))) {
          rc = fail(err, errlen, "%s: must be %s", key, nonfinite ? "a finite number" : "a number");
          break;
        }
        if ((rc = sq_config_set(cfg, key, sval, err, errlen)) != 0) break;
      }
      if (rc) break;
    } else if (is_bool_setting(m->string)) {
      if (!cJSON_IsBool(m)) {
        rc = fail(err, errlen, "%s: must be true or false", m->string);
        break;
      }
      if ((rc = sq_config_set(cfg, m->string, cJSON_IsTrue(m) ? "true" : "false", err, errlen)) != 0) break;
    } else {
      if (!(sval = json_scalar(m, val, sizeof val, &nonfinite))) {
        rc = fail(err, errlen, "%s: must be %s", m->string, nonfinite ? "a finite number" : "a string or a number");
        break;
      }
      if ((rc = sq_config_set(cfg, m->string, sval, err, errlen)) != 0) break;
    }
  }
  free(nul);
  cJSON_Delete(root);
  if (rc) {
    /* prefix the file name so the operator knows where to look */
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s: %s", path, err);
    snprintf(err, errlen, "%s", tmp);
  }
  return rc;
}

int sq_config_load_env(sq_config *cfg, char *err, size_t errlen) {
  static const struct {
    const char *env, *key;
  } map[] = {
      {"SANDQ_REDIS_URL", "redis_url"},     {"SANDQ_QUEUE", "queue"},
      {"SANDQ_LOG_LEVEL", "log_level"},     {"SANDQ_WORKER_ID", "worker_id"},
      {"SANDQ_PYTHON", "python"},           {"SANDQ_SCRATCH_ROOT", "scratch_root"},
      {"SANDQ_JAIL_MODE", "jail_mode"},
      {"SANDQ_LEASE_MS", "lease_ms"},       {"SANDQ_HEARTBEAT_MS", "heartbeat_ms"},
      {"SANDQ_MAX_STALLS", "max_stalls"},   {"SANDQ_MAX_ATTEMPTS", "max_attempts"},
      {"SANDQ_RETENTION_S", "retention_s"}, {"SANDQ_MAX_QUEUE_LEN", "max_queue_len"},
      {"SANDQ_SHARDS", "shards"},           {"SANDQ_WAIT_REPLICAS", "wait_replicas"},
      {"SANDQ_WAIT_TIMEOUT_MS", "wait_timeout_ms"},
      {"SANDQ_METRICS_LISTEN", "metrics_listen"}, {"SANDQ_AUDIT_MAX_LEN", "audit_max_len"},
      {"SANDQ_JAIL_THREADS", "jail_threads"}, {"SANDQ_JAIL_POOL_SIZE", "jail_pool_size"},
      {"SANDQ_MAX_TASKS_IN_FLIGHT", "max_tasks_in_flight"}, {"SANDQ_CLAIM_BATCH", "claim_batch"},
      {"SANDQ_CLAIM_PREFETCH", "claim_prefetch"}, {"SANDQ_STORE_LLM_REPLY", "store_llm_reply"},
      {"SANDQ_COMPILE_CACHE_MIB", "compile_cache_mib"}, {"SANDQ_WARM_PRELUDE", "warm_prelude"},
      {"SANDQ_LLM_OUTAGE_MAX_S", "llm_outage_max_s"},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
    const char *v = getenv(map[i].env);
    if (!v || !*v) continue;
    char inner[256];
    if (sq_config_set(cfg, map[i].key, v, inner, sizeof inner) != 0)
      return fail(err, errlen, "environment %s: %s", map[i].env, inner);
  }
  const char *base = getenv("SANDQ_LLM_BASE_URL");
  if (cfg->n_providers == 0 && base && *base) {
    sq_llm_provider *p = &cfg->providers[0];
    memset(p, 0, sizeof *p);
    const char *model = getenv("SANDQ_LLM_MODEL");
    if (strlen(base) >= sizeof p->base_url)
      return fail(err, errlen, "environment SANDQ_LLM_BASE_URL: too long");
    if (model && strlen(model) >= sizeof p->model)
      return fail(err, errlen, "environment SANDQ_LLM_MODEL: too long");
    snprintf(p->name, sizeof p->name, "env");
    snprintf(p->base_url, sizeof p->base_url, "%s", base);
    snprintf(p->model, sizeof p->model, "%s", model && *model ? model : "");
    snprintf(p->api_key_env, sizeof p->api_key_env, "SANDQ_LLM_API_KEY");
    p->timeout_ms = 60000;
    p->max_retries = 2;
    p->max_in_flight = 16;
    p->weight = 1;
    /* The environment provider's concurrency and per-attempt timeout, in
     * the ranges a file's provider is held to. */
    const char *v = getenv("SANDQ_LLM_MAX_IN_FLIGHT");
    int64_t n;
    if (v && *v) {
      if (sq_parse_i64(v, 1, 10000, &n) != 0)
        return fail(err, errlen, "environment SANDQ_LLM_MAX_IN_FLIGHT: '%s' is not an integer in [1, 10000]", v);
      p->max_in_flight = (int)n;
    }
    if ((v = getenv("SANDQ_LLM_TIMEOUT_MS")) && *v) {
      if (sq_parse_i64(v, 1, 3600000, &n) != 0)
        return fail(err, errlen, "environment SANDQ_LLM_TIMEOUT_MS: '%s' is not an integer in [1, 3600000]", v);
      p->timeout_ms = n;
    }
    cfg->n_providers = 1;
  }
  return 0;
}

/* ---- sizing from the host ---- */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Fills *v when auto, then names it in note: "key=V (derived|set)". */
static void derive_one(int64_t *v, int64_t derived, bool auto0, const char *key, char *note, size_t notelen) {
  bool is_auto = *v == SQ_CONFIG_AUTO || (auto0 && *v == 0);
  if (is_auto) *v = derived;
  if (!note || !notelen) return;
  size_t n = strlen(note);
  if (n < notelen)
    snprintf(note + n, notelen - n, "%s%s=%lld (%s)", n ? ", " : "", key, (long long)*v, is_auto ? "derived" : "set");
}

void sq_config_derive(sq_config *cfg, const sq_config_host *host, char *note, size_t notelen) {
  if (note && notelen) note[0] = '\0';
  int64_t cores = host->cores > 0 ? host->cores : 1, mib = host->memory_mib > 0 ? host->memory_mib : 64;
  /* One run per core: no more CPU-bound programs than cores, so a run's
   * CPU time and wall time do not depend on how many the worker holds;
   * one per 512 MiB (the default memory limit of a run). */
  derive_one(&cfg->jail_threads, clamp64(clamp64(cores, 1, 64), 1, mib / 512 > 0 ? mib / 512 : 1), true,
             "jail_threads", note, notelen);
  /* A zygote per thread: a run never waits for one. */
  derive_one(&cfg->jail_pool_size, clamp64(cfg->jail_threads, 1, 64), false, "jail_pool_size", note, notelen);
  /* One task ready per thread: the next run starts without a round trip. */
  derive_one(&cfg->claim_prefetch, clamp64(cfg->jail_threads, 0, 1000), false, "claim_prefetch", note, notelen);
  int64_t llm = 0;
  for (int i = 0; i < cfg->n_providers; i++) llm += cfg->providers[i].max_in_flight;
  derive_one(&cfg->max_tasks_in_flight, clamp64(cfg->jail_threads + cfg->claim_prefetch + llm, 1, 10000), false,
             "max_tasks_in_flight", note, notelen);
  derive_one(&cfg->claim_batch, clamp64(cfg->jail_threads + cfg->claim_prefetch, 1, 64), false, "claim_batch", note,
             notelen);
  if (note && notelen) {
    size_t n = strlen(note);
    if (n < notelen)
      snprintf(note + n, notelen - n, " for %lld core(s)%s, %lld MiB%s", (long long)cores,
               host->cpu_quota ? " (its cgroup's CPU quota)" : "", (long long)mib,
               host->memory_limited ? " (its cgroup's memory limit)" : "");
  }
}

static int check_limits(const char *name, const sq_jail_limits *l, char *err, size_t errlen) {
  if (l->wall_ms <= 0 || l->cpu_ms <= 0 || l->memory_mib <= 0 || l->output_kib <= 0)
    return fail(err, errlen, "%s: every limit must be positive", name);
  return 0;
}

int sq_config_validate(sq_config *cfg, char *err, size_t errlen) {
  if (strncmp(cfg->redis_url, "rediss://", 9) == 0)
    return fail(err, errlen, "redis_url: rediss:// (TLS) is not supported; reach Redis through a TLS tunnel and use "
                "redis://127.0.0.1:PORT (docs/deploy.md, \"Redis over TLS\")");
  if (strncmp(cfg->redis_url, "redis://", 8) != 0 && strncmp(cfg->redis_url, "unix://", 7) != 0 &&
      strncmp(cfg->redis_url, "redis-sentinel://", 17) != 0 && strncmp(cfg->redis_url, "redis-cluster://", 16) != 0)
    return fail(err, errlen, "redis_url: must start with redis://, unix://, redis-sentinel:// or redis-cluster:// "
                "(value not shown: it may hold a password)");
  /* The URL's syntax now, as the queue will read it: a malformed URL is the
   * operator's to fix, not a Redis to wait for. */
  sq_redis_url url;
  char why[300];
  int url_rc = sq_redis_url_parse(cfg->redis_url, &url, why, sizeof why);
  memset(url.password, 0, sizeof url.password);
  if (url_rc) return fail(err, errlen, "redis_url: %s", why);
  if (!sq_name_ok(cfg->queue, SQ_NAME_QUEUE_MAX))
    return fail(err, errlen, "queue: '%s' must be 1-%d characters of " SQ_NAME_CHARS, cfg->queue,
                SQ_NAME_QUEUE_MAX);
  if (cfg->worker_id[0] && !sq_name_ok(cfg->worker_id, SQ_NAME_WORKER_MAX))
    return fail(err, errlen, "worker_id: '%s' must be characters of " SQ_NAME_CHARS, cfg->worker_id);
  if (cfg->python_path[0] != '/')
    return fail(err, errlen, "python: '%s' must be an absolute path", cfg->python_path);
  if (cfg->scratch_root[0] != '/')
    return fail(err, errlen, "scratch_root: '%s' must be an absolute path", cfg->scratch_root);
  int rc;
  if ((rc = check_limits("default_limits", &cfg->default_limits, err, errlen))) return rc;
  if ((rc = check_limits("max_limits", &cfg->max_limits, err, errlen))) return rc;
  const sq_jail_limits *d = &cfg->default_limits, *m = &cfg->max_limits;
  if (d->wall_ms > m->wall_ms) return fail(err, errlen, "default_limits.wall_ms: above max_limits.wall_ms");
  if (d->cpu_ms > m->cpu_ms) return fail(err, errlen, "default_limits.cpu_ms: above max_limits.cpu_ms");
  if (d->memory_mib > m->memory_mib)
    return fail(err, errlen, "default_limits.memory_mib: above max_limits.memory_mib");
  if (d->output_kib > m->output_kib)
    return fail(err, errlen, "default_limits.output_kib: above max_limits.output_kib");
  if ((rc = sq_config_check_profiles(cfg, err, errlen))) return rc;
  if (sq_precheck_allowlist_validate(cfg->policy.import_allowlist) != 0)
    return fail(err, errlen, "policy.import_allowlist: module names of A-Z a-z 0-9 _ . separated by commas");
  const sq_queue_options *qo = &cfg->queue_opts;
  if (cfg->heartbeat_ms * 2 > qo->lease_ms)
    return fail(err, errlen, "heartbeat_ms: %lld must be at most half of lease_ms (%lld), or leases expire "
                "between heartbeats", (long long)cfg->heartbeat_ms, (long long)qo->lease_ms);
  if (qo->backoff_base_ms > qo->backoff_max_ms)
    return fail(err, errlen, "backoff_base_ms: above backoff_max_ms");
  if (cfg->llm.backoff_base_ms > cfg->llm.backoff_cap_ms)
    return fail(err, errlen, "llm_backoff_base_ms: above llm_backoff_cap_ms");
  const sq_metrics_options *mo = &cfg->metrics;
  if (mo->retention_s < 2 * mo->window_s)
    return fail(err, errlen, "metrics_retention_s: %lld must be at least twice metrics_window_s (%lld)",
                (long long)mo->retention_s, (long long)mo->window_s);
  if (cfg->rollout.window_s < mo->window_s || cfg->rollout.window_s > mo->retention_s)
    return fail(err, errlen, "rollout_window_s: %lld must lie between metrics_window_s (%lld) and "
                "metrics_retention_s (%lld)", (long long)cfg->rollout.window_s, (long long)mo->window_s,
                (long long)mo->retention_s);
  if ((rc = sq_rollout_plan_validate(&cfg->rollout, err, errlen))) return rc;
  if (cfg->n_providers > SQ_METRICS_MAX_PROVIDERS)
    return fail(err, errlen, "providers: at most %d", SQ_METRICS_MAX_PROVIDERS);
  int weight = 0;
  for (int i = 0; i < cfg->n_providers; i++) {
    const sq_llm_provider *p = &cfg->providers[i];
    if (!p->name[0]) return fail(err, errlen, "providers[%d].name: required", i);
    for (int j = 0; j < i; j++)
      if (strcmp(cfg->providers[j].name, p->name) == 0)
        return fail(err, errlen, "providers[%d].name: '%s' is the name of providers[%d] too; names must differ", i,
                    p->name, j);
    size_t scheme = strncmp(p->base_url, "http://", 7) == 0 ? 7 : strncmp(p->base_url, "https://", 8) == 0 ? 8 : 0;
    if (!scheme)
      return fail(err, errlen, "providers[%d].base_url: '%s' must start with http:// or https://", i,
                  p->base_url);
    bool ctl = false; /* a newline or other control character would split the request line */
    for (const unsigned char *c = (const unsigned char *)p->base_url; *c; c++) ctl = ctl || *c <= ' ' || *c == 0x7f;
    if (ctl || !p->base_url[scheme] || p->base_url[scheme] == '/')
      return fail(err, errlen, "providers[%d].base_url: must name a host after the scheme, without white space or "
                  "control characters", i);
    if (!p->model[0])
      return fail(err, errlen, "providers[%d].model: required (SANDQ_LLM_MODEL for the environment provider)", i);
    for (const char *c = p->api_key_env; *c; c++)
      if (!isalnum((unsigned char)*c) && *c != '_')
        return fail(err, errlen, "providers[%d].api_key_env: must be an environment variable name", i);
    /* the file's ranges (load_provider), again for providers set otherwise */
    if (!(p->price_in_usd_per_mtok >= 0 && p->price_in_usd_per_mtok <= MAX_PRICE_USD_PER_MTOK) ||
        !(p->price_out_usd_per_mtok >= 0 && p->price_out_usd_per_mtok <= MAX_PRICE_USD_PER_MTOK))
      return fail(err, errlen, "providers[%d].price_*_usd_per_mtok: must be a finite number in [0, %g]", i,
                  MAX_PRICE_USD_PER_MTOK);
    if (p->timeout_ms < 1 || p->timeout_ms > 3600000)
      return fail(err, errlen, "providers[%d].timeout_ms: must be an integer in [1, 3600000]", i);
    if (p->max_retries < 0 || p->max_retries > 20)
      return fail(err, errlen, "providers[%d].max_retries: must be an integer in [0, 20]", i);
    if (p->max_in_flight < 1 || p->max_in_flight > 10000)
      return fail(err, errlen, "providers[%d].max_in_flight: must be an integer in [1, 10000]", i);
    if (p->weight < 0 || p->weight > 1000000)
      return fail(err, errlen, "providers[%d].weight: must be an integer in [0, 1000000]", i);
    weight += p->weight;
  }
  if (cfg->n_providers > 0 && weight == 0)
    return fail(err, errlen, "providers: at least one provider needs a weight above 0");
  if (!cfg->worker_id[0]) {
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    for (char *c = host; *c; c++)
      if (!sq_name_char_ok((unsigned char)*c)) *c = '-';
    snprintf(cfg->worker_id, sizeof cfg->worker_id, "%s-%d", host, (int)getpid());
  }
  return 0;
}
