# harness.py: the test harness around a task's code and tests (common/judge/harness.c).
#
# The worker runs this file as main.py, with one line appended that calls
# main() with the program listing (code, tests, check(entry_point): exactly
# what sq_task_program assembles) in base64, and the byte offsets where its
# tests and its check line start (-1: none). It runs the listing as
# `python3 -I -S main.py` would have run it, and proves that the tests ran
# to the end (docs/security.md, "Verdict integrity"):
#
#  1. Before any code of the task runs, it draws a nonce and writes
#     "sandq-harness:NONCE:begin" as the first bytes of stderr. The nonce is
#     in no file and in no text of the program.
#  2. It writes the listing over main.py (tracebacks read their source
#     lines from there), parses it as one file and compiles it in three
#     parts: the code, the tests (every operand of every comparison passed
#     through a check that fails the tests on a value claiming to equal
#     anything), the check line.
#  3. It runs the parts in order in a __main__ that holds nothing of the
#     harness. An uncaught exception prints its traceback, without the
#     harness's frames, and exits 1; SystemExit goes through untouched.
#  4. Only when all three returned does it write "sandq-harness:NONCE:end".
#
# Every name the harness uses after step 3 begins is a local of main():
# the task's code can rebind globals and builtins, not these.
#
# This is the in-process judge: judge.py runs tests that need the
# candidate's own objects through it (passing the nonce whose begin mark it
# already wrote), and programs run by hand with sq_harness_program_in_process.


