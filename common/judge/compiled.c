/* compiled.c: judge.py and workspace.py compiled once. See compiled.h. */
#include "compiled.h"

#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "errors.h"

extern const char sq__judge_py[];     /* judge.py, by common/embed.cmake */
extern const char sq__workspace_py[]; /* workspace.py */

static const struct {
  const char *name; /* the code's file name in tracebacks */
  const char *source;
} sources[SQ_COMPILED_COUNT] = {
    [SQ_COMPILED_JUDGE] = {"<sandq-judge>", sq__judge_py},
    [SQ_COMPILED_WORKSPACE] = {"<sandq-workspace>", sq__workspace_py},
};

static char *compiled[SQ_COMPILED_COUNT]; /* base64 of the marshalled code, or NULL */
static unsigned char *raw[SQ_COMPILED_COUNT]; /* the same, decoded */
static size_t raw_len[SQ_COMPILED_COUNT];

static const char program[] =
    "import binascii, marshal, sys\n"
    "name, _, source = sys.stdin.buffer.read().partition(b'\\n')\n"
    "code = compile(source, name.decode(), 'exec', dont_inherit=True)\n"
    "sys.stdout.write(binascii.b2a_base64(marshal.dumps(code), newline=False).decode())\n";

const char *sq_compiled_program(void) { return program; }

char *sq_compiled_input(sq_compiled_id id) {
  sq_buf b = {0};
  if (sq_buf_appendf(&b, "%s\n%s", sources[id].name, sources[id].source) != 0) {
    sq_buf_clear(&b);
    return NULL;
  }
  return b.data;
}

int sq_compiled_set(sq_compiled_id id, const char *b64, size_t len) {
  if (!b64 || len == 0 || len % 4) return SQ_EINVAL;
  for (size_t i = 0; i < len; i++)
    if (!b64[i] || !strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", b64[i]))
      return SQ_EINVAL;
  char *copy = strndup(b64, len);
  unsigned char *bytes = malloc(len / 4 * 3 + 1);
  long n = bytes ? sq_base64_decode(b64, len, bytes) : -1;
  if (!copy || n <= 0) {
    free(copy);
    free(bytes);
    return bytes ? SQ_EINVAL : SQ_ENOMEM;
  }
  free(compiled[id]);
  free(raw[id]);
  compiled[id] = copy;
  raw[id] = bytes;
  raw_len[id] = (size_t)n;
  return 0;
}

const void *sq_compiled_code(sq_compiled_id id, size_t *len, bool *marshalled) {
  *marshalled = raw[id] != NULL;
  if (raw[id]) {
    *len = raw_len[id];
    return raw[id];
  }
  *len = strlen(sources[id].source);
  return sources[id].source;
}

int sq_compiled_append(sq_buf *b, sq_compiled_id id) {
  if (compiled[id])
    return sq_buf_appendf(b, "import binascii, marshal\nexec(marshal.loads(binascii.a2b_base64(b'%s')))\n",
                          compiled[id]);
  return sq_buf_append(b, sources[id].source, strlen(sources[id].source));
}

void sq_compiled_clear(void) {
  for (int i = 0; i < SQ_COMPILED_COUNT; i++) {
    free(compiled[i]);
    free(raw[i]);
    compiled[i] = NULL;
    raw[i] = NULL;
  }
}
