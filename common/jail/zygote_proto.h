/* zygote_proto.h: the warm zygote's protocol, the one reference for both
 * ends: the supervisor (jail_zygote.c, jail_supervise.c) and the zygote's
 * loop and each task's child (zygote_loop.c, a Python extension module
 * built on its own: zygote_proto.c is compiled into it too, so nothing
 * here may need more than libc). Every message is one SOCK_SEQPACKET
 * datagram: text, a letter first, fields in decimal, one space apart.
 *
 * The zygote is `python3 -I -S /.sandq-zygote.py slot=N KIND` (ps names
 * it and its slot), started in the jail's namespaces and root, its
 * effective uid the slot's, its real and saved uid its own (so no task can
 * signal it; each task's child takes the slot's in all three). Its argv[0]
 * stays "python3", as a spawn run's: the interpreter finds its executable,
 * prefix and sys.path from it (a name not on PATH left sys.executable empty
 * and the prefix "/"). Its control
 * socket is on descriptor SQ__ZYGOTE_CTL_FD, its channel to its init on
 * SQ__ZYGOTE_INIT_FD.
 *
 * On the control socket, in order:
 *   LIMITS   supervisor -> zygote, once: "l RES:SOFT:HARD,RES:SOFT:HARD,..."
 *            every resource's rlimit (-1 unlimited; each ends with a
 *            comma): the worker's, the jail's own in place. The loop sets
 *            all but CPU, AS and FSIZE on itself once; each task's child
 *            sets those three.
 *   FILTER   supervisor -> zygote, once: "f" + the BPF program (struct
 *            sock_filter[], at most SQ__ZYGOTE_MAX_FILTER), loaded before
 *            the first task; the zygote and every task's child run under it.
 *   READY    zygote -> supervisor, once: "ready", with one descriptor, the
 *            filter's seccomp listener. Modules imported, waiting for tasks.
 * then, per task:
 *   NEXT     child -> supervisor: "n MS", the child forked ahead for the
 *            next task is ready for it. MS: CLOCK_MONOTONIC, ms, when it
 *            said so; the task's wall clock starts at the later of MS and
 *            the task's sending. The sender's pid (SO_PASSCRED) is the
 *            task's process. A spawn run's payload sends a bare "n" with
 *            its seccomp listener on the same kind of socket.
 *   TASK     supervisor -> child: "t CPU_S AS_BYTES FDS[ SB_LEN]\n" + the
 *            standby request (SB_LEN bytes) + the program.
 *            CPU_S: RLIMIT_CPU, s (>= 1); AS_BYTES: RLIMIT_AS, bytes
 *            (>= 1); FDS names the descriptors passed with it, in order:
 *            "oe" (stdout, stderr) and the program inline (at most
 *            SQ__ZYGOTE_INLINE_MAX bytes), or "oep", the program in a
 *            memfd (p) and nothing after the standby request; either may
 *            end in "i", a memfd the task reads as its stdin (else
 *            /dev/null: the isolated judge's tests travel so, never in a
 *            file). SB_LEN (1 to SQ__ZYGOTE_STANDBY_MAX, absent: none): the
 *            runtime the slot's next child starts ahead, before its task
 *            is known (jail.h, sq_jail_run_opts.standby); the child passes
 *            it to its zygote before the task's code runs.
 *   DROP     supervisor -> child: "d", instead of a TASK: the runtime it
 *            started ahead does not suit the task coming. The child exits;
 *            its zygote kills and reaps what it left (the standby), forks
 *            a child without one, which says NEXT.
 *   ERROR    child -> supervisor: "e MESSAGE": the child could not set the
 *            task up; none of its code ran (the supervisor replaces the
 *            zygote and tries the task once more).
 *   REAPED   zygote -> supervisor: "r STATUS UTIME_US STIME_US MAXRSS_KIB
 *            REAPED_MS": the task's child was reaped: its wait status, its
 *            CPU times in µs (its children's included, its own before it
 *            took the task left out: its setup, a standby's start among
 *            it, is not the task's), its peak RSS in KiB, and when it was reaped
 *            (CLOCK_MONOTONIC, ms: the task is judged by that,
 *            sq__jail_judge_by_reap).
 *   EXITED   zygote -> supervisor: "x": a child died before it took a
 *            task; the zygote exits.
 * On the init channel (the zygote asks, its init, root, answers):
 *   SCRATCH       zygote -> init: "w", mount a fresh scratch.
 *   SCRATCH_OK    init -> zygote: "k", done.
 *   SCRATCH_FAILED init -> zygote: "e", failed (the zygote exits).
 *
 * The encoders write no more than their documented sizes and use no stdio
 * (a task's fresh child would pay copy-on-write faults for printf's first
 * call); the decoders accept exactly what the encoders write. */
