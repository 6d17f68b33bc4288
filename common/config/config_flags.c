/* config_flags.c: the command line's step of the configuration, and the
 * one function every program builds its configuration with: defaults,
 * --config file, environment, flags, validated last. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "errors.h"
#include "util.h"

/* One flag's value into its key; "prefix.*" takes SUFFIX=VALUE. */
static int apply_one(sq_config *cfg, const sq_cli_flag *f, const char *value, char *err, size_t errlen) {
  size_t n = strlen(f->config_key);
  if (n < 2 || strcmp(f->config_key + n - 2, ".*") != 0) return sq_config_set(cfg, f->config_key, value, err, errlen);
  const char *eq = strchr(value, '=');
  if (!eq || eq == value) return sq_errf(err, errlen, SQ_ECONFIG, "'%s' is not %s", value, f->arg ? f->arg : "NAME=VALUE");
  char key[128];
  if ((size_t)snprintf(key, sizeof key, "%.*s%.*s", (int)(n - 1), f->config_key, (int)(eq - value), value) >=
      sizeof key)
    return sq_errf(err, errlen, SQ_ECONFIG, "'%.64s...' is too long", value);
  return sq_config_set(cfg, key, eq + 1, err, errlen);
}

int sq_config_apply_flags(sq_config *cfg, const sq_cli *c, char *err, size_t errlen) {
  for (size_t i = 0; i < c->n_opts; i++) {
    const sq_cli_flag *f = c->opts[i].flag;
    if (!f->config_key) continue;
    char inner[384] = "";
    int rc = apply_one(cfg, f, c->opts[i].value ? c->opts[i].value : "", inner, sizeof inner);
    if (rc) {
      snprintf(err, errlen, "--%s: %s", f->name, inner[0] ? inner : sq_strerror(rc));
      return rc;
    }
  }
  return 0;
}

int sq_config_build(sq_config *cfg, const sq_cli *c, char *err, size_t errlen) {
  const char *file = c ? sq_cli_get(c, "config") : NULL;
  int rc;
  if (err && errlen) err[0] = '\0';
  sq_config_defaults(cfg);
  if (file && !file[0]) return sq_errf(err, errlen, SQ_ECONFIG, "--config needs a file name");
  if (file && (rc = sq_config_load_file(cfg, file, err, errlen)) != 0) return rc;
  if ((rc = sq_config_load_env(cfg, err, errlen)) != 0) return rc;
  if (c && (rc = sq_config_apply_flags(cfg, c, err, errlen)) != 0) return rc;
  return sq_config_validate(cfg, err, errlen);
}