def main(listing_b64, tests_at, check_at, nonce=None):
    import posix, sys, binascii, _ast
    write = posix.write
    if nonce is None:
        nonce = posix.urandom(16).hex()
        write(2, b'sandq-harness:' + nonce.encode() + b':begin\n')
    nonce = nonce.encode()
    g = globals()
    dunders = {k: v for k, v in g.items() if k[:2] == '__' and k[-2:] == '__'}
    fname = sys._getframe().f_code.co_filename
    listing = binascii.a2b_base64(listing_b64)
    try:
        fd = posix.open(fname, posix.O_WRONLY | posix.O_TRUNC)
        try:
            write(fd, listing)
        finally:
            posix.close(fd)
    except OSError:
        pass

    # Local copies of every builtin the checks use (the task may replace them).
    type_, id_, isinstance_, len_, list_, set_, repr_ = type, id, isinstance, len, list, set, repr
    Exception_, AssertionError_, BaseException_ = Exception, AssertionError, BaseException
    SystemExit_, MemoryError_, SyntaxError_, exec_, compile_ = SystemExit, MemoryError, SyntaxError, exec, compile
    dict_keys, dict_values = dict.keys, dict.values
    plain = frozenset((int, float, complex, str, bytes, bool, type(None), bytearray, range,
                       type(...), type(NotImplemented)))
    exact_containers = frozenset((list, tuple, set, frozenset, dict))
    containers = (list, tuple, set, frozenset, dict)

    class Probe:
        __slots__ = ()
    probe = Probe()
    word = 'sandq-probe-' + nonce.decode()
    number = int(nonce, 16) + (1 << 130)
    eq_probes = (probe, word, number, number / 7.0, [word], (word,), {word: word})
    orders = (lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b, lambda a, b: a >= b)

    def claims_anything(x):
        for p in eq_probes:
            try:
                if x == p:
                    return True
            except Exception_:
                pass
            try:
                if not (x != p):
                    return True
            except Exception_:
                pass
        for op in orders:
            try:
                if op(x, probe):
                    return True
            except Exception_:
                pass
        return False

    def flush_stderr():
        try:
            sys.stderr.flush()
        except BaseException_:
            pass

    def reject(x):
        flush_stderr()
        write(2, b'sandq-harness:' + nonce + b':equal-to-anything\n')
        try:
            what = type_(x).__qualname__
        except BaseException_:
            what = '?'
        raise AssertionError_('sandq: a compared value (an instance of %s) claims to equal anything; '
                              'the tests do not accept it' % what)

    def check(v):
        # Returns v; raises AssertionError when v, or anything in the
        # containers it is made of, compares equal (or ordered) to objects it
        # cannot know. Plain values and exact builtin containers are trusted
        # (their comparisons are C code the task cannot change).
        if type_(v) in plain:
            return v
        stack = [v]
        seen = set_()
        budget = 1000000
        while stack:
            x = stack.pop()
            t = type_(x)
            if t in plain:
                continue
            if t not in exact_containers:
                if claims_anything(x):
                    reject(x)
                if not isinstance_(x, containers) and not (t.__name__ == 'deque' and
                                                           t.__module__ == 'collections'):
                    continue
            if id_(x) in seen:
                continue
            seen.add(id_(x))
            items = list_(dict_keys(x)) + list_(dict_values(x)) if isinstance_(x, dict) else list_(x)
            budget -= len_(items)
            if budget < 0:
                break
            if {type_(e) for e in items} <= plain:
                continue
            stack.extend(items)
        return v

    # The harness's own code: its frames are left out of tracebacks.
    hcodes = set_()
    todo = [main.__code__]
    while todo:
        c = todo.pop()
        hcodes.add(c)
        todo.extend(k for k in c.co_consts if type_(k) is type_(c))

    def strip(tb):
        head = prev = None
        while tb is not None:
            nxt = tb.tb_next
            if tb.tb_frame.f_code not in hcodes:
                if prev is None:
                    head = tb
                else:
                    prev.tb_next = tb
                prev = tb
            tb = nxt
        if prev is not None:
            prev.tb_next = None
        return head

    def report(e):
        seen = set_()
        todo = [e]
        while todo:
            x = todo.pop()
            if x is None or id_(x) in seen:
                continue
            seen.add(id_(x))
            try:
                x.__traceback__ = strip(x.__traceback__)
            except BaseException_:
                pass
            todo += [x.__cause__, x.__context__]
        try:
            sys.excepthook(type_(e), e, e.__traceback__)
        except BaseException_:
            write(2, b'MemoryError\n' if isinstance_(e, MemoryError_) else b'uncaught exception\n')

    def statements_from(node, first, last):
        return [s for s in node.body if first <= s.lineno < last]

    def guard_compares(nodes, name):
        # Every operand of every comparison becomes name(operand): same
        # evaluation order, same short-circuit, same positions.
        def wrap(e):
            at = {'lineno': e.lineno, 'col_offset': e.col_offset,
                  'end_lineno': e.end_lineno, 'end_col_offset': e.end_col_offset}
            return _ast.Call(func=_ast.Name(id=name, ctx=_ast.Load(), **at), args=[e], keywords=[], **at)
        todo = list_(nodes)
        while todo:
            n = todo.pop()
            for f in n._fields:
                v = getattr(n, f, None)
                if isinstance_(v, list):
                    todo.extend(i for i in v if isinstance_(i, _ast.AST))
                elif isinstance_(v, _ast.AST):
                    todo.append(v)
            if type_(n) is _ast.Compare:
                n.left = wrap(n.left)
                n.comparators = [wrap(c) for c in n.comparators]

    def line_of(offset):
        return len_(listing[:offset].splitlines()) + 1

    guard = '_sandq_check_' + nonce.decode()[:12]
    end = 1 << 62
    failed = False
    try:
        tree = compile_(listing, fname, 'exec', _ast.PyCF_ONLY_AST, dont_inherit=True)
        tests_line = line_of(tests_at) if tests_at >= 0 else end
        check_line = line_of(check_at) if check_at >= 0 else end
        code = statements_from(tree, 0, min(tests_line, check_line))
        tests = statements_from(tree, tests_line, check_line)
        last = statements_from(tree, check_line, end)
        # A statement of the code that runs on past its end (an unclosed
        # string or bracket) would take the tests, or the check line, into
        # itself: they would never run. Python would run that; we refuse.
        for part, limit in ((code, min(tests_line, check_line)), (tests, check_line)):
            for st in part:
                if st.end_lineno >= limit:
                    raise SyntaxError_('sandq: this statement runs on into the tests (an unclosed string or '
                                       'bracket?)', (fname, st.lineno, st.col_offset + 1, None))
        guard_compares(tests, guard)
        parts = [compile_(_ast.Module(body=p, type_ignores=[]), fname, 'exec', dont_inherit=True)
                 for p in (code, tests, last)]
        del tree, code, tests, last
        g.clear()
        g.update(dunders)
        exec_(parts[0], g)
        g[guard] = check
        exec_(parts[1], g)
        exec_(parts[2], g)
    except SystemExit_:
        raise
    except BaseException_ as e:
        report(e)
        failed = True
    if failed:
        raise SystemExit_(1)
    flush_stderr()
    write(2, b'sandq-harness:' + nonce + b':end\n')
