/* precheck.c: the static pre-check over pytok's tokens: imports against the
 * allowlist, dangerous calls (resolved through import aliases), dunder and
 * frame walks, modules reached through other modules, getattr with a
 * computed name, `while True` loops with no way out, and f-string fields
 * checked like code. Names are read as Python reads them (NFKC, in the
 * source's declared encoding). Block or record is decided per finding kind. */
#include "precheck.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "nfkc_ascii.h"
#include "pytok.h"

#define MAX_ALIASES 64
#define MAX_BLOCKS 64
#define MAX_FSTRING_LEVELS 8
#define NAME_BYTES 128
#define LOOKAHEAD 8
#define MAX_GETATTR 8 /* getattr( calls open at once, nested */

static const char *const kind_names[] = {
#define X(name, str, dflt) str,
    SQ_FINDING_MAP(X)
#undef X
};

void sq_precheck_defaults(sq_precheck_config *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->import_allowlist, sizeof p->import_allowlist, "%s", SQ_PRECHECK_DEFAULT_ALLOWLIST);
  int i = 0;
#define X(name, str, dflt) p->action[i++] = dflt;
  SQ_FINDING_MAP(X)
#undef X
}

const char *sq_precheck_kind_name(sq_finding_kind k) {
  return (int)k >= 0 && k < SQ_FINDING__COUNT ? kind_names[k] : "unknown";
}

int sq_precheck_kind_parse(const char *name, sq_finding_kind *out) {
  for (int i = 0; name && i < SQ_FINDING__COUNT; i++)
    if (strcmp(name, kind_names[i]) == 0) {
      *out = (sq_finding_kind)i;
      return 0;
    }
  return SQ_EINVAL;
}

int sq_precheck_action_parse(const char *name, sq_precheck_action *out) {
  if (name && strcmp(name, "record") == 0) *out = SQ_PRECHECK_RECORD;
  else if (name && strcmp(name, "block") == 0) *out = SQ_PRECHECK_BLOCK;
  else return SQ_EINVAL;
  return 0;
}

int sq_precheck_allowlist_validate(const char *list) {
  for (const char *c = list; *c; c++)
    if (!isalnum((unsigned char)*c) && !strchr("_., ", *c)) return SQ_EINVAL;
  return 0;
}

/* Is module (a dotted name) allowed? "a" in the list allows "a" and "a.b". */
static bool allowed(const sq_precheck_config *cfg, const char *module) {
  size_t mlen = strlen(module);
  const char *p = cfg->import_allowlist;
  while (*p) {
    while (*p == ',' || *p == ' ') p++;
    const char *e = p;
    while (*e && *e != ',' && *e != ' ') e++;
    size_t n = (size_t)(e - p);
    if (n && n <= mlen && memcmp(p, module, n) == 0 && (module[n] == '\0' || module[n] == '.')) return true;
    p = e;
  }
  return false;
}

/* ---- what the checker looks for ---- */

static const char *const keywords[] = {
    "False", "None",   "True",  "and",   "as",     "assert", "async", "await",    "break",
    "class", "continue", "def", "del",   "elif",   "else",   "except", "finally", "for",
    "from",  "global", "if",    "import", "in",    "is",     "lambda", "nonlocal", "not",
    "or",    "pass",   "raise", "return", "try",   "while",  "with",  "yield"};

/* Attributes that walk from any object to interpreter internals. */
static const char *const dunders[] = {"__subclasses__", "__globals__", "__builtins__", "__bases__",
                                      "__base__",       "__mro__",     "__code__",     "__closure__",
                                      "__loader__",     "__spec__",    "__getattribute__", "__reduce_ex__"};
/* Frame and code walks: only as attributes (x.f_back). */
static const char *const frame_attrs[] = {"f_globals", "f_builtins", "f_locals", "f_back", "gi_frame",
                                          "cr_frame",  "ag_frame",   "tb_frame", "_getframe"};
/* Modules that reach processes, the interpreter or memory: as an attribute
 * of another module (`random._os`, `typing.sys`), a walk around the
 * allowlist. Leading underscores do not hide them. */
