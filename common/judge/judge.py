# judge.py: the isolated judge (common/judge/harness.c, docs/security.md,
# "The isolated judge").
#
# judge(g) judges one task, g the task's __main__ (main.py's globals). The
# program the jail runs is a fixed text (harness.c): on a full warm zygote
# it calls the copy of this file the zygote loaded with its prelude;
# elsewhere it loads the copy that comes first in the input. Everything of
# the task comes on fd 0, which the jail fills from a memfd and the
# candidate never holds, as one frame (docs/formats.md, "The judge's
# input"): a fixed 128-byte head ("sandq-judge 1 KIND JUDGE CODE HARNESS
# LISTING TESTS_AT CHECK_AT", decimal, space-padded, "\n"), then judge.py
# (KIND m: marshalled, s: source), the candidate's code, harness.py and
# the listing (code, tests, check line, as sq_task_program lays it out).
# judge() reads the head, skips judge.py and reads the code, and only then
# forks:
#
#  - the candidate's process: fd 0 replaced by an empty pipe, it waits for
#    the judge's word, writes its code over main.py (its tracebacks name its
#    lines), runs the code in a fresh __main__ and then serves calls: a
#    function name (or a handle) and plain arguments in, a plain value, a
#    handle, or an exception's type name and plain arguments out, over two
#    pipes. It never had the
#    tests, the nonce or the listing in its memory: the fork came first.
#  - the judge: draws the nonce, writes "sandq-harness:NONCE:begin" as the
#    first bytes of stderr, reads harness.py and the listing from fd 0 and
#    runs the tests in its own __main__ where every name they take from the
#    candidate is a stand-in (Remote) that sends the call over the pipe.
#    Nothing the candidate defines ever runs here: only plain values (None,
#    bool, int, float, complex, str, bytes, and list, tuple, dict, set,
#    frozenset of those) cross, decoded by the codec below into fresh
#    objects of exactly those types. Once the tests and the check line
#    returned and the candidate's process ended as asked, it writes
#    "sandq-harness:NONCE:judge isolated" and "sandq-harness:NONCE:end".
#
# Where the judge's names come from: the tests' own imports (MBPP's
# test_imports are lines of the tests), builtins (the judge's own), a
# standard-library module (or, when the candidate's table says module, one
# found outside the scratch) imported by the judge by the very name the
# tests use, and the candidate's functions (as stand-ins) and plain values
# (as copies). The candidate's process writes the table of its names, and
# can forge it: nothing in it names a module or an attribute for the judge
# to take (`isclose = max`, math reported as unittest.mock: the tests find
# the name undefined, or the real math).
#
# Objects of the candidate's (a Solution the tests construct, the Pairs
# they pass, a node it returns) never cross: the candidate files each
# under a number (a handle) and the judge holds a stand-in (RemoteObject)
# through which the tests call it, read its attributes and pass it back;
# what comes back is plain or another stand-in, and the tests may not
# compare one or take its truth (that raises: failed). Two kinds of tests
# still cannot be judged so, decided from the tests alone before the
# candidate's code runs: they pass the candidate a function of their own
# (a callback), or the function under test is named like a builtin (the
# judge keeps builtins its own). For those the judge ends the candidate's
# process and runs the listing in-process as harness.py does (its text
# comes in the input), marked "judge in_process WHY".
#
# Other marks: "sandq-harness:NONCE:fail REASON" ends the task failed with
# that reason (a value that is not plain, the candidate's process gone
# mid-call). Codec: a tagged encoding (below) with bounded size and depth;
# marshal and pickle build objects the judge should not have to trust.


HEAD_BYTES = 128  # the input's head (docs/formats.md, "The judge's input")
VERSION = b'1'


