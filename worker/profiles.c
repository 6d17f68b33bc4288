/* profiles.c: the worker's interpreter profiles (profiles.h): one jail
 * runner each, the built-in "data" profile where Debian's numpy and pandas
 * are installed, and the start-up check that fails the worker, never a
 * task, when a profile's packages or modules are missing. */
#include "profiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "log.h"
#include "util.h"

#define CHECK_WALL_MS 60000 /* importing a profile's modules the first time (pandas: seconds on a cold cache) */

typedef struct {
  sq_config_profile cfg;
  sq_jail *jail;
  bool builtin; /* the data profile: its files are checked, its imports wait for its first task */
} profile;

struct sq__profiles {
  const sq_config *cfg;
  int n;
  profile p[SQ_CONFIG_MAX_PROFILES + 1];
};

/* Debian's python3-numpy and python3-pandas, for the built-in profile. */
#define DEBIAN_DIST "/usr/lib/python3/dist-packages"
#define MPL_RC "/usr/share/matplotlib/mpl-data/matplotlibrc"

/* The built-in "data" profile: Debian's packages, numpy and pandas imported
 * by its warm zygotes, every library's thread pool at one thread (a
 * zygote forks: threads started before would be lost in its children, and
 * a task's CPU limit is its own), matplotlib drawing to files only. */
static bool builtin_data(sq_config_profile *p) {
  if (access(DEBIAN_DIST "/numpy/__init__.py", R_OK) != 0 || access(DEBIAN_DIST "/pandas/__init__.py", R_OK) != 0)
    return false;
  static const char *const env[] = {"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1",
                                    "NUMEXPR_NUM_THREADS=1",  "MPLBACKEND=Agg",    "MPLCONFIGDIR=/scratch"};
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "data");
  snprintf(p->packages[p->n_packages++], sizeof p->packages[0], "%s", DEBIAN_DIST);
  snprintf(p->preload[p->n_preload++], sizeof p->preload[0], "numpy");
  snprintf(p->preload[p->n_preload++], sizeof p->preload[0], "pandas");
  for (size_t i = 0; i < sizeof env / sizeof *env; i++) snprintf(p->env[p->n_env++], sizeof p->env[0], "%s", env[i]);
  /* Debian keeps matplotlib's rc file in /etc, which no root shows; the
   * same file under /usr. */
  if (access(MPL_RC, R_OK) == 0) snprintf(p->env[p->n_env++], sizeof p->env[0], "MATPLOTLIBRC=" MPL_RC);
  return true;
}

/* The last line of text (len bytes), for a message. */
static void last_line(const char *text, size_t len, char *out, size_t cap) {
  while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r')) len--;
  size_t start = len;
  while (start > 0 && text[start - 1] != '\n') start--;
  snprintf(out, cap, "%.*s", (int)(len - start), text + start);
}

/* Imports the profile's preload modules once in its jail, in its mode: in
 * warm mode this also starts the zygotes that import them. */
static int check_imports(const sq_config *cfg, profile *p, char *why, size_t why_len) {
  if (p->cfg.n_preload == 0) return 0;
  sq_buf prog = {0};
  int rc = 0;
  for (int i = 0; rc == 0 && i < p->cfg.n_preload; i++) rc = sq_buf_appendf(&prog, "import %s\n", p->cfg.preload[i]);
  if (rc) return SQ_ENOMEM;
  sq_jail_limits def, max;
  sq_config_profile_limits(cfg, &p->cfg, &def, &max);
  if (def.wall_ms < CHECK_WALL_MS) def.wall_ms = CHECK_WALL_MS;
  if (def.cpu_ms < CHECK_WALL_MS) def.cpu_ms = CHECK_WALL_MS;
  sq_jail_outcome o;
  rc = sq_jail_run_task(p->jail, prog.data, prog.len, NULL, 0, NULL, 0, &def, NULL, "profile-check", &o);
  if (rc != 0) {
    snprintf(why, why_len, "profiles.%s: the jail could not run its check: %s", p->cfg.name, o.error);
  } else if (o.end != SQ_JAIL_EXITED_OK) {
    char line[200] = "";
    if (o.stderr_buf) last_line(o.stderr_buf, o.stderr_len, line, sizeof line);
    snprintf(why, why_len, "profiles.%s.preload: importing %s in the jail ended %s: %s", p->cfg.name,
             p->cfg.n_preload > 1 ? "its modules" : p->cfg.preload[0], sq_jail_end_name(o.end),
             line[0] ? line : "(no message)");
    rc = SQ_ECONFIG;
  }
  sq_jail_outcome_clear(&o);
  sq_buf_clear(&prog);
  return rc;
}

