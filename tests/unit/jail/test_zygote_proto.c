/* test_zygote_proto.c: the warm zygote's protocol (zygote_proto.h): every
 * message encoded and decoded back to the same fields, each one malformed
 * in the ways a broken or hostile end could send it refused (BAD), and the
 * descriptor passing the messages travel with. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "zygote_proto.h"

static sq__zygote_kind dec(sq__zygote_at at, const char *msg, size_t len, int nfds, sq__zygote_msg *m) {
  return sq__zygote_decode(at, msg, len, nfds, m);
}

/* msg (a C string) decoded at at with nfds descriptors must be BAD. */
static void bad(sq__zygote_at at, const char *msg, int nfds) {
  sq__zygote_msg m;
  sq__zygote_kind k = dec(at, msg, strlen(msg), nfds, &m);
  if (k != SQ__ZYGOTE_BAD) fprintf(stderr, "accepted: \"%s\" with %d fds at %d\n", msg, nfds, (int)at);
  CHECK_EQ(k, SQ__ZYGOTE_BAD);
  CHECK_EQ(m.kind, SQ__ZYGOTE_BAD);
}

static void test_short(void) {
  static const struct {
    sq__zygote_kind kind;
    sq__zygote_at at;
    int nfds;
  } c[] = {{SQ__ZYGOTE_READY, SQ__ZYGOTE_AT_SUPERVISOR, 1},     {SQ__ZYGOTE_EXITED, SQ__ZYGOTE_AT_SUPERVISOR, 0},
           {SQ__ZYGOTE_SCRATCH, SQ__ZYGOTE_AT_INIT, 0},         {SQ__ZYGOTE_SCRATCH_OK, SQ__ZYGOTE_AT_ZYGOTE_INIT, 0},
           {SQ__ZYGOTE_SCRATCH_FAILED, SQ__ZYGOTE_AT_ZYGOTE_INIT, 0}};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    char b[SQ__ZYGOTE_SHORT_MAX];
    size_t n = sq__zygote_encode_short(c[i].kind, b, sizeof b);
    CHECK(n > 0);
    sq__zygote_msg m;
    CHECK_EQ(dec(c[i].at, b, n, c[i].nfds, &m), c[i].kind);
    CHECK_EQ(dec(c[i].at, b, n, c[i].nfds + 1, &m), SQ__ZYGOTE_BAD); /* a descriptor too many */
    CHECK_EQ(sq__zygote_encode_short(c[i].kind, b, 0), 0);             /* does not fit */
  }
  char b[SQ__ZYGOTE_SHORT_MAX];
  CHECK_EQ(sq__zygote_encode_short(SQ__ZYGOTE_REAPED, b, sizeof b), 0); /* not a fixed text */
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "ready", 0); /* READY without its listener */
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "readyy", 1);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "xx", 0);
  bad(SQ__ZYGOTE_AT_INIT, "k", 0);   /* the init's answer is not a request */
  bad(SQ__ZYGOTE_AT_INIT, "ww", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE_INIT, "w", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE_INIT, "", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "x", 0); /* the zygote's own messages are not for it */
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "t 1 1 oe\n", 2);
  sq__zygote_msg m;
  CHECK_EQ(sq__zygote_decode(SQ__ZYGOTE_AT_SUPERVISOR, NULL, 0, 0, &m), SQ__ZYGOTE_BAD);
}

static void test_next(void) {
  char b[SQ__ZYGOTE_NEXT_MAX];
  sq__zygote_msg m;
  int64_t cases[] = {0, 7, 1234567890123LL, INT64_MAX};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t n = sq__zygote_encode_next(b, sizeof b, cases[i]);
    CHECK(n > 2);
    CHECK_EQ(dec(SQ__ZYGOTE_AT_SUPERVISOR, b, n, 0, &m), SQ__ZYGOTE_NEXT);
    CHECK_EQ(m.u.next.said_ms, cases[i]);
  }
  size_t n = sq__zygote_encode_next(b, sizeof b, -1); /* a spawn payload's, with its listener */
  CHECK_EQ(n, 1);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_SUPERVISOR, b, n, 1, &m), SQ__ZYGOTE_NEXT);
  CHECK_EQ(m.u.next.said_ms, 0);
  CHECK_EQ(sq__zygote_encode_next(b, 3, 12345), 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n ", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n -5", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n 12x", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n  12", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n 12 ", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n +12", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n 012", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n12", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n 99999999999999999999", 0); /* past int64 */
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n 12", 1);                   /* a warm child passes nothing */
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "n", 2);
}

