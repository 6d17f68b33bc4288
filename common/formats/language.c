/* language.c: the declared table of languages and the probe of the host's
 * toolchains. See language.h.
 *
 * Commands run inside the jail with the task's scratch as the working
 * directory and HOME, where /proc is absent: the flags below are what each
 * toolchain needs to start without it (docs/security.md, "Languages").
 * "{mem}" in a command is the program's memory limit in MiB and
 * "{scratch}" in an environment value the scratch directory; workspace.py
 * fills both in. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "language.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"

/* The JVM without /proc and under a memory cgroup: no shared-memory perf
 * file, one GC thread, small fixed reservations for classes and code, the
 * heap sized from the memory limit rather than the host's RAM. */
#define JVM_FLAGS(p)                                                                               \
  p "-XX:+UseSerialGC", p "-XX:-UsePerfData", p "-XX:CompressedClassSpaceSize=64m",                \
      p "-XX:ReservedCodeCacheSize=64m", p "-XX:MaxMetaspaceSize=256m", p "-XX:TieredStopAtLevel=1", \
      p "-XX:ActiveProcessorCount=1", p "-Xshare:auto"

/* Address space for runtimes that reserve far more than they touch, held
 * by the memory cgroup instead (language.h): V8 reserves its code range and
 * heap cage up front, Go's allocator its arena index, the JVM its heap,
 * class space and code cache. */
#define V8_AS_MIB 16384
#define GO_AS_MIB 16384
#define JVM_AS_MIB 16384

/* node's standby: waits for the source's name on descriptor 3, closes it,
 * and runs the file as `node FILE` does (its own runMain, the same
 * argv and execArgv), so the program finds what a cold start gives it. */
#define NODE_STANDBY_JS                                                                                      \
  "const fs = require('fs'), b = Buffer.alloc(4096); let s = '';\n"                                      \
  "for (;;) { const k = fs.readSync(3, b, 0, b.length, null); if (!k) process.exit(0);\n"                 \
  "  s += b.toString('latin1', 0, k); if (s.endsWith('\\n')) break; }\n"                                \
  "fs.closeSync(3);\n"                                                                                     \
  "process.argv[1] = require('path').resolve(s.slice(0, -1));\n"                                          \
  "process.execArgv.splice(-2, 2);\n"                                                                      \
  "require('module').runMain();\n"