def judge(g, head=None):
    """Judges the task on fd 0 in g, its __main__; head: the input's head,
    when the caller read it (and judge.py after it) already."""
    MAX_FRAME_BYTES = 8 << 20  # one call's or one reply's encoded size
    MAX_DEPTH = 100            # nesting of containers in one value
    MAX_ITEMS = 1 << 20        # elements in one value, all containers together
    import posix, sys, binascii
    write, read, close = posix.write, posix.read, posix.close
    type_, len_, isinstance_, int_, float_, str_, bytes_, list_, tuple_, dict_, set_, frozenset_, complex_ = (
        type, len, isinstance, int, float, str, bytes, list, tuple, dict, set, frozenset, complex)
    BaseException_, SystemExit_, getattr_, hasattr_, callable_, exec_, compile_, id_ = (
        BaseException, SystemExit, getattr, hasattr, callable, exec, compile, id)
    dunders = {k: v for k, v in g.items() if k[:2] == '__' and k[-2:] == '__'}
    fname = g.get('__file__') or sys._getframe().f_code.co_filename  # main.py (the code may be precompiled)

    def read_exactly(n):
        # n bytes of fd 0, never more: before the fork, what is read is
        # what the candidate's process will hold.
        parts, left = [], n
        while left > 0:
            b = read(0, min(left, 1 << 20))
            if not b:
                write(2, b'sandq-judge: the input ended %d bytes early\n' % left)
                posix._exit(125)
            parts.append(b)
            left -= len_(b)
        return b''.join(parts)

    skip_judge = head is None  # else the caller loaded the input's judge.py and called it
    if skip_judge:
        head = read_exactly(HEAD_BYTES)
    f = head.split()
    try:
        if len_(head) != HEAD_BYTES or len_(f) != 10 or f[0] != b'sandq-judge' or f[1] != VERSION:
            raise ValueError
        judge_len, code_len, harness_len, plan_len, listing_len, tests_at, check_at = (int_(x) for x in f[3:])
    except ValueError:
        write(2, b'sandq-judge: not an input of version %s: %r\n' % (VERSION, head[:40]))
        posix._exit(125)
    if skip_judge and judge_len:
        try:  # this copy runs: the input's is not needed
            posix.lseek(0, judge_len, 1)  # SEEK_CUR
        except OSError:
            read_exactly(judge_len)
    code = read_exactly(code_len)

    class NotPlain(Exception):
        pass

    # Handles: an object of the candidate's crosses as a number ('H'), the
    # object itself staying in the candidate's process. Each side sets how
    # it makes and reads them: the candidate files a value that is not
    # plain under the next number (only in its replies) and reads a number
    # back as its own object; the judge writes its stand-in for one
    # (RemoteObject) as that number and reads a number as a fresh stand-in.
    side = {'to_handle': None, 'remote': None, 'from_handle': None}
    MAX_HANDLES = 1 << 16

    # The builtin types themselves cross by name (a test passes `int`), and
    # five stdlib containers by their content (a Counter compares equal to
    # a dict): the receiver builds its own from its own modules.
    types_by_name = {c.__name__: c for c in (int_, float_, complex_, str_, bytes_, bool, list_, tuple_, dict_, set_,
                                             frozenset_, bytearray, type_(None), object, range)}
    type_names = {c: n for n, c in types_by_name.items()}

    def stdlib_containers():
        c = sys.modules.get('collections')
        return (c.Counter, c.OrderedDict, c.defaultdict, c.deque) if c is not None else ()

    # ---- the codec: tag byte, then a 4-byte little-endian length or count
    # where one is needed. Encoding takes exact types only (a subclass of
    # int or list is not plain: its comparisons would be its own code).
    def encode(v):
        out = []
        budget = [MAX_FRAME_BYTES, MAX_ITEMS]

        def put(b):
            budget[0] -= len_(b)
            if budget[0] < 0:
                raise NotPlain('a value over %d MiB encoded' % (MAX_FRAME_BYTES >> 20))
            out.append(b)

        def blob(tag, b):
            put(tag + len_(b).to_bytes(4, 'little'))
            put(b)

        def one(x, depth):
            t = type_(x)
            if x is None:
                put(b'N')
            elif x is True:
                put(b'T')
            elif x is False:
                put(b'F')
            elif t is int_:
                n = x.bit_length() // 8 + 1
                if n > MAX_FRAME_BYTES:
                    raise NotPlain('int over %d MiB' % (MAX_FRAME_BYTES >> 20))
                blob(b'I', x.to_bytes(n, 'little', signed=True))
            elif t is float_:
                blob(b'D', x.hex().encode())
            elif t is complex_:
                put(b'C')
                blob(b'D', x.real.hex().encode())
                blob(b'D', x.imag.hex().encode())
            elif t is str_:
                if len_(x) > MAX_FRAME_BYTES:
                    raise NotPlain('str over %d MiB' % (MAX_FRAME_BYTES >> 20))
                blob(b'S', x.encode('utf-8', 'surrogatepass'))
            elif t is bytes_:
                if len_(x) > MAX_FRAME_BYTES:
                    raise NotPlain('bytes over %d MiB' % (MAX_FRAME_BYTES >> 20))
                blob(b'B', x)
            elif t is type_ and x in type_names:
                blob(b'Y', type_names[x].encode())
            elif t in stdlib_containers():
                counter, ordered, default, deque = stdlib_containers()
                if depth >= MAX_DEPTH:
                    raise NotPlain('%s nested deeper than %d levels' % (t.__name__, MAX_DEPTH))
                if t is deque:
                    put(b'W')
                    one(x.maxlen, depth + 1)
                    one(list_(x), depth + 1)
                else:
                    put(b'K' if t is counter else b'Q' if t is ordered else b'P')
                    if t is default:
                        if x.default_factory is not None and x.default_factory not in type_names:
                            raise NotPlain('collections.defaultdict of a factory that is not a builtin type')
                        one(x.default_factory, depth + 1)
                    one(dict_(x), depth + 1)
            elif t is list_ or t is tuple_ or t is set_ or t is frozenset_ or t is dict_:
                if depth >= MAX_DEPTH:
                    raise NotPlain('%s nested deeper than %d levels' % (t.__name__, MAX_DEPTH))
                n = len_(x)
                budget[1] -= n
                if budget[1] < 0:
                    raise NotPlain('a value of over %d elements' % MAX_ITEMS)
                tag = b'L' if t is list_ else b'U' if t is tuple_ else b'E' if t is set_ else b'Z' if t is frozenset_ else b'M'
                put(tag + n.to_bytes(4, 'little'))
                if t is dict_:
                    for k, e in x.items():
                        one(k, depth + 1)
                        one(e, depth + 1)
                else:
                    for e in x:
                        one(e, depth + 1)
            elif side['remote'] is not None and t is side['remote']:
                put(b'H' + x._sq_handle.to_bytes(4, 'little'))
                blob(b'S', x._sq_name.encode('utf-8', 'replace'))
            elif side['to_handle'] is not None:
                put(b'H' + side['to_handle'](x).to_bytes(4, 'little'))
                try:  # its type's name, for the judge's messages only
                    what = t.__qualname__ if type_(t.__qualname__) is str_ else '?'
                except BaseException_:
                    what = '?'
                blob(b'S', what[:80].encode('utf-8', 'replace'))
            else:
                try:
                    what = t.__qualname__
                    if t.__module__ not in ('builtins', '__main__'):
                        what = t.__module__ + '.' + what
                except BaseException_:
                    what = '?'
                raise NotPlain(str_(what))

        one(v, 0)
        return b''.join(out)

    def decode(data):
        # The value encode made; several values one after the other come as
        # a tuple of them (a reply: the value, then the arguments after the
        # call). Raises ValueError (or the error building a set or dict
        # raises) on anything encode does not produce.
        end = len_(data)
        pos = [0]
        items = [MAX_ITEMS]

        def take(n):
            p = pos[0]
            if n < 0 or p + n > end:
                raise ValueError('truncated value')
            pos[0] = p + n
            return data[p:p + n]

        def count():
            return int_.from_bytes(take(4), 'little')

        def fl():
            if take(1) != b'D':
                raise ValueError('a float expected')
            return float_.fromhex(take(count()).decode('ascii'))

        def one(depth):
            tag = take(1)
            if tag == b'N':
                return None
            if tag == b'T':
                return True
            if tag == b'F':
                return False
            if tag == b'I':
                return int_.from_bytes(take(count()), 'little', signed=True)
            if tag == b'D':
                pos[0] -= 1
                return fl()
            if tag == b'C':
                return complex_(fl(), fl())
            if tag == b'S':
                return take(count()).decode('utf-8', 'surrogatepass')
            if tag == b'B':
                return bytes_(take(count()))
            if tag == b'Y':
                return types_by_name[take(count()).decode('ascii')]
            if tag == b'H':
                if side['from_handle'] is None:
                    raise ValueError('a handle where none may be')
                n = count()
                what = one(depth + 1)
                if type_(what) is not str_:
                    raise ValueError('a handle without its name')
                return side['from_handle'](n, what)
            if tag in (b'K', b'Q', b'P', b'W'):
                if depth >= MAX_DEPTH:
                    raise ValueError('nested deeper than %d levels' % MAX_DEPTH)
                import collections
                if tag == b'W':
                    maxlen, xs = one(depth + 1), one(depth + 1)
                    if (maxlen is not None and type_(maxlen) is not int_) or type_(xs) is not list_:
                        raise ValueError('a malformed deque')
                    return collections.deque(xs, maxlen)
                factory = one(depth + 1) if tag == b'P' else None
                d = one(depth + 1)
                if type_(d) is not dict_ or (factory is not None and factory not in type_names):
                    raise ValueError('a malformed dict')
                if tag == b'P':
                    return collections.defaultdict(factory, d)
                return collections.Counter(d) if tag == b'K' else collections.OrderedDict(d)
            if tag in (b'L', b'U', b'E', b'Z', b'M'):
                if depth >= MAX_DEPTH:
                    raise ValueError('nested deeper than %d levels' % MAX_DEPTH)
                n = count()
                items[0] -= n
                if items[0] < 0 or n > end - pos[0]:
                    raise ValueError('more elements than bytes')
                if tag == b'M':
                    d = {}
                    for _ in range(n):
                        k = one(depth + 1)
                        d[k] = one(depth + 1)
                    return d
                xs = [one(depth + 1) for _ in range(n)]
                return xs if tag == b'L' else tuple_(xs) if tag == b'U' else set_(xs) if tag == b'E' else frozenset_(xs)
            raise ValueError('unknown tag %r' % tag)

        vs = [one(0)]
        while pos[0] < end:
            vs.append(one(0))
        return vs[0] if len_(vs) == 1 else tuple_(vs)

    def send(fd, payload):
        msg = len_(payload).to_bytes(4, 'little') + payload
        view = memoryview(msg)
        while view:
            n = write(fd, view)
            view = view[n:]

    def recv_exact(fd, n):
        buf = bytearray()
        while len_(buf) < n:
            b = read(fd, min(n - len_(buf), 1 << 20))
            if not b:
                return None
            buf += b
        return bytes_(buf)

    def recv(fd):
        # The next frame's bytes; None at EOF. ValueError for a frame over the limit.
        head = recv_exact(fd, 4)
        if head is None:
            return None
        n = int_.from_bytes(head, 'little')
        if n > MAX_FRAME_BYTES + 64:
            raise ValueError('a reply of %d bytes, over the %d MiB limit' % (n, MAX_FRAME_BYTES >> 20))
        return recv_exact(fd, n)

    def flush_std():
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except BaseException_:
                pass

    def exit_status(e):
        # SystemExit's status as the interpreter gives it.
        c = e.code
        if c is None:
            return 0
        if isinstance_(c, int_):
            return c & 0xff
        try:
            print(c, file=sys.stderr)
        except BaseException_:
            pass
        return 1

    _exit, waitpid, kill, getpid = posix._exit, posix.waitpid, posix.kill, posix.getpid

    # ---- the candidate's process ----------------------------------------

    def candidate_finish(status):
        # `python3 main.py`'s end: non-daemon threads waited for, exit hooks
        # run, both streams flushed.
        try:
            t = sys.modules.get('threading')
            if t is not None:
                t._shutdown()
        except BaseException_:
            pass
        try:
            import atexit
            atexit._run_exitfuncs()
        except BaseException_:
            pass
        flush_std()
        _exit(status)

    def describe(x):
        # How the judge can take one of the candidate's names: a plain value
        # ('v'), something to call through the pipe ('f'), a module ('m':
        # only that; the judge imports the wanted name itself, never a name
        # this process reports); anything else ('o') it cannot take (the
        # tests then find the name undefined).
        if type_(x) is type_(sys):
            return ('m',)
        try:
            encode(x)
            return ('v', x)
        except BaseException_:
            pass
        if callable_(x):  # a class too: what it makes comes back only if plain
            return ('f',)
        return ('o', type_(x).__name__)

    handles, handle_of = [], {}  # the objects handed out, kept alive so that id() stays theirs

    def to_handle(x):
        n = handle_of.get(id_(x))
        if n is not None:
            return n  # the same object, the same handle: the judge can tell it is the one it passed
        if len_(handles) >= MAX_HANDLES:
            raise NotPlain('more than %d objects handed to the judge' % MAX_HANDLES)
        handles.append(x)
        handle_of[id_(x)] = len_(handles) - 1
        return len_(handles) - 1

    def from_handle(n, what=None):
        if n >= len_(handles):
            raise ValueError('a handle never given')
        return handles[n]

    def reply_value(r, args):
        side['to_handle'] = to_handle
        try:
            head = encode(('r', r))
        except NotPlain as e:
            side['to_handle'] = None
            return encode(('n', str_(e)))
        except BaseException_ as e:
            side['to_handle'] = None
            return encode(('n', 'a value that could not be encoded (%s)' % type_(e).__name__))
        back = None
        if any(type_(a) in (list_, dict_, set_) for a in args):
            try:
                back = encode(args)
            except BaseException_:
                back = None
        side['to_handle'] = None
        return head + (back if back is not None else b'N')

    def reply_error(e):
        t = type_(e)
        try:
            name = t.__name__ if type_(t.__name__) is str_ else 'Exception'
            builtin = t.__module__ == 'builtins'
        except BaseException_:
            name, builtin = 'Exception', False
        try:
            return encode(('e', name, builtin, e.args))
        except BaseException_:
            pass
        try:
            text = str_(e)
        except BaseException_:
            text = ''
        return encode(('e', name, builtin, (text if type_(text) is str_ else '',)))

    def print_uncaught(e):
        try:  # without this process's own frame, as the interpreter prints it for main.py
            e = e.with_traceback(e.__traceback__.tb_next)
            sys.excepthook(type_(e), e, e.__traceback__)
        except BaseException_:
            write(2, b'uncaught exception\n')

    def candidate_side():
        nothing_r, nothing_w = posix.pipe()
        posix.dup2(nothing_r, 0)  # the tests come on fd 0: this process never reads it
        close(nothing_r)
        close(nothing_w)
        raw = recv(req_r)
        if raw is None:
            _exit(0)
        names = decode(raw)[1]
        try:  # main.py holds the code alone: what a traceback of it, or the code itself, reads
            fd = posix.open(fname, posix.O_WRONLY | posix.O_TRUNC)
            try:
                write(fd, code)
            finally:
                close(fd)
        except OSError:
            pass
        g.clear()
        g.update(dunders)
        try:
            exec_(compile_(code, fname, 'exec', dont_inherit=True), g)
        except SystemExit_ as e:
            candidate_finish(exit_status(e))
        except BaseException_ as e:
            print_uncaught(e)
            candidate_finish(1)
        table = {}
        for n in names:
            if type_(n) is str_ and n in g:
                table[n] = describe(g[n])
        flush_std()
        send(rep_w, encode(('ready', table)))
        side['from_handle'] = from_handle
        while True:
            raw = recv(req_r)
            if raw is None:
                candidate_finish(0)
            m = decode(raw)
            if m[0] == 'q':
                candidate_finish(0)
            # 'c' NAME ARGS KWARGS calls a name of the code's; 'k' H ARGS
            # KWARGS calls object H; 'g' H ATTR reads an attribute of H.
            args = m[2] if m[0] in ('c', 'k') else ()
            try:
                if m[0] == 'g':
                    r = getattr_(from_handle(m[1]), m[2])
                elif m[0] == 'k':
                    r = from_handle(m[1])(*args, **m[3])
                else:
                    r = g[m[1]](*args, **m[3])
            except SystemExit_ as e:
                candidate_finish(exit_status(e))
            except BaseException_ as e:
                out = reply_error(e)
            else:
                out = reply_value(r, args)
            flush_std()  # what it printed so far is out, should the judge end it
            send(rep_w, out)

    # ---- the judge --------------------------------------------------------

    def judge_side():
        import _signal, builtins
        import select as _select, time as _time
        # Signals the candidate (same uid) could send: held, so none turns
        # into an exception in the tests. SIGKILL and SIGSTOP cannot be
        # held: they end the run failed or timed out, never passed.
        _signal.pthread_sigmask(_signal.SIG_BLOCK, [s for s in (
            _signal.SIGHUP, _signal.SIGINT, _signal.SIGQUIT, _signal.SIGUSR1, _signal.SIGUSR2,
            _signal.SIGALRM, _signal.SIGTERM, _signal.SIGTSTP, _signal.SIGTTIN, _signal.SIGTTOU,
            _signal.SIGWINCH, _signal.SIGURG, _signal.SIGVTALRM, _signal.SIGPROF, _signal.SIGIO)])
        nonce = posix.urandom(16).hex()
        mark = ('sandq-harness:' + nonce + ':').encode()
        write(2, mark + b'begin\n')
        harness = read_exactly(harness_len)
        plan = read_exactly(plan_len)
        listing = read_exactly(listing_len)
        close(0)
        listing_for_report[0] = listing
        state = {'ready': False}

        def reap():
            try:
                return waitpid(pid, 0)[1]
            except OSError:
                return 0

        def stop_candidate():
            try:
                kill(pid, 9)
            except OSError:
                pass
            reap()

        def fail(reason):
            # Ends the task failed with reason (one line, cut), whatever the tests do.
            stop_candidate()
            flush_std()
            text = ' '.join(str_(reason).split())[:300]
            write(2, mark + b'fail ' + text.encode('utf-8', 'replace') + b'\n')
            _exit(1)

        def candidate_ended(when):
            st = reap()
            if posix.WIFSIGNALED(st):
                sig = posix.WTERMSIG(st)
                if sig in (_signal.SIGXCPU, _signal.SIGSYS) or not state['ready']:
                    # Its limit (or its death before the tests) is the run's: the same end.
                    flush_std()
                    _signal.signal(sig, _signal.SIG_DFL)
                    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [sig])
                    kill(getpid(), sig)
                    _exit(1)
                fail("the candidate's process was killed by signal %d %s" % (sig, when))
            code_ = posix.WEXITSTATUS(st) if posix.WIFEXITED(st) else 1
            if not state['ready']:
                flush_std()
                _exit(code_)  # as `python3 main.py` would have: 0 is an exit before the tests
            fail("the candidate's process exited with status %d %s" % (code_, when))

        # A CPU budget for the next call (the tests set it through
        # __sandq_cpu_limit__): the candidate's process CPU clock, which
        # counts its threads and not the time it waits for a core, so the
        # verdict does not move with the host's load. Checked while the call
        # runs (every 10 ms of wall time) and once it returned.
        budget = {'s': None, 'label': ''}
        cpu_clock = ((~pid) << 3) | 2  # clock_getcpuclockid(pid): CPUCLOCK_SCHED of the process

        def cpu_s():
            try:
                return _time.clock_gettime(cpu_clock)
            except OSError:
                return 0.0

        def set_cpu_limit(seconds, label=''):
            budget['s'] = float(seconds)
            budget['label'] = str_(label)

        def over_budget(used):
            stop_candidate()
            flush_std()
            text = '%s: over its CPU time limit (%.3f s used, %.3f s allowed)' % (budget['label'] or 'a call',
                                                                                 used, budget['s'])
            write(2, mark + b'limit ' + ' '.join(text.split())[:300].encode('utf-8', 'replace') + b'\n')
            _exit(1)

        def wait_reply():
            # Returns when the reply can be read, or ends the task when the
            # call went over its budget.
            if budget['s'] is None:
                return
            limit, t0 = budget['s'], cpu_s()
            poller = _select.poll()
            poller.register(rep_r, _select.POLLIN | _select.POLLHUP | _select.POLLERR)
            while not poller.poll(10):
                if cpu_s() - t0 > limit:
                    over_budget(cpu_s() - t0)
            budget['t0'] = t0

        def exchange(payload, when):
            try:
                send(req_w, payload)
                wait_reply()
                raw = recv(rep_r)
            except OSError:
                raw = None
            except ValueError as e:
                fail("the candidate's process broke the protocol: %s" % e)
            if raw is None:
                candidate_ended(when)
            if budget['s'] is not None:
                used = cpu_s() - budget.pop('t0', 0.0)
                if used > budget['s']:
                    over_budget(used)
                budget['s'] = None  # one call only
            try:
                return decode(raw)
            except Exception as e:
                fail("the candidate's process broke the protocol: %s" % e)

        def copy_back(args, back):
            # The candidate changed a list, dict or set it was passed: so does the judge's.
            if type_(back) is not tuple_ or len_(back) != len_(args):
                return
            for old, new in zip(args, back):
                t = type_(old)
                if t is not type_(new) or t not in (list_, dict_, set_) or old == new:
                    continue
                if t is list_:
                    old[:] = new
                else:
                    old.clear()
                    old.update(new)

        def raise_from(m):
            name, builtin, args = m[1], m[2], m[3]
            cls = getattr_(builtins, name, None) if builtin is True and type_(name) is str_ else None
            if isinstance_(cls, type_) and issubclass(cls, Exception) and cls not in (StopIteration, StopAsyncIteration):
                try:
                    return cls(*args)
                except Exception:
                    pass
            if isinstance_(cls, type_) and issubclass(cls, BaseException_) and cls in (MemoryError, RecursionError):
                return cls(*args)
            text = ', '.join(str_(a) for a in args) if type_(args) is tuple_ else ''
            return CandidateError('%s: %s' % (name, text) if text else str_(name))

        class CandidateError(Exception):
            """An exception of the candidate's own type (or one the judge does not make)."""

        def call(name, args, kwargs, request=None):
            try:
                payload = encode(request if request is not None else ('c', name, args, kwargs))
            except NotPlain as e:
                raise TypeError('sandq: the isolated judge cannot pass %s to the candidate' % e) from None
            m = exchange(payload, 'during a call to %s' % name)
            back = None
            if type_(m) is tuple_ and len_(m) == 2 and type_(m[0]) is tuple_:
                m, back = m
            if type_(m) is not tuple_ or not m:
                fail("the candidate's process broke the protocol: a reply of type %s" % type_(m).__name__)
            if m[0] == 'r' and len_(m) == 2:
                copy_back(args, back)
                return m[1]
            if m[0] == 'n' and len_(m) == 2:
                fail('returned a value the judge cannot compare: %s' % m[1])
            if m[0] == 'e' and len_(m) == 4:
                raise raise_from(m)
            fail("the candidate's process broke the protocol: a reply tagged %r" % (m[0],))

        class Remote:
            """The judge's stand-in for one of the candidate's functions."""
            __slots__ = ('__name__',)

            def __init__(self, name):
                self.__name__ = name

            def __call__(self, *args, **kwargs):
                return call(self.__name__, args, kwargs)

            def __repr__(self):
                return '<function %s>' % self.__name__

        class RemoteObject:
            """The judge's stand-in for an object of the candidate's (a
            Solution, a Pair, a node): the tests may call it, read its
            attributes and pass it back; each crosses the pipe, and what
            comes back is a plain value or another stand-in. Nothing the
            candidate defines answers for the tests' comparisons or
            truth: the task fails then, as for any value the judge cannot
            compare. Its name is the object's type's, as the candidate
            says: for messages only."""
            __slots__ = ('_sq_handle', '_sq_name')

            def __init__(self, handle, name):
                object.__setattr__(self, '_sq_handle', handle)
                object.__setattr__(self, '_sq_name', name)

            def __getattr__(self, attr):
                if attr[:2] == '__':
                    raise AttributeError(attr)
                return call('%s.%s' % (self._sq_name, attr), (), {}, ('g', self._sq_handle, attr))

            def __call__(self, *args, **kwargs):
                return call(self._sq_name, args, kwargs, ('k', self._sq_handle, args, kwargs))

            def __setattr__(self, attr, value):
                raise TypeError("sandq: the tests set an attribute of an object of the candidate's")

            def _sq_refuse(self, *a):
                fail('returned a value the judge cannot compare: %s' % self._sq_name)

            def __eq__(self, other):
                if type_(other) is RemoteObject and other._sq_handle == self._sq_handle:
                    return True
                self._sq_refuse()

            def __ne__(self, other):
                return not self.__eq__(other)

            __bool__ = __len__ = __iter__ = __hash__ = __lt__ = __le__ = __gt__ = __ge__ = _sq_refuse
            __int__ = __float__ = __index__ = __contains__ = __getitem__ = _sq_refuse

            def __repr__(self):
                return "<object of the candidate's: %s>" % self._sq_name

        def remote_from_handle(n, what):
            return RemoteObject(n, ' '.join(what.split())[:80] or '?')

        side['remote'] = RemoteObject
        side['from_handle'] = remote_from_handle

        # ---- what the tests take from the candidate (from the tests alone)
        # Each part compiled once; its names read off the compiler's own
        # symbol table (_symtable, in C): a name the tests use and bind
        # nowhere is wanted from the candidate. The syntax tree is walked
        # only where a call could pass the candidate a function of the
        # tests' or every assert could call a builtin name (below).
        segments, lines = [], []  # each part of the tests alone, and the listing's lines before it
        for at, stop in ((tests_at, check_at if check_at >= 0 else len_(listing)), (check_at, len_(listing))):
            segments.append(None if at < 0 else listing[at:stop])
            lines.append(0 if at < 0 else listing[:at].count(b'\n'))

        def analyse():
            # The tests' parts compiled (at line 1) and what they take from
            # the candidate, from the tests alone.
            import _symtable
            codes = []
            loads, stores, funcs = set_(), set_(), set_()
            lambdas = False
            used, bound = _symtable.USE, _symtable.DEF_LOCAL | _symtable.DEF_PARAM | _symtable.DEF_IMPORT
            named = (_symtable.TYPE_FUNCTION, _symtable.TYPE_CLASS)
            try:
                for text in segments:
                    if text is None:
                        codes.append(None)
                        continue
                    codes.append(compile_(text, fname, 'exec', dont_inherit=True))
                    todo = [_symtable.symtable(text, fname, 'exec')]
                    while todo:
                        st = todo.pop()
                        syms = st.symbols
                        for name, fl in syms.items():
                            if fl & used:
                                loads.add(name)
                            if fl & bound:
                                stores.add(name)
                        for c in st.children:
                            if c.name == 'lambda':
                                lambdas = True
                            elif c.type in named and syms.get(c.name, 0) & bound:
                                funcs.add(c.name)  # a def or class (a comprehension's scope is bound nowhere)
                            todo.append(c)
            except SyntaxError:
                # where the listing has it: compiled again at its lines
                try:
                    for text, n in zip(segments, lines):
                        if text is not None:
                            compile_(b'\n' * n + text, fname, 'exec', dont_inherit=True)
                except SyntaxError as e:
                    stop_candidate()
                    report(e)
                    _exit(1)
                raise
            wanted = sorted(x for x in loads - stores if x not in builtins.__dict__ and x[:2] != '__')
            why = None

            def bare_use(text, name):
                # Whether name appears in text other than called or defined
                # (`name(`, `def name`, `class name`): then a call may pass it.
                # Strings and comments count too: it only decides the walk.
                n, i = len_(name), text.find(name)
                while i >= 0:
                    before, after = text[i - 1:i] if i else b'', text[i + n:i + n + 1]
                    if not (before.isalnum() or before in (b'_', b'.') or after.isalnum() or after == b'_'):
                        rest = text[i + n:i + n + 40].lstrip()
                        head = text[max(0, i - 7):i].rstrip()
                        if rest[:1] != b'(' and not (head.endswith(b'def') or head.endswith(b'class')):
                            return True
                    i = text.find(name, i + n)
                return False

            asserts_only = check_at < 0 and b'assert' in segments[0] if segments[0] is not None else False
            maybe_passed = lambdas or any(bare_use(t, f.encode()) for t in segments if t is not None for f in funcs)
            if asserts_only or maybe_passed:
                import _ast

                def children(n):
                    out = []
                    for f in n._fields:
                        v = getattr_(n, f, None)
                        if isinstance_(v, list_):
                            out.extend(i for i in v if isinstance_(i, _ast.AST))
                        elif isinstance_(v, _ast.AST):
                            out.append(v)
                    return out

                trees = [None if t is None else compile_(t, fname, 'exec', _ast.PyCF_ONLY_AST, dont_inherit=True)
                         for t in segments]
                # The function under test named like a builtin (MBPP's `sum`):
                # every assert calls it and nothing else the tests do not
                # define. The judge keeps builtins its own (a candidate's `def
                # set` must not answer for the tests' set()), so such tests run
                # in-process.
                asserts = [st for st in trees[0].body if type_(st) is _ast.Assert] if asserts_only else []
                if asserts:
                    common = None
                    for st in asserts:
                        names = set_()
                        todo = [st]
                        while todo:
                            n = todo.pop()
                            if type_(n) is _ast.Call and type_(n.func) is _ast.Name and n.func.id not in funcs:
                                names.add(n.func.id)
                            todo.extend(children(n))
                        common = names if common is None else common & names
                    if common and not any(x not in builtins.__dict__ for x in common):
                        why = 'the tests call %s, named like a builtin' % ', '.join(sorted(common))
                # Objects of the candidate's classes the tests construct (APPS's
                # Solution, MBPP's Pair) stay in its process: the tests hold
                # stand-ins (RemoteObject). A function of the tests' own passed
                # to the candidate is the one thing a stand-in cannot carry.
                todo = [t for t in trees if t is not None] if maybe_passed and not why else []
                while todo and not why:
                    c = todo.pop()
                    todo.extend(children(c))
                    if type_(c) is not _ast.Call:
                        continue
                    f = c.func
                    if type_(f) is not _ast.Name or f.id in funcs or f.id in builtins.__dict__:
                        continue
                    args = list_(c.args) + [k.value for k in c.keywords]
                    while args and not why:
                        a = args.pop()
                        if type_(a) is _ast.Lambda or (type_(a) is _ast.Name and a.id in funcs):
                            why = 'the tests pass a function to %s' % f.id
                        else:
                            args.extend(children(a))
                del trees
            return codes, wanted, why


        # The plan (the parts compiled, the names wanted, why in-process)
        # is a function of the tests' text alone: the worker keeps the one
        # a judge computed and passes it to the next task with these tests
        # (docs/formats.md, "The Python judge's input"). One that is not
        # exactly of this form, or of another interpreter, is not used.
        import marshal
        tag = sys.implementation.cache_tag
        got = None
        if plan:
            try:
                p = marshal.loads(plan)
                if (type_(p) is tuple_ and len_(p) == 6 and p[:3] == ('sandq-plan', 1, tag) and
                        type_(p[3]) is tuple_ and len_(p[3]) == 2 and type_(p[4]) is tuple_ and
                        all(type_(x) is str_ for x in p[4]) and (p[5] is None or type_(p[5]) is str_) and
                        all((c is None) == (t is None) and (c is None or type_(c) is type_(judge.__code__))
                            for c, t in zip(p[3], segments))):
                    got = list_(p[3]), list_(p[4]), p[5]
            except Exception:
                got = None
        if got is None:
            got = analyse()
            # Offered to the worker before any code of the candidate's ran
            # (its process waits for 'go'): one write, under PIPE_BUF, so
            # nothing interleaves; the worker checks its digest.
            try:
                import _sha256
                blob = marshal.dumps(('sandq-plan', 1, tag, tuple_(got[0]), tuple_(got[1]), got[2]))
                line = (mark + b'plan ' + _sha256.sha256(blob).hexdigest().encode() + b' ' +
                        binascii.b2a_base64(blob, newline=False) + b'\n')
                if len_(line) <= 4000:
                    write(2, line)
            except Exception:
                pass
        codes, wanted, why = got

        def shift(c, n):
            # c at n lines further down: where the listing has it
            return c.replace(co_firstlineno=c.co_firstlineno + n, co_consts=tuple_(
                shift(k, n) if type_(k) is type_(c) else k for k in c.co_consts))

        codes = [None if c is None else shift(c, n) for c, n in zip(codes, lines)]

        g.clear()
        g.update(dunders)
        if why:
            # Run in-process, as harness.py does: the candidate's process goes.
            stop_candidate()
            write(2, mark + b'judge in_process ' + why.encode() + b'\n')
            del codes, segments
            hg = {'__name__': '__main__', '__builtins__': builtins}
            exec_(compile_(harness, fname, 'exec', dont_inherit=True), hg)
            g.update(hg)
            return hg['main'](binascii.b2a_base64(listing, newline=False), tests_at, check_at, nonce)

        def own_module(name):
            # The top-level module `name` as the judge imports it from its
            # own sys.path (the scratch is off it, and a module found there
            # anyway is refused), or None when there is none.
            try:
                import importlib.util
                spec = importlib.util.find_spec(name)
                if spec is None:
                    return None
                where = list_(spec.submodule_search_locations or ()) + ([spec.origin] if spec.has_location else [])
                for p in where:
                    p = posixpath.abspath(p)
                    if p == scratch or p.startswith(scratch + '/'):
                        return None
                __import__(name)
                return sys.modules[name]
            except BaseException_:
                return None

        # ---- isolated: the candidate runs its code, the judge its tests
        write(2, mark + b'judge isolated\n')
        sys.path[:] = [p for p in sys.path if p and p not in ('.', scratch) and not p.startswith(scratch + '/')]
        m = exchange(encode(('go', wanted)), 'before the tests')
        if type_(m) is not tuple_ or len_(m) != 2 or m[0] != 'ready' or type_(m[1]) is not dict_:
            fail("the candidate's process broke the protocol: no names")
        state['ready'] = True
        g['__sandq_cpu_limit__'] = set_cpu_limit
        # The names the tests use and neither define nor import. The
        # candidate's process wrote this table and may have forged it, so it
        # only ever gives stand-ins for its functions and copies of its plain
        # values: a module is the judge's own, imported by the wanted name
        # (math for `math`, whatever the table says math is), and an
        # attribute of a module (`isclose` as math.isclose) is never taken.
        for name in wanted:
            d = m[1].get(name)
            k = d[0] if type_(d) is tuple_ and d else None
            if name in sys.stdlib_module_names or k == 'm':
                o = own_module(name)
                if o is not None:
                    g[name] = o
            elif k == 'f':
                g[name] = Remote(name)
            elif k == 'v' and len_(d) == 2:
                g[name] = d[1]
        failed = False
        try:
            for c in codes:
                if c is not None:
                    exec_(c, g)
        except SystemExit_:
            stop_candidate()
            raise
        except BaseException_ as e:
            report(e)
            failed = True
        if failed:
            stop_candidate()
            flush_std()
            _exit(1)
        try:
            send(req_w, encode(('q',)))
        except OSError:
            pass
        st = reap()
        if not posix.WIFEXITED(st) or posix.WEXITSTATUS(st) != 0:
            flush_std()
            if posix.WIFSIGNALED(st):
                sig = posix.WTERMSIG(st)
                write(2, b"sandq: the candidate's process was killed by signal %d at its end\n" % sig)
            _exit(posix.WEXITSTATUS(st) if posix.WIFEXITED(st) else 1)
        flush_std()
        write(2, mark + b'end\n')

    # The judge's own code: its frames are left out of tracebacks.
    def codes_of(c):
        return set_([c]).union(*(codes_of(k) for k in c.co_consts if type_(k) is type_(c)))
    jcodes = codes_of(judge.__code__)

    def report(e):
        # The traceback of an exception in the tests, its lines from the
        # listing (linecache: main.py on disk holds the candidate's code).
        try:
            import linecache, traceback
            text = listing_for_report[0].decode('utf-8', 'replace')
            linecache.cache[fname] = (len_(text), None, text.splitlines(True), fname)
            keep, tb = [], e.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code not in jcodes:
                    keep.append(tb)
                tb = tb.tb_next
            for a, b in zip(keep, keep[1:] + [None]):
                a.tb_next = b
            flush_std()
            traceback.print_exception(type_(e), e, keep[0] if keep else None)
            flush_std()
        except BaseException_:
            write(2, b'uncaught exception\n')

    import posixpath
    scratch = posixpath.dirname(posixpath.abspath(fname))
    listing_for_report = [b'']
    req_r, req_w = posix.pipe()
    rep_r, rep_w = posix.pipe()
    flush_std()
    pid = posix.fork()
    if pid == 0:
        close(req_w)
        close(rep_r)
        try:
            candidate_side()
        finally:
            _exit(1)
    close(req_r)
    close(rep_w)
    del code
    return judge_side()