#ifndef SQ_ZYGOTE_PROTO_H
#define SQ_ZYGOTE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* What both ends agree on besides the messages. */
#define SQ__ZYGOTE_CTL_FD 5
#define SQ__ZYGOTE_INIT_FD 6
#define SQ__ZYGOTE_PY "/.sandq-zygote.py" /* zygote.py, written into each warm root by its init */
#define SQ__ZYGOTE_SO "/.sandq-zygote.so" /* zygote_loop.c built, likewise */
#define SQ__ZYGOTE_SCRATCH_DIR "/scratch"   /* the task's scratch in the jail's root */
/* Programs up to this size travel inside TASK; larger ones in a memfd (a
 * SOCK_SEQPACKET message is one skb). */
#define SQ__ZYGOTE_INLINE_MAX (256 << 10)
#define SQ__ZYGOTE_MAX_FILTER 4096 /* instructions: the kernel's own BPF_MAXINSNS */
#define SQ__ZYGOTE_MAX_FDS 4       /* descriptors with one message, at most */
/* A standby request, at most: it crosses a pipe in one write (PIPE_BUF). */
#define SQ__ZYGOTE_STANDBY_MAX 2048

/* Every message. SQ__ZYGOTE_BAD: none of them, or one of them malformed. */
typedef enum {
  SQ__ZYGOTE_BAD = 0,
  SQ__ZYGOTE_LIMITS,
  SQ__ZYGOTE_FILTER,
  SQ__ZYGOTE_READY,
  SQ__ZYGOTE_NEXT,
  SQ__ZYGOTE_TASK,
  SQ__ZYGOTE_DROP,
  SQ__ZYGOTE_ERROR,
  SQ__ZYGOTE_REAPED,
  SQ__ZYGOTE_EXITED,
  SQ__ZYGOTE_SCRATCH,
  SQ__ZYGOTE_SCRATCH_OK,
  SQ__ZYGOTE_SCRATCH_FAILED,
} sq__zygote_kind;

/* Who receives a message (a letter means different things on each). */
typedef enum {
  SQ__ZYGOTE_AT_SUPERVISOR, /* READY NEXT ERROR REAPED EXITED */
  SQ__ZYGOTE_AT_ZYGOTE,     /* LIMITS FILTER TASK DROP */
  SQ__ZYGOTE_AT_INIT,       /* SCRATCH */
  SQ__ZYGOTE_AT_ZYGOTE_INIT /* SCRATCH_OK SCRATCH_FAILED: the init's answer */
} sq__zygote_at;

typedef struct {
  int res;
  int64_t soft, hard; /* -1: unlimited */
} sq__zygote_rlimit;

/* A decoded message. Pointers point into the decoded buffer. */
typedef struct {
  sq__zygote_kind kind;
  union {
    struct {
      const char *text; /* "RES:SOFT:HARD,...", checked; sq__zygote_limit_at reads it */
      size_t len;
    } limits;
    struct {
      const void *insns; /* struct sock_filter[n], unaligned: copy before use */
      size_t n;
    } filter;
    struct {
      int64_t said_ms; /* 0: not said (a spawn payload's bare "n") */
    } next;
    struct {
      int64_t cpu_s, as_bytes;
      bool memfd;          /* FDS "oep": the program is in the third descriptor */
      bool input;          /* FDS ends in "i": the last descriptor is the task's stdin */
      const char *program; /* inline (memfd false) */
      size_t program_len;
      const char *standby; /* the standby request (standby_len bytes; 0: none) */
      size_t standby_len;
    } task;
    struct {
      const char *text;
      size_t len;
    } error;
    struct {
      int status;
      int64_t utime_us, stime_us, maxrss_kib, reaped_ms;
    } reaped;
  } u;
} sq__zygote_msg;

