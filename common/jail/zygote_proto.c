/* zygote_proto.c: the warm zygote's messages encoded and decoded, and the
 * descriptor passing they travel with (zygote_proto.h is the reference).
 * Compiled into the jail library and into the zygote loop's module alike:
 * libc only, no stdio. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "zygote_proto.h"

#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* v in decimal at out (room for 21 bytes); its length. */
static size_t put_dec(char *out, int64_t v) {
  char d[24];
  size_t k = 0, at = 0;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do d[k++] = (char)('0' + u % 10);
  while ((u /= 10) > 0);
  if (v < 0) out[at++] = '-';
  while (k) out[at++] = d[--k];
  return at;
}

/* A message being written into out (cap bytes): full once a part did not fit. */
typedef struct {
  char *out;
  size_t cap, at;
  bool full;
} put;

static void put_str(put *p, const char *s, size_t n) {
  if (p->full || n > p->cap - p->at) {
    p->full = true;
    return;
  }
  memcpy(p->out + p->at, s, n);
  p->at += n;
}

static void put_num(put *p, char sep, int64_t v) {
  char d[24];
  size_t n = 0;
  if (sep) d[n++] = sep;
  n += put_dec(d + n, v);
  put_str(p, d, n);
}

static size_t put_end(const put *p) { return p->full ? 0 : p->at; }

size_t sq__zygote_encode_short(sq__zygote_kind kind, char *out, size_t cap) {
  const char *s;
  switch (kind) {
  case SQ__ZYGOTE_READY: s = "ready"; break;
  case SQ__ZYGOTE_EXITED: s = "x"; break;
  case SQ__ZYGOTE_DROP: s = "d"; break;
  case SQ__ZYGOTE_SCRATCH: s = "w"; break;
  case SQ__ZYGOTE_SCRATCH_OK: s = "k"; break;
  case SQ__ZYGOTE_SCRATCH_FAILED: s = "e"; break;
  case SQ__ZYGOTE_FILTER: s = "f"; break;
  default: return 0;
  }
  put p = {.out = out, .cap = cap};
  put_str(&p, s, strlen(s));
  return put_end(&p);
}

size_t sq__zygote_encode_next(char *out, size_t cap, int64_t said_ms) {
  put p = {.out = out, .cap = cap};
  put_str(&p, "n", 1);
  if (said_ms >= 0) put_num(&p, ' ', said_ms);
  return put_end(&p);
}

size_t sq__zygote_encode_task_head(char *out, size_t cap, int64_t cpu_s, int64_t as_bytes, bool memfd, bool input,
                                   size_t standby_len) {
  if (standby_len > SQ__ZYGOTE_STANDBY_MAX) return 0;
  put p = {.out = out, .cap = cap};
  put_str(&p, "t", 1);
  put_num(&p, ' ', cpu_s);
  put_num(&p, ' ', as_bytes);
  put_str(&p, " oe", 3);
  if (memfd) put_str(&p, "p", 1);
  if (input) put_str(&p, "i", 1);
  if (standby_len) put_num(&p, ' ', (int64_t)standby_len);
  put_str(&p, "\n", 1);
  return put_end(&p);
}

size_t sq__zygote_encode_error(char *out, size_t cap, const char *what, const char *why) {
  if (cap < 2) return 0;
  size_t at = 0;
  const char *parts[] = {"e ", what ? what : "", why ? ": " : "", why ? why : ""};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    size_t n = strlen(parts[i]);
    if (n > cap - at) n = cap - at; /* truncated to fit */
    memcpy(out + at, parts[i], n);
    at += n;
  }
  return at;
}

size_t sq__zygote_encode_reaped(char *out, size_t cap, int status, int64_t utime_us, int64_t stime_us,
                                int64_t maxrss_kib, int64_t reaped_ms) {
  put p = {.out = out, .cap = cap};
  put_str(&p, "r", 1);
  put_num(&p, ' ', status);
  put_num(&p, ' ', utime_us);
  put_num(&p, ' ', stime_us);
  put_num(&p, ' ', maxrss_kib);
  put_num(&p, ' ', reaped_ms);
  return put_end(&p);
}

