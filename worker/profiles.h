/* profiles.h: the worker's interpreter profiles besides "default" (the
 * worker's own runner): a jail runner each, started and checked when the
 * worker starts (profiles.c; docs/configuration.md, "Profiles"). */
#ifndef SQ_WORKER_PROFILES_H
#define SQ_WORKER_PROFILES_H

#include <stddef.h>

#include "config.h"
#include "jail.h"

#define SQ_PROFILE_DEFAULT "default"

typedef struct sq__profiles sq__profiles;

/* Starts a runner for each profile of cfg, and for the built-in "data"
 * profile when this host has Debian's numpy and pandas and cfg defines no
 * profile of that name. base is the default runner's configuration (mode,
 * pool size, scratch root, one_run), its python and profile replaced. only
 * (or NULL: all) starts just the profile of that name (`sandq-worker run`).
 * A profile's preload modules are imported once, in its jail, before it
 * counts as started. Returns 0 and *out (free with sq__profiles_free), or
 * SQ_ECONFIG (a package path or module is missing, or only names no
 * profile), SQ_EJAIL or SQ_ENOMEM, with why saying which profile and what. */
int sq__profiles_open(const sq_config *cfg, const sq_jail_config *base, const char *only, sq__profiles **out,
                      char *why, size_t why_len);

/* The runner and limits of profile name (NULL: "default"). For "default"
 * *jail is NULL (the caller's own runner) and the limits are cfg's.
 * Returns 0, or SQ_ENOTFOUND (why lists the profiles this worker has). */
int sq__profiles_find(const sq__profiles *p, const char *name, sq_jail **jail, sq_jail_limits *def,
                      sq_jail_limits *max, char *why, size_t why_len);

/* NULL is a no-op. */
void sq__profiles_free(sq__profiles *p);

#endif