static const char *const gateways[] = {"os",     "sys",    "subprocess", "builtins",        "posix",
                                       "nt",     "importlib", "imp",     "ctypes",          "pty",
                                       "shutil", "socket", "signal",     "multiprocessing", "runpy"};

typedef struct {
  const char *name;
  bool prefix; /* matches name itself and anything below it */
  sq_finding_kind kind;
} callee;

static const callee callees[] = {
    {"eval", false, SQ_FINDING_EVAL},           {"exec", false, SQ_FINDING_EVAL},
    {"compile", false, SQ_FINDING_EVAL},        {"builtins.eval", false, SQ_FINDING_EVAL},
    {"builtins.exec", false, SQ_FINDING_EVAL},  {"builtins.compile", false, SQ_FINDING_EVAL},
    {"__import__", false, SQ_FINDING_DYNAMIC_IMPORT}, {"builtins.__import__", false, SQ_FINDING_DYNAMIC_IMPORT},
    {"importlib", true, SQ_FINDING_DYNAMIC_IMPORT},
    {"os.system", false, SQ_FINDING_PROCESS},   {"os.popen", false, SQ_FINDING_PROCESS},
    {"os.fork", false, SQ_FINDING_PROCESS},     {"os.forkpty", false, SQ_FINDING_PROCESS},
    {"os.kill", false, SQ_FINDING_PROCESS},     {"os.killpg", false, SQ_FINDING_PROCESS},
    {"os.posix_spawn", false, SQ_FINDING_PROCESS}, {"os.posix_spawnp", false, SQ_FINDING_PROCESS},
    {"os.execv", false, SQ_FINDING_PROCESS},    {"os.execve", false, SQ_FINDING_PROCESS},
    {"os.execvp", false, SQ_FINDING_PROCESS},   {"os.execvpe", false, SQ_FINDING_PROCESS},
    {"os.execl", false, SQ_FINDING_PROCESS},    {"os.execle", false, SQ_FINDING_PROCESS},
    {"os.execlp", false, SQ_FINDING_PROCESS},   {"os.execlpe", false, SQ_FINDING_PROCESS},
    {"os.spawnv", false, SQ_FINDING_PROCESS},   {"os.spawnve", false, SQ_FINDING_PROCESS},
    {"os.spawnl", false, SQ_FINDING_PROCESS},   {"os.spawnle", false, SQ_FINDING_PROCESS},
    {"os.spawnvp", false, SQ_FINDING_PROCESS},  {"os.spawnlp", false, SQ_FINDING_PROCESS},
    {"subprocess", true, SQ_FINDING_PROCESS},   {"pty.spawn", false, SQ_FINDING_PROCESS},
    {"pty.fork", false, SQ_FINDING_PROCESS},    {"posix.system", false, SQ_FINDING_PROCESS},
};

static bool in_list(const char *const *list, size_t n, const char *s, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0) return true;
  return false;
}
#define IN(list, s, len) in_list(list, sizeof list / sizeof *list, s, len)

static bool tok_is(const sq_token *t, sq_tok_kind kind, const char *text) {
  return t->kind == kind && t->len == strlen(text) && memcmp(t->text, text, t->len) == 0;
}
static bool is_kw(const sq_token *t, const char *kw) { return tok_is(t, SQ_TOK_NAME, kw); }
static bool is_op(const sq_token *t, const char *op) { return tok_is(t, SQ_TOK_OP, op); }

/* ---- the checker ---- */

typedef struct {
  char name[NAME_BYTES];
  char target[NAME_BYTES];
} alias;

typedef struct {
  const sq_precheck_config *cfg;
  sq_precheck_report *rep;
  alias aliases[MAX_ALIASES];
  int n_aliases;
  bool syntax_reported;
  bool latin1; /* the source declares Latin-1: bytes >= 0x80 are U+0080..U+00FF */
} checker;

typedef enum { B_LOOP, B_WHILE_TRUE, B_FUNC } block_kind;

typedef struct {
  block_kind kind;
  int indent, line, col;
  bool exits;
} block;