size_t sq__zygote_encode_limit(char *out, size_t cap, bool header, const sq__zygote_rlimit *rl) {
  put p = {.out = out, .cap = cap};
  if (header) {
    put_str(&p, "l ", 2);
    return put_end(&p);
  }
  if (!rl) return 0;
  put_num(&p, 0, rl->res);
  put_num(&p, ':', rl->soft < 0 ? -1 : rl->soft);
  put_num(&p, ':', rl->hard < 0 ? -1 : rl->hard);
  put_str(&p, ",", 1);
  return put_end(&p);
}

/* A decimal (optionally negative) at *p, before end, followed by term (or
 * end itself when term is 0); *p moves past term. Strict: no spaces, no
 * plus sign, no leading zeros but "0" itself, no overflow. */
static bool get_dec(const char **p, const char *end, char term, int64_t *v) {
  const char *s = *p;
  bool neg = s < end && *s == '-';
  if (neg) s++;
  if (s >= end || *s < '0' || *s > '9' || (*s == '0' && s + 1 < end && s[1] >= '0' && s[1] <= '9')) return false;
  uint64_t u = 0;
  for (; s < end && *s >= '0' && *s <= '9'; s++) {
    if (u > ((uint64_t)INT64_MAX - (uint64_t)(*s - '0')) / 10) return false;
    u = u * 10 + (uint64_t)(*s - '0');
  }
  if (term ? s >= end || *s != term : s != end) return false;
  *v = neg ? -(int64_t)u : (int64_t)u;
  *p = term ? s + 1 : s;
  return true;
}

bool sq__zygote_limit_at(const sq__zygote_msg *m, int i, sq__zygote_rlimit *rl) {
  if (m->kind != SQ__ZYGOTE_LIMITS) return false;
  const char *p = m->u.limits.text, *end = p + m->u.limits.len;
  for (int k = 0; p < end; k++) {
    int64_t v[3];
    if (!get_dec(&p, end, ':', &v[0]) || !get_dec(&p, end, ':', &v[1]) || !get_dec(&p, end, ',', &v[2])) return false;
    if (k == i) {
      *rl = (sq__zygote_rlimit){.res = (int)v[0], .soft = v[1] < 0 ? -1 : v[1], .hard = v[2] < 0 ? -1 : v[2]};
      return true;
    }
  }
  return false;
}

static bool is(const char *msg, size_t len, const char *text) {
  return len == strlen(text) && memcmp(msg, text, len) == 0;
}

static sq__zygote_kind decode_limits(const char *msg, size_t len, sq__zygote_msg *out) {
  if (len < 2 || msg[1] != ' ') return SQ__ZYGOTE_BAD;
  out->u.limits.text = msg + 2;
  out->u.limits.len = len - 2;
  const char *p = msg + 2, *end = msg + len;
  for (int k = 0; p < end; k++) { /* checked whole here: the loop dies on a bad one before it sets any */
    int64_t v[3];
    if (k >= 64 || !get_dec(&p, end, ':', &v[0]) || !get_dec(&p, end, ':', &v[1]) || !get_dec(&p, end, ',', &v[2]) ||
        v[0] < 0 || v[0] > INT_MAX || v[1] < -1 || v[2] < -1)
      return SQ__ZYGOTE_BAD;
  }
  return SQ__ZYGOTE_LIMITS;
}

