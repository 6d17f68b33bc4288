/* test_config.c: defaults -> file -> env -> flags, and errors naming the field. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "errors.h"

static char path[64];

static void write_file(const char *text) {
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

static void bad_file(const char *text, const char *needle) {
  sq_config c;
  char err[512] = "";
  sq_config_defaults(&c);
  write_file(text);
  CHECK(sq_config_load_file(&c, path, err, sizeof err) != 0);
  CHECK_CONTAINS(err, needle);
}

/* A boolean key: its default, both values from a file and from the
 * environment variable env, and a non-boolean refused in each. */
static void check_bool(const char *key, const char *env, bool def, size_t off) {
  sq_config c;
  char err[512] = "", text[128], needle[128];
  sq_config_defaults(&c);
  bool *v = (bool *)((char *)&c + off);
  CHECK(*v == def);
  for (int want = 0; want < 2; want++) {
    snprintf(text, sizeof text, "{\"%s\": %s}", key, want ? "true" : "false");
    write_file(text);
    CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
    CHECK(*v == (bool)want);
    setenv(env, want ? "false" : "true", 1);
    CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
    CHECK(*v == !want);
  }
  snprintf(needle, sizeof needle, "%s: must be true or false", key);
  snprintf(text, sizeof text, "{\"%s\": 1}", key);
  bad_file(text, needle);
  snprintf(text, sizeof text, "{\"%s\": \"yes\"}", key);
  bad_file(text, needle);
  setenv(env, "1", 1);
  CHECK(sq_config_load_env(&c, err, sizeof err) != 0);
  snprintf(needle, sizeof needle, "%s: %s: '1' must be true or false", env, key);
  CHECK_CONTAINS(err, needle);
  unsetenv(env);
}

/* The static pre-check's settings: defaults, file (string or array), flags, errors. */
static void test_policy_config(void) {
  sq_config c;
  char err[512] = "";
  sq_config_defaults(&c);
  CHECK_EQ(c.policy.action[SQ_FINDING_PROCESS], SQ_PRECHECK_BLOCK);
  CHECK_EQ(c.policy.action[SQ_FINDING_IMPORT], SQ_PRECHECK_RECORD);
  CHECK_CONTAINS(c.policy.import_allowlist, "math");
  write_file("{\"policy\":{\"import_allowlist\":[\"math\",\"numpy\"],"
             "\"actions\":{\"all\":\"record\",\"dunder\":\"block\"}}}");
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  CHECK_STR(c.policy.import_allowlist, "math, numpy");
  CHECK_EQ(c.policy.action[SQ_FINDING_IMPORT], SQ_PRECHECK_RECORD);
  CHECK_EQ(c.policy.action[SQ_FINDING_DUNDER], SQ_PRECHECK_BLOCK);
  write_file("{\"policy\":{\"import_allowlist\":\"re, json\"}}");
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  CHECK_STR(c.policy.import_allowlist, "re, json");
  CHECK_EQ(sq_config_set(&c, "policy.actions.eval", "block", err, sizeof err), 0);
  CHECK_EQ(c.policy.action[SQ_FINDING_EVAL], SQ_PRECHECK_BLOCK);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  CHECK(sq_config_set(&c, "policy.actions.eval", "warn", err, sizeof err) != 0);
  CHECK_CONTAINS(err, "policy.actions.eval: 'warn' is not record or block");
  CHECK(sq_config_set(&c, "policy.actions.nope", "block", err, sizeof err) != 0);
  CHECK_CONTAINS(err, "unknown finding kind 'nope' (one of all, import,");
  CHECK_EQ(sq_config_set(&c, "policy.import_allowlist", "os; rm", err, sizeof err), 0);
  CHECK(sq_config_validate(&c, err, sizeof err) != 0);
  CHECK_CONTAINS(err, "policy.import_allowlist");
  bad_file("{\"policy\":[]}", "policy: must be an object");
  bad_file("{\"policy\":{\"actions\":{\"import\":1}}}", "policy.actions.import: must be");
  bad_file("{\"policy\":{\"allow\":\"x\"}}", "policy.allow: unknown key");
  bad_file("{\"policy\":{\"import_allowlist\":[1]}}", "policy.import_allowlist: must hold strings");
}

/* validate must refuse key=value (after a file set it) with err naming the key. */
static void bad_value(const char *json, const char *needle) {
  sq_config c;
  char err[512] = "";
  sq_config_defaults(&c);
  write_file(json);
  int rc = sq_config_load_file(&c, path, err, sizeof err);
  if (rc == 0) rc = sq_config_validate(&c, err, sizeof err);
  CHECK(rc != 0);
  CHECK_CONTAINS(err, needle);
}

