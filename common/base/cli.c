/* cli.c: the command-line grammar every sandq program shares (cli.h):
 * options anywhere, "--flag VALUE" or "--flag=VALUE", "--", "-". */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "errors.h"

static const sq_cli_flag *find(const sq_cli_flag *flags, const char *name, size_t len) {
  for (const sq_cli_flag *f = flags; f && f->name; f++)
    if (strlen(f->name) == len && strncmp(f->name, name, len) == 0) return f;
  return NULL;
}

int sq_cli_parse(const sq_cli_flag *flags, int argc, char **argv, int first, sq_cli *out, char *err,
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
  /* operands collect at the end of the array, pass_on options at its
   * start; they are joined (options first) before returning */
  size_t n_pass = 0, n_pos = 0;
  char **pos = calloc(room + 1, sizeof *pos);
  if (!pos) {
    sq_cli_clear(out);
    snprintf(err, errlen, "out of memory");
    return SQ_ENOMEM;
  }
  bool options_end = false;
  int rc = 0;
  for (int i = first; i < argc && rc == 0; i++) {
    char *a = argv[i];
    if (options_end || a[0] != '-' || strcmp(a, "-") == 0) {
      pos[n_pos++] = a;
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
      snprintf(err, errlen, "unrecognized option '--%.*s' (--help lists the options)", (int)(len > 64 ? 64 : len),
               name);
      rc = SQ_EINVAL;
      break;
    }
    const char *value = NULL;
    if (f->pass_on) out->operands[n_pass++] = a;
    if (f->arg) {
      if (eq) value = eq + 1;
      else if (i + 1 < argc) value = argv[++i];
      else {
        snprintf(err, errlen, "--%s needs a value (%s)", f->name, f->arg);
        rc = SQ_EINVAL;
        break;
      }
      if (f->pass_on && !eq) out->operands[n_pass++] = argv[i];
    } else if (eq) {
      snprintf(err, errlen, "--%s takes no value", f->name);
      rc = SQ_EINVAL;
      break;
    }
    out->opts[out->n_opts++] = (sq_cli_opt){.flag = f, .value = value};
  }
  memcpy(out->operands + n_pass, pos, n_pos * sizeof *pos);
  out->n_operands = n_pass + n_pos;
  free(pos);
  if (rc) sq_cli_clear(out); /* an error leaves nothing to free */
  return rc;
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
