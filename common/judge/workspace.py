# workspace.py: files in and out of a task, and its language (common/judge/workspace.c).
#
# The worker runs this file as main.py, with one line appended that calls
# main() for a task with files, fetch_files or a language other than Python
# (docs/formats.md, "Files in and out"). Everything it does happens inside
# the jail, as the task's own uid, in the task's scratch:
#
#  1. It draws a nonce and writes "sandq-files:NONCE:begin" as the first
#     bytes of stderr. The nonce is in no file and in no text of the program.
#  2. It writes the task's files into scratch (O_EXCL, O_NOFOLLOW: plain
#     new files only; the names were checked by the worker's parser).
#  3. It runs the program: Python in this process, as `python3 -I -S
#     main.py` would (main.py holds the program, tracebacks show its
#     frames), with scratch on sys.path so the files can be imported;
#     bash as `bash -c CODE main.sh` in a child, waited for; any other
#     language (spec, from common/formats/language.c) written to its
#     source file, compiled by a child when it compiles (its output kept
#     and shown only when it fails: then "sandq-files:NONCE:compile" ends
#     it on stderr and the program never runs), then run by a child under
#     the program's own CPU and address-space limits. A compile that
#     succeeds writes its products right after the begin mark, between
#     ":build" and ":built", before the program starts, for the worker's
#     compile cache; a cached build (spec 'build') replaces the compile.
#  4. When the program ends (its last line, an exception or SystemExit), it
#     writes "sandq-files:NONCE:out" and one line per file in scratch that
#     matches a fetch glob and is new or changed ("F" or, cut at the budget,
#     "T", then the name and the bytes in base64), then "sandq-files:NONCE:end",
#     and exits as the program did. A program that ends by os._exit, a
#     signal or a limit returns no files.
#  5. It removes what the program and its files left in scratch (main.py
#     stays), so a warm zygote's scratch is as fresh and is kept rather
#     than mounted anew (common/jail/zygote_loop.c, scratch_as_fresh).
#
# On a warm worker this file is also the jail's prelude: every zygote
# loads it once as the module sandq_prelude (a full one also runs
# rehearse() before it forks), and the program then only calls
# sandq_prelude.main (workspace.c).


