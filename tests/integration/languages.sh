#!/bin/sh
# languages.sh: every language through `sandq-worker run --language`, in
# the jail: MultiPL-E-style code with its tests appended passes; a wrong
# implementation fails with the runtime's own words as the reason; a
# compiled language's syntax error is compile_error naming the compiler's
# first diagnostic; a C fork bomb ends at a limit and the next run passes;
# the abuse payloads in C, JavaScript and Go (tests/lib/languages.py) end
# at their status without reaching the network, the host's files or a
# path outside scratch; threads and timers run under the filter's
# per-language widenings (Ruby keeps the POSIX timer calls, the others get
# EPERM and still run).
# A language whose toolchain this host lacks is reported and left out; the
# test skips when none of them is installed.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
[ -x $PY ] || sq_skip "$PY is not installed"
[ "$(id -u)" -eq 0 ] || sq_skip "needs root (the jail's namespaces)"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL

$PY - "$SQ_BIN/sandq-worker" "$SQ_TMP" "${SQ_LANGUAGES:-}" <<'PY'
import json, os, subprocess, sys

worker, tmp, only = sys.argv[1], sys.argv[2], sys.argv[3].split()

sys.path.insert(0, os.path.join(os.environ['SQ_SRC'], 'tests', 'lib'))
from languages import L, WHY, DIAG, ABUSE, WIDEN, worker_run

failures, ran, missing = [], [], []

def run(lang, name, code, tests=None):
    return worker_run(worker, tmp, lang, name, code, tests, failures)

def expect(lang, name, o, status, why=None):
    if o.get('status') != status or (why and why not in (o.get('reason') or '')):
        failures.append('%s %s: want %s%s, got %s: %s (stderr %r)' % (
            lang, name, status, ' naming %r' % why if why else '', o.get('status'), o.get('reason'),
            (o.get('stderr') or '')[-300:]))

for lang, (ext, good, bad, tests, broken) in L.items():
    if only and lang not in only:
        continue
    o = run(lang, 'pass', good, tests)
    if o is None:
        missing.append(lang)
        continue
    ran.append(lang)
    expect(lang, 'pass', o, 'passed')
    expect(lang, 'fail', run(lang, 'fail', bad, tests), 'failed', WHY[lang])
    if broken is not None:
        expect(lang, 'compile', run(lang, 'compile', broken, tests), 'compile_error', DIAG[lang])
    print('%s: passed, failed%s' % (lang, ', compile_error' if broken else ''), flush=True)

if 'c' in ran:
    # A fork bomb: every fork fails at the jail's process limits; the run
    # ends at a limit (never ok), and the slot's next run passes.
    bomb = '#include <unistd.h>\nint main(void) { for (;;) fork(); }'
    o = run('c', 'bomb', bomb)
    if o.get('status') in ('ok', 'passed', 'compile_error', None):
        failures.append('c fork bomb: want a limit status, got %s: %s' % (o.get('status'), o.get('reason')))
    else:
        print('c fork bomb: %s (%s)' % (o['status'], o.get('reason')), flush=True)
    expect('c', 'after-bomb', run('c', 'after-bomb', L['c'][1], L['c'][3]), 'passed')

# The abuse payloads: each attack gets its status and learns nothing.
for lang, name, code, allowed, want_out, want_call in ABUSE:
    if lang not in ran:
        continue
    o = run(lang, 'abuse-' + name, code)
    out = (o.get('stdout') or '').strip()
    ok = o.get('status') in allowed and (want_out is None or want_out in out) and len(o.get('stdout') or '') <= 65536 and \
        (want_call is None or o.get('blocked_syscall') == want_call)
    if not ok:
        failures.append('%s abuse %s: got %s (%s), stdout %r, blocked %s' % (
            lang, name, o.get('status'), o.get('reason'), out[:200], o.get('blocked_syscall')))
    else:
        print('%s abuse %s: %s' % (lang, name, o['status']), flush=True)

# Threads and timers: the filter's widenings go to the languages that keep
# them; the others get EPERM and still run (bash's Ruby warns: bash keeps none).
for lang, name, code, want_out, want_err, bad_err in WIDEN:
    if lang not in ran or (lang == 'bash' and 'ruby' not in ran):
        continue
    o = run(lang, 'widen-' + name, code)
    out, err = (o.get('stdout') or '').strip(), o.get('stderr') or ''
    if o.get('status') != 'ok' or want_out not in out or (want_err and want_err not in err) or (bad_err and bad_err in err):
        failures.append('%s widen %s: got %s (%s), stdout %r, stderr %r' % (
            lang, name, o.get('status'), o.get('reason'), out[:200], err[-300:]))
    else:
        print('%s widen %s: ok' % (lang, name), flush=True)

if missing:
    print('not installed here, left out: %s' % ', '.join(missing))
for f in failures:
    print('FAIL ' + f)
sys.exit(1 if failures else (77 if not ran else 0))
PY
rc=$?
[ $rc -eq 77 ] && sq_skip "no language toolchain is installed (scripts/install-deps.sh installs them)"
[ $rc -eq 0 ] || sq_fail "languages: see above"
exit 0
