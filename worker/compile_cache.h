/* compile_cache.h: the worker's cache of compiled builds, so that a
 * compiled language's program that comes again (a repeated sample, a
 * repair round or a case that brings the same code) is not compiled again
 * (docs/formats.md, "Languages"; docs/security.md, "The compile cache").
 *
 * A key is the sha256 of what decides the compiler's output: the
 * language, its toolchain's identity (the version its compiler printed
 * when the worker started and the compiler's file as it is now), the
 * compile command, the memory limit it is given, the source file's name
 * and its text (code then tests). A build is what the compile step left
 * at the top of scratch, sent by workspace.py before the program started
 * (workspace.h): the program never gets to write what is cached. A
 * compile_error is never cached: every refusal is the compiler's own.
 *
 * Held in the worker's memory, least recently used first out, up to its
 * byte budget (compile_cache_mib); a build over a quarter of it (at most
 * SQ__COMPILE_BUILD_MAX_BYTES) is not kept. Used from the worker's event
 * loop thread only. */
#ifndef SQ_WORKER_COMPILE_CACHE_H
#define SQ_WORKER_COMPILE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "language.h"
#include "workspace.h"

#define SQ__COMPILE_BUILD_MAX_BYTES (8u << 20)

typedef struct sq__compile_cache sq__compile_cache;

typedef struct {
  int64_t hits, misses; /* lookups that found a build, and those that did not */
  int64_t entries, bytes, evicted;
} sq__compile_cache_stats;

/* A cache holding up to max_bytes (0: none; *out is then NULL and every
 * call below treats it as empty). Returns 0 or SQ_ENOMEM. */
int sq__compile_cache_new(size_t max_bytes, sq__compile_cache **out);
/* Frees the cache and its builds; NULL is a no-op. */
void sq__compile_cache_free(sq__compile_cache *c);

/* The largest build c keeps (0: c keeps none); what workspace.py is asked
 * to send back. */
size_t sq__compile_cache_build_max(const sq__compile_cache *c);

/* The key for source (len bytes) in language id compiled with a memory
 * limit of memory_mib. Returns false when id's builds cannot be cached:
 * it does not compile, or its toolchain's identity is unknown. */
bool sq__compile_cache_key(sq_language_id id, const char *source, size_t len, int64_t memory_mib,
                           unsigned char key[32]);

/* The build under key, or NULL (counted as a hit or a miss). The build is
 * the cache's; it stays valid until the next sq__compile_cache_put. */
const sq_workspace_build *sq__compile_cache_get(sq__compile_cache *c, const unsigned char key[32]);

/* Keeps b under key: takes its files (b is zeroed) and makes room by
 * dropping the least recently used. A build with no files, over
 * sq__compile_cache_build_max, or under a key already held is left in b
 * (the caller clears it). Returns 0 (kept or left) or SQ_ENOMEM. */
int sq__compile_cache_put(sq__compile_cache *c, const unsigned char key[32], sq_workspace_build *b);

void sq__compile_cache_stats_get(const sq__compile_cache *c, sq__compile_cache_stats *s);

/* The toolchains' identities, process-wide. start runs each found
 * compiled language's compiler with its version flag, on the host, in
 * parallel, and returns at once: the worker does not wait for them. Each
 * one's output is taken when it has ended (sq__compile_toolchains_poll);
 * until then, and for a compiler that failed or
 * took more than SQ__COMPILE_TOOLCHAIN_MAX_MS, the language's builds are
 * not cached (it compiles as without a cache). finish waits up to
 * timeout_ms for the rest, then ends what is still running (the worker's
 * exit; tests). Call from one thread, start after sq_language_probe;
 * start runs once per process (later calls do nothing), and the first
 * sq__compile_cache_key of a compiled language calls it (the worker's loop
 * calls it when it first idles). */
#define SQ__COMPILE_TOOLCHAIN_MAX_MS 60000
void sq__compile_toolchains_start(void);
void sq__compile_toolchains_finish(int64_t timeout_ms);
/* Takes what has ended, without waiting (the worker's housekeeping, each
 * key); nothing when every command has settled. */
void sq__compile_toolchains_poll(void);
/* id's identity: its compiler's first line of output ("gcc (Debian
 * 12.2.0-14) 12.2.0"), "" while unknown; static. */
const char *sq__compile_toolchain(sq_language_id id);

#endif
