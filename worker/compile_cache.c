/* compile_cache.c: the worker's cache of compiled builds (a list, most
 * recently used first) and the toolchains' identities its keys hold. See
 * compile_cache.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "compile_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errors.h"
#include "log.h"
#include "util.h"

extern char **environ;

#define ENTRY_OVERHEAD_BYTES 128 /* an entry's own bookkeeping, counted against the budget */
#define VERSION_OUT_MAX 4096

typedef struct entry entry;
struct entry {
  entry *prev, *next;
  unsigned char key[32];
  sq_workspace_build build;
  size_t bytes;
};

struct sq__compile_cache {
  entry *head, *tail; /* head: most recently used */
  size_t max_bytes;
  sq__compile_cache_stats st;
};

int sq__compile_cache_new(size_t max_bytes, sq__compile_cache **out) {
  *out = NULL;
  if (max_bytes == 0) return 0;
  sq__compile_cache *c = calloc(1, sizeof *c);
  if (!c) return SQ_ENOMEM;
  c->max_bytes = max_bytes;
  *out = c;
  return 0;
}

static void drop(sq__compile_cache *c, entry *e) {
  if (e->prev) e->prev->next = e->next;
  else c->head = e->next;
  if (e->next) e->next->prev = e->prev;
  else c->tail = e->prev;
  c->st.entries--;
  c->st.bytes -= (int64_t)e->bytes;
  sq_workspace_build_clear(&e->build);
  free(e);
}

void sq__compile_cache_free(sq__compile_cache *c) {
  if (!c) return;
  while (c->head) drop(c, c->head);
  free(c);
}

size_t sq__compile_cache_build_max(const sq__compile_cache *c) {
  if (!c) return 0;
  size_t quarter = c->max_bytes / 4;
  return quarter < SQ__COMPILE_BUILD_MAX_BYTES ? quarter : SQ__COMPILE_BUILD_MAX_BYTES;
}

static void to_front(sq__compile_cache *c, entry *e) {
  if (c->head == e) return;
  if (e->prev) e->prev->next = e->next;
  if (e->next) e->next->prev = e->prev;
  else c->tail = e->prev;
  e->prev = NULL;
  e->next = c->head;
  if (c->head) c->head->prev = e;
  c->head = e;
  if (!c->tail) c->tail = e;
}

static entry *find(sq__compile_cache *c, const unsigned char key[32]) {
  for (entry *e = c ? c->head : NULL; e; e = e->next)
    if (memcmp(e->key, key, 32) == 0) return e;
  return NULL;
}

const sq_workspace_build *sq__compile_cache_get(sq__compile_cache *c, const unsigned char key[32]) {
  if (!c) return NULL;
  entry *e = find(c, key);
  if (!e) {
    c->st.misses++;
    return NULL;
  }
  c->st.hits++;
  to_front(c, e);
  return &e->build;
}

int sq__compile_cache_put(sq__compile_cache *c, const unsigned char key[32], sq_workspace_build *b) {
  if (!c || b->n == 0 || b->bytes > sq__compile_cache_build_max(c) || find(c, key)) return 0;
  entry *e = calloc(1, sizeof *e);
  if (!e) return SQ_ENOMEM;
  memcpy(e->key, key, 32);
  e->build = *b;
  *b = (sq_workspace_build){0};
  e->bytes = ENTRY_OVERHEAD_BYTES + e->build.bytes;
  for (size_t i = 0; i < e->build.n; i++) e->bytes += strlen(e->build.files[i].name) + sizeof e->build.files[i];
  while (c->tail && (size_t)c->st.bytes + e->bytes > c->max_bytes) {
    drop(c, c->tail);
    c->st.evicted++;
  }
  e->next = c->head;
  if (c->head) c->head->prev = e;
  c->head = e;
  if (!c->tail) c->tail = e;
  c->st.entries++;
  c->st.bytes += (int64_t)e->bytes;
  return 0;
}

void sq__compile_cache_stats_get(const sq__compile_cache *c, sq__compile_cache_stats *s) {
  *s = c ? c->st : (sq__compile_cache_stats){0};
}

