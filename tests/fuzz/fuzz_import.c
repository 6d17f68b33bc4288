/* fuzz_import.c: libFuzzer target for `import` (producer/import_*.c)
 * over any dataset bytes, plain or gzip: the first byte picks the dataset
 * (humaneval, mbpp, apps, humaneval+, mbpp+, multipl-e) and the mode
 * (--canonical, --samples 2, multipl-e's --completions), the rest is the
 * file. No crash, leak or undefined behaviour; and what it writes,
 * push takes: every task line parses with sq_task_parse. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "eval.h"
#include "producer.h"
#include "task.h"

static char in_path[64], out_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  if (!in_path[0]) {
    snprintf(in_path, sizeof in_path, "/tmp/fuzz-import-in.%d", (int)getpid());
    snprintf(out_path, sizeof out_path, "/tmp/fuzz-import-out.%d", (int)getpid());
  }
  FILE *f = fopen(in_path, "wb");
  if (!f || fwrite(data + 1, 1, size - 1, f) != size - 1 || fclose(f) != 0) abort();
  char ds[16], n[4] = "2", path[64];
  /* bits 2-4: 0 humaneval (mbpp with bit 0), 1 apps, 2 humaneval+, 3 mbpp+,
   * 4 multipl-e (its records and, with bit 1, its completions: the same file) */
  static const char *const kinds[] = {"humaneval", "apps", "humaneval+", "mbpp+", "multipl-e"};
  int kind = (data[0] >> 2) & 7;
  if (kind > 4) kind = 0;
  snprintf(ds, sizeof ds, "%s", kind == 0 && (data[0] & 1) ? "mbpp" : kinds[kind]);
  snprintf(path, sizeof path, "%s", in_path);
  static const sq_cli_flag flags[] = {
      {"canonical", NULL, NULL, ""}, {"samples", "N", NULL, ""}, {"completions", "FILE", NULL, ""}};
  sq_cli_opt opt = {.flag = &flags[data[0] & 2 ? 1 : 0], .value = data[0] & 2 ? n : NULL};
  if (kind == 4 && (data[0] & 2)) opt = (sq_cli_opt){.flag = &flags[2], .value = in_path};
  char *operands[] = {ds, path};
  sq_cli cli = {.opts = &opt, .n_opts = 1, .operands = operands, .n_operands = 2};
  sq_config cfg;
  sq_config_defaults(&cfg);
  fflush(stdout);
  if (!freopen(out_path, "w", stdout)) abort();
  int code = sq__import_run(&cfg, &cli);
  fflush(stdout);
  char *text = NULL;
  size_t len = 0;
  f = fopen(out_path, "rb");
  if (!f) abort();
  fseek(f, 0, SEEK_END);
  len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  text = malloc(len + 1);
  if (!text || fread(text, 1, len, f) != len) abort();
  fclose(f);
  text[len] = 0;
  if (code != SQ_EXIT_OK && len) abort(); /* all the tasks or none */
  for (char *p = text, *nl; p < text + len; p = nl + 1) {
    nl = memchr(p, '\n', (size_t)(text + len - p));
    if (!nl) abort(); /* every task line ends */
    sq_task *t = NULL;
    char err[256];
    if (sq_task_parse(p, (size_t)(nl - p), 256 * 1024, &t, err, sizeof err) != 0) abort();
    sq_task_free(t);
  }
  free(text);
  return 0;
}
