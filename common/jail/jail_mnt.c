/* jail_mnt.c: the jail's filesystem, built in a mount namespace of its own
 * (by a spawn slot's holder once, or by a zygote's init): a tmpfs root with
 * read-only binds of only what the interpreter needs, a minimal /dev, then
 * pivot_root and the old root detached; and the size-capped scratch tmpfs,
 * mounted fresh for every run. Async-signal-safe throughout: it runs
 * between clone and exec. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail_internal.h"
#include "util.h"

#define RO_FLAGS (MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)

/* Directories bound read-only when they exist on the host (or recreated as
 * the same symlink on merged-/usr systems). /proc is left out on purpose. */
static const char *const ro_dirs[] = {"/usr", "/lib", "/lib64", "/bin"};
/* Single files from /etc the interpreter and libc read. */
static const char *const ro_files[] = {"/etc/ld.so.cache", "/etc/localtime", "/etc/ssl/openssl.cnf"};
/* Toolchain directories outside those above, bound read-only when present
 * (docs/security.md, "Languages"): the JDK's configuration, which its
 * lib/ and conf/ link into /etc (jvm.cfg, java.security). */
static const char *const toolchain_dirs[] = {"/etc/java-17-openjdk"};
/* rustc finds its sysroot two levels above /proc/self/exe and stops when
 * that cannot be read; the jail mounts no procfs, so the root holds this
 * one link instead (to a program of /usr/bin: the sysroot is /usr). It
 * reveals nothing: the target is the same for every process. */