static sq__zygote_kind decode_task(const char *msg, size_t len, int nfds, sq__zygote_msg *out) {
  const char *nl = memchr(msg, '\n', len), *p = msg + 1;
  if (!nl || len < 2 || msg[1] != ' ') return SQ__ZYGOTE_BAD;
  p++;
  int64_t cpu_s, as_bytes;
  if (!get_dec(&p, nl, ' ', &cpu_s) || !get_dec(&p, nl, ' ', &as_bytes) || cpu_s < 1 || as_bytes < 1)
    return SQ__ZYGOTE_BAD;
  bool memfd, input;
  const char *sp = memchr(p, ' ', (size_t)(nl - p));
  size_t fl = (size_t)((sp ? sp : nl) - p);
  int64_t sb_len = 0;
  if (sp) {
    const char *q = sp + 1;
    if (!get_dec(&q, nl, 0, &sb_len) || q != nl || sb_len < 1 || sb_len > SQ__ZYGOTE_STANDBY_MAX)
      return SQ__ZYGOTE_BAD;
  }
  if (is(p, fl, "oe")) memfd = false, input = false;
  else if (is(p, fl, "oep")) memfd = true, input = false;
  else if (is(p, fl, "oei")) memfd = false, input = true;
  else if (is(p, fl, "oepi")) memfd = true, input = true;
  else return SQ__ZYGOTE_BAD;
  if ((size_t)(msg + len - (nl + 1)) < (size_t)sb_len) return SQ__ZYGOTE_BAD;
  const char *prog = nl + 1 + sb_len;
  size_t prog_len = (size_t)(msg + len - prog);
  if (nfds != 2 + memfd + input || (memfd && prog_len) || (!memfd && prog_len > SQ__ZYGOTE_INLINE_MAX))
    return SQ__ZYGOTE_BAD;
  out->u.task.cpu_s = cpu_s;
  out->u.task.as_bytes = as_bytes;
  out->u.task.memfd = memfd;
  out->u.task.input = input;
  out->u.task.program = prog;
  out->u.task.program_len = prog_len;
  out->u.task.standby = nl + 1;
  out->u.task.standby_len = (size_t)sb_len;
  return SQ__ZYGOTE_TASK;
}

static sq__zygote_kind decode_reaped(const char *msg, size_t len, sq__zygote_msg *out) {
  if (len < 2 || msg[1] != ' ') return SQ__ZYGOTE_BAD;
  const char *p = msg + 2, *end = msg + len;
  int64_t v[5];
  for (int i = 0; i < 5; i++)
    if (!get_dec(&p, end, i < 4 ? ' ' : 0, &v[i]) || v[i] < 0) return SQ__ZYGOTE_BAD;
  if (v[0] > INT_MAX) return SQ__ZYGOTE_BAD;
  out->u.reaped.status = (int)v[0];
  out->u.reaped.utime_us = v[1];
  out->u.reaped.stime_us = v[2];
  out->u.reaped.maxrss_kib = v[3];
  out->u.reaped.reaped_ms = v[4];
  return SQ__ZYGOTE_REAPED;
}

static sq__zygote_kind decode(sq__zygote_at at, const char *msg, size_t len, int nfds, sq__zygote_msg *out) {
  if (len < 1) return SQ__ZYGOTE_BAD;
  int64_t ms = 0;
  const char *p = msg + 2;
  switch (at) {
  case SQ__ZYGOTE_AT_SUPERVISOR:
    if (is(msg, len, "ready")) return nfds == 1 ? SQ__ZYGOTE_READY : SQ__ZYGOTE_BAD;
    if (msg[0] == 'n') { /* a spawn payload's bare "n" brings its listener; a warm child's none */
      if (len == 1) return nfds <= 1 ? (out->u.next.said_ms = 0, SQ__ZYGOTE_NEXT) : SQ__ZYGOTE_BAD;
      if (nfds != 0 || msg[1] != ' ' || !get_dec(&p, msg + len, 0, &ms) || ms < 0) return SQ__ZYGOTE_BAD;
      out->u.next.said_ms = ms;
      return SQ__ZYGOTE_NEXT;
    }
    if (nfds != 0) return SQ__ZYGOTE_BAD;
    if (is(msg, len, "x")) return SQ__ZYGOTE_EXITED;
    if (msg[0] == 'e' && (len == 1 || msg[1] == ' ')) {
      out->u.error.text = len > 2 ? msg + 2 : msg + len;
      out->u.error.len = len > 2 ? len - 2 : 0;
      return SQ__ZYGOTE_ERROR;
    }
    if (msg[0] == 'r') return decode_reaped(msg, len, out);
    return SQ__ZYGOTE_BAD;
  case SQ__ZYGOTE_AT_ZYGOTE:
    if (msg[0] == 't') return decode_task(msg, len, nfds, out);
    if (nfds != 0) return SQ__ZYGOTE_BAD;
    if (is(msg, len, "d")) return SQ__ZYGOTE_DROP;
    if (msg[0] == 'l') return decode_limits(msg, len, out);
    if (msg[0] == 'f') {
      size_t body = len - 1, one = sizeof(struct sock_filter);
      if (body < one || body % one || body / one > SQ__ZYGOTE_MAX_FILTER) return SQ__ZYGOTE_BAD;
      out->u.filter.insns = msg + 1;
      out->u.filter.n = body / one;
      return SQ__ZYGOTE_FILTER;
    }
    return SQ__ZYGOTE_BAD;
  case SQ__ZYGOTE_AT_INIT:
    return nfds == 0 && is(msg, len, "w") ? SQ__ZYGOTE_SCRATCH : SQ__ZYGOTE_BAD;
  case SQ__ZYGOTE_AT_ZYGOTE_INIT:
    if (nfds != 0) return SQ__ZYGOTE_BAD;
    if (is(msg, len, "k")) return SQ__ZYGOTE_SCRATCH_OK;
    if (is(msg, len, "e")) return SQ__ZYGOTE_SCRATCH_FAILED;
    return SQ__ZYGOTE_BAD;
  }
  return SQ__ZYGOTE_BAD;
}