/* ---- toolchain identities ---- */

static char identity[SQ_LANGUAGE__COUNT][VERSION_OUT_MAX]; /* the version command's whole output */
static char first_line[SQ_LANGUAGE__COUNT][256];
/* A version command: not started (or settled), being read, or read to its
 * end and not yet reaped. */
static enum { PROBE_NONE = 0, PROBE_READING, PROBE_READ } probe_state[SQ_LANGUAGE__COUNT];
static pid_t probe_pid[SQ_LANGUAGE__COUNT];
static int probe_fd[SQ_LANGUAGE__COUNT];
static size_t probe_len[SQ_LANGUAGE__COUNT];
static int64_t probe_deadline_ms;
static bool probes_started; /* sq__compile_toolchains_start has run */

/* The compiler's program words (TypeScript's is "node tsc") then its version flag. */
static void version_argv(const sq_language *l, const char **argv) {
  int n = 0;
  argv[n++] = l->compile[0];
  if (l->compile[1] && l->compile[1][0] == '/') argv[n++] = l->compile[1];
  argv[n++] = l->version_flag;
  argv[n] = NULL;
}

void sq__compile_toolchains_start(void) {
  if (probes_started) return; /* once per process */
  probes_started = true;
  probe_deadline_ms = sq_now_mono_ms() + SQ__COMPILE_TOOLCHAIN_MAX_MS;
  for (int i = 0; i < SQ_LANGUAGE__COUNT; i++) {
    const sq_language *l = sq_language_get((sq_language_id)i);
    if (probe_state[i] != PROBE_NONE || !l->compile[0] || !l->version_flag || !sq_language_available((sq_language_id)i))
      continue;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) continue;
    const char *argv[4];
    version_argv(l, argv);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    int rc = posix_spawn(&probe_pid[i], argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
      SQ_WARN("compile cache: %s: %s (its builds are not cached)", argv[0], strerror(rc));
      close(p[0]);
      continue;
    }
    probe_fd[i] = p[0];
    probe_len[i] = 0;
    probe_state[i] = PROBE_READING;
  }
}

/* Reads what is there from language i's version command; false at its end. */
static bool read_some(int i) {
  ssize_t n = read(probe_fd[i], identity[i] + probe_len[i], VERSION_OUT_MAX - 1 - probe_len[i]);
  if (n < 0 && errno == EINTR) return true;
  if (n > 0) probe_len[i] += (size_t)n;
  return n > 0 && probe_len[i] < VERSION_OUT_MAX - 1;
}

/* Language i's command has ended (st: its wait status) or was ended
 * (ended_by_us): its identity, or none. */
static void settle(int i, int st, bool ended_by_us) {
  const char *name = sq_language_get((sq_language_id)i)->name;
  probe_state[i] = PROBE_NONE;
  identity[i][probe_len[i]] = '\0';
  if (ended_by_us || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || probe_len[i] == 0) {
    SQ_WARN("compile cache: %s: the compiler's version could not be read (%s); its builds are not cached", name,
            ended_by_us ? "it had not answered" : "it failed");
    identity[i][0] = '\0';
    return;
  }
  snprintf(first_line[i], sizeof first_line[i], "%.*s", (int)strcspn(identity[i], "\n"), identity[i]);
  SQ_INFO("compile cache: %s: %s", name, first_line[i]);
}

/* Reads and reaps what has ended, waiting up to wait_ms for more; ends
 * what is still running when kill_rest or past the deadline. */
