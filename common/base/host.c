/* host.c: where this process sits in the cgroup hierarchy, for the jail
 * (which makes its cgroups below it) and for config_host.c (which reads the
 * limits along it). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "host.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


int sq_host_cgroup_path(const char *ctl, char *out, size_t len) {
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f) return -1;
  char line[512];
  int rc = -1;
  while (rc != 0 && fgets(line, sizeof line, f)) {
    char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
    if (!b) continue;
    *b = '\0';
    bool match = !ctl[0] && !a[1];
    char *save = NULL;
    for (char *t = ctl[0] ? strtok_r(a + 1, ",", &save) : NULL; t && !match; t = strtok_r(NULL, ",", &save))
      match = strcmp(t, ctl) == 0;
    if (!match) continue;
    b[1 + strcspn(b + 1, "\n")] = '\0';
    snprintf(out, len, "%s", strcmp(b + 1, "/") == 0 ? "" : b + 1);
    rc = 0;
  }
  fclose(f);
  return rc;
}

/* The root of the mount at mount_point as /proc/self/mountinfo shows it
 * (relative to this process's cgroup namespace: "/../.." for a mount of a
 * tree above it), into out; false when nothing is mounted there. */
static bool mount_root(const char *mount_point, char *out, size_t len) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) return false;
  char line[1024];
  bool found = false;
  while (fgets(line, sizeof line, f)) { /* the last mount there is the one seen */
    char root[512], point[512];
    if (sscanf(line, "%*s %*s %*s %511s %511s", root, point) == 2 && strcmp(point, mount_point) == 0) {
      snprintf(out, len, "%s", root);
      found = true;
    }
  }
  fclose(f);
  return found;
}

/* Whether dir/cgroup.procs lists this process. */
static bool holds_us(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  FILE *f = fopen(path, "re");
  long pid;
  bool us = false;
  while (f && !us && fscanf(f, "%ld", &pid) == 1) us = (pid_t)pid == getpid();
  if (f) fclose(f);
  return us;
}

/* Below dir, depth levels down, the group that holds this process and
 * whose path ends with tail ("" for any), into out; *budget bounds the
 * directories looked at. */
static bool find_us(const char *dir, int depth, const char *tail, char *out, size_t len, int *budget) {
  if (depth == 0) {
    size_t d = strlen(dir), t = strlen(tail);
    if (d >= t && strcmp(dir + d - t, tail) == 0 && holds_us(dir)) {
      snprintf(out, len, "%s", dir);
      return true;
    }
    return false;
  }
  DIR *dp = opendir(dir);
  bool found = false;
  for (struct dirent *e; dp && !found && --*budget > 0 && (e = readdir(dp));) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    char sub[600];
    snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
    found = find_us(sub, depth - 1, tail, out, len, budget);
  }
  if (dp) closedir(dp);
  return found;
}

int sq_host_cgroup_dir(const char *mount_point, const char *ctl, char *out, size_t len) {
  char own[256], root[512];
  if (sq_host_cgroup_path(ctl, own, sizeof own) != 0) return -1;
  snprintf(out, len, "%s%s", mount_point, own);
  if (!mount_root(mount_point, root, sizeof root) || strncmp(root, "/..", 3) != 0) return 0;
  /* The mount shows a tree above our cgroup namespace's root (a container
   * given the host's /sys/fs/cgroup): own is relative to that root, so
   * look for the group that holds us, as deep as the mount's root is above
   * ours plus own's depth. */
  int depth = 0, budget = 100000;
  for (const char *p = root; (p = strstr(p, "/..")); p += 3) depth++;
  for (const char *p = own; (p = strchr(p, '/')); p++) depth++;
  char found[512];
  if (find_us(mount_point, depth, own, found, sizeof found, &budget)) snprintf(out, len, "%s", found);
  return 0;
}