sq__zygote_kind sq__zygote_decode(sq__zygote_at at, const char *msg, size_t len, int nfds, sq__zygote_msg *out) {
  memset(out, 0, sizeof *out);
  out->kind = msg ? decode(at, msg, len, nfds, out) : SQ__ZYGOTE_BAD;
  return out->kind;
}

int sq__jail_send_fdsv(int sock, const struct iovec *iov, int niov, const int *fds, int nfds) {
  union {
    char buf[CMSG_SPACE(SQ__JAIL_MAX_SEND_FDS * sizeof(int))];
    struct cmsghdr align;
  } u;
  if (nfds < 0 || nfds > SQ__JAIL_MAX_SEND_FDS || niov < 1) {
    errno = EINVAL;
    return -1;
  }
  size_t len = 0;
  for (int i = 0; i < niov; i++) len += iov[i].iov_len;
  memset(&u, 0, sizeof u);
  struct msghdr msg = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)niov};
  if (nfds > 0) {
    msg.msg_control = u.buf;
    msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
  }
  ssize_t n;
  do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0) return -1;
  if ((size_t)n != len) {
    errno = EMSGSIZE;
    return -1;
  }
  return 0;
}

int sq__jail_send_fds(int sock, const void *data, size_t len, const int *fds, int nfds) {
  struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
  return sq__jail_send_fdsv(sock, &iov, 1, fds, nfds);
}

ssize_t sq__jail_recv_fds(int sock, void *buf, size_t cap, int flags, int *fds, int max_fds, int *nfds,
                          pid_t *sender) {
  struct iovec iov = {.iov_base = buf, .iov_len = cap};
  union {
    char b[CMSG_SPACE(SQ__JAIL_MAX_SEND_FDS * sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
  *nfds = 0;
  if (sender) *sender = 0;
  ssize_t n;
  do n = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return -1;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level != SOL_SOCKET) continue;
    if (cm->cmsg_type == SCM_CREDENTIALS && sender && cm->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
      struct ucred cr;
      memcpy(&cr, CMSG_DATA(cm), sizeof cr);
      *sender = cr.pid;
    } else if (cm->cmsg_type == SCM_RIGHTS) {
      int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < k; i++) {
        int fd;
        memcpy(&fd, CMSG_DATA(cm) + (size_t)i * sizeof(int), sizeof fd);
        if (*nfds < max_fds && !(msg.msg_flags & MSG_CTRUNC)) fds[(*nfds)++] = fd;
        else close(fd);
      }
    }
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    for (int i = 0; i < *nfds; i++) close(fds[i]);
    *nfds = 0;
    errno = EMSGSIZE;
    return -1;
  }
  return n;
}