/* Each error says what is actually wrong; ranges are
 * checked as ranges; no infinity is taken; a NUL is refused, not cut. */
static void test_errors_say_why(void) {
  char big[2200];
  int n = snprintf(big, sizeof big, "{\"system_prompt\": \"");
  memset(big + n, 'x', 1500);
  snprintf(big + n + 1500, sizeof big - (size_t)n - 1500, "\"}");
  bad_file(big, "system_prompt: longer than 1023 bytes"); /* was "must be a string or a number" */
  n = snprintf(big, sizeof big, "{\"queue\": \"");
  memset(big + n, 'q', 1100);
  snprintf(big + n + 1100, sizeof big - (size_t)n - 1100, "\"}");
  bad_file(big, "queue: longer than");
#define PROV(extra) "{\"providers\":[{\"name\":\"a\",\"base_url\":\"http://h/v1\",\"model\":\"m\"," extra "}]}"
  bad_value(PROV("\"weight\": 1e10"), "providers[0].weight: must be an integer in [0, 1000000]");
  bad_value(PROV("\"weight\": -1"), "providers[0].weight: must be an integer in [0, 1000000]");
  bad_value(PROV("\"weight\": 1.5"), "providers[0].weight: must be an integer");
  bad_value(PROV("\"max_in_flight\": 3e9"), "providers[0].max_in_flight: must be an integer in [1, 10000]");
  bad_value(PROV("\"timeout_ms\": 1e30"), "providers[0].timeout_ms: must be an integer in [1, 3600000]");
  bad_value(PROV("\"max_retries\": 1e300"), "providers[0].max_retries: must be an integer in [0, 20]");
  bad_value(PROV("\"price_in_usd_per_mtok\": 1e309"), "providers[0].price_in_usd_per_mtok: must be a finite number");
  bad_value(PROV("\"price_out_usd_per_mtok\": -1e309"), "providers[0].price_out_usd_per_mtok: must be a finite");
  bad_value(PROV("\"weight\": \"3\""), "providers[0].weight: must be an integer");
  bad_value("{\"lease_ms\": 1e309}", "lease_ms: must be a finite number");
  bad_value("{\"lease_ms\": 1e30}", "lease_ms: '1e+30' is not an integer in [100, 86400000]");
  bad_value("{\"max_queue_len\": 9223372036854775808}", "max_queue_len: '9.2233720368547758e+18' is not an integer");
  bad_value("{\"default_limits\": {\"wall_ms\": -1e309}}", "default_limits.wall_ms: must be a finite number");
  bad_value("{\"default_limits\": {\"memory_mib\": 15}}", "default_limits.memory_mib");
  bad_value("{\"queue\": \"a\\u0000b\"}", "queue: holds a NUL character");
  bad_value("{\"providers\":[{\"name\":\"a\\u0000\"}]}", "providers: holds a NUL character");
  /* white space around a number: refused on either side, not only after */
  bad_value("{\"lease_ms\": \" 5000\"}", "lease_ms: ' 5000' is not an integer");
  bad_value("{\"lease_ms\": \"5000 \"}", "lease_ms: '5000 ' is not an integer");
  /* two providers of one name; a base_url without a host or with a newline */
  bad_value("{\"providers\":[{\"name\":\"a\",\"base_url\":\"http://h/v1\",\"model\":\"m\"},"
            "{\"name\":\"a\",\"base_url\":\"http://g/v1\",\"model\":\"m\"}]}",
            "providers[1].name: 'a' is the name of providers[0] too");
  bad_value("{\"providers\":[{\"name\":\"a\",\"base_url\":\"http://\",\"model\":\"m\"}]}",
            "providers[0].base_url: must name a host");
  bad_value("{\"providers\":[{\"name\":\"a\",\"base_url\":\"http://h/v1\\nX-Evil: 1\",\"model\":\"m\"}]}",
            "providers[0].base_url: must name a host after the scheme, without white space");
  /* a second object after the first is not dropped without a word */
  bad_value("{\"queue\": \"a\"}{\"queue\": \"b\"}", "trailing data after the JSON object at byte 14");
  bad_value("{\"queue\": \"a\"} xyz", "trailing data after the JSON object");
  /* a setting given twice: the last one won without a word */
  bad_file("{\"queue\": \"a\", \"lease_ms\": 5000, \"queue\": \"b\"}", "queue: given twice");
  bad_file("{\"default_limits\": {\"wall_ms\": 100, \"wall_ms\": 5000}}", "default_limits.wall_ms: given twice");
  bad_file(PROV("\"model\": \"n\""), "providers[0].model: given twice");
  bad_file("{\"policy\": {\"block\": [], \"block\": []}}", "policy.block: given twice");
  {
    sq_config c;
    char err[512] = "";
    sq_config_defaults(&c);
    write_file("{\"default_limits\": {\"wall_ms\": 100}, \"max_limits\": {\"wall_ms\": 5000}}");
    CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
    CHECK_STR(err, "");
  }
#undef PROV
}