static void test_task(void) {
  char b[SQ__ZYGOTE_TASK_HEAD_MAX + 32];
  sq__zygote_msg m;
  size_t n = sq__zygote_encode_task_head(b, sizeof b, 3, 268435456, false, false, 0);
  CHECK(n > 0);
  memcpy(b + n, "print(1)\n", 9);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + 9, 2, &m), SQ__ZYGOTE_TASK);
  CHECK_EQ(m.u.task.cpu_s, 3);
  CHECK_EQ(m.u.task.as_bytes, 268435456);
  CHECK(!m.u.task.memfd);
  CHECK_EQ(m.u.task.program_len, 9);
  CHECK(m.u.task.program == b + n);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n, 2, &m), SQ__ZYGOTE_TASK); /* an empty program */
  CHECK_EQ(m.u.task.program_len, 0);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + 9, 3, &m), SQ__ZYGOTE_BAD); /* "oe" names two descriptors */
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + 9, 1, &m), SQ__ZYGOTE_BAD);
  n = sq__zygote_encode_task_head(b, sizeof b, 1, 1, true, false, 0);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n, 3, &m), SQ__ZYGOTE_TASK);
  CHECK(m.u.task.memfd);
  CHECK_EQ(m.u.task.cpu_s, 1);
  CHECK_EQ(m.u.task.as_bytes, 1);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n, 2, &m), SQ__ZYGOTE_BAD);
  b[n] = 'x'; /* a program inline as well as in the memfd */
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + 1, 3, &m), SQ__ZYGOTE_BAD);
  /* the task's stdin last, after the program's memfd when there is one */
  n = sq__zygote_encode_task_head(b, sizeof b, 1, 1, true, true, 0);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n, 4, &m), SQ__ZYGOTE_TASK);
  CHECK(m.u.task.memfd && m.u.task.input);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n, 3, &m), SQ__ZYGOTE_BAD);
  n = sq__zygote_encode_task_head(b, sizeof b, 1, 1, false, true, 0);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n, 3, &m), SQ__ZYGOTE_TASK);
  CHECK(!m.u.task.memfd && m.u.task.input);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 oeip\n", 4);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 oeii\n", 4);
  CHECK_EQ(sq__zygote_encode_task_head(b, 8, 3, 268435456, false, false, 0), 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 oe", 2); /* no newline */
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 0 1 oe\n", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 0 oe\n", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t -1 1 oe\n", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 oe\n", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 eo\n", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 oepp\n", 4);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 \n", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t1 1 oe\n", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t", 2);
  /* An inline program past SQ__ZYGOTE_INLINE_MAX (it goes in a memfd). */
  static char big[SQ__ZYGOTE_TASK_HEAD_MAX + SQ__ZYGOTE_INLINE_MAX + 2];
  n = sq__zygote_encode_task_head(big, sizeof big, 1, 1, false, false, 0);
  memset(big + n, 'x', SQ__ZYGOTE_INLINE_MAX + 1);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, big, n + SQ__ZYGOTE_INLINE_MAX + 1, 2, &m), SQ__ZYGOTE_BAD);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, big, n + SQ__ZYGOTE_INLINE_MAX, 2, &m), SQ__ZYGOTE_TASK);
  /* The standby request rides between the header and the program. */
  n = sq__zygote_encode_task_head(b, sizeof b, 2, 4096, false, false, 5);
  memcpy(b + n, "node\nprint(1)\n", 14);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + 14, 2, &m), SQ__ZYGOTE_TASK);
  CHECK_EQ(m.u.task.standby_len, 5);
  CHECK(memcmp(m.u.task.standby, "node\n", 5) == 0);
  CHECK_EQ(m.u.task.program_len, 9);
  CHECK(memcmp(m.u.task.program, "print(1)\n", 9) == 0);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + 4, 2, &m), SQ__ZYGOTE_BAD); /* the request cut short */
  n = sq__zygote_encode_task_head(b, sizeof b, 1, 1, true, true, 3); /* memfd: nothing after the request */
  memcpy(b + n, "abc", 3);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + 3, 4, &m), SQ__ZYGOTE_TASK);
  CHECK(m.u.task.memfd && m.u.task.input && m.u.task.standby_len == 3 && m.u.task.program_len == 0);
  b[n + 3] = 'x';
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + 4, 4, &m), SQ__ZYGOTE_BAD);
  CHECK_EQ(sq__zygote_encode_task_head(b, sizeof b, 1, 1, false, false, SQ__ZYGOTE_STANDBY_MAX + 1), 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 oe 0\n", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 oe 2049\nxx", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 oe -1\n", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 oe 1 \nx", 2);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "t 1 1 oe  1\nx", 2);
  /* Without a request the task has none. */
  n = sq__zygote_encode_task_head(b, sizeof b, 1, 1, false, false, 0);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n, 2, &m), SQ__ZYGOTE_TASK);
  CHECK_EQ(m.u.task.standby_len, 0);
  /* DROP: only to the child, only bare. */
  n = sq__zygote_encode_short(SQ__ZYGOTE_DROP, b, sizeof b);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n, 0, &m), SQ__ZYGOTE_DROP);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n, 1, &m), SQ__ZYGOTE_BAD);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_SUPERVISOR, b, n, 0, &m), SQ__ZYGOTE_BAD);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "dd", 0);
}

