/* base64.c: RFC 4648 base64, see base64.h. */
#include "base64.h"

static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sq_base64_append(sq_buf *b, const void *data, size_t len) {
  const unsigned char *p = data;
  char quad[4];
  for (size_t i = 0; i < len; i += 3) {
    unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < len ? p[i + 2] : 0);
    quad[0] = abc[v >> 18 & 63];
    quad[1] = abc[v >> 12 & 63];
    quad[2] = i + 1 < len ? abc[v >> 6 & 63] : '=';
    quad[3] = i + 2 < len ? abc[v & 63] : '=';
    int rc = sq_buf_append(b, quad, 4);
    if (rc) return rc;
  }
  return 0;
}

/* The 6-bit value of c, or -1. */
static int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

long sq_base64_decode(const char *s, size_t n, unsigned char *out) {
  if (n % 4) return -1;
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4) {
    int pad = (s[i + 3] == '=') + (s[i + 2] == '=');
    if (pad && i + 4 != n) return -1; /* padding only at the very end */
    if (pad == 1 && s[i + 2] == '=') return -1;
    int v[4];
    for (int k = 0; k < 4 - pad; k++)
      if ((v[k] = sextet(s[i + k])) < 0) return -1;
    for (int k = 4 - pad; k < 4; k++) v[k] = 0;
    unsigned w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
    out[o++] = (unsigned char)(w >> 16);
    if (pad < 2) out[o++] = (unsigned char)(w >> 8);
    if (pad < 1) out[o++] = (unsigned char)w;
  }
  return (long)o;
}