/* Interpreter profiles: what the file carries, and each refusal naming the key. */
static void test_profiles(void) {
  sq_config c;
  char err[512] = "";
  sq_config_defaults(&c);
  write_file("{\"profiles\": {\"venv\": {\"python\": \"/usr/bin/python3\", \"packages\": [\"/opt/v/site\"], "
             "\"preload\": [\"yaml\"], \"env\": {\"A\": \"1\"}, \"max_limits\": {\"memory_mib\": 4096}, "
             "\"default_limits\": {\"wall_ms\": 2000}}}}");
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  CHECK_EQ(c.n_profiles, 1);
  const sq_config_profile *p = sq_config_profile_find(&c, "venv");
  CHECK(p != NULL && sq_config_profile_find(&c, "default") == NULL);
  if (p) {
    CHECK_STR(p->packages[0], "/opt/v/site");
    CHECK_STR(p->preload[0], "yaml");
    CHECK_STR(p->env[0], "A=1");
    sq_jail_limits d, m;
    sq_config_profile_limits(&c, p, &d, &m);
    CHECK_EQ(m.memory_mib, 4096);             /* its own */
    CHECK_EQ(m.wall_ms, c.max_limits.wall_ms); /* the worker's */
    CHECK_EQ(d.wall_ms, 2000);
    CHECK_EQ(d.memory_mib, c.default_limits.memory_mib);
  }
  bad_value("{\"profiles\": []}", "profiles: must be an object");
  bad_value("{\"profiles\": {\"default\": {}}}", "profiles.default: the worker's own interpreter");
  bad_value("{\"profiles\": {\"a b\": {}}}", "profiles: 'a b' must be 1-31 characters");
  bad_value("{\"profiles\": {\"x\": {\"site\": 1}}}", "profiles.x.site: unknown key");
  bad_value("{\"profiles\": {\"x\": {\"packages\": \"/a\"}}}", "profiles.x.packages: must be an array");
  bad_value("{\"profiles\": {\"x\": {\"packages\": [\"rel/dir\"]}}}", "profiles.x.packages[0]: 'rel/dir' must be an absolute");
  bad_value("{\"profiles\": {\"x\": {\"python\": \"python3\"}}}", "profiles.x.python: 'python3' must be an absolute");
  bad_value("{\"profiles\": {\"x\": {\"env\": {\"A\": 1}}}}", "profiles.x.env.A: must be a string");
  bad_value("{\"profiles\": {\"x\": {\"max_limits\": {\"wall_ms\": 0}}}}", "profiles.x.max_limits.wall_ms: must be an integer");
  bad_value("{\"profiles\": {\"x\": {\"max_limits\": {\"disk\": 1}}}}", "profiles.x.max_limits.disk: unknown limit");
  bad_value("{\"profiles\": {\"x\": {\"max_limits\": {\"wall_ms\": 100}, \"default_limits\": {\"wall_ms\": 200}}}}",
            "profiles.x.default_limits: above the profile's max_limits");
}