/* One token stream: the program, or one f-string field. */
typedef struct {
  checker *ck;
  sq_pytok tz;
  sq_token ahead[LOOKAHEAD];
  int n_ahead;
  sq_token prev;   /* the last significant token consumed */
  sq_token before; /* the one consumed before it */
  block blocks[MAX_BLOCKS];
  int n_blocks;
  int level;     /* f-string nesting */
  /* getattr( calls whose name argument is being read: the depth of their
   * '(' and how far: 1 in the object, 2 at the name, 3 just after it. */
  struct {
    int depth, stage, line, col;
  } getattrs[MAX_GETATTR];
  int n_getattrs;
} stream;

__attribute__((format(printf, 5, 6))) static void add(checker *ck, sq_finding_kind kind, int line, int col,
                                                        const char *fmt, ...) {
  sq_precheck_report *rep = ck->rep;
  bool blocks_task = ck->cfg->action[kind] == SQ_PRECHECK_BLOCK;
  rep->n_total++;
  rep->blocked |= blocks_task;
  size_t slot = rep->n;
  if (slot == SQ_PRECHECK_MAX_FINDINGS) {
    if (!blocks_task) return;
    /* full: a blocking finding replaces the last recorded-only one */
    while (slot > 0 && ck->cfg->action[rep->items[slot - 1].kind] == SQ_PRECHECK_BLOCK) slot--;
    if (slot == 0) return;
    slot--;
  } else {
    rep->n++;
  }
  sq_precheck_finding *f = &rep->items[slot];
  f->kind = kind;
  f->line = line;
  f->col = col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->detail, sizeof f->detail, fmt, ap);
  va_end(ap);
}

/* ---- names as Python reads them ---- */

/* The ASCII NFKC form of code point cp into out (NUL-terminated), or false
 * when it has none (nfkc_ascii.h: a binary search over its runs). */
static bool nfkc_ascii(uint32_t cp, char out[5]) {
  size_t lo = 0, hi = sizeof sq__nfkc_runs / sizeof *sq__nfkc_runs;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const sq__nfkc_run *r = &sq__nfkc_runs[mid];
    if (cp < r->first) hi = mid;
    else if (cp >= r->first + r->count) lo = mid + 1;
    else {
      memcpy(out, r->ascii, 5);
      if (r->count > 1) out[0] = (char)(out[0] + (int)(cp - r->first));
      return true;
    }
  }
  return false;
}

#define NOT_A_CHAR 0xffffffffu

/* One character at p (n > 0 bytes left): UTF-8, or a Latin-1 byte. Sets
 * *cp (NOT_A_CHAR for a byte that is no UTF-8: Python refuses the source)
 * and returns its length in bytes. */
static size_t next_char(const unsigned char *p, size_t n, bool latin1, uint32_t *cp) {
  unsigned c = p[0];
  size_t len = c < 0x80 || latin1 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || len > n) {
    *cp = NOT_A_CHAR;
    return 1;
  }
  uint32_t v = len == 1 ? c : len == 2 ? c & 0x1fu : len == 3 ? c & 0x0fu : c & 0x07u;
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80) {
      *cp = NOT_A_CHAR;
      return 1;
    }
    v = v << 6 | (p[i] & 0x3fu);
  }
  *cp = v;
  return len;
}

/* The identifier the NAME token t spells, as Python reads it (PEP 3131:
 * NFKC): every character whose NFKC form is ASCII becomes that form, the
 * rest stays as written (it cannot make an ASCII name). Written to buf (cap
 * bytes, NUL-terminated, truncated); *changed (may be NULL) tells whether
 * it differs from the token's bytes. Returns its length. */
static size_t name_of(const checker *ck, const sq_token *t, char *buf, size_t cap, bool *changed) {
  const unsigned char *p = (const unsigned char *)t->text;
  size_t n = 0, i = 0;
  bool diff = false;
  while (i < t->len && n + 1 < cap) {
    uint32_t cp;
    size_t k = next_char(p + i, t->len - i, ck->latin1, &cp);
    char ascii[5];
    if (cp >= 0x80 && cp != NOT_A_CHAR && nfkc_ascii(cp, ascii)) {
      for (const char *a = ascii; *a && n + 1 < cap; a++) buf[n++] = *a;
      diff = true;
    } else {
      for (size_t j = 0; j < k && n + 1 < cap; j++) buf[n++] = (char)p[i + j];
    }
    i += k;
  }
  buf[n] = '\0';
  if (changed) *changed = diff;
  return n;
}

