/* config_profiles.c: the "profiles" object of the worker's config file,
 * the interpreter profiles a task may name, and their checks. What a
 * profile does in the jail is jail_profile.c's; whether its paths and
 * modules are there is checked when the worker starts (worker/profiles.c). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "errors.h"
#include "util.h"

#define fail(err, errlen, ...) sq_errf(err, errlen, SQ_ECONFIG, __VA_ARGS__)

static bool profile_name_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > SQ_CONFIG_PROFILE_NAME_MAX) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
          *s == '-' || *s == '.'))
      return false;
  return true;
}

/* An array of strings into rows of list (each row size bytes, at most
 * SQ_CONFIG_PROFILE_LIST). */
static int load_list(const char *pname, const char *key, const cJSON *v, char *list, size_t size, int *n, char *err,
                     size_t errlen) {
  if (!cJSON_IsArray(v)) return fail(err, errlen, "profiles.%s.%s: must be an array of strings", pname, key);
  *n = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, v) {
    if (*n >= SQ_CONFIG_PROFILE_LIST)
      return fail(err, errlen, "profiles.%s.%s: at most %d entries", pname, key, SQ_CONFIG_PROFILE_LIST);
    if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) >= size)
      return fail(err, errlen, "profiles.%s.%s[%d]: must be a non-empty string of at most %zu bytes", pname, key, *n,
                  size - 1);
    snprintf(list + (size_t)*n * size, size, "%s", e->valuestring);
    (*n)++;
  }
  return 0;
}

static int load_limits(const char *pname, const char *key, const cJSON *v, sq_jail_limits *l, char *err,
                       size_t errlen) {
  if (!cJSON_IsObject(v)) return fail(err, errlen, "profiles.%s.%s: must be an object", pname, key);
  static const struct {
    const char *name;
    size_t off;
    double lo, hi;
  } fields[] = {{"wall_ms", offsetof(sq_jail_limits, wall_ms), 1, 24.0 * 3600 * 1000},
                {"cpu_ms", offsetof(sq_jail_limits, cpu_ms), 1, 24.0 * 3600 * 1000},
                {"memory_mib", offsetof(sq_jail_limits, memory_mib), 16, 1024.0 * 1024},
                {"output_kib", offsetof(sq_jail_limits, output_kib), 1, 1024.0 * 1024}};
  const cJSON *m;
  cJSON_ArrayForEach(m, v) {
    size_t k = 0;
    while (k < sizeof fields / sizeof *fields && strcmp(fields[k].name, m->string) != 0) k++;
    if (k == sizeof fields / sizeof *fields)
      return fail(err, errlen, "profiles.%s.%s.%s: unknown limit (known: wall_ms, cpu_ms, memory_mib, output_kib)",
                  pname, key, m->string);
    double d = cJSON_IsNumber(m) ? m->valuedouble : NAN;
    if (!(d >= fields[k].lo && d <= fields[k].hi && d == floor(d)))
      return fail(err, errlen, "profiles.%s.%s.%s: must be an integer in [%.0f, %.0f]", pname, key, m->string,
                  fields[k].lo, fields[k].hi);
    *(int64_t *)(void *)((char *)l + fields[k].off) = (int64_t)d;
  }
  return 0;
}

/* "env": an object of NAME -> string value. */
static int load_env(sq_config_profile *p, const cJSON *v, char *err, size_t errlen) {
  if (!cJSON_IsObject(v)) return fail(err, errlen, "profiles.%s.env: must be an object of NAME -> string", p->name);
  p->n_env = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, v) {
    if (p->n_env >= SQ_CONFIG_PROFILE_LIST)
      return fail(err, errlen, "profiles.%s.env: at most %d entries", p->name, SQ_CONFIG_PROFILE_LIST);
    if (!cJSON_IsString(e)) return fail(err, errlen, "profiles.%s.env.%s: must be a string", p->name, e->string);
    int n = snprintf(p->env[p->n_env], sizeof p->env[0], "%s=%s", e->string, e->valuestring);
    if (n < 0 || (size_t)n >= sizeof p->env[0])
      return fail(err, errlen, "profiles.%s.env.%s: NAME=VALUE is over %zu bytes", p->name, e->string,
                  sizeof p->env[0] - 1);
    p->n_env++;
  }
  return 0;
}