/* The LLM side's settings: defaults, file, and refusals. */
static void test_llm_settings(void) {
  sq_config c;
  char err[512] = "";
  sq_config_defaults(&c);
  CHECK_EQ(c.max_tasks_in_flight, SQ_CONFIG_AUTO);
  CHECK_EQ(c.claim_batch, SQ_CONFIG_AUTO);
  CHECK_EQ(c.risk, SQ_RISK_SCOPE_GENERATED);
  CHECK_EQ(c.risk_policy.fallback, SQ_RISK_WARN);
  CHECK_EQ(c.risk_policy.block_level, SQ_RISK_HIGH);
  CHECK_EQ(c.max_repairs, 0);
  CHECK_EQ(c.llm.breaker_min_samples, 20);
  CHECK_EQ(c.llm_outage_max_s, 900);
  write_file("{\"max_tasks_in_flight\": 500, \"jail_threads\": 3, \"claim_batch\": 50, \"risk\": \"all\", \"risk_fallback\": \"block\","
             " \"risk_block_level\": \"medium\", \"risk_cache_ttl_s\": 60, \"max_repairs\": 2,"
             " \"llm_backoff_base_ms\": 10, \"llm_backoff_cap_ms\": 100, \"llm_retry_after_cap_ms\": 5000,"
             " \"breaker_window_ms\": 1000, \"breaker_min_samples\": 5, \"breaker_error_pct\": 40,"
             " \"breaker_open_ms\": 2000, \"llm_outage_max_s\": 30}");
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  CHECK_EQ(c.max_tasks_in_flight, 500);
  CHECK_EQ(c.jail_threads, 3);
  CHECK_EQ(c.claim_batch, 50);
  CHECK_EQ(c.risk, SQ_RISK_SCOPE_ALL);
  CHECK_EQ(c.risk_policy.fallback, SQ_RISK_BLOCK);
  CHECK_EQ(c.risk_policy.block_level, SQ_RISK_MEDIUM);
  CHECK_EQ(c.max_repairs, 2);
  CHECK_EQ(c.llm.backoff_base_ms, 10);
  CHECK_EQ(c.llm.breaker_error_pct, 40);
  CHECK_EQ(c.llm.breaker_open_ms, 2000);
  CHECK_EQ(c.llm_outage_max_s, 30);
  bad_value("{\"llm_outage_max_s\": -1}", "llm_outage_max_s");
  bad_value("{\"llm_outage_max_s\": 86401}", "llm_outage_max_s");
  bad_value("{\"risk\": \"sometimes\"}", "risk: 'sometimes' must be off, generated or all");
  bad_value("{\"risk_fallback\": \"allow\"}", "risk_fallback: 'allow' must be warn or block");
  bad_value("{\"risk_block_level\": \"severe\"}", "risk_block_level: 'severe'");
  bad_value("{\"max_tasks_in_flight\": 0}", "max_tasks_in_flight");
  bad_value("{\"claim_batch\": 0}", "claim_batch");
  bad_value("{\"claim_batch\": 1001}", "claim_batch");
  bad_value("{\"max_repairs\": 11}", "max_repairs");
  bad_value("{\"breaker_error_pct\": 101}", "breaker_error_pct");
  bad_value("{\"llm_backoff_base_ms\": 9000}", "llm_backoff_base_ms: above llm_backoff_cap_ms");
  bad_value("{\"queue\": true}", "queue: must be a string or a number");
  /* The booleans: a JSON boolean in a file, true or false in the environment. */
  check_bool("store_llm_reply", "SANDQ_STORE_LLM_REPLY", false, offsetof(sq_config, store_llm_reply));
  check_bool("warm_prelude", "SANDQ_WARM_PRELUDE", true, offsetof(sq_config, warm_prelude));
}

/* The risk settings are enums parsed once, by sq_config_set: every name of
 * each, names back for output, and only the exact names (the lenient
 * parsers are for a model's reply, not for config). */
static void test_risk_settings(void) {
  sq_config c;
  char err[512] = "";
  static const struct {
    const char *name;
    sq_risk_scope v;
  } scopes[] = {{"off", SQ_RISK_SCOPE_OFF}, {"generated", SQ_RISK_SCOPE_GENERATED}, {"all", SQ_RISK_SCOPE_ALL}};
  static const char *const levels[] = {"none", "low", "medium", "high", "critical"};
  sq_config_defaults(&c);
  for (size_t i = 0; i < sizeof scopes / sizeof scopes[0]; i++) {
    CHECK_EQ(sq_config_set(&c, "risk", scopes[i].name, err, sizeof err), 0);
    CHECK_EQ(c.risk, scopes[i].v);
    CHECK_STR(sq_risk_scope_name(c.risk), scopes[i].name);
  }
  for (int i = 0; i < 5; i++) {
    CHECK_EQ(sq_config_set(&c, "risk_block_level", levels[i], err, sizeof err), 0);
    CHECK_EQ(c.risk_policy.block_level, (sq_risk_level)i);
    CHECK_STR(sq_risk_level_name(c.risk_policy.block_level), levels[i]);
  }
  CHECK_EQ(sq_config_set(&c, "risk_fallback", "block", err, sizeof err), 0);
  CHECK_EQ(c.risk_policy.fallback, SQ_RISK_BLOCK);
  CHECK_EQ(sq_config_set(&c, "risk_fallback", "warn", err, sizeof err), 0);
  CHECK_EQ(c.risk_policy.fallback, SQ_RISK_WARN);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  /* refused at once, naming the key, the field left as it was */
  CHECK(sq_config_set(&c, "risk", "All", err, sizeof err) != 0);
  CHECK_CONTAINS(err, "risk: 'All' must be off, generated or all");
  CHECK_EQ(c.risk, SQ_RISK_SCOPE_ALL);
  CHECK(sq_config_set(&c, "risk_block_level", " high", err, sizeof err) != 0);
  CHECK_CONTAINS(err, "risk_block_level: ' high' must be none, low, medium, high or critical");
  CHECK_EQ(c.risk_policy.block_level, SQ_RISK_CRITICAL);
  CHECK(sq_config_set(&c, "risk_fallback", "allow", err, sizeof err) != 0);
  CHECK_CONTAINS(err, "risk_fallback: 'allow' must be warn or block");
  CHECK(sq_config_set(&c, "risk_fallback", "a-much-longer-value-than-before", err, sizeof err) != 0);
  CHECK_CONTAINS(err, "risk_fallback: 'a-much-longer-value-than-before' must be warn or block");
  CHECK_EQ(c.risk_policy.fallback, SQ_RISK_WARN);
  bad_file("{\"risk\": 1}", "risk: '1' must be off, generated or all");
  /* the names out of range never crash an output line */
  CHECK_STR(sq_risk_scope_name((sq_risk_scope)7), "?");
  CHECK_STR(sq_risk_level_name((sq_risk_level)-1), "?");
}