def main(language, program_b64, files, globs, budget_bytes, max_files, spec=None):
    import posix, sys, binascii
    write = posix.write
    nonce = posix.urandom(16).hex().encode()
    write(2, b'sandq-files:' + nonce + b':begin\n')
    a2b = binascii.a2b_base64
    given = {}
    for name_b64, data_b64 in files.items():
        name = a2b(name_b64).decode()
        data = a2b(data_b64)
        given[name] = data
        parts = name.split('/')
        for i in range(1, len(parts)):
            try:
                posix.mkdir('/'.join(parts[:i]), 0o755)
            except FileExistsError:
                pass
        fd = posix.open(name, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | posix.O_NOFOLLOW, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[write(fd, view):]
        finally:
            posix.close(fd)
    program = a2b(program_b64)
    fname = sys._getframe(1).f_code.co_filename  # main.py: the caller is the program's top level
    status, signal = 0, 0
    built = set()
    if language == 'python':
        status = run_python(program, fname)
    elif spec is None:
        status, signal = run_shell(program)
    else:
        status, signal, built = run_steps(program, spec, nonce)
        built -= set(given)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    try:
        if globs:
            send_files(write, nonce, given, [a2b(g).decode() for g in globs], budget_bytes, max_files, fname,
                       built)
    finally:
        clear('.', fname)
    if signal:
        posix.kill(posix.getpid(), signal)
    raise SystemExit(status)


def run_python(program, fname):
    """Runs program as __main__ from main.py; returns its exit status."""
    import posix, sys
    try:
        fd = posix.open(fname, posix.O_WRONLY | posix.O_TRUNC)
        try:
            write_all(fd, program)
        finally:
            posix.close(fd)
    except OSError:
        pass
    sys.path.insert(0, posix.getcwd())
    sys.dont_write_bytecode = True  # no __pycache__ among the files that come back
    g = {'__name__': '__main__', '__file__': fname, '__builtins__': __builtins__, '__doc__': None,
         '__spec__': None, '__loader__': globals().get('__loader__'), '__package__': None}
    try:
        code = compile(program, fname, 'exec', dont_inherit=True)
        exec(code, g)
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code & 0xff
        try:
            print(e.code, file=sys.stderr)
        except Exception:
            pass
        return 1
    except BaseException as e:  # noqa: B902 (the interpreter's own top level)
        tb = e.__traceback__
        if tb is not None and tb.tb_frame.f_code is sys._getframe().f_code:
            tb = tb.tb_next  # this frame is the runner's, not the program's
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        return 1
    return 0


def run_shell(program):
    """Runs program under /bin/bash; returns (exit status, terminating signal)."""
    import posix
    pid = posix.fork()
    if pid == 0:
        try:
            posix.execv('/bin/bash', ['bash', '-c', program, 'main.sh'])
        finally:
            posix._exit(127)
    while True:
        try:
            _, st = posix.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if posix.WIFSIGNALED(st):
        return 128 + posix.WTERMSIG(st), posix.WTERMSIG(st)
    return posix.WEXITSTATUS(st), 0


def run_steps(program, spec, nonce):
    """Writes the source, compiles it when the language compiles, runs it.
    Returns (exit status, terminating signal, names the source and the
    build left in scratch, which are never sent back as the task's files)."""
    import posix, binascii
    a2b = binascii.a2b_base64
    cwd = posix.getcwd()
    mem = str(spec['mem'])
    source = a2b(spec['source']).decode()
    env = step_env([a2b(e) for e in spec['env']], mem, cwd)
    fd = posix.open(source, posix.O_WRONLY | posix.O_CREAT | posix.O_TRUNC | posix.O_NOFOLLOW, 0o644)
    try:
        write_all(fd, program)
    finally:
        posix.close(fd)
    words = lambda key: [a2b(w).decode().replace('{mem}', mem) for w in spec[key]]
    if spec.get('build'):
        built = {source} | place_build(spec['build'])
    elif spec['compile']:
        before = set(walk('.', ''))
        out, st = child(words('compile'), env, None, capture=True)
        built = set(walk('.', ''))
        if not (posix.WIFEXITED(st) and posix.WEXITSTATUS(st) == 0):
            if not out.strip():
                out = b'the compiler ended with %s %d\n' % ((b'signal', posix.WTERMSIG(st)) if posix.WIFSIGNALED(st)
                                                          else (b'status', posix.WEXITSTATUS(st)))
            write_all(2, out if out.endswith(b'\n') else out + b'\n')
            write_all(2, b'sandq-files:' + nonce + b':compile\n')
            return 1, 0, built
        if spec.get('emit', 0) > 0:
            send_build(nonce, [n for n in sorted(built - before) if '/' not in n], spec['emit'])
    else:
        built = {source}
    standby = standby_claim(a2b(spec['standby']) if spec.get('standby') else None)
    if standby is not None:
        write_all(2, b'sandq-files:' + nonce + b':standby\n')
        st = standby_run(standby, source)
    else:
        _, st = child(words('run'), env, (spec['cpu_s'], spec['run_as_mib']) if spec['cpu_s'] > 0 else None)
    if posix.WIFSIGNALED(st):
        return 128 + posix.WTERMSIG(st), posix.WTERMSIG(st), built
    return posix.WEXITSTATUS(st), 0, built


def step_env(entries, mem, cwd):
    """The environment of a language's steps: ours, the fixed entries, then
    the language's own (NAME=VALUE bytes, {mem} and {scratch} filled in)."""
    import posix
    env = dict(posix.environ)
    env.update({b'PATH': b'/usr/bin:/bin', b'HOME': cwd.encode(), b'TMPDIR': cwd.encode(), b'LANG': b'C.UTF-8'})
    for e in entries:
        k, _, v = e.decode().replace('{scratch}', cwd).replace('{mem}', mem).partition('=')
        env[k.encode()] = v.encode()
    return env


# The standby: a runtime started before its task is known, by the slot's
# child for the next task, when the last task asked for it (its request,
# common/judge/workspace.c: sq_workspace_standby). It runs in the jail as
# that task's own child would, with the request's limits, its stdin,
# stdout and stderr pipes of ours and the source's name to come on its
# descriptor 3. A run whose request is the same takes it (standby_claim);
# for any other kind of task the supervisor replaces this child first
# (DROP: common/jail/zygote_proto.h).
# (request, pid, name_w, in_w, out_r, err_r) or None.
_standby = None


def standby_start(request, fsize):
    """Starts the runtime request names, in scratch; never raises (no
    standby then: the run starts its own). posix_spawn (a vfork): this
    process's pages are not copied, so nothing of the start is charged to
    the task it takes next; prlimit sets the run's limits, as child() does
    for a cold start, then execs the runtime."""
    global _standby
    import posix, binascii
    a2b = binascii.a2b_base64
    fds = []
    try:
        lines = request.split(b'\n')
        if lines[0] != b'sandq-standby 1':
            return
        cpu_s, as_mib, mem = (int(x) for x in lines[1].split())
        argv = [a2b(w).decode().replace('{mem}', str(mem)) for w in lines[2].split()]
        cwd = '/scratch'
        env = step_env([a2b(e) for e in lines[3].split()], str(mem), cwd)
        for _ in range(4):
            fds.extend(posix.pipe())
        name_r, name_w, in_r, in_w, out_r, out_w, err_r, err_w = fds
        for fd in range(3, 256):  # nothing of ours but the four ends: the control socket is ours alone
            if fd not in fds:
                try:
                    posix.set_inheritable(fd, False)
                except OSError:
                    pass
        limits = ['--as=%d:%d' % (as_mib << 20, as_mib << 20)]
        if cpu_s > 0:
            limits.append('--cpu=%d:%d' % (cpu_s, cpu_s + 1))
        if fsize is not None:
            limits.append('--fsize=%s:%s' % tuple('unlimited' if v < 0 else str(v) for v in fsize))
        posix.chdir(cwd)  # where take() puts this process anyway
        d = posix.POSIX_SPAWN_DUP2
        pid = posix.posix_spawn('/usr/bin/prlimit', ['prlimit'] + limits + ['--'] + argv, env,
                                file_actions=[(d, in_r, 0), (d, out_w, 1), (d, err_w, 2), (d, name_r, 3)])
        for fd in (name_r, in_r, out_w, err_w):
            posix.close(fd)
        _standby = (request, pid, name_w, in_w, out_r, err_r)
    except Exception:
        for fd in fds:
            try:
                posix.close(fd)
            except OSError:
                pass


def standby_drop():
    """Kills the standby and waits until it has exited (its memory freed),
    leaving it unreaped: its CPU time is never counted as the task's; the
    zygote reaps it once this child has ended."""
    global _standby
    import posix
    if _standby is None:
        return
    _, pid, *fds = _standby
    _standby = None
    for fd in fds:
        if fd >= 0:
            posix.close(fd)
    try:
        posix.kill(pid, 9)
        while True:
            try:
                posix.waitid(posix.P_PID, pid, posix.WEXITED | posix.WNOWAIT)
                break
            except InterruptedError:
                continue
    except OSError:
        pass


def standby_claim(request):
    """The standby, when it was started for request (taken: no one else
    gets it); else None, any other one dropped."""
    global _standby
    sb = _standby
    if sb is None or request is None or sb[0] != request:
        standby_drop()
        return None
    _standby = None
    return sb


def standby_run(sb, source):
    """Runs source in the claimed standby: its name on descriptor 3, our
    stdin copied to its stdin, its stdout and stderr to ours, until both
    end; returns its wait status."""
    import posix, select
    _, pid, name_w, in_w, out_r, err_r = sb
    try:
        write_all(name_w, source.encode() + b'\n')
    except OSError:
        pass
    posix.close(name_w)
    posix.set_blocking(in_w, False)
    poll = select.poll()
    for fd in (out_r, err_r):
        poll.register(fd, select.POLLIN)
    poll.register(in_w, select.POLLOUT)
    pending, stdin_open = b'', True
    open_fds = {out_r: 1, err_r: 2}
    while open_fds:
        for fd, _ in poll.poll():
            if fd == in_w:
                try:
                    if not pending and stdin_open:
                        pending = posix.read(0, 1 << 16)
                        stdin_open = bool(pending)
                    if pending:
                        pending = pending[posix.write(in_w, pending):]
                except BlockingIOError:
                    continue
                except OSError:
                    pending, stdin_open = b'', False
                if not pending and not stdin_open:
                    poll.unregister(in_w)
                    posix.close(in_w)
                    in_w = -1
                continue
            try:
                chunk = posix.read(fd, 1 << 16)
            except InterruptedError:
                continue
            if chunk:
                write_all(open_fds[fd], chunk)
            else:
                poll.unregister(fd)
                posix.close(fd)
                del open_fds[fd]
    if in_w >= 0:
        posix.close(in_w)
    while True:
        try:
            return posix.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def send_build(nonce, names, max_bytes):
    """Writes the compiler's products (new regular files at the top of
    scratch) on stderr as the build block, before anything of the program
    runs: the worker caches it (common/judge/compile_cache.c). Nothing is
    sent when they are larger than max_bytes together."""
    import posix, binascii
    b2a = binascii.b2a_base64
    lines, total = [b'sandq-files:' + nonce + b':build\n'], 0
    for name in names:
        try:
            fd = posix.open(name, posix.O_RDONLY | posix.O_NOFOLLOW)
        except OSError:
            return
        try:
            mode = posix.fstat(fd).st_mode
            chunks = []
            while total <= max_bytes:
                chunk = posix.read(fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        finally:
            posix.close(fd)
        if total > max_bytes:
            return
        lines.append((b'X ' if mode & 0o111 else b'F ') + b2a(name.encode(), newline=False) + b' ' +
                     b2a(b''.join(chunks), newline=False) + b'\n')
    lines.append(b'sandq-files:' + nonce + b':built\n')
    write_all(2, b''.join(lines))


def place_build(build):
    """Writes a cached build (a list of (name, bytes, executable), in
    base64) into scratch, as the compile step would have left it; returns
    the names."""
    import posix, binascii
    a2b = binascii.a2b_base64
    names = set()
    for name_b64, data_b64, executable in build:
        name = a2b(name_b64).decode()
        fd = posix.open(name, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | posix.O_NOFOLLOW,
                        0o755 if executable else 0o644)
        try:
            write_all(fd, a2b(data_b64))
        finally:
            posix.close(fd)
        names.add(name)
    return names


def child(argv, env, limits, capture=False):
    """Runs argv in a child with env; limits (CPU seconds, address space in
    MiB or 0) lowered in it first. With capture, its stdout and stderr are
    read back (the first 64 KiB). Returns (output, wait status)."""
    import posix
    r = w = -1
    if capture:
        r, w = posix.pipe()
    pid = posix.fork()
    if pid == 0:
        try:
            if capture:
                posix.dup2(w, 1)
                posix.dup2(w, 2)
            if limits:
                import resource
                cpu_s, as_mib = limits
                resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
                if as_mib > 0:
                    resource.setrlimit(resource.RLIMIT_AS, (as_mib << 20, as_mib << 20))
            posix.execve(argv[0], argv, env)
        except BaseException as e:  # noqa: B902 (a child that must not return)
            try:
                write_all(2, ('%s: %s\n' % (argv[0], e)).encode())
            finally:
                posix._exit(127)
    out = []
    if capture:
        posix.close(w)
        kept = 0
        while True:
            try:
                chunk = posix.read(r, 1 << 16)
            except InterruptedError:
                continue
            if not chunk:
                break
            if kept < 1 << 16:
                out.append(chunk[:(1 << 16) - kept])
                kept += len(out[-1])
        posix.close(r)
    while True:
        try:
            _, st = posix.waitpid(pid, 0)
            return b''.join(out), st
        except InterruptedError:
            continue


def write_all(fd, data):
    import posix
    view = memoryview(data)
    while view:
        view = view[posix.write(fd, view):]


def send_files(write, nonce, given, globs, budget_bytes, max_files, fname, built):
    """Writes the out block: files matching globs, new or changed, within the budget."""
    import posix, binascii
    b2a = binascii.b2a_base64
    lines = [b'sandq-files:' + nonce + b':out\n']
    sent = 0
    for name in walk('.', ''):
        if name == fname or name == 'main.py' or name in built or not any(match(name, g) for g in globs):
            continue
        try:
            fd = posix.open(name, posix.O_RDONLY | posix.O_NOFOLLOW)
        except OSError:
            continue
        try:
            chunks, room = [], budget_bytes + 1
            while room > 0:
                chunk = posix.read(fd, min(room, 1 << 16))
                if not chunk:
                    break
                chunks.append(chunk)
                room -= len(chunk)
            data = b''.join(chunks)
        finally:
            posix.close(fd)
        if given.get(name) == data:
            continue
        cut = sent >= max_files or len(data) > budget_bytes
        if sent >= max_files:
            data = b''
        elif cut:
            data = data[:budget_bytes]
        budget_bytes -= len(data)
        sent += 1
        lines.append((b'T ' if cut else b'F ') + b2a(name.encode(), newline=False) + b' ' +
                     b2a(data, newline=False) + b'\n')
    lines.append(b'sandq-files:' + nonce + b':end\n')
    write_all(2, b''.join(lines))


def match(name, glob):
    """fnmatch's rules, case-sensitive, '*' crossing '/' (without importing
    re, which costs a lean zygote more than the task): *, ?, [seq], [!seq]."""
    if glob == '*':
        return True
    i = j = 0
    star_i, star_j = -1, 0
    while j < len(name):
        if i < len(glob) and glob[i] == '*':
            star_i, star_j = i, j
            i += 1
            continue
        if i < len(glob):
            ok, step = one(glob, i, name[j])
            if ok:
                i += step
                j += 1
                continue
        if star_i < 0:
            return False
        star_j += 1
        i, j = star_i + 1, star_j
    while i < len(glob) and glob[i] == '*':
        i += 1
    return i == len(glob)


def one(glob, i, c):
    """Whether c matches the pattern item at glob[i], and the item's length."""
    g = glob[i]
    if g == '?':
        return True, 1
    if g == '[':
        k = i + 1
        neg = k < len(glob) and glob[k] == '!'
        k += neg
        start, hit = k, False
        while k < len(glob) and (glob[k] != ']' or k == start):
            if k + 2 < len(glob) and glob[k + 1] == '-' and glob[k + 2] != ']':
                hit = hit or glob[k] <= c <= glob[k + 2]
                k += 3
            else:
                hit = hit or glob[k] == c
                k += 1
        if k < len(glob):
            return hit != neg, k + 1 - i
    return g == c, 1


def clear(top, fname):
    """Removes everything below top but the program's file (no links followed)."""
    import posix
    try:
        entries = list(posix.scandir(top))
    except OSError:
        return
    for e in entries:
        path = top + '/' + e.name
        try:
            if e.is_dir(follow_symlinks=False):
                clear(path, fname)
                posix.rmdir(path)
            elif not (top == '.' and e.name == 'main.py'):
                posix.unlink(path)
        except OSError:
            pass


def walk(top, prefix):
    """Regular files below top (no symbolic links followed), relative names, sorted."""
    import posix
    out = []
    try:
        entries = sorted(posix.scandir(top), key=lambda e: e.name)
    except OSError:
        return out
    for e in entries:
        rel = prefix + e.name
        if e.is_dir(follow_symlinks=False):
            out.extend(walk(top + '/' + e.name, rel + '/'))
        elif e.is_file(follow_symlinks=False):
            out.append(rel)
    return out


REHEARSALS = 10  # enough calls for the interpreter to specialise the hot functions' bytecode


def rehearse(scratch):
    """main() run REHEARSALS times in scratch, with a file in and a glob
    out, its stderr read and dropped: in a warm zygote, before it forks
    (common/jail/zygote.py), so each task's child finds binascii imported,
    the import system's caches filled and this code's first-run work done,
    instead of doing it on copy-on-write pages of its own. Leaves scratch,
    the cwd, sys.path and the descriptors as they were; raises on failure."""
    import posix, sys
    here, path = posix.getcwd(), list(sys.path)
    r, w = posix.pipe()
    posix.set_blocking(r, False)
    saved = posix.dup(2)
    posix.chdir(scratch)
    try:
        posix.dup2(w, 2)
        code = compile("main('python', 'eCA9IDEK', {'aW4udHh0': 'eA=='}, ['Kg=='], 4096, 4)\n", 'main.py', 'exec')
        for _ in range(REHEARSALS):
            posix.close(posix.open('main.py', posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL, 0o600))
            try:
                exec(code, {'main': main, '__builtins__': __builtins__})
            except SystemExit as e:
                if e.code:
                    raise RuntimeError('workspace rehearsal: exit status %r' % (e.code,)) from None
            finally:
                posix.unlink('main.py')
                sys.path[:] = path
            while True:  # the marks it wrote (a few hundred bytes: the pipe never fills)
                try:
                    if len(posix.read(r, 1 << 16)) < 1 << 16:
                        break
                except BlockingIOError:
                    break
    finally:
        posix.dup2(saved, 2)
        for fd in (saved, r, w):
            posix.close(fd)
        posix.chdir(here)