static void test_error(void) {
  char b[64];
  sq__zygote_msg m;
  size_t n = sq__zygote_encode_error(b, sizeof b, "dup2", "Bad file descriptor");
  CHECK_EQ(dec(SQ__ZYGOTE_AT_SUPERVISOR, b, n, 0, &m), SQ__ZYGOTE_ERROR);
  CHECK_EQ(m.u.error.len, strlen("dup2: Bad file descriptor"));
  CHECK(memcmp(m.u.error.text, "dup2: Bad file descriptor", m.u.error.len) == 0);
  n = sq__zygote_encode_error(b, 10, "a long step name", "why");
  CHECK_EQ(n, 10); /* truncated to fit, still an ERROR */
  CHECK_EQ(dec(SQ__ZYGOTE_AT_SUPERVISOR, b, n, 0, &m), SQ__ZYGOTE_ERROR);
  CHECK_EQ(m.u.error.len, 8);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_SUPERVISOR, "e", 1, 0, &m), SQ__ZYGOTE_ERROR);
  CHECK_EQ(m.u.error.len, 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "eh", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "e x", 1);
}

static void test_reaped(void) {
  char b[SQ__ZYGOTE_REAPED_MAX];
  sq__zygote_msg m;
  size_t n = sq__zygote_encode_reaped(b, sizeof b, 256, 1500000, 20, 12345, 987654321012LL);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_SUPERVISOR, b, n, 0, &m), SQ__ZYGOTE_REAPED);
  CHECK_EQ(m.u.reaped.status, 256);
  CHECK_EQ(m.u.reaped.utime_us, 1500000);
  CHECK_EQ(m.u.reaped.stime_us, 20);
  CHECK_EQ(m.u.reaped.maxrss_kib, 12345);
  CHECK_EQ(m.u.reaped.reaped_ms, 987654321012LL);
  n = sq__zygote_encode_reaped(b, sizeof b, 0, 0, 0, 0, 0);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_SUPERVISOR, b, n, 0, &m), SQ__ZYGOTE_REAPED);
  CHECK_EQ(sq__zygote_encode_reaped(b, 12, 256, 1500000, 20, 12345, 1), 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "r 0 1 2 3", 0);     /* a field short */
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "r 0 1 2 3 4 5", 0); /* one too many */
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "r 0 1 2 3 4x", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "r 0 -1 2 3 4", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "r 4294967296 1 2 3 4", 0); /* not a wait status */
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "r", 0);
  bad(SQ__ZYGOTE_AT_SUPERVISOR, "r 0 1 2 3 4", 1);
}

