/* host.h: what this process is given of the machine (host.c). */
#ifndef SQ_HOST_H
#define SQ_HOST_H

#include <stddef.h>

/* This process's cgroup path in the hierarchy of controller ctl ("" for
 * cgroup v2's unified hierarchy), from /proc/self/cgroup, into out: "" for
 * the hierarchy's root, else "/a/b". Returns 0, or -1 when there is no such
 * line. */
int sq_host_cgroup_path(const char *ctl, char *out, size_t len);

/* This process's cgroup directory in the hierarchy mounted at mount_point
 * (controller ctl as for sq_host_cgroup_path), into out: mount_point + its
 * path, or, where the mount shows a tree above this process's cgroup
 * namespace (a container given the host's /sys/fs/cgroup, whose
 * /proc/self/cgroup says "/"), the directory in that tree that holds this
 * process, found by looking. Returns 0, or -1 when there is no such line. */
int sq_host_cgroup_dir(const char *mount_point, const char *ctl, char *out, size_t len);

#endif