#define SELF_EXE_LINK "/proc/self/exe"
#define SELF_EXE_TARGET "/usr/bin/rustc"
static const char *const dev_files[] = {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"};

bool sq__jail_mnt_shows(const char *path) {
  for (size_t i = 0; i < sizeof ro_dirs / sizeof *ro_dirs; i++) {
    size_t n = strlen(ro_dirs[i]);
    struct stat st;
    /* A directory bound as itself (not one recreated as a symlink). */
    if (strncmp(path, ro_dirs[i], n) == 0 && path[n] == '/' && lstat(ro_dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
      return true;
  }
  return false;
}

/* v in decimal at out (room for 11 bytes), NUL-terminated; its length.
 * Without snprintf (not async-signal-safe). */
static size_t decimal(char *out, unsigned v) {
  char d[12];
  size_t k = 0;
  do d[k++] = (char)('0' + v % 10);
  while ((v /= 10) > 0);
  for (size_t i = 0; i < k; i++) out[i] = d[k - 1 - i];
  out[k] = '\0';
  return k;
}

/* dst = root + path, truncated at n; async-signal-safe. */
static void join(char *dst, size_t n, const char *root, const char *path) {
  size_t a = strlen(root), b = strlen(path);
  if (a + b + 1 > n) a = b = 0;
  memcpy(dst, root, a);
  memcpy(dst + a, path, b);
  dst[a + b] = '\0';
}

/* mkdir -p of path below root (root itself exists). */
static int mkdirs(const char *root, const char *path) {
  char p[512];
  join(p, sizeof p, root, path);
  size_t skip = strlen(root) + 1;
  for (char *s = p + skip; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
    *s = '/';
  }
  return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int bind_ro(const char *root, const char *src, bool is_dir) {
  struct stat st;
  if (lstat(src, &st) != 0) return errno == ENOENT ? 0 : -1;
  char dst[512];
  join(dst, sizeof dst, root, src);
  if (S_ISLNK(st.st_mode)) { /* /lib -> usr/lib: the same link inside */
    char target[256];
    ssize_t n = readlink(src, target, sizeof target - 1);
    if (n < 0) return -1;
    target[n] = '\0';
    return symlink(target, dst);
  }
  if (is_dir) {
    if (mkdirs(root, src) != 0) return -1;
  } else {
    const char *slash = strrchr(src, '/');
    char parent[256];
    size_t len = (size_t)(slash - src);
    if (len >= sizeof parent) return -1;
    memcpy(parent, src, len);
    parent[len] = '\0';
    if (len && mkdirs(root, parent) != 0) return -1;
    int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
    if (fd < 0) return -1;
    close(fd);
  }
  if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0) return -1;
  return mount(NULL, dst, NULL, RO_FLAGS | (is_dir ? 0 : MS_NOEXEC), NULL);
}

/* The toolchains' extra directories and the /proc/self/exe link (above),
 * each only when the host has what it stands for. */
static int toolchains(const char *root) {
  for (size_t i = 0; i < sizeof toolchain_dirs / sizeof *toolchain_dirs; i++)
    if (bind_ro(root, toolchain_dirs[i], true) != 0) return -1;
  struct stat st;
  if (lstat(SELF_EXE_TARGET, &st) != 0) return 0;
  if (mkdirs(root, "/proc/self") != 0) return -1;
  char dst[512];
  join(dst, sizeof dst, root, SELF_EXE_LINK);
  return symlink(SELF_EXE_TARGET, dst);
}

/* Device nodes are bound from the host (we cannot mknod in every setup). */
static int bind_dev(const char *root, const char *src) {
  char dst[512];
  join(dst, sizeof dst, root, src);
  int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  close(fd);
  if (mount(src, dst, NULL, MS_BIND, NULL) != 0) return -1;
  return mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC, NULL);
}

int sq__jail_mnt_scratch(const char *root, unsigned uid) {
  char dst[512], opts[128];
  join(dst, sizeof dst, root, SQ__JAIL_SCRATCH);
  if (mkdir(dst, 0755) != 0 && errno != EEXIST && errno != EROFS) return -1;
  /* "size=64m,nr_inodes=4096,mode=0700" without snprintf (not AS-safe). */
  char *o = opts;
  const char *parts[] = {"size=", "", "m,nr_inodes=", "", ",mode=0700"};
  unsigned vals[] = {0, SQ__JAIL_SCRATCH_MIB, 0, SQ__JAIL_SCRATCH_INODES};
  for (int i = 0; i < 5; i++) {
    if (i == 1 || i == 3) {
      o += decimal(o, vals[i]);
    } else {
      memcpy(o, parts[i], strlen(parts[i]));
      o += strlen(parts[i]);
    }
  }
  *o = '\0';
  if (mount("sandq-scratch", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) return -1;
  return chown(dst, uid, uid);
}

/* One of the zygote's files on the root tmpfs (not noexec), owned by
 * root, mode mode. */
static int write_file(const char *root, const char *path, const char *data, size_t len, mode_t mode) {
  char dst[512];
  join(dst, sizeof dst, root, path);
  int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return -1;
  int rc = sq_write_all(fd, data, len);
  return close(fd) != 0 ? -1 : rc;
}

/* The zygote's Python (read only) and its loop's shared object (read and
 * exec only): the interpreter runs the one as a file, so its command line
 * stays short (zygote_proto.h). */
static int write_zygote(const char *root) {
  if (write_file(root, SQ__ZYGOTE_PY, sq__jail_zygote_py, strlen(sq__jail_zygote_py), 0444) != 0) return -1;
  return write_file(root, SQ__ZYGOTE_SO, sq__jail_zygote_so, sq__jail_zygote_so_size, 0555);
}

/* Each of the interpreter's copies bound over its path below root, read
 * only (jail_interp.c), from the tmpfs the caller holds on fd: through
 * /proc/self/fd, as it is mounted nowhere. One that cannot be bound, or
 * made read-only, is left the host's file: the same bytes, in pages of
 * whatever size the host's page cache has. */
static void bind_interp(const char *root, const sq__jail_interp *ip, int fd) {
  for (int i = 0; ip && fd >= 0 && i < ip->n; i++) {
    char src[64] = "/proc/self/fd/", dst[512];
    size_t k = strlen(src);
    k += decimal(src + k, (unsigned)fd);
    src[k++] = '/';
    decimal(src + k, (unsigned)i);
    join(dst, sizeof dst, root, ip->path[i]);
    if (mount(src, dst, NULL, MS_BIND, NULL) != 0) continue;
    if (mount(NULL, dst, NULL, RO_FLAGS, NULL) != 0) umount2(dst, MNT_DETACH);
  }
}

/* An empty read-only tmpfs over path below root: a directory the
 * profile hides (jail_profile.c). */
static int hide_dir(const char *root, const char *path) {
  char dst[512];
  join(dst, sizeof dst, root, path);
  if (mount("sandq-hidden", dst, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=2,mode=0555") != 0)
    return -1;
  return mount(NULL, dst, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

/* The profile's directories: each shown one bound read-only at its own
 * path, each hidden one covered. */
static int mount_binds(const char *root, const sq__jail_binds *b) {
  for (size_t i = 0; b && b->show[i]; i++)
    if (bind_ro(root, b->show[i], true) != 0) return -1;
  for (size_t i = 0; b && b->hide[i]; i++)
    if (hide_dir(root, b->hide[i]) != 0) return -1;
  return 0;
}

int sq__jail_mnt_build(const char *root, unsigned uid, bool with_scratch, bool with_zygote,
                       const sq__jail_interp *interp, int interp_fd, const sq__jail_binds *binds) {
  /* Nothing we mount may propagate back to the host. */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
  if (mount("sandq-root", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=256,mode=0755") != 0)
    return -1;
  for (size_t i = 0; i < sizeof ro_dirs / sizeof *ro_dirs; i++)
    if (bind_ro(root, ro_dirs[i], true) != 0) return -1;
  for (size_t i = 0; i < sizeof ro_files / sizeof *ro_files; i++)
    if (bind_ro(root, ro_files[i], false) != 0) return -1;
  if (toolchains(root) != 0) return -1;
  bind_interp(root, interp, interp_fd);
  if (mount_binds(root, binds) != 0) return -1;
  if (mkdirs(root, "/dev") != 0) return -1;
  for (size_t i = 0; i < sizeof dev_files / sizeof *dev_files; i++)
    if (bind_dev(root, dev_files[i]) != 0) return -1;
  if (with_scratch ? sq__jail_mnt_scratch(root, uid) != 0 : mkdirs(root, SQ__JAIL_SCRATCH) != 0) return -1;
  if (with_zygote && write_zygote(root) != 0) return -1;
  char old[512];
  join(old, sizeof old, root, "/.old");
  if (mkdir(old, 0700) != 0) return -1;
  if (syscall(SYS_pivot_root, root, old) != 0) return -1;
  if (chdir("/") != 0) return -1;
  if (umount2("/.old", MNT_DETACH) != 0) return -1;
  if (rmdir("/.old") != 0) return -1;
  /* The root tmpfs itself read-only from here on. */
  return mount(NULL, "/", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
}