static void test_limits(void) {
  char b[4 * SQ__ZYGOTE_LIMIT_MAX];
  sq__zygote_rlimit in[] = {{.res = 0, .soft = -1, .hard = -1}, {.res = 7, .soft = 64, .hard = 1024},
                            {.res = 1, .soft = 16777216, .hard = INT64_MAX}};
  size_t at = sq__zygote_encode_limit(b, sizeof b, true, NULL);
  for (size_t i = 0; i < 3; i++) at += sq__zygote_encode_limit(b + at, sizeof b - at, false, &in[i]);
  sq__zygote_msg m;
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, at, 0, &m), SQ__ZYGOTE_LIMITS);
  sq__zygote_rlimit out;
  for (int i = 0; i < 3; i++) {
    CHECK(sq__zygote_limit_at(&m, i, &out));
    CHECK_EQ(out.res, in[i].res);
    CHECK_EQ(out.soft, in[i].soft);
    CHECK_EQ(out.hard, in[i].hard);
  }
  CHECK(!sq__zygote_limit_at(&m, 3, &out));
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, "l ", 2, 0, &m), SQ__ZYGOTE_LIMITS); /* none: nothing to set */
  CHECK(!sq__zygote_limit_at(&m, 0, &out));
  CHECK_EQ(sq__zygote_encode_limit(b, 5, false, &in[2]), 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "l 1:2:3", 0); /* each ends with a comma */
  bad(SQ__ZYGOTE_AT_ZYGOTE, "l 1:2,", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "l 1:2:3,,", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "l -1:2:3,", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "l 1:-2:3,", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "l 1:2:x,", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "l", 0);
  bad(SQ__ZYGOTE_AT_ZYGOTE, "l 1:2:3,", 1);
}

static void test_filter(void) {
  struct sock_filter prog[2] = {{0x20, 0, 0, 4}, {0x06, 0, 0, 0x7fff0000}};
  char b[1 + sizeof prog];
  size_t n = sq__zygote_encode_short(SQ__ZYGOTE_FILTER, b, sizeof b);
  CHECK_EQ(n, 1);
  memcpy(b + n, prog, sizeof prog);
  sq__zygote_msg m;
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + sizeof prog, 0, &m), SQ__ZYGOTE_FILTER);
  CHECK_EQ(m.u.filter.n, 2);
  CHECK(memcmp(m.u.filter.insns, prog, sizeof prog) == 0);
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, n + sizeof prog - 1, 0, &m), SQ__ZYGOTE_BAD); /* not whole instructions */
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, b, 1, 0, &m), SQ__ZYGOTE_BAD);                   /* empty */
  CHECK_EQ(dec(SQ__ZYGOTE_AT_SUPERVISOR, b, n + sizeof prog, 0, &m), SQ__ZYGOTE_BAD);
}

/* The messages' transport: descriptors arrive in order, the sender's pid
 * with SO_PASSCRED, extra descriptors are closed, and a message cut short
 * is refused with its descriptors closed. */
