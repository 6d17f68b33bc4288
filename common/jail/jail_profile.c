/* jail_profile.c: what an interpreter profile changes in the jail. Its
 * package directories go on sys.path through PYTHONPATH, so the
 * interpreter runs as `python3 -s -S -P` (no user site, no site.py and its
 * .pth files, no script directory) instead of `-I -S`: the environment it
 * reads is wholly the jail's, never the worker's or a task's. They are
 * shown read-only in every root (bound at their own path when the root
 * does not show them already), with /etc/alternatives, the links through
 * which Debian's libraries find the BLAS chosen on the host. Debian's package directories that are not
 * among them are covered by an empty read-only tmpfs, in every profile,
 * the default one too: -S keeps them off sys.path, not out of reach of a
 * program that appends them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "errors.h"
#include "jail_internal.h"
#include "util.h"

/* Where Debian's interpreters find packages (site.py's list on Debian). */
static const char *const dist_globs[] = {"/usr/lib/python3/dist-packages", "/usr/lib/python3.*/dist-packages",
                                         "/usr/local/lib/python3*/dist-packages",
                                         "/usr/local/lib/python3*/site-packages"};
#define ALTERNATIVES "/etc/alternatives"
/* Fixed in every run's environment (jail.c, jail_slot.c, jail_zygote.c):
 * a profile may not set these. */
static const char *const reserved_env[] = {"PATH", "HOME", "LANG", "PYTHON", "LD_", "SANDQ_"};

__attribute__((format(printf, 3, 4))) static int bad(char *why, size_t why_len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, why_len, fmt, ap);
  va_end(ap);
  return SQ_EINVAL;
}

/* Whether a and b are the same directory or one lies below the other. */
static bool nested(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;
  return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/' || b[n] == '\0' || b[n] == '/');
}

static int add(char **list, size_t max, const char *s) {
  size_t n = 0;
  while (list[n]) n++;
  if (n >= max) return SQ_EINVAL;
  return (list[n] = strdup(s)) ? 0 : SQ_ENOMEM;
}

/* Debian's package directories this host has, less those the packages
 * show (the same directory, or one inside or around it). */
static int hide_dist(sq__jail_common *c, char *const *shown) {
  for (size_t g = 0; g < sizeof dist_globs / sizeof *dist_globs; g++) {
    glob_t gl;
    if (glob(dist_globs[g], GLOB_ONLYDIR | GLOB_NOSORT, NULL, &gl) != 0) continue;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < gl.gl_pathc; i++) {
      char real[PATH_MAX];
      if (!realpath(gl.gl_pathv[i], real) || !sq__jail_mnt_shows(real)) continue;
      bool keep = false;
      for (size_t k = 0; shown[k] && !keep; k++) keep = nested(real, shown[k]);
      for (size_t k = 0; c->binds.hide[k] && !keep; k++) keep = strcmp(real, c->binds.hide[k]) == 0;
      if (!keep) rc = add(c->binds.hide, SQ__JAIL_BINDS_MAX, real);
    }
    globfree(&gl);
    if (rc) return rc;
  }
  return 0;
}

/* s joined with sep after prefix; malloc'd. */
static char *join(const char *prefix, char *const *s, char sep) {
  sq_buf b = {0};
  int rc = sq_buf_append(&b, prefix, strlen(prefix));
  for (size_t i = 0; rc == 0 && s[i]; i++) {
    if (i) rc = sq_buf_append(&b, &sep, 1);
    if (rc == 0) rc = sq_buf_append(&b, s[i], strlen(s[i]));
  }
  if (rc) sq_buf_clear(&b);
  return rc ? NULL : b.data;
}