/* Decodes msg (len bytes, nfds descriptors came with it) as received at
 * at. Returns its kind (also in out->kind): SQ__ZYGOTE_BAD for a message
 * that is none of those at receives, or is malformed, or came with the
 * wrong number of descriptors. Never reads past len. */
sq__zygote_kind sq__zygote_decode(sq__zygote_at at, const char *msg, size_t len, int nfds, sq__zygote_msg *out);

/* Encoders: each writes its message into out (cap bytes) and returns its
 * length, or 0 when it does not fit (out then holds nothing useful). */
#define SQ__ZYGOTE_SHORT_MAX 8   /* READY EXITED SCRATCH SCRATCH_OK SCRATCH_FAILED, FILTER's header */
#define SQ__ZYGOTE_NEXT_MAX 24
#define SQ__ZYGOTE_TASK_HEAD_MAX 64
#define SQ__ZYGOTE_REAPED_MAX 128
#define SQ__ZYGOTE_LIMIT_MAX 64 /* one RES:SOFT:HARD, with its comma */
/* READY, EXITED, DROP, SCRATCH, SCRATCH_OK, SCRATCH_FAILED (fixed text), and
 * FILTER's one-letter header (the BPF program follows it). */
size_t sq__zygote_encode_short(sq__zygote_kind kind, char *out, size_t cap);
/* NEXT; said_ms < 0: the bare "n" (a spawn payload's). */
size_t sq__zygote_encode_next(char *out, size_t cap, int64_t said_ms);
/* TASK's header (the standby request, standby_len bytes, follows it, then
 * the inline program; with memfd, no program). */
size_t sq__zygote_encode_task_head(char *out, size_t cap, int64_t cpu_s, int64_t as_bytes, bool memfd, bool input,
                                   size_t standby_len);
/* ERROR: "e " + what + ": " + why (why may be NULL), truncated to fit. */
size_t sq__zygote_encode_error(char *out, size_t cap, const char *what, const char *why);
size_t sq__zygote_encode_reaped(char *out, size_t cap, int status, int64_t utime_us, int64_t stime_us,
                                int64_t maxrss_kib, int64_t reaped_ms);
/* LIMITS, in parts: with header, its "l " (rl unused); without, one
 * rlimit, "RES:SOFT:HARD,", to append after the header and those before. */
size_t sq__zygote_encode_limit(char *out, size_t cap, bool header, const sq__zygote_rlimit *rl);
/* The i-th rlimit of a decoded LIMITS; false past the last. */
bool sq__zygote_limit_at(const sq__zygote_msg *m, int i, sq__zygote_rlimit *rl);

/* Sends iov (niov parts, one message) with nfds descriptors (SCM_RIGHTS,
 * 0 to SQ__JAIL_MAX_SEND_FDS), retrying EINTR; async-signal-safe. 0, or
 * -1 with errno (a short send: EMSGSIZE). */
#define SQ__JAIL_MAX_SEND_FDS 8
int sq__jail_send_fdsv(int sock, const struct iovec *iov, int niov, const int *fds, int nfds);
/* One buffer: sq__jail_send_fdsv's. */
int sq__jail_send_fds(int sock, const void *data, size_t len, const int *fds, int nfds);
/* Receives one message into buf (cap bytes), retrying EINTR; flags as
 * recvmsg's (MSG_CMSG_CLOEXEC is always added). Up to max_fds passed
 * descriptors go into fds (*nfds of them; the rest are closed; a message
 * whose descriptors were cut short loses them all), the sender's pid
 * into *sender when SO_PASSCRED is on (0 otherwise; sender may be NULL).
 * Returns the length (0 at EOF), or -1 with errno. */
ssize_t sq__jail_recv_fds(int sock, void *buf, size_t cap, int flags, int *fds, int max_fds, int *nfds,
                          pid_t *sender);

#endif