static void check_stream(checker *ck, const char *src, size_t len, int line, int col, int level);

static int on_field(void *ctx, const char *expr, size_t len, int line, int col) {
  stream *s = ctx;
  check_stream(s->ck, expr, len, line, col, s->level + 1);
  return 0;
}

/* Closes the blocks a logical line at indent ends; reports endless loops. */
static void close_blocks(stream *s, int indent) {
  while (s->n_blocks > 0 && s->blocks[s->n_blocks - 1].indent >= indent) {
    block *b = &s->blocks[--s->n_blocks];
    if (b->kind == B_WHILE_TRUE && !b->exits)
      add(s->ck, SQ_FINDING_ENDLESS_LOOP, b->line, b->col, "while True with no break, return or raise");
  }
}

/* getattr(obj, name): the name must be one plain string literal; anything
 * computed (`'_' + '_import__'`, a variable, a call) is a finding. The
 * innermost open call sees each token; a nested getattr( is pushed on top. */
static void watch_getattr(stream *s, const sq_token *t) {
  if (s->n_getattrs == 0) return;
  __typeof__(s->getattrs[0]) *g = &s->getattrs[s->n_getattrs - 1];
  int inside = g->depth + 1;
  bool bad = false, over = false;
  switch (g->stage) {
  case 0: /* its '(' */
    g->stage = 1;
    over = !is_op(t, "(");
    break;
  case 1: /* the object, up to the comma */
    if (t->depth == inside && is_op(t, ",")) g->stage = 2;
    else over = t->depth <= inside && is_op(t, ")");
    break;
  case 2: /* the name */
    if (t->kind == SQ_TOK_STRING && !(t->str_flags & SQ_STR_F)) g->stage = 3;
    else bad = over = true;
    break;
  default: /* what follows the name: the end of the argument, or more of it */
    bad = !(t->depth == inside && (is_op(t, ",") || is_op(t, ")")));
    over = true;
  }
  if (bad) add(s->ck, SQ_FINDING_GETATTR, g->line, g->col, "getattr with a computed attribute name");
  if (over) s->n_getattrs--;
}

/* What every significant token goes through once, in order, when consumed. */
static void consumed(stream *s, const sq_token *t) {
  if (t->first) close_blocks(s, t->indent);
  watch_getattr(s, t);
  if (t->kind == SQ_TOK_NAME) {
    char name[NAME_BYTES];
    bool changed;
    size_t n = name_of(s->ck, t, name, sizeof name, &changed);
    if (changed) add(s->ck, SQ_FINDING_UNICODE_NAME, t->line, t->col, "a name that reads as '%s'", name);
    if (IN(dunders, name, n) || (is_op(&s->prev, ".") && IN(frame_attrs, name, n)))
      add(s->ck, SQ_FINDING_DUNDER, t->line, t->col, "%s", name);
  } else if (t->kind == SQ_TOK_STRING) {
    if ((t->str_flags & SQ_STR_F) && s->level < MAX_FSTRING_LEVELS) sq_pytok_fstring_fields(t, on_field, s);
    /* getattr(x, '__globals__'): a walk spelt as a string argument */
    if (!(t->str_flags & SQ_STR_F) && (is_op(&s->prev, "(") || is_op(&s->prev, ",")) &&
        IN(dunders, t->body, t->body_len))
      add(s->ck, SQ_FINDING_DUNDER, t->line, t->col, "%.*s (in a string)", (int)t->body_len, t->body);
  } else if (t->kind == SQ_TOK_ERROR && !s->ck->syntax_reported) {
    s->ck->syntax_reported = true;
    add(s->ck, SQ_FINDING_SYNTAX, t->line, t->col, "%s", t->error);
  }
}

/* Peeks at the k-th significant token ahead (k < LOOKAHEAD); comments and
 * non-logical line breaks are skipped. */