static sq_language table[SQ_LANGUAGE__COUNT] = {
    [SQ_LANGUAGE_PYTHON] = {.name = "python", .source_name = "main.py", .run = {"/usr/bin/python3"}},
    [SQ_LANGUAGE_BASH] = {.name = "bash", .aliases = {"sh"}, .source_name = "main.sh", .run = {"/bin/bash", "main.sh"}},
    [SQ_LANGUAGE_JAVASCRIPT] = {.name = "javascript",
                                .aliases = {"js", "node"},
                                .source_name = "main.js",
                                .run = {"/usr/bin/node", "--max-old-space-size={mem}", "main.js"},
                                .standby = {"/usr/bin/node", "--max-old-space-size={mem}", "-e", NODE_STANDBY_JS},
                                .address_space_mib = V8_AS_MIB},
    [SQ_LANGUAGE_TYPESCRIPT] = {.name = "typescript",
                                .aliases = {"ts"},
                                .source_name = "main.ts",
                                .compile = {"/usr/bin/node", "/usr/bin/tsc", "--target", "es2020", "--module",
                                            "commonjs", "--pretty", "false", "--noEmitOnError", "main.ts"},
                                .run = {"/usr/bin/node", "--max-old-space-size={mem}", "main.js"},
                                .version_flag = "--version",
                                .compile_wall_ms = 60000,
                                .compile_cpu_ms = 40000,
                                .compile_memory_mib = 1024,
                                .address_space_mib = V8_AS_MIB},
    [SQ_LANGUAGE_C] = {.name = "c",
                       .source_name = "main.c",
                       .compile = {"/usr/bin/gcc", "-std=gnu11", "-O2", "-pipe", "-o", "main", "main.c", "-lm"},
                       .run = {"./main"},
                       .version_flag = "--version",
                       .compile_wall_ms = 30000,
                       .compile_cpu_ms = 20000,
                       .compile_memory_mib = 1024},
    [SQ_LANGUAGE_CPP] = {.name = "cpp",
                         .aliases = {"c++"},
                         .source_name = "main.cpp",
                         .compile = {"/usr/bin/g++", "-std=gnu++17", "-O2", "-pipe", "-o", "main", "main.cpp", "-lm"},
                         .run = {"./main"},
                         .version_flag = "--version",
                         .compile_wall_ms = 40000,
                         .compile_cpu_ms = 30000,
                         .compile_memory_mib = 1024},
    [SQ_LANGUAGE_GO] = {.name = "go",
                        .aliases = {"golang"},
                        .source_name = "main.go",
                        .compile = {"/usr/bin/go", "build", "-o", "main", "main.go"},
                        .run = {"./main"},
                        .env = {"GOCACHE={scratch}/.cache/go", "GO111MODULE=off", "CGO_ENABLED=0",
                                "GOMEMLIMIT={mem}MiB"},
                        .version_flag = "version",
                        .compile_wall_ms = 40000,
                        .compile_cpu_ms = 30000,
                        .compile_memory_mib = 1024,
                        .address_space_mib = GO_AS_MIB},
    [SQ_LANGUAGE_RUST] = {.name = "rust",
                          .aliases = {"rs"},
                          .source_name = "main.rs",
                          .compile = {"/usr/bin/rustc", "--edition", "2021", "-C", "debuginfo=0", "-C", "opt-level=1", "-C",
                                      "strip=debuginfo", "-C", "linker=/usr/bin/gcc",
                                      "-o", "main", "main.rs"},
                          .run = {"./main"},
                          .version_flag = "--version",
                          .compile_wall_ms = 60000,
                          .compile_cpu_ms = 40000,
                          .compile_memory_mib = 1536},
    [SQ_LANGUAGE_JAVA] = {.name = "java",
                          .source_name = "Problem.java",
                          .compile = {"/usr/bin/javac", JVM_FLAGS("-J"), "-J-XX:MaxRAM={mem}m", "-encoding", "UTF-8",
                                      "-proc:none", "-d", ".", "Problem.java"},
                          .run = {"/usr/bin/java", JVM_FLAGS(""), "-XX:MaxRAM={mem}m", "-XX:MaxRAMPercentage=60",
                                  "-ea", "-cp", ".", "Problem"},
                          .version_flag = "-version",
                          .compile_wall_ms = 40000,
                          .compile_cpu_ms = 30000,
                          .compile_memory_mib = 1024,
                          .address_space_mib = JVM_AS_MIB},
    [SQ_LANGUAGE_RUBY] = {.name = "ruby",
                          .aliases = {"rb"},
                          .source_name = "main.rb",
                          .run = {"/usr/bin/ruby", "main.rb"},
                          .widenings = SQ_JAIL_WIDEN_TIMERS}, /* its timer thread's timer_create */
    [SQ_LANGUAGE_PHP] = {.name = "php", .source_name = "main.php", .run = {"/usr/bin/php", "-n", "-d", "display_errors=stderr", "main.php"}},
    [SQ_LANGUAGE_LUA] = {.name = "lua", .source_name = "main.lua", .run = {"/usr/bin/lua5.4", "main.lua"}},
    [SQ_LANGUAGE_PERL] = {.name = "perl", .aliases = {"pl"}, .source_name = "main.pl", .run = {"/usr/bin/perl", "main.pl"}},
};

static bool found[SQ_LANGUAGE__COUNT] = {[SQ_LANGUAGE_PYTHON] = true};
static bool probed;
/* Real paths of the commands' programs and the environment entries the
 * probe derives (a toolchain's home), owned here for the process's life. */
static char real_paths[SQ_LANGUAGE__COUNT][3][PATH_MAX];
static char home_env[SQ_LANGUAGE__COUNT][PATH_MAX + 32];

const sq_language *sq_language_get(sq_language_id id) {
  if ((int)id < 0 || id >= SQ_LANGUAGE__COUNT) return NULL;
  return &table[id];
}

int sq_language_find(const char *name, sq_language_id *out) {
  for (int i = 0; name && i < SQ_LANGUAGE__COUNT; i++) {
    bool hit = strcmp(name, table[i].name) == 0;
    for (int k = 0; !hit && k < 3 && table[i].aliases[k]; k++) hit = strcmp(name, table[i].aliases[k]) == 0;
    if (hit) {
      *out = (sq_language_id)i;
      return 0;
    }
  }
  return SQ_EINVAL;
}