/* Metrics, health and rollout settings: defaults, a good file, and refusals naming the key. */
static void test_metrics_settings(void) {
  sq_config c;
  char err[512] = "";
  sq_config_defaults(&c);
  CHECK_EQ(c.metrics_flush_ms, 1000);
  CHECK_EQ(c.metrics.window_s, 10);
  CHECK_STR(c.rollout.stages, "10,30,70,100");
  CHECK_EQ(c.rollout.hold_s, 300);
  write_file("{\"metrics_flush_ms\": 250, \"metrics_window_s\": 5, \"metrics_retention_s\": 600,"
             " \"health_stale_ms\": 5000, \"rollout_stages\": \"5, 50,100\", \"rollout_hold_s\": 60,"
             " \"rollout_min_requests\": 50, \"rollout_min_samples\": 10, \"rollout_window_s\": 30,"
             " \"rollout_max_error_pct\": 5, \"rollout_error_margin_pct\": 1, \"rollout_p95_ratio_pct\": 200,"
             " \"rollout_p95_margin_ms\": 50, \"rollout_max_p95_ms\": 20000}");
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  CHECK_EQ(c.metrics_flush_ms, 250);
  CHECK_EQ(c.metrics.retention_s, 600);
  CHECK_EQ(c.health_stale_ms, 5000);
  CHECK_EQ(c.rollout.p95_ratio_pct, 200);
  CHECK_EQ(c.rollout.max_p95_ms, 20000);
  CHECK_EQ(sq_config_set(&c, "rollout_stages", "20,100", err, sizeof err), 0);
  CHECK_STR(c.rollout.stages, "20,100");
  bad_value("{\"metrics_flush_ms\": 10}", "metrics_flush_ms");
  bad_value("{\"metrics_window_s\": 0}", "metrics_window_s");
  bad_value("{\"metrics_window_s\": 60, \"metrics_retention_s\": 100}",
            "metrics_retention_s: 100 must be at least twice metrics_window_s");
  bad_value("{\"rollout_window_s\": 5}", "rollout_window_s: 5 must lie between metrics_window_s");
  bad_value("{\"rollout_window_s\": 1000}", "rollout_window_s");
  bad_value("{\"rollout_stages\": \"10,30,70\"}", "rollout_stages: '10,30,70' must be");
  bad_value("{\"rollout_stages\": \"30,10,100\"}", "rollout_stages");
  bad_value("{\"rollout_stages\": \"0,100\"}", "rollout_stages");
  bad_value("{\"rollout_stages\": \"10,x,100\"}", "rollout_stages");
  bad_value("{\"rollout_hold_s\": 0}", "rollout_hold_s");
  bad_value("{\"rollout_max_error_pct\": 101}", "rollout_max_error_pct");
  bad_value("{\"rollout_p95_ratio_pct\": 99}", "rollout_p95_ratio_pct");
  bad_value("{\"rollout_min_samples\": 500}", "rollout_min_samples: 500 is above rollout_min_requests");
  bad_value("{\"rollout_hold\": 5}", "rollout_hold: unknown setting");
}

/* Sizing from the host: what nobody set is derived (the rule in
 * config.h and docs/configuration.md); a file, the environment or a flag
 * always wins. */