static int check_env(const char *e, char *why, size_t why_len) {
  const char *eq = strchr(e, '=');
  if (!eq || eq == e) return bad(why, why_len, "env: '%.64s' is not NAME=VALUE", e);
  for (const char *k = e; k < eq; k++)
    if (!(*k == '_' || (*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || (k > e && *k >= '0' && *k <= '9')))
      return bad(why, why_len, "env: '%.64s' is not NAME=VALUE (a name of letters, digits and _)", e);
  for (size_t i = 0; i < sizeof reserved_env / sizeof *reserved_env; i++) {
    size_t n = strlen(reserved_env[i]);
    bool prefix = reserved_env[i][n - 1] == '_' || strcmp(reserved_env[i], "PYTHON") == 0;
    if (strncmp(e, reserved_env[i], n) == 0 && (prefix || e[n] == '='))
      return bad(why, why_len, "env: %.*s is set by the jail itself (PATH, HOME, LANG, PYTHON*, LD_*, SANDQ_*)",
                 (int)(eq - e), e);
  }
  return 0;
}

static bool module_name_ok(const char *m) {
  if (!*m || strlen(m) > 128) return false;
  for (const char *k = m; *k; k++)
    if (!(*k == '_' || *k == '.' || (*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') ||
          (k > m && *k >= '0' && *k <= '9')))
      return false;
  return true;
}

static int profile_fill(sq__jail_common *c, const sq_jail_profile *p, char *why, size_t why_len) {
  char *paths[SQ_JAIL_PROFILE_LIST_MAX + 1] = {0};
  char *mods[SQ_JAIL_PROFILE_LIST_MAX + 1] = {0};
  int rc = 0;
  size_t n_env = 0;
  for (size_t i = 0; p && p->packages && p->packages[i] && rc == 0; i++) {
    const char *pk = p->packages[i];
    char real[PATH_MAX];
    struct stat st;
    if (i >= SQ_JAIL_PROFILE_LIST_MAX) rc = bad(why, why_len, "packages: more than %d", SQ_JAIL_PROFILE_LIST_MAX);
    else if (pk[0] != '/' || strchr(pk, ':')) rc = bad(why, why_len, "packages: '%.200s' must be an absolute path without ':'", pk);
    else if (!realpath(pk, real) || stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
      rc = bad(why, why_len, "packages: '%.200s' is not a directory on this host", pk);
    else if (strcmp(real, "/") == 0 || nested(real, "/proc") || nested(real, "/sys") || nested(real, "/dev"))
      rc = bad(why, why_len, "packages: '%.200s' is not a package directory", pk);
    else if (!(paths[i] = strdup(pk))) rc = SQ_ENOMEM;
    else if (!sq__jail_mnt_shows(real)) rc = add(c->binds.show, SQ__JAIL_BINDS_MAX, real);
  }
  /* Debian's alternatives: the links through which numpy finds its BLAS
   * and LAPACK (libblas.so.3 -> /etc/alternatives/...); links only. */
  struct stat alt;
  if (rc == 0 && paths[0] && stat(ALTERNATIVES, &alt) == 0 && S_ISDIR(alt.st_mode))
    rc = add(c->binds.show, SQ__JAIL_BINDS_MAX, ALTERNATIVES);
  if (rc == 0) rc = hide_dist(c, paths);
  for (size_t i = 0; p && p->preload && p->preload[i] && rc == 0; i++) {
    if (i >= SQ_JAIL_PROFILE_LIST_MAX) rc = bad(why, why_len, "preload: more than %d", SQ_JAIL_PROFILE_LIST_MAX);
    else if (!module_name_ok(p->preload[i]))
      rc = bad(why, why_len, "preload: '%.64s' is not a module name", p->preload[i]);
    else mods[i] = (char *)p->preload[i];
  }
  for (size_t i = 0; p && p->env && p->env[i] && rc == 0; i++) {
    if (i >= SQ_JAIL_PROFILE_LIST_MAX) rc = bad(why, why_len, "env: more than %d", SQ_JAIL_PROFILE_LIST_MAX);
    else if ((rc = check_env(p->env[i], why, why_len)) == 0 && !(c->env[n_env++] = strdup(p->env[i]))) rc = SQ_ENOMEM;
  }
  c->packages = paths[0] != NULL;
  if (rc == 0 && c->packages && !(c->env[n_env++] = join("PYTHONPATH=", paths, ':'))) rc = SQ_ENOMEM;
  if (rc == 0 && mods[0] && !(c->preload = join("SANDQ_PRELOAD=", mods, ','))) rc = SQ_ENOMEM;
  for (size_t i = 0; paths[i]; i++) free(paths[i]);
  if (rc == SQ_ENOMEM) snprintf(why, why_len, "out of memory");
  return rc;
}

int sq__jail_profile_init(sq__jail_common *c, const sq_jail_profile *p, char *why, size_t why_len) {
  static _Atomic unsigned long ids;
  c->id = ++ids;
  why[0] = '\0';
  int rc = profile_fill(c, p, why, why_len);
  if (rc == 0) {
    static const char *const base[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" SQ__JAIL_SCRATCH,
                                       "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8", NULL};
    sq__jail_argv(c, c->spawn_argv, "main.py", NULL, NULL);
    if (sq__jail_envp(c, base, NULL, c->spawn_envp, sizeof c->spawn_envp / sizeof *c->spawn_envp) != 0)
      rc = bad(why, why_len, "env: too many entries");
  }
  if (rc) sq__jail_profile_release(c);
  return rc;
}

void sq__jail_profile_release(sq__jail_common *c) {
  for (size_t i = 0; i <= SQ__JAIL_BINDS_MAX; i++) {
    free(c->binds.show[i]);
    free(c->binds.hide[i]);
  }
  for (size_t i = 0; i < sizeof c->env / sizeof *c->env; i++) free(c->env[i]);
  free(c->preload);
  memset(&c->binds, 0, sizeof c->binds);
  memset(c->env, 0, sizeof c->env);
  c->preload = NULL;
  c->packages = false;
}

void sq__jail_argv(const sq__jail_common *c, char **argv, const char *script, const char *a1, const char *a2) {
  int n = 0;
  argv[n++] = "python3";
  if (c->packages) {
    argv[n++] = "-s";
    argv[n++] = "-S";
    argv[n++] = "-P";
  } else {
    argv[n++] = "-I";
    argv[n++] = "-S";
  }
  argv[n++] = (char *)script;
  if (a1) argv[n++] = (char *)a1;
  if (a2) argv[n++] = (char *)a2;
  argv[n] = NULL;
}

int sq__jail_envp(const sq__jail_common *c, const char *const *base, const char *extra, char **envp, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; base[i]; i++) {
    if (n + 1 >= cap) return -1;
    envp[n++] = (char *)base[i];
  }
  for (size_t i = 0; c->env[i]; i++) {
    if (n + 1 >= cap) return -1;
    envp[n++] = c->env[i];
  }
  if (extra) {
    if (n + 1 >= cap) return -1;
    envp[n++] = (char *)extra;
  }
  envp[n] = NULL;
  return 0;
}