static const sq_token *peek(stream *s, int k) {
  while (s->n_ahead <= k) {
    sq_token *t = &s->ahead[s->n_ahead];
    do sq_pytok_next(&s->tz, t);
    while (t->kind == SQ_TOK_COMMENT || t->kind == SQ_TOK_NL);
    s->n_ahead++;
  }
  return &s->ahead[k];
}

/* Consumes the next significant token into *t. */
static sq_tok_kind next(stream *s, sq_token *t) {
  peek(s, 0);
  *t = s->ahead[0];
  memmove(s->ahead, s->ahead + 1, (size_t)(--s->n_ahead) * sizeof *s->ahead);
  consumed(s, t);
  s->before = s->prev;
  s->prev = *t;
  return t->kind;
}

/* Reads NAME(.NAME)* into buf (also "."s of a relative import when dots).
 * Returns the number of names read. */
static int dotted(stream *s, char *buf, size_t len, bool dots) {
  size_t n = 0;
  int names = 0;
  sq_token t;
  buf[0] = '\0';
  while (dots && (is_op(peek(s, 0), ".") || is_op(peek(s, 0), "..."))) {
    next(s, &t);
    n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%.*s", (int)t.len, t.text);
  }
  while (peek(s, 0)->kind == SQ_TOK_NAME && !is_kw(peek(s, 0), "import")) {
    next(s, &t);
    char name[NAME_BYTES];
    name_of(s->ck, &t, name, sizeof name, NULL);
    if (n < len) n += (size_t)snprintf(buf + n, len - n, "%s%s", names ? "." : "", name);
    names++;
    if (!is_op(peek(s, 0), ".") || peek(s, 1)->kind != SQ_TOK_NAME) break;
    next(s, &t);
  }
  return names;
}

static void set_alias(checker *ck, const char *name, size_t name_len, const char *target) {
  alias *a = NULL;
  for (int i = 0; i < ck->n_aliases && !a; i++)
    if (strlen(ck->aliases[i].name) == name_len && memcmp(ck->aliases[i].name, name, name_len) == 0)
      a = &ck->aliases[i];
  if (!a && ck->n_aliases < MAX_ALIASES) a = &ck->aliases[ck->n_aliases++];
  if (!a) return;
  snprintf(a->name, sizeof a->name, "%.*s", (int)name_len, name);
  snprintf(a->target, sizeof a->target, "%s", target);
}

/* The callee table entry for a resolved dotted name, or NULL. */
static const callee *find_callee(const char *name) {
  for (size_t i = 0; i < sizeof callees / sizeof *callees; i++) {
    size_t n = strlen(callees[i].name);
    if (strncmp(name, callees[i].name, n) == 0 && (name[n] == '\0' || (callees[i].prefix && name[n] == '.')))
      return &callees[i];
  }
  return NULL;
}

static void check_module(stream *s, const char *module, int line, int col) {
  if (!allowed(s->ck->cfg, module)) add(s->ck, SQ_FINDING_IMPORT, line, col, "%s", module);
}

static void check_name(stream *s, const char *name, int line, int col) {
  const callee *c = find_callee(name);
  if (c) add(s->ck, c->kind, line, col, "%s", name);
}

/* A module reached through another module: in resolved (a dotted name),
 * a part after the first that names a gateway module, privately
 * (`random._os`) or as an attribute of an imported module (rooted:
 * `typing.sys`); and `sys.modules`, every module by name. Reports the walk,
 * then what the rest names from the gateway on (`_os.system` is
 * `os.system`). Returns whether it found one. */
static bool check_walk(stream *s, const char *resolved, bool rooted, int line, int col) {
  if (strncmp(resolved, "sys.modules", 11) == 0 && (resolved[11] == '\0' || resolved[11] == '.')) {
    add(s->ck, SQ_FINDING_MODULE_WALK, line, col, "sys.modules");
    return true;
  }
  const char *part = strchr(resolved, '.');
  while (part) {
    part++;
    const char *end = strchr(part, '.');
    size_t n = end ? (size_t)(end - part) : strlen(part);
    const char *bare = part;
    while (*bare == '_' && bare < part + n) bare++;
    size_t bare_n = n - (size_t)(bare - part);
    if ((bare != part || rooted) && IN(gateways, bare, bare_n)) {
      add(s->ck, SQ_FINDING_MODULE_WALK, line, col, "%.*s", (int)(part + n - resolved), resolved);
      check_name(s, bare, line, col);
      return true;
    }
    part = end;
  }
  return false;
}

