#!/bin/sh
# calls.sh: the judge in other languages (docs/security.md, "The judge in
# other languages"), through `sandq-worker run` in the jail: for each of
# the twelve languages, from tests/data/calls/<language>.json, a correct
# solution is passed and a wrong one failed, and so are three wrong ones
# that a judge by exit status would pass: an early exit(0), a handler
# that turns the failed assertion into success, and an override of the
# test's assert machinery. Tests with a line of no form the judge takes
# are invalid_task. A language whose toolchain this host lacks is named
# and left out; the test skips when none is installed.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
[ -x $PY ] || sq_skip "$PY is not installed"
[ "$(id -u)" -eq 0 ] || sq_skip "needs root (the jail's namespaces)"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL

$PY - "$SQ_BIN/sandq-worker" "$SQ_TMP" "$SQ_SRC/tests/data/calls" "${SQ_LANGUAGES:-}" <<'PY'
import json, os, sys

worker, tmp, fixtures, only = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
sys.path.insert(0, os.path.join(os.environ['SQ_SRC'], 'tests', 'lib'))
from languages import worker_run, EXT
failures, ran, missing = [], [], []

def run(lang, name, code, tests):
    return worker_run(worker, tmp, lang, name, code, tests, failures)

for lang in sorted(EXT):
    if only and lang not in only:
        continue
    fx = json.load(open(os.path.join(fixtures, lang + '.json')))
    o = run(lang, 'correct', fx['correct'], fx['tests'])
    if o is None:
        missing.append(lang)
        continue
    ran.append(lang)
    want = {'correct': 'passed', 'wrong': 'failed', 'exit_early': 'failed', 'handler': 'failed', 'override': 'failed'}
    for name, status in want.items():
        r = o if name == 'correct' else run(lang, name, fx[name], fx['tests'])
        if r.get('status') != status:
            failures.append('%s %s: want %s, got %s: %s (stdout %r, stderr %r)' % (
                lang, name, status, r.get('status'), r.get('reason'), (r.get('stdout') or '')[-200:],
                (r.get('stderr') or '')[-300:]))
        elif status == 'failed' and not (r.get('reason') or '').startswith('call '):
            failures.append('%s %s: failed, but the reason names no call: %s' % (lang, name, r.get('reason')))
        if name == 'correct' and '\x1esandq-call' in (r.get('stdout') or ''):
            failures.append('%s: the records were left in the stored stdout' % lang)
    # a line that carries logic: refused, named, never run
    bad = fx['tests'].rstrip('\n').split('\n')
    bad.insert(len(bad) - 1, 'sandq_not_a_template_line(1)')
    r = run(lang, 'refused', fx['correct'], '\n'.join(bad) + '\n')
    if r.get('status') != 'invalid_task' or 'sandq_not_a_template_line' not in (r.get('reason') or ''):
        failures.append('%s refused: want invalid_task naming the line, got %s: %s' % (
            lang, r.get('status'), r.get('reason')))
    print('%s: correct passed; wrong, exit_early, handler, override failed; a foreign line refused' % lang,
          flush=True)

if missing:
    print('not installed here, left out: %s' % ', '.join(missing))
for f in failures:
    print('FAIL ' + f)
sys.exit(1 if failures else (77 if not ran else 0))
PY
rc=$?
[ $rc -eq 77 ] && sq_skip "no language toolchain is installed (scripts/install-deps.sh installs them)"
[ $rc -eq 0 ] || sq_fail "calls: see above"
echo "calls: all checks passed"