static void collect(int64_t wait_ms, bool kill_rest) {
  int64_t until = sq_now_mono_ms() + wait_ms;
  for (;;) {
    struct pollfd pfd[SQ_LANGUAGE__COUNT];
    int idx[SQ_LANGUAGE__COUNT], n = 0;
    for (int i = 0; i < SQ_LANGUAGE__COUNT; i++)
      if (probe_state[i] == PROBE_READING) {
        pfd[n] = (struct pollfd){.fd = probe_fd[i], .events = POLLIN};
        idx[n++] = i;
      }
    int64_t left = until - sq_now_mono_ms();
    int ready = n ? poll(pfd, (nfds_t)n, left > 0 ? (int)left : 0) : 0;
    for (int k = 0; k < n && ready > 0; k++)
      if (pfd[k].revents && !read_some(idx[k])) {
        close(probe_fd[idx[k]]);
        probe_state[idx[k]] = PROBE_READ; /* its status next */
      }
    for (int i = 0; i < SQ_LANGUAGE__COUNT; i++) {
      int st = 0;
      if (probe_state[i] == PROBE_READ && waitpid(probe_pid[i], &st, WNOHANG) == probe_pid[i]) settle(i, st, false);
    }
    if (n == 0 || (ready <= 0 && sq_now_mono_ms() >= until)) break; /* until nothing more is there */
  }
  bool late = sq_now_mono_ms() >= probe_deadline_ms;
  for (int i = 0; i < SQ_LANGUAGE__COUNT && (kill_rest || late); i++) {
    if (probe_state[i] == PROBE_NONE) continue;
    kill(probe_pid[i], SIGKILL);
    if (probe_state[i] == PROBE_READING) close(probe_fd[i]);
    while (waitpid(probe_pid[i], NULL, 0) < 0 && errno == EINTR) {
    }
    settle(i, 0, true);
  }
}

void sq__compile_toolchains_finish(int64_t timeout_ms) { collect(timeout_ms, true); }

void sq__compile_toolchains_poll(void) {
  for (int i = 0; i < SQ_LANGUAGE__COUNT; i++)
    if (probe_state[i] != PROBE_NONE) {
      collect(0, false);
      return;
    }
}

const char *sq__compile_toolchain(sq_language_id id) {
  if ((int)id < 0 || id >= SQ_LANGUAGE__COUNT) return "";
  sq__compile_toolchains_poll();
  return identity[id][0] ? first_line[id] : "";
}

/* ---- keys ---- */

/* One field into the digest: its length, then its bytes (no field can
 * run into the next). */
static void field(EVP_MD_CTX *md, const void *p, size_t len) {
  uint64_t n = len;
  EVP_DigestUpdate(md, &n, sizeof n);
  if (len) EVP_DigestUpdate(md, p, len);
}

static void field_str(EVP_MD_CTX *md, const char *s) { field(md, s, strlen(s)); }

/* The compiler's file as it is now: a package upgraded under a running
 * worker changes the keys. */
static void field_file(EVP_MD_CTX *md, const char *path) {
  struct stat sb;
  char sig[160] = "absent";
  if (path && stat(path, &sb) == 0)
    snprintf(sig, sizeof sig, "%s %llu %llu %lld %lld.%09ld", path, (unsigned long long)sb.st_dev,
             (unsigned long long)sb.st_ino, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
  field_str(md, sig);
}

bool sq__compile_cache_key(sq_language_id id, const char *source, size_t len, int64_t memory_mib,
                           unsigned char key[32]) {
  const sq_language *l = sq_language_get(id);
  if (l && l->compile[0] && !probes_started && sq_language_available(id))
    sq__compile_toolchains_start(); /* a compiled task before the worker idled */
  if (!l || !l->compile[0] || !sq__compile_toolchain(id)[0]) return false;
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  unsigned int n = 0;
  bool ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL);
  if (ok) {
    field_str(md, "sandq compile cache 1");
    field_str(md, l->name);
    field_str(md, identity[id]);
    field_file(md, l->compile[0]);
    field_file(md, l->compile[1] && l->compile[1][0] == '/' ? l->compile[1] : NULL);
    for (int i = 0; l->compile[i]; i++) field_str(md, l->compile[i]);
    for (int i = 0; l->env[i]; i++) field_str(md, l->env[i]);
    field(md, &memory_mib, sizeof memory_mib);
    field_str(md, l->source_name);
    field(md, source, len);
    ok = EVP_DigestFinal_ex(md, key, &n) && n == 32;
  }
  EVP_MD_CTX_free(md);
  return ok;
}