/* import a.b [as c], ... */
static void import_stmt(stream *s) {
  do {
    const sq_token *first = peek(s, 0);
    int line = first->line, col = first->col;
    char module[NAME_BYTES], name[NAME_BYTES];
    if (dotted(s, module, sizeof module, false) == 0) return;
    check_module(s, module, line, col);
    check_name(s, module, line, col);
    check_walk(s, module, true, line, col);
    sq_token t;
    if (is_kw(peek(s, 0), "as") && peek(s, 1)->kind == SQ_TOK_NAME) {
      next(s, &t);
      next(s, &t);
      set_alias(s->ck, name, name_of(s->ck, &t, name, sizeof name, NULL), module);
    } else { /* `import a.b` binds a, a module */
      size_t head = strcspn(module, ".");
      snprintf(name, sizeof name, "%.*s", (int)head, module);
      set_alias(s->ck, name, head, name);
    }
  } while (is_op(peek(s, 0), ",") && (next(s, &(sq_token){0}), true));
}

/* from [.]a.b import (x [as y], ...) | * */
static void from_stmt(stream *s) {
  const sq_token *first = peek(s, 0);
  int line = first->line, col = first->col;
  char module[NAME_BYTES], full[2 * NAME_BYTES + 2];
  sq_token t;
  dotted(s, module, sizeof module, true);
  if (!is_kw(peek(s, 0), "import")) return;
  next(s, &t);
  bool paren = is_op(peek(s, 0), "("), reported = false;
  if (paren) next(s, &t);
  while (peek(s, 0)->kind == SQ_TOK_NAME || is_op(peek(s, 0), "*")) {
    next(s, &t);
    char name[NAME_BYTES];
    name_of(s->ck, &t, name, sizeof name, NULL);
    snprintf(full, sizeof full, "%s.%s", module, name);
    if (!reported && !allowed(s->ck->cfg, module) && !allowed(s->ck->cfg, full)) {
      add(s->ck, SQ_FINDING_IMPORT, line, col, "%s", module);
      reported = true;
    }
    check_name(s, full, t.line, t.col);
    check_walk(s, full, true, t.line, t.col);
    const sq_token *bound = &t;
    sq_token as_name;
    if (is_kw(peek(s, 0), "as") && peek(s, 1)->kind == SQ_TOK_NAME) {
      next(s, &as_name);
      next(s, &as_name);
      bound = &as_name;
    }
    if (t.kind == SQ_TOK_NAME) set_alias(s->ck, name, name_of(s->ck, bound, name, sizeof name, NULL), full);
    if (!is_op(peek(s, 0), ",")) break;
    next(s, &t);
  }
  if (paren && is_op(peek(s, 0), ")")) next(s, &t);
}

/* A name in an expression: resolve NAME(.NAME)* through the aliases and
 * check it; for __import__('m') and importlib.import_module('m') the
 * module too. */
