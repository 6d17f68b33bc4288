/* config_flags.c: the command line's step of the configuration: the flags
 * that name a configuration key (cli.h), applied over the file and the
 * environment in command-line order. */
#include <stdio.h>

#include "cli.h"
#include "config.h"
#include "errors.h"

int sq_config_apply_flags(sq_config *cfg, const sq_cli *c, char *err, size_t errlen) {
  for (size_t i = 0; i < c->n_opts; i++) {
    const sq_cli_flag *f = c->opts[i].flag;
    if (!f->config_key) continue;
    char inner[384] = "";
    int rc = sq_config_set(cfg, f->config_key, c->opts[i].value ? c->opts[i].value : "", inner, sizeof inner);
    if (rc) {
      snprintf(err, errlen, "--%s: %s", f->name, inner[0] ? inner : sq_strerror(rc));
      return rc;
    }
  }
  return 0;
}
