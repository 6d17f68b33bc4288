/* cli.c: the command-line grammar every sandq program shares (cli.h):
 * options anywhere, "--flag VALUE" or "--flag=VALUE", "--", "-", and the
 * nearest name for a typo. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "errors.h"

static const sq_cli_flag *find(const sq_cli_flag *flags, const char *name, size_t len) {
  for (const sq_cli_flag *f = flags; f && f->name; f++)
    if (strlen(f->name) == len && strncmp(f->name, name, len) == 0) return f;
  return NULL;
}

#define NEAREST_MAX 64 /* longer words are nobody's typo of a name */

/* Optimal string alignment distance of a[0..la) and b[0..lb) (both at
 * most NEAREST_MAX): insertions, deletions, substitutions, adjacent swaps. */
static size_t distance(const char *a, size_t la, const char *b, size_t lb) {
  size_t d[NEAREST_MAX + 1][NEAREST_MAX + 1];
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

static const char *nearest(const char *word, size_t len, const char *const *names, size_t n) {
  const char *best = NULL;
  size_t best_d = 0;
  if (len == 0 || len > NEAREST_MAX) return NULL;
  for (size_t i = 0; i < n; i++) {
    size_t ln = strlen(names[i]);
    if (ln > NEAREST_MAX) continue;
    size_t d = distance(word, len, names[i], ln), limit = ln <= 3 ? 1 : 2;
    if (d <= limit && (!best || d < best_d)) best = names[i], best_d = d;
  }
  return best;
}

const char *sq_cli_nearest(const char *word, const char *const *names, size_t n) {
  return nearest(word, strlen(word), names, n);
}

/* "unrecognized option '--qeue' (did you mean --queue?)" */
static void unknown_option(const sq_cli_flag *flags, const char *name, size_t len, char *err, size_t errlen) {
  const char *names[128];
  size_t n = 0;
  for (const sq_cli_flag *f = flags; f && f->name && n < 126; f++) names[n++] = f->name;
  names[n++] = "help";
  names[n++] = "version";
  const char *near = nearest(name, len, names, n);
  int shown = (int)(len > 64 ? 64 : len);
  if (near)
    snprintf(err, errlen, "unrecognized option '--%.*s' (did you mean --%s?)", shown, name, near);
  else
    snprintf(err, errlen, "unrecognized option '--%.*s' (--help lists the options)", shown, name);
}

int sq_cli_parse(const sq_cli_flag *flags, int argc, char **argv, int first, int skip, sq_cli *out, char *err,
                 size_t errlen) {
  memset(out, 0, sizeof *out);
  size_t room = argc > first ? (size_t)(argc - first) : 0;
  out->opts = calloc(room + 1, sizeof *out->opts);
  out->operands = calloc(room + 1, sizeof *out->operands);
  if (!out->opts || !out->operands) {
    sq_cli_clear(out);
    snprintf(err, errlen, "out of memory");
    return SQ_ENOMEM;
  }
  bool options_end = false;
  int rc = 0;
  for (int i = first; i < argc && rc == 0; i++) {
    char *a = argv[i];
    if (i == skip) continue;
    if (options_end || a[0] != '-' || strcmp(a, "-") == 0) {
      out->operands[out->n_operands++] = a;
      continue;
    }
    if (strcmp(a, "--") == 0) {
      options_end = true;
      continue;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      out->help = true;
      continue;
    }
    if (strcmp(a, "--version") == 0) {
      out->version = true;
      continue;
    }
    if (a[1] != '-') {
      snprintf(err, errlen, "unknown option '%.64s' (options are --long; --help lists them)", a);
      rc = SQ_EINVAL;
      break;
    }
    const char *name = a + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const sq_cli_flag *f = find(flags, name, len);
    if (!f) {
      unknown_option(flags, name, len, err, errlen);
      rc = SQ_EINVAL;
      break;
    }
    const char *value = NULL;
    if (f->arg) {
      if (eq) value = eq + 1;
      else if (i + 1 < argc && i + 1 != skip) value = argv[++i];
      else {
        snprintf(err, errlen, "--%s needs a value (%s)", f->name, f->arg);
        rc = SQ_EINVAL;
        break;
      }
    } else if (eq) {
      snprintf(err, errlen, "--%s takes no value", f->name);
      rc = SQ_EINVAL;
      break;
    }
    out->opts[out->n_opts++] = (sq_cli_opt){.flag = f, .value = value};
  }
  if (rc) sq_cli_clear(out); /* an error leaves nothing to free */
  return rc;
}

int sq_cli_command(const sq_cli_flag *flags, int argc, char **argv, int first) {
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) return i + 1 < argc ? i + 1 : argc;
    if (a[0] != '-' || strcmp(a, "-") == 0) return i;
    if (a[1] != '-' || strchr(a, '=')) continue;
    const sq_cli_flag *f = find(flags, a + 2, strlen(a + 2));
    if (f && f->arg) i++; /* its value, whatever it looks like */
  }
  return argc;
}

void sq_cli_clear(sq_cli *c) {
  if (!c) return;
  free(c->opts);
  free(c->operands);
  c->opts = NULL;
  c->operands = NULL;
  c->n_opts = c->n_operands = 0;
}

const char *sq_cli_get(const sq_cli *c, const char *name) {
  const char *v = NULL;
  for (size_t i = 0; i < c->n_opts; i++)
    if (strcmp(c->opts[i].flag->name, name) == 0) v = c->opts[i].value ? c->opts[i].value : "";
  return v;
}

void sq_cli_print_flags(FILE *f, const sq_cli_flag *flags) {
  for (const sq_cli_flag *fl = flags; fl && fl->name; fl++) {
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", fl->name, fl->arg ? " " : "", fl->arg ? fl->arg : "");
    fprintf(f, "  %-24s %s\n", left, fl->help ? fl->help : "");
  }
  fprintf(f, "  %-24s %s\n  %-24s %s\n", "-h, --help", "this help (exit 0)", "--version", "the version (exit 0)");
}