static void name_chain(stream *s, const sq_token *root) {
  char chain[NAME_BYTES * 2], resolved[NAME_BYTES * 3], name[NAME_BYTES];
  name_of(s->ck, root, name, sizeof name, NULL);
  int n = snprintf(chain, sizeof chain, "%s", name);
  while (n < (int)sizeof chain && is_op(peek(s, 0), ".") && peek(s, 1)->kind == SQ_TOK_NAME) {
    sq_token t;
    next(s, &t);
    next(s, &t);
    name_of(s->ck, &t, name, sizeof name, NULL);
    n += snprintf(chain + n, sizeof chain - (size_t)n, ".%s", name);
  }
  size_t head = strcspn(chain, ".");
  const char *target = NULL;
  for (int i = 0; i < s->ck->n_aliases && !target; i++)
    if (strlen(s->ck->aliases[i].name) == head && memcmp(s->ck->aliases[i].name, chain, head) == 0)
      target = s->ck->aliases[i].target;
  snprintf(resolved, sizeof resolved, "%s%s", target ? target : "", chain + (target ? head : 0));
  if ((strcmp(resolved, "getattr") == 0 || strcmp(resolved, "builtins.getattr") == 0) && is_op(peek(s, 0), "(") &&
      s->n_getattrs < MAX_GETATTR)
    s->getattrs[s->n_getattrs++] = (__typeof__(s->getattrs[0])){.depth = peek(s, 0)->depth, .line = root->line,
                                                                .col = root->col};
  if (check_walk(s, resolved, target != NULL, root->line, root->col)) return;
  const callee *c = find_callee(resolved);
  if (!c) return;
  add(s->ck, c->kind, root->line, root->col, "%s", resolved);
  const sq_token *arg = peek(s, 1);
  if (c->kind == SQ_FINDING_DYNAMIC_IMPORT && is_op(peek(s, 0), "(") && arg->kind == SQ_TOK_STRING &&
      !(arg->str_flags & SQ_STR_F) && arg->body_len < NAME_BYTES) {
    char module[NAME_BYTES];
    snprintf(module, sizeof module, "%.*s", (int)arg->body_len, arg->body);
    check_module(s, module, arg->line, arg->col);
  }
}

static void push_block(stream *s, block_kind kind, const sq_token *t) {
  if (s->n_blocks < MAX_BLOCKS)
    s->blocks[s->n_blocks++] = (block){.kind = kind, .indent = t->indent, .line = t->line, .col = t->col};
}

/* break leaves the innermost loop; return, yield and raise every loop of
 * the innermost function. */
static void mark_exit(stream *s, bool whole_function) {
  for (int i = s->n_blocks - 1; i >= 0 && s->blocks[i].kind != B_FUNC; i--) {
    if (s->blocks[i].kind == B_WHILE_TRUE) s->blocks[i].exits = true;
    if (!whole_function) break;
  }
}

static bool is_true(const sq_token *t) { return is_kw(t, "True") || tok_is(t, SQ_TOK_NUMBER, "1"); }

static void statement_keyword(stream *s, const sq_token *t) {
  if (is_kw(t, "import")) import_stmt(s);
  else if (is_kw(t, "from") && (t->first || is_op(&s->before, ";") || (is_op(&s->before, ":") && t->depth == 0)))
    from_stmt(s);
  else if (is_kw(t, "while")) {
    bool forever = (is_true(peek(s, 0)) && is_op(peek(s, 1), ":")) ||
                   (is_op(peek(s, 0), "(") && is_true(peek(s, 1)) && is_op(peek(s, 2), ")") && is_op(peek(s, 3), ":"));
    push_block(s, forever ? B_WHILE_TRUE : B_LOOP, t);
  } else if (is_kw(t, "for") && t->depth == 0) push_block(s, B_LOOP, t);
  else if (is_kw(t, "def") || is_kw(t, "class")) push_block(s, B_FUNC, t);
  else if (is_kw(t, "break")) mark_exit(s, false);
  else if (is_kw(t, "return") || is_kw(t, "yield") || is_kw(t, "raise")) mark_exit(s, true);
}

static void check_stream(checker *ck, const char *src, size_t len, int line, int col, int level) {
  stream *s = calloc(1, sizeof *s); /* ~2 KiB of lookahead and blocks; nested per f-string level */
  if (!s) return;
  s->ck = ck;
  s->level = level;
  sq_pytok_init_at(&s->tz, src, len, line, col);
  sq_token t;
  while (next(s, &t) != SQ_TOK_END) {
    if (t.kind != SQ_TOK_NAME) continue;
    if (IN(keywords, t.text, t.len)) statement_keyword(s, &t);
    else if (!is_op(&s->before, ".") && !is_kw(&s->before, "def") && !is_kw(&s->before, "class") &&
             !(t.depth > 0 && is_op(peek(s, 0), "="))) /* not an attribute, a definition or f(name=...) */
      name_chain(s, &t);
  }
  close_blocks(s, -1);
  free(s);
}

static int by_position(const void *a, const void *b) {
  const sq_precheck_finding *x = a, *y = b;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  return (x->col > y->col) - (x->col < y->col);
}