static void test_sizing(void) {
  sq_config c;
  char err[512] = "", note[512];
  sq_config_host two = {.cores = 2, .memory_mib = 24000}, small = {.cores = 16, .memory_mib = 1024};
  sq_config_defaults(&c);
  CHECK_EQ(c.jail_threads, SQ_CONFIG_AUTO);
  CHECK_EQ(c.claim_prefetch, SQ_CONFIG_AUTO);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  sq_config_derive(&c, &two, note, sizeof note);
  CHECK_EQ(c.jail_threads, 2); /* one CPU-bound run per core, no more */
  CHECK_EQ(c.jail_pool_size, 2);
  CHECK_EQ(c.claim_prefetch, 2);
  CHECK_EQ(c.max_tasks_in_flight, 4);
  CHECK_EQ(c.claim_batch, 4);
  CHECK_CONTAINS(note, "jail_threads=2 (derived)");
  CHECK_CONTAINS(note, "for 2 core(s), 24000 MiB");
  /* memory bounds the threads: one per 512 MiB */
  sq_config_defaults(&c);
  sq_config_derive(&c, &small, note, sizeof note);
  CHECK_EQ(c.jail_threads, 2);
  CHECK_EQ(c.jail_pool_size, 2);
  /* many cores: at most 64 threads and a batch of 64 */
  sq_config_host big = {.cores = 256, .memory_mib = 1 << 20};
  sq_config_defaults(&c);
  sq_config_derive(&c, &big, NULL, 0);
  CHECK_EQ(c.jail_threads, 64);
  CHECK_EQ(c.claim_batch, 64);
  CHECK_EQ(c.max_tasks_in_flight, 128);
  /* the providers' slots add to max_tasks_in_flight */
  sq_config_defaults(&c);
  setenv("SANDQ_LLM_BASE_URL", "http://127.0.0.1:1/v1", 1);
  setenv("SANDQ_LLM_MODEL", "mm", 1);
  setenv("SANDQ_LLM_MAX_IN_FLIGHT", "1000", 1);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
  sq_config_derive(&c, &two, note, sizeof note);
  CHECK_EQ(c.max_tasks_in_flight, 1004);
  unsetenv("SANDQ_LLM_BASE_URL");
  unsetenv("SANDQ_LLM_MODEL");
  unsetenv("SANDQ_LLM_MAX_IN_FLIGHT");
  /* explicit settings win: a file, the environment */
  write_file("{\"jail_threads\": 3, \"claim_batch\": 50}");
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  setenv("SANDQ_JAIL_POOL_SIZE", "1", 1);
  setenv("SANDQ_CLAIM_PREFETCH", "0", 1);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
  unsetenv("SANDQ_JAIL_POOL_SIZE");
  unsetenv("SANDQ_CLAIM_PREFETCH");
  sq_config_derive(&c, &two, note, sizeof note);
  CHECK_EQ(c.jail_threads, 3);
  CHECK_EQ(c.claim_batch, 50);
  CHECK_EQ(c.jail_pool_size, 1);
  CHECK_EQ(c.claim_prefetch, 0);
  CHECK_EQ(c.max_tasks_in_flight, 3);
  CHECK_CONTAINS(note, "jail_threads=3 (set)");
  CHECK_CONTAINS(note, "max_tasks_in_flight=3 (derived)");
  /* jail_threads 0 still means "derive" */
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_set(&c, "jail_threads", "0", err, sizeof err), 0);
  sq_config_derive(&c, &two, NULL, 0);
  CHECK_EQ(c.jail_threads, 2);
  bad_value("{\"claim_prefetch\": -1}", "claim_prefetch");
  /* the host probe finds at least one core and some memory */
  sq_config_host h;
  sq_config_host_probe(&h);
  CHECK(h.cores >= 1);
  CHECK(h.memory_mib >= 64);
}

