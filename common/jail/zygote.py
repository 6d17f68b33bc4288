# zygote.py: the warm zygote's loop (common/jail/jail_zygote.c starts it as
# `python3 -I -S -c <this file> ARGS` inside the jail's namespaces and root,
# as the slot's uid, no capabilities, no_new_privs; embedded into the jail
# library by common/embed.cmake).
#
# argv: NR_SECCOMP SCRATCH CTL_FD INIT_FD INLINE_MAX RLIMITS
#   RLIMITS: "RES:SOFT:HARD,..." for every resource: the worker's values with
#   the jail's own (NOFILE, FSIZE, NPROC, CORE, STACK, MEMLOCK) in place; -1
#   is unlimited. Each task's child sets every one of them, plus CPU and AS
#   from its task, so nothing the zygote's limits became reaches a task.
#
# Protocol on CTL_FD (SOCK_SEQPACKET to the supervisor):
#   in  "f" + BPF        once: the filter each task's child installs
#   out "ready"          modules imported, waiting for tasks
#   in  "t CPU_S AS_BYTES FDS\n" + program, with descriptors named by FDS in
#                        order: o stdout, e stderr, p a memfd holding the
#                        program (then nothing follows the header)
#   out "n" + [listener] from the child for the next task, its filter loaded:
#                        the supervisor starts the task's wall clock on it
#   out "e MESSAGE"      the child could not set the task up; none of the
#                        task's code ran (the supervisor replaces us)
#   out "r STATUS UTIME_US STIME_US MAXRSS_KIB"   the task's child was reaped
#   out "x"              a child died before it took a task: the zygote exits
# On INIT_FD (to the namespace's init, which is root): "w" asks for a fresh
# scratch tmpfs on SCRATCH; the answer is "k" (done) or "e" (failed).
#
# The child for the next task is forked ahead, once the last task's process
# group is gone, every child reaped and SCRATCH mounted afresh: it starts its
# own session, rehearses the task's path (so its copy-on-write faults happen
# now), installs the filter, sends its listener and waits for the task, so a
# task's critical path holds no fork, no filter load and few page faults.
# Then it writes main.py, sets its rlimits and runs the program as
# `python3 -I -S /scratch/main.py` would (a fresh __main__, the same
# traceback and exit status 1 for an uncaught exception). A task's exit
# status means nothing to the jail: setup failures travel as "e". Its last
# act closes its stdout and stderr and yields the CPU once: the supervisor,
# woken by both at EOF, may learn the exit status from the kernel before the
# task's memory is torn down.
import os, sys, socket, resource, ctypes, gc
# What most programs import (HumanEval's 164: typing, math, random, copy,
# string, collections, re), imported once here. hashlib (libcrypto),
# decimal, fractions, statistics, datetime and traceback are not: they made
# the interpreter 17.5 MB instead of 12.4, and every task's fork, copy-on-
# write faults and exit pay for its size (about 0.1 ms of CPU per task,
# docs/benchmarks.md); a task that imports one pays about 2 ms once.
import json, re, math, collections, itertools, functools, heapq, bisect, string, random
import typing, copy, operator, time

NR_SECCOMP = int(sys.argv[1])
SCRATCH = sys.argv[2]
CTL_FD = int(sys.argv[3])
INIT_FD = int(sys.argv[4])
INLINE_MAX = int(sys.argv[5])
LIMITS = [tuple(int(v) for v in item.split(':')) for item in sys.argv[6].split(',')]
MAIN = SCRATCH + '/main.py'
R = resource
WALL = 0x40000000  # __WALL: children whatever their exit signal

ctl = socket.socket(fileno=CTL_FD)
init = socket.socket(fileno=INIT_FD)
msg = ctl.recv(1 << 20)
assert msg[:1] == b'f'
BPF = ctypes.create_string_buffer(msg[1:], len(msg) - 1)


class FProg(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]