/* Starts p's runner. */
static int start(const sq_config *cfg, const sq_jail_config *base, profile *p, char *why, size_t why_len) {
  const sq_config_profile *c = &p->cfg;
  const char *packages[SQ_CONFIG_PROFILE_LIST + 1] = {0}, *preload[SQ_CONFIG_PROFILE_LIST + 1] = {0},
             *env[SQ_CONFIG_PROFILE_LIST + 1] = {0};
  for (int i = 0; i < c->n_packages; i++) packages[i] = c->packages[i];
  for (int i = 0; i < c->n_preload; i++) preload[i] = c->preload[i];
  for (int i = 0; i < c->n_env; i++) env[i] = c->env[i];
  sq_jail_profile jp = {.packages = packages, .preload = preload, .env = env};
  sq_jail_config jc = *base;
  jc.python_path = c->python[0] ? c->python : cfg->python_path;
  jc.profile = &jp;
  int rc = sq_jail_new(&jc, &p->jail);
  if (rc == SQ_EINVAL) {
    snprintf(why, why_len, "profiles.%s: refused by the jail (see the log above)", c->name);
    return SQ_ECONFIG;
  }
  if (rc != 0) {
    snprintf(why, why_len, "profiles.%s: cannot start its jail (python %s): %s", c->name, jc.python_path,
             sq_strerror(rc));
    return rc;
  }
  /* One run (a command line's): its own program says what is missing.
   * The built-in profile: its modules' files are there (builtin_data),
   * and a worker's start does not wait seconds for pandas on every host
   * that has it; its zygotes import them when its first task comes. */
  return base->one_run || p->builtin ? 0 : check_imports(cfg, p, why, why_len);
}

int sq__profiles_open(const sq_config *cfg, const sq_jail_config *base, const char *only, sq__profiles **out,
                      char *why, size_t why_len) {
  *out = NULL;
  why[0] = '\0';
  sq__profiles *ps = calloc(1, sizeof *ps);
  if (!ps) return SQ_ENOMEM;
  ps->cfg = cfg;
  for (int i = 0; i < cfg->n_profiles; i++) ps->p[ps->n++].cfg = cfg->profiles[i];
  if (!sq_config_profile_find(cfg, "data") && builtin_data(&ps->p[ps->n].cfg)) ps->p[ps->n++].builtin = true;
  int rc = 0;
  bool found = !only || strcmp(only, SQ_PROFILE_DEFAULT) == 0;
  for (int i = 0; i < ps->n && rc == 0; i++) {
    if (only && strcmp(only, ps->p[i].cfg.name) != 0) continue;
    found = true;
    int64_t t0 = sq_now_mono_ms();
    rc = start(cfg, base, &ps->p[i], why, why_len);
    if (rc == 0)
      SQ_INFO("profile %s: started%s in %lld ms (%d package path(s), %d preloaded module(s))", ps->p[i].cfg.name,
              ps->p[i].builtin || base->one_run ? "" : " and checked", (long long)(sq_now_mono_ms() - t0),
              ps->p[i].cfg.n_packages, ps->p[i].cfg.n_preload);
  }
  if (rc == 0 && !found) {
    sq_jail_limits d, m;
    sq__profiles_find(ps, only, NULL, &d, &m, why, why_len);
    rc = SQ_ECONFIG;
  }
  if (rc) {
    sq__profiles_free(ps);
    return rc;
  }
  *out = ps;
  return 0;
}

int sq__profiles_find(const sq__profiles *ps, const char *name, sq_jail **jail, sq_jail_limits *def,
                      sq_jail_limits *max, char *why, size_t why_len) {
  if (jail) *jail = NULL;
  if (!name || strcmp(name, SQ_PROFILE_DEFAULT) == 0) {
    sq_config_profile_limits(ps->cfg, NULL, def, max);
    return 0;
  }
  for (int i = 0; i < ps->n; i++) {
    if (strcmp(ps->p[i].cfg.name, name) != 0 || !ps->p[i].jail) continue;
    if (jail) *jail = ps->p[i].jail;
    sq_config_profile_limits(ps->cfg, &ps->p[i].cfg, def, max);
    return 0;
  }
  int n = snprintf(why, why_len, "profile: '%s' is not a profile of this worker (it has: " SQ_PROFILE_DEFAULT, name);
  for (int i = 0; i < ps->n && n > 0 && (size_t)n < why_len; i++)
    n += snprintf(why + n, why_len - (size_t)n, ", %s", ps->p[i].cfg.name);
  if (n > 0 && (size_t)n < why_len) snprintf(why + n, why_len - (size_t)n, ")");
  return SQ_ENOTFOUND;
}

void sq__profiles_free(sq__profiles *ps) {
  if (!ps) return;
  for (int i = 0; i < ps->n; i++) sq_jail_free(ps->p[i].jail);
  free(ps);
}
