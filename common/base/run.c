/* run.c: names of a run's ends, modes and layers, and limit arithmetic.
 * Pure: no I/O. */
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "errors.h"

static const char *const end_names[] = {
#define SQ__X(e, name) [SQ_JAIL_##e] = name,
    SQ_JAIL_END_LIST(SQ__X)
#undef SQ__X
};

const char *sq_jail_end_name(sq_jail_end e) {
  if ((unsigned)e < sizeof end_names / sizeof end_names[0] && end_names[e]) return end_names[e];
  return "unknown";
}

const char *sq_jail_mode_name(sq_jail_mode m) { return m == SQ_JAIL_MODE_WARM ? "warm" : "spawn"; }

int sq_jail_mode_parse(const char *s, sq_jail_mode *out) {
  if (s && strcmp(s, "spawn") == 0) *out = SQ_JAIL_MODE_SPAWN;
  else if (s && strcmp(s, "warm") == 0) *out = SQ_JAIL_MODE_WARM;
  else return SQ_EINVAL;
  return 0;
}

static const char *const layer_names[SQ_JAIL_LAYER_COUNT] = {
#define SQ__X(e, name) [SQ__JAIL_LAYER_BIT_##e] = name,
    SQ_JAIL_LAYER_LIST(SQ__X)
#undef SQ__X
};

const char *sq_jail_layer_name(uint32_t layer) {
  for (int i = 0; i < SQ_JAIL_LAYER_COUNT; i++)
    if (layer == 1u << i) return layer_names[i];
  return NULL;
}

int sq_jail_layers_names(uint32_t layers, const char **names, int max) {
  int n = 0;
  for (int i = 0; i < SQ_JAIL_LAYER_COUNT && n < max; i++)
    if (layers & (1u << i)) names[n++] = layer_names[i];
  return n;
}

static void apply_one(int64_t *v, int64_t dflt, int64_t max) {
  if (*v <= 0) *v = dflt;
  if (max > 0 && *v > max) *v = max;
}

void sq_jail_limits_apply(sq_jail_limits *lim, const sq_jail_limits *defaults,
                          const sq_jail_limits *max) {
  static const sq_jail_limits none = {0};
  if (!defaults) defaults = &none;
  if (!max) max = &none;
  apply_one(&lim->wall_ms, defaults->wall_ms, max->wall_ms);
  apply_one(&lim->cpu_ms, defaults->cpu_ms, max->cpu_ms);
  apply_one(&lim->memory_mib, defaults->memory_mib, max->memory_mib);
  apply_one(&lim->output_kib, defaults->output_kib, max->output_kib);
}

void sq_jail_outcome_clear(sq_jail_outcome *o) {
  if (!o) return;
  free(o->stdout_buf);
  free(o->stderr_buf);
  memset(o, 0, sizeof *o);
}