PROG = FProg((len(msg) - 1) // 8, ctypes.cast(BPF, ctypes.c_void_p))
PROG_REF = ctypes.byref(PROG)
seccomp = ctypes.CDLL(None, use_errno=True).syscall
del msg
compile('pass', '<sandq>', 'exec')  # the AST types, once, not in every task


def run(program):
    main = type(sys)('__main__')
    main.__file__ = MAIN
    main.__builtins__ = __builtins__
    sys.modules['__main__'] = main
    sys.argv = [MAIN]
    code = 0
    try:
        exec(compile(program, MAIN, 'exec'), main.__dict__)
    except SystemExit as e:
        c = e.code
        if c is None: code = 0
        elif isinstance(c, int): code = c & 0xff
        else:
            try: print(c, file=sys.stderr)
            except BaseException: pass
            code = 1
    except BaseException as e:
        code = 1
        try:  # the traceback as the interpreter prints it for main.py: without this frame
            e = e.with_traceback(e.__traceback__.tb_next)
            sys.excepthook(type(e), e, e.__traceback__)
        except BaseException:
            os.write(2, b'MemoryError\n' if isinstance(e, MemoryError) else b'uncaught exception\n')
    for s in (sys.stdout, sys.stderr):
        try: s.flush()
        except BaseException: pass
    for fd in (1, 2):
        try: os.close(fd)
        except BaseException: pass
    os.sched_yield()  # the supervisor, woken by the EOF, may share our CPU: let it see us exit
    os._exit(code)


def read_all(fd):
    parts, off = [], 0  # pread: the memfd's offset is shared with the supervisor's copy
    while True:
        b = os.pread(fd, 1 << 20, off)
        if not b: return b''.join(parts)
        parts.append(b)
        off += len(b)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def set_limits(cpu, asz):
    for r, soft, hard in LIMITS:
        if r == R.RLIMIT_CPU: soft, hard = cpu, cpu + 1
        elif r == R.RLIMIT_AS: soft = hard = asz
        R.setrlimit(r, (soft, hard))


def take(msg, fds):
    """The task's setup: descriptors, program, main.py, limits. Raises on failure."""
    head, _, program = msg.partition(b'\n')
    _, cpu, asz, names = head.split()
    names = names.decode()
    if len(names) != len(fds) or not names.startswith('oe'): raise ValueError('bad task header %r' % head)
    fd = dict(zip(names, fds))
    os.dup2(fd['o'], 1)
    os.dup2(fd['e'], 2)
    if 'p' in fd: program = read_all(fd['p'])
    for f in fds: os.close(f)
    out = os.open(MAIN, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    write_all(out, program)
    os.close(out)
    os.chdir(SCRATCH)
    set_limits(int(cpu), int(asz))
    return program


def rehearse():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    socket.send_fds(a, [b't 1 2 oe\npass\n'], [a.fileno(), b.fileno()])
    msg, fds, _, _ = socket.recv_fds(b, 1 << 16, 3)
    for fd in fds: os.close(fd)
    head, _, program = msg.partition(b'\n')
    [int(x) for x in head.split()[1:3]]
    for r, soft, hard in LIMITS: R.setrlimit(r, R.getrlimit(r))
    compile(program, MAIN, 'exec')
    a.close(); b.close()


def child(took):
    os.setsid()
    init.close()
    rehearse()
    listener = seccomp(NR_SECCOMP, 1, 8, PROG_REF)
    if listener < 0:
        ctl.send(b'e seccomp in the warm child failed: errno %d' % ctypes.get_errno())
        os._exit(1)
    socket.send_fds(ctl, [b'n'], [listener])
    os.close(listener)
    msg, fds, _, _ = socket.recv_fds(ctl, INLINE_MAX + 256, 4)
    if not msg or msg[:1] != b't':
        os._exit(0)
    try:
        program = take(msg, fds)
    except BaseException as e:
        try: ctl.send(b'e ' + repr(e).encode(errors='replace')[:200])
        except BaseException: pass
        os._exit(1)
    del msg
    os.write(took, b't')
    os.close(took)
    ctl.close()
    run(program)


def reap():
    try:
        while os.waitpid(-1, os.WNOHANG | WALL)[0] > 0: pass
    except ChildProcessError:
        pass


def gone(pgid):
    for _ in range(2000):
        reap()  # a zombie of the group would keep killpg succeeding
        try: os.killpg(pgid, 9)
        except ProcessLookupError: break
        time.sleep(0.0005)
    reap()


def fresh_scratch():
    init.send(b'w')
    if init.recv(16) != b'k':
        os.write(2, b'sandq-jail: the init could not mount a fresh scratch\n')
        os._exit(0)


os.chdir('/')  # never in a scratch that is about to be replaced
ctl.send(b'ready')
gc.freeze()
while True:
    fresh_scratch()
    took_r, took_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(took_r)
            child(took_w)
        finally:
            os._exit(1)
    os.close(took_w)
    _, status, ru = os.wait4(pid, 0)
    took = os.read(took_r, 1)
    os.close(took_r)
    if not took:
        try: ctl.send(b'x')
        except OSError: pass
        os._exit(0)
    ctl.send(b'r %d %d %d %d' % (status, int(ru.ru_utime * 1e6), int(ru.ru_stime * 1e6), ru.ru_maxrss))
    gone(pid)