/* The environment provider's concurrency and timeout, and their refusals. */
static void test_env_provider(void) {
  sq_config c;
  char err[512] = "";
  setenv("SANDQ_LLM_BASE_URL", "http://127.0.0.1:1/v1", 1);
  setenv("SANDQ_LLM_MODEL", "mm", 1);
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
  CHECK_EQ(c.providers[0].max_in_flight, 16);
  CHECK_EQ(c.providers[0].timeout_ms, 60000);
  setenv("SANDQ_LLM_MAX_IN_FLIGHT", "1000", 1);
  setenv("SANDQ_LLM_TIMEOUT_MS", "2500", 1);
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
  CHECK_EQ(c.providers[0].max_in_flight, 1000);
  CHECK_EQ(c.providers[0].timeout_ms, 2500);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  static const char *bad[][2] = {{"SANDQ_LLM_MAX_IN_FLIGHT", "0"}, {"SANDQ_LLM_MAX_IN_FLIGHT", "10001"},
                                 {"SANDQ_LLM_MAX_IN_FLIGHT", "many"}, {"SANDQ_LLM_TIMEOUT_MS", "0"},
                                 {"SANDQ_LLM_TIMEOUT_MS", "3600001"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv(bad[i][0], bad[i][1], 1);
    sq_config_defaults(&c);
    CHECK_EQ(sq_config_load_env(&c, err, sizeof err), SQ_ECONFIG);
    CHECK_CONTAINS(err, bad[i][0]);
    CHECK_CONTAINS(err, bad[i][1]);
    setenv("SANDQ_LLM_MAX_IN_FLIGHT", "1000", 1);
    setenv("SANDQ_LLM_TIMEOUT_MS", "2500", 1);
  }
  /* a file's provider is not the environment's: the variables leave it be */
  write_file("{\"providers\":[{\"name\":\"a\",\"base_url\":\"http://127.0.0.1:9/v1\",\"model\":\"m\"}]}");
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
  CHECK_EQ(c.providers[0].max_in_flight, 16);
  unsetenv("SANDQ_LLM_MAX_IN_FLIGHT");
  unsetenv("SANDQ_LLM_TIMEOUT_MS");
  unsetenv("SANDQ_LLM_BASE_URL");
  unsetenv("SANDQ_LLM_MODEL");
}

int main(void) {
  snprintf(path, sizeof path, "/tmp/sq-test-config-%d.json", (int)getpid());
  sq_config c;
  char err[512] = "";
  unsetenv("SANDQ_LLM_BASE_URL");
  unsetenv("SANDQ_REDIS_URL");

  test_llm_settings();
  test_risk_settings();
  test_metrics_settings();
  test_sizing();
  test_env_provider();
  test_profiles();
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  CHECK_STR(c.queue, "default");
  CHECK(c.worker_id[0] != 0);

  /* file over defaults */
  write_file("{\"queue\":\"q1\",\"log_level\":\"debug\",\"max_limits\":{\"wall_ms\":90000},"
             "\"providers\":[{\"name\":\"a\",\"base_url\":\"http://127.0.0.1:9/v1\",\"model\":\"m\","
             "\"api_key_env\":\"A_KEY\",\"price_in_usd_per_mtok\":0.5,\"weight\":3}]}");
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  CHECK_STR(c.queue, "q1");
  CHECK_EQ(c.log_level, SQ_LOG_DEBUG);
  CHECK_EQ(c.max_limits.wall_ms, 90000);
  CHECK_EQ(c.n_providers, 1);
  CHECK_STR(c.providers[0].api_key_env, "A_KEY");
  CHECK_EQ(c.providers[0].weight, 3);
  CHECK(c.providers[0].price_in_usd_per_mtok == 0.5);

  /* the jail's mode and pool */
  CHECK_EQ((int)c.jail_mode, (int)SQ_JAIL_MODE_WARM);
  CHECK_EQ(c.jail_pool_size, SQ_CONFIG_AUTO);
  CHECK_EQ(sq_config_set(&c, "jail_mode", "spawn", err, sizeof err), 0);
  CHECK_EQ((int)c.jail_mode, (int)SQ_JAIL_MODE_SPAWN);
  CHECK(sq_config_set(&c, "jail_mode", "fast", err, sizeof err) != 0);
  CHECK_CONTAINS(err, "jail_mode");
  CHECK(sq_config_set(&c, "jail_pool_size", "0", err, sizeof err) != 0);
  CHECK_CONTAINS(err, "jail_pool_size");
  setenv("SANDQ_JAIL_MODE", "warm", 1);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
  CHECK_EQ((int)c.jail_mode, (int)SQ_JAIL_MODE_WARM);
  unsetenv("SANDQ_JAIL_MODE");

  /* env over file, flags over env */
  setenv("SANDQ_QUEUE", "q2", 1);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
  CHECK_STR(c.queue, "q2");
  CHECK_EQ(sq_config_set(&c, "queue", "q3", err, sizeof err), 0);
  CHECK_STR(c.queue, "q3");
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  unsetenv("SANDQ_QUEUE");

  /* env provider when the file names none */
  sq_config_defaults(&c);
  setenv("SANDQ_LLM_BASE_URL", "http://127.0.0.1:1/v1", 1);
  setenv("SANDQ_LLM_MODEL", "mm", 1);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
  CHECK_EQ(c.n_providers, 1);
  CHECK_STR(c.providers[0].api_key_env, "SANDQ_LLM_API_KEY");
  CHECK_STR(c.providers[0].model, "mm");
  unsetenv("SANDQ_LLM_BASE_URL");
  unsetenv("SANDQ_LLM_MODEL");

  /* bad values name the field */
  sq_config_defaults(&c);
  CHECK_EQ(sq_config_set(&c, "max_limits.wall_ms", "soon", err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "max_limits.wall_ms");
  CHECK_EQ(sq_config_set(&c, "log_level", "loud", err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "log_level");
  CHECK_EQ(sq_config_set(&c, "colour", "red", err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "colour: unknown setting");
  setenv("SANDQ_LOG_LEVEL", "chatty", 1);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "SANDQ_LOG_LEVEL");
  unsetenv("SANDQ_LOG_LEVEL");

  sq_config_defaults(&c);
  snprintf(c.redis_url, sizeof c.redis_url, "http://:hunter2@x");
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "redis_url");
  CHECK(strstr(err, "hunter2") == NULL);
  sq_config_defaults(&c);
  snprintf(c.queue, sizeof c.queue, "a{b}");
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "queue");
  sq_config_defaults(&c);
  c.default_limits.wall_ms = c.max_limits.wall_ms + 1;
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "default_limits.wall_ms");
  sq_config_defaults(&c);
  snprintf(c.python_path, sizeof c.python_path, "python3");
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "python");

  bad_file("{\"queue\":", "not a JSON object");
  bad_file("{\"queue\":[1]}", "queue: must be a string or a number");
  bad_file("{\"default_limits\":{\"wall_ms\":\"x\"}}", "default_limits.wall_ms");
  bad_file("{\"default_limits\":{\"disk\":1}}", "default_limits.disk: unknown setting");
  bad_file("{\"providers\":{}}", "providers: must be an array");
  bad_file("{\"providers\":[{\"name\":\"a\",\"api_key\":\"sk-live\"}]}", "providers[0].api_key");
  bad_file("{\"providers\":[{\"name\":\"a\",\"colour\":1}]}", "providers[0].colour");
  sq_config_defaults(&c);
  write_file("{\"providers\":[{\"name\":\"a\",\"base_url\":\"ftp://x\",\"model\":\"m\"}]}");
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "providers[0].base_url");
  CHECK(sq_config_load_file(&c, "/nonexistent/sandq.json", err, sizeof err) != 0);
  CHECK_CONTAINS(err, "/nonexistent/sandq.json");

  test_policy_config();
  test_errors_say_why();
  /* queue settings: defaults, file, environment, validation */
  sq_config_defaults(&c);
  CHECK_EQ(c.queue_opts.lease_ms, 30000);
  CHECK_EQ(c.heartbeat_ms, 10000);
  CHECK_EQ(c.queue_opts.max_stalls, 3);
  CHECK_EQ(c.queue_opts.retention_s, 7 * 24 * 3600);
  CHECK_EQ(c.queue_opts.dead_retention_s, 30 * 24 * 3600);
  bad_value("{\"dead_retention_s\": -1}", "dead_retention_s");
  sq_config_defaults(&c);
  write_file("{\"lease_ms\":4000,\"heartbeat_ms\":1000,\"max_attempts\":2,\"max_queue_len\":0,"
             "\"backoff_base_ms\":10,\"backoff_max_ms\":20,\"shutdown_grace_ms\":0}");
  CHECK_EQ(sq_config_load_file(&c, path, err, sizeof err), 0);
  CHECK_EQ(c.queue_opts.lease_ms, 4000);
  CHECK_EQ(c.heartbeat_ms, 1000);
  CHECK_EQ(c.queue_opts.max_attempts, 2);
  CHECK_EQ(c.queue_opts.max_queue_len, 0);
  CHECK_EQ(c.queue_opts.backoff_max_ms, 20);
  CHECK_EQ(c.shutdown_grace_ms, 0);
  setenv("SANDQ_MAX_STALLS", "7", 1);
  setenv("SANDQ_RETENTION_S", "60", 1);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), 0);
  CHECK_EQ(c.queue_opts.max_stalls, 7);
  CHECK_EQ(c.queue_opts.retention_s, 60);
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), 0);
  setenv("SANDQ_MAX_STALLS", "0", 1);
  CHECK_EQ(sq_config_load_env(&c, err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "SANDQ_MAX_STALLS");
  unsetenv("SANDQ_MAX_STALLS");
  unsetenv("SANDQ_RETENTION_S");
  c.heartbeat_ms = 3000; /* more than half the 4000 ms lease */
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "heartbeat_ms");
  c.heartbeat_ms = 1000;
  c.queue_opts.backoff_base_ms = 30;
  CHECK_EQ(sq_config_validate(&c, err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "backoff_base_ms");
  CHECK_EQ(sq_config_set(&c, "lease_ms", "5", err, sizeof err), SQ_ECONFIG);
  CHECK_CONTAINS(err, "lease_ms");

  unlink(path);
  return sq_check_done("test_config");
}