const char *sq_language_all_names(void) {
  static char names[512];
  if (names[0]) return names;
  size_t at = 0;
  for (int i = 0; i < SQ_LANGUAGE__COUNT; i++) {
    at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "", table[i].name);
    for (int k = 0; k < 3 && table[i].aliases[k] && at < sizeof names; k++)
      at += (size_t)snprintf(names + at, sizeof names - at, ", %s", table[i].aliases[k]);
    if (at >= sizeof names) break;
  }
  return names;
}

/* argv[0] (or, for "node tsc", argv[1] too) to its real path, kept in
 * slot; false when it is not an executable (or readable script) here. */
static bool resolve(const char **word, char *slot, bool script) {
  if (!*word || (*word)[0] != '/') return true; /* ./main: built by the compile step */
  if (!realpath(*word, slot) || access(slot, script ? R_OK : X_OK) != 0) return false;
  *word = slot;
  return true;
}

/* A toolchain's home from its program's real path: two directories up
 * (/usr/lib/go-1.19/bin/go -> /usr/lib/go-1.19). */
static void set_home_env(sq_language_id id, const char *name, const char *suffix, const char *program) {
  char home[PATH_MAX];
  snprintf(home, sizeof home, "%s", program);
  for (int up = 0; up < 2; up++) {
    char *slash = strrchr(home, '/');
    if (slash) *slash = '\0';
  }
  snprintf(home_env[id], sizeof home_env[id], "%s=%s%s", name, home, suffix);
  for (int k = 0; k < SQ_LANGUAGE_ENV_MAX - 1; k++)
    if (!table[id].env[k]) {
      table[id].env[k] = home_env[id];
      break;
    }
}

int sq_language_probe(void) {
  int n = 1;
  if (probed) {
    for (int i = 1; i < SQ_LANGUAGE__COUNT; i++) n += found[i];
    return n;
  }
  probed = true;
  for (int i = 1; i < SQ_LANGUAGE__COUNT; i++) {
    sq_language *l = &table[i];
    bool ok = resolve(&l->run[0], real_paths[i][0], false) && resolve(&l->compile[0], real_paths[i][1], false);
    if (ok && i == SQ_LANGUAGE_TYPESCRIPT) ok = resolve(&l->compile[1], real_paths[i][2], true);
    if (ok && i == SQ_LANGUAGE_JAVA) {
      /* The launchers find libjli through $ORIGIN, which needs /proc. */
      ok = strcmp(real_paths[i][0] + strlen(real_paths[i][0]) - 9, "/bin/java") == 0;
      if (ok) set_home_env((sq_language_id)i, "LD_LIBRARY_PATH", "/lib", real_paths[i][0]);
    }
    if (ok && i == SQ_LANGUAGE_GO) set_home_env((sq_language_id)i, "GOROOT", "", real_paths[i][1]);
    if (ok && l->standby[0]) l->standby[0] = l->run[0];
    found[i] = ok;
    n += ok;
  }
  return n;
}

bool sq_language_available(sq_language_id id) { return (int)id >= 0 && id < SQ_LANGUAGE__COUNT && found[id]; }

void sq_language_found_names(char *buf, size_t len) {
  if (!len) return;
  buf[0] = '\0';
  size_t at = 0;
  for (int i = 0; i < SQ_LANGUAGE__COUNT && at < len; i++)
    if (found[i]) at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", table[i].name);
}

void sq_language_limits(sq_language_id id, sq_jail_limits *lim) {
  const sq_language *l = sq_language_get(id);
  if (!l) return;
  if (l->compile[0]) {
    lim->wall_ms += l->compile_wall_ms;
    lim->cpu_ms += l->compile_cpu_ms;
    if (lim->memory_mib < l->compile_memory_mib) lim->memory_mib = l->compile_memory_mib;
  }
  if (l->address_space_mib > 0) lim->address_space_mib = l->address_space_mib;
}

uint32_t sq_language_widenings(sq_language_id id) {
  const sq_language *l = sq_language_get(id);
  return l ? l->widenings : 0;
}