/* The encoding the source declares, read as the 3.11 tokenizer reads it
 * (PEP 263): on line 1, or on line 2 when line 1 is blank or a comment, a
 * comment line matching `coding[:=][ \t]*([-\w.]+)`. UTF-8 (the default)
 * and ASCII are read as they are, Latin-1 by its bytes (ck->latin1); any
 * other (`utf-7`, `raw_unicode_escape`, ...) turns the very bytes the
 * checker reads into something else, and is a finding of its own. */
static void read_cookie(checker *ck, const char *src, size_t len) {
  static const char *const utf8[] = {"utf-8", "utf8", "u8", "utf", "cp65001", "ascii", "us-ascii", "646", "us"};
  static const char *const latin1[] = {"latin-1", "latin1", "iso-8859-1", "iso8859-1", "iso-latin-1", "l1",
                                       "latin", "8859", "cp819", "iso-ir-100", "csisolatin1"};
  const char *p = src, *end = src + len;
  if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) p += 3;
  for (int line = 1; line <= 2 && p < end; line++) {
    const char *eol = p;
    while (eol < end && *eol != '\n' && *eol != '\r') eol++;
    const char *q = p;
    while (q < eol && (*q == ' ' || *q == '\t' || *q == '\f')) q++;
    if (q < eol && *q != '#') return; /* code: no cookie here, nor on the next line */
    for (const char *c = q; q < eol && c + 7 <= eol; c++) {
      if (memcmp(c, "coding", 6) != 0 || (c[6] != ':' && c[6] != '=')) continue;
      const char *v = c + 7;
      while (v < eol && (*v == ' ' || *v == '\t')) v++;
      char name[40];
      size_t n = 0;
      for (; v < eol && (isalnum((unsigned char)*v) || strchr("-_.", *v)) && n + 1 < sizeof name; v++)
        name[n++] = *v == '_' ? '-' : (char)tolower((unsigned char)*v);
      name[n] = '\0';
      if (n == 0) continue;
      if (IN(utf8, name, n) || strncmp(name, "utf-8-", 6) == 0) return;
      if (IN(latin1, name, n) || strncmp(name, "latin-1-", 8) == 0 || strncmp(name, "iso-8859-1-", 11) == 0 ||
          strncmp(name, "iso-latin-1-", 12) == 0) {
        ck->latin1 = true;
        return;
      }
      add(ck, SQ_FINDING_ENCODING, line, (int)(c - p) + 1, "%s: only UTF-8 and Latin-1 sources are read", name);
      return;
    }
    while (eol < end && (*eol == '\r' || *eol == '\n')) { /* one line break */
      bool crlf = *eol == '\r' && eol + 1 < end && eol[1] == '\n';
      eol += crlf ? 2 : 1;
      break;
    }
    p = eol;
  }
}

int sq_precheck_check(const sq_precheck_config *cfg, const char *src, size_t len, sq_precheck_report *out) {
  if (!out) return SQ_EINVAL;
  memset(out, 0, sizeof *out);
  if (!cfg || (!src && len)) return SQ_EINVAL;
  checker ck = {.cfg = cfg, .rep = out};
  read_cookie(&ck, src ? src : "", len);
  check_stream(&ck, src ? src : "", len, 1, 1, 0);
  qsort(out->items, out->n, sizeof *out->items, by_position);
  return 0;
}

void sq_precheck_reason(const sq_precheck_config *cfg, const sq_precheck_report *rep, char *buf, size_t len) {
  if (!len) return;
  size_t n = (size_t)snprintf(buf, len, "static pre-check");
  const char *sep = ": ";
  for (size_t i = 0; i < rep->n && n < len; i++) {
    const sq_precheck_finding *f = &rep->items[i];
    if (cfg->action[f->kind] != SQ_PRECHECK_BLOCK) continue;
    n += (size_t)snprintf(buf + n, len - n, "%s%s '%s' at %d:%d", sep, sq_precheck_kind_name(f->kind), f->detail,
                          f->line, f->col);
    sep = "; ";
  }
  if (n < len && rep->n_total > rep->n)
    snprintf(buf + n, len - n, " (%zu findings in all)", rep->n_total);
}