static int load_profile(sq_config_profile *p, const cJSON *obj, char *err, size_t errlen) {
  if (!cJSON_IsObject(obj)) return fail(err, errlen, "profiles.%s: must be an object", p->name);
  const cJSON *m;
  cJSON_ArrayForEach(m, obj) {
    const char *k = m->string;
    int rc = 0;
    if (strcmp(k, "python") == 0) {
      if (!cJSON_IsString(m) || strlen(m->valuestring) >= sizeof p->python)
        return fail(err, errlen, "profiles.%s.python: must be a string of at most %zu bytes", p->name,
                    sizeof p->python - 1);
      snprintf(p->python, sizeof p->python, "%s", m->valuestring);
    } else if (strcmp(k, "packages") == 0) {
      rc = load_list(p->name, k, m, p->packages[0], sizeof p->packages[0], &p->n_packages, err, errlen);
    } else if (strcmp(k, "preload") == 0) {
      rc = load_list(p->name, k, m, p->preload[0], sizeof p->preload[0], &p->n_preload, err, errlen);
    } else if (strcmp(k, "env") == 0) {
      rc = load_env(p, m, err, errlen);
    } else if (strcmp(k, "default_limits") == 0) {
      rc = load_limits(p->name, k, m, &p->default_limits, err, errlen);
    } else if (strcmp(k, "max_limits") == 0) {
      rc = load_limits(p->name, k, m, &p->max_limits, err, errlen);
    } else {
      return fail(err, errlen, "profiles.%s.%s: unknown key (known: python, packages, preload, env, "
                  "default_limits, max_limits)", p->name, k);
    }
    if (rc) return rc;
  }
  return 0;
}

int sq_config_load_profiles(sq_config *cfg, const cJSON *obj, char *err, size_t errlen) {
  if (!cJSON_IsObject(obj)) return fail(err, errlen, "profiles: must be an object of name -> profile");
  cfg->n_profiles = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, obj) {
    if (cfg->n_profiles >= SQ_CONFIG_MAX_PROFILES)
      return fail(err, errlen, "profiles: at most %d", SQ_CONFIG_MAX_PROFILES);
    if (!profile_name_ok(m->string))
      return fail(err, errlen, "profiles: '%.64s' must be 1-%d characters of A-Z a-z 0-9 _ - .", m->string,
                  SQ_CONFIG_PROFILE_NAME_MAX);
    if (strcmp(m->string, "default") == 0)
      return fail(err, errlen, "profiles.default: the worker's own interpreter (python) has that name; choose another");
    if (sq_config_profile_find(cfg, m->string))
      return fail(err, errlen, "profiles.%s: appears twice", m->string);
    sq_config_profile *p = &cfg->profiles[cfg->n_profiles];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", m->string);
    int rc = load_profile(p, m, err, errlen);
    if (rc) return rc;
    cfg->n_profiles++;
  }
  return 0;
}

const sq_config_profile *sq_config_profile_find(const sq_config *cfg, const char *name) {
  for (int i = 0; i < cfg->n_profiles; i++)
    if (strcmp(cfg->profiles[i].name, name) == 0) return &cfg->profiles[i];
  return NULL;
}

void sq_config_profile_limits(const sq_config *cfg, const sq_config_profile *p, sq_jail_limits *def,
                              sq_jail_limits *max) {
  *def = p ? p->default_limits : (sq_jail_limits){0};
  *max = p ? p->max_limits : (sq_jail_limits){0};
  sq_jail_limits_apply(max, &cfg->max_limits, NULL);
  sq_jail_limits_apply(def, &cfg->default_limits, max);
}

int sq_config_check_profiles(const sq_config *cfg, char *err, size_t errlen) {
  for (int i = 0; i < cfg->n_profiles; i++) {
    const sq_config_profile *p = &cfg->profiles[i];
    if (p->python[0] && p->python[0] != '/')
      return fail(err, errlen, "profiles.%s.python: '%s' must be an absolute path", p->name, p->python);
    for (int k = 0; k < p->n_packages; k++)
      if (p->packages[k][0] != '/' || strchr(p->packages[k], ':'))
        return fail(err, errlen, "profiles.%s.packages[%d]: '%s' must be an absolute path without ':'", p->name, k,
                    p->packages[k]);
    sq_jail_limits d = p->default_limits, m;
    sq_config_profile_limits(cfg, p, &d, &m);
    const sq_jail_limits *own = &p->default_limits;
    if ((own->wall_ms && own->wall_ms > m.wall_ms) || (own->cpu_ms && own->cpu_ms > m.cpu_ms) ||
        (own->memory_mib && own->memory_mib > m.memory_mib) || (own->output_kib && own->output_kib > m.output_kib))
      return fail(err, errlen, "profiles.%s.default_limits: above the profile's max_limits (its own, else the "
                  "worker's)", p->name);
  }
  return 0;
}