static void test_transport(void) {
  int sp[2];
  CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
  int one = 1;
  CHECK_EQ(setsockopt(sp[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof one), 0);
  int p[2];
  CHECK_EQ(pipe(p), 0);
  char head[SQ__ZYGOTE_TASK_HEAD_MAX];
  size_t hl = sq__zygote_encode_task_head(head, sizeof head, 2, 4096, false, false, 0);
  struct iovec iov[2] = {{.iov_base = head, .iov_len = hl}, {.iov_base = "pass\n", .iov_len = 5}};
  int fds[2] = {p[1], p[0]};
  CHECK_EQ(sq__jail_send_fdsv(sp[0], iov, 2, fds, 2), 0);
  char buf[256];
  int got[SQ__ZYGOTE_MAX_FDS], nfds = -1;
  pid_t sender = 0;
  ssize_t n = sq__jail_recv_fds(sp[1], buf, sizeof buf, 0, got, SQ__ZYGOTE_MAX_FDS, &nfds, &sender);
  CHECK_EQ(n, (ssize_t)hl + 5);
  CHECK_EQ(nfds, 2);
  CHECK_EQ(sender, getpid());
  sq__zygote_msg m;
  CHECK_EQ(dec(SQ__ZYGOTE_AT_ZYGOTE, buf, (size_t)n, nfds, &m), SQ__ZYGOTE_TASK);
  CHECK_EQ(m.u.task.program_len, 5);
  if (nfds == 2) { /* the same pipe, in order: write on the first, read on the second */
    CHECK_EQ(write(got[0], "z", 1), 1);
    char z = 0;
    CHECK_EQ(read(got[1], &z, 1), 1);
    CHECK_EQ(z, 'z');
    CHECK(fcntl(got[0], F_GETFD) & FD_CLOEXEC);
    close(got[0]);
    close(got[1]);
  }
  /* More descriptors than the receiver takes: the rest closed. */
  CHECK_EQ(sq__jail_send_fds(sp[0], "x", 1, fds, 2), 0);
  n = sq__jail_recv_fds(sp[1], buf, sizeof buf, 0, got, 1, &nfds, NULL);
  CHECK_EQ(n, 1);
  CHECK_EQ(nfds, 1);
  if (nfds == 1) close(got[0]);
  /* Longer than the buffer: refused, its descriptor closed. */
  CHECK_EQ(sq__jail_send_fds(sp[0], "ready and more", 14, fds, 1), 0);
  errno = 0;
  n = sq__jail_recv_fds(sp[1], buf, 5, 0, got, SQ__ZYGOTE_MAX_FDS, &nfds, NULL);
  CHECK_EQ(n, -1);
  CHECK_EQ(errno, EMSGSIZE);
  CHECK_EQ(nfds, 0);
  /* Without descriptors; and too many to send. */
  CHECK_EQ(sq__jail_send_fds(sp[0], "x", 1, NULL, 0), 0);
  CHECK_EQ(sq__jail_recv_fds(sp[1], buf, sizeof buf, MSG_DONTWAIT, got, SQ__ZYGOTE_MAX_FDS, &nfds, NULL), 1);
  CHECK_EQ(nfds, 0);
  int many[SQ__JAIL_MAX_SEND_FDS + 1] = {0};
  CHECK_EQ(sq__jail_send_fds(sp[0], "x", 1, many, SQ__JAIL_MAX_SEND_FDS + 1), -1);
  CHECK_EQ(errno, EINVAL);
  /* Nothing left over: the pipe's ends are only ours now. */
  CHECK_EQ(sq__jail_recv_fds(sp[1], buf, sizeof buf, MSG_DONTWAIT, got, SQ__ZYGOTE_MAX_FDS, &nfds, NULL), -1);
  CHECK_EQ(errno, EAGAIN);
  close(p[0]);
  close(p[1]);
  close(sp[0]);
  CHECK_EQ(sq__jail_recv_fds(sp[1], buf, sizeof buf, 0, got, SQ__ZYGOTE_MAX_FDS, &nfds, NULL), 0); /* EOF */
  close(sp[1]);
}

int main(int argc, char **argv) {
  sq_check_args(argc, argv);
  test_short();
  test_next();
  test_task();
  test_error();
  test_reaped();
  test_limits();
  test_filter();
  test_transport();
  return sq_check_done("test_zygote_proto");
}
