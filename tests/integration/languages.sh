#!/bin/sh
# languages.sh: every language through `sandq-worker run --language`, in
# the jail: MultiPL-E-style code with its tests appended passes; a wrong
# implementation fails with the runtime's own words as the reason; a
# compiled language's syntax error is compile_error naming the compiler's
# first diagnostic; a C fork bomb ends at a limit and the next run passes.
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

# name: (extension, correct code, wrong code, tests, code that does not compile or None)
L = {
 'c': ('c', 'int add(int a, int b) { return a + b; }', 'int add(int a, int b) { return a - b; }',
       '#include <assert.h>\nint main(void) { assert(add(2, 3) == 5); return 0; }', 'int add(int a, int b) { return a + ; }'),
 'cpp': ('cpp', '#include <vector>\nint add(int a, int b) { std::vector<int> v{a, b}; return v[0] + v[1]; }',
         'int add(int a, int b) { return a - b; }',
         '#include <cassert>\nint main() { assert(add(2, 3) == 5); }', 'int add(int a, int b) { return a + b }'),
 'javascript': ('js', 'function add(a, b) { return a + b; }', 'function add(a, b) { return a - b; }',
                "const assert = require('node:assert');\nassert.deepEqual(add(2, 3), 5);", None),
 'typescript': ('ts', 'function add(a: number, b: number): number { return a + b; }',
                'function add(a: number, b: number): number { return a - b; }',
                "declare var require: any;\nconst assert = require('node:assert');\nassert.deepEqual(add(2, 3), 5);",
                'function add(a: number, b: number): number { return "x"; }'),
 'go': ('go', 'package main\n\nfunc add(a int, b int) int { return a + b }',
        'package main\n\nfunc add(a int, b int) int { return a - b }',
        'func main() {\n\tif add(2, 3) != 5 {\n\t\tpanic("assertion failed: add(2, 3) != 5")\n\t}\n}',
        'package main\n\nfunc add(a int, b int) int { return a + "b" }'),
 'rust': ('rs', 'fn add(a: i64, b: i64) -> i64 { a + b }', 'fn add(a: i64, b: i64) -> i64 { a - b }',
          'fn main() { assert_eq!(add(2, 3), 5); }', 'fn add(a: i64, b: i64) -> i64 { a + "b" }'),
 'java': ('java', 'import java.util.*;\n\nclass Problem {\n    public static long add(long a, long b) { return a + b; }',
          'class Problem {\n    public static long add(long a, long b) { return a - b; }',
          '    public static void main(String[] args) {\n        assert(add(2, 3) == 5);\n    }\n}',
          'class Problem {\n    public static long add(long a, long b) { return a + ; }'),
 'ruby': ('rb', 'def add(a, b)\n  a + b\nend', 'def add(a, b)\n  a - b\nend',
          'raise "add(2, 3) is not 5" unless add(2, 3) == 5', None),
 'php': ('php', '<?php\nfunction add($a, $b) { return $a + $b; }', '<?php\nfunction add($a, $b) { return $a - $b; }',
         'if (add(2, 3) !== 5) { throw new Exception("Test failed!"); }', None),
 'lua': ('lua', 'function add(a, b) return a + b end', 'function add(a, b) return a - b end',
         'assert(add(2, 3) == 5)', None),
 'perl': ('pl', 'sub add { my ($a, $b) = @_; return $a + $b; }', 'sub add { my ($a, $b) = @_; return $a - $b; }',
          'die "add(2, 3) is not 5\\n" unless add(2, 3) == 5;', None),
 'bash': ('sh', 'add() { echo $(( $1 + $2 )); }', 'add() { echo $(( $1 - $2 )); }',
          '[ "$(add 2 3)" = 5 ] || { echo "add 2 3 is not 5" >&2; exit 1; }', None),
}
# What each runtime says when the wrong code fails its test (in the reason).
WHY = {'c': 'Assertion', 'cpp': 'Assertion', 'javascript': 'AssertionError', 'typescript': 'AssertionError',
       'go': 'panic: assertion failed', 'rust': 'panicked', 'java': 'AssertionError', 'ruby': 'is not 5',
       'php': 'Test failed!', 'lua': 'assertion failed', 'perl': 'is not 5', 'bash': 'is not 5'}
# The compiler's first diagnostic (in the compile_error's reason).
DIAG = {'c': 'error', 'cpp': 'error', 'typescript': 'error TS', 'go': 'mismatched types', 'rust': 'error',
        'java': 'error'}

failures, ran, missing = [], [], []

def run(lang, name, code, tests=None):
    ext = L[lang][0]
    src = os.path.join(tmp, '%s-%s.%s' % (lang, name, ext))
    with open(src, 'w') as f:
        f.write(code + '\n')
    argv = [worker, 'run', '--language', lang, src]
    if tests is not None:
        with open(src + '.tests', 'w') as f:
            f.write(tests + '\n')
        argv[4:4] = ['--tests', src + '.tests']
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode == 2 and 'not installed here' in p.stderr:
        return None
    if p.returncode != 0:
        failures.append('%s %s: exit %d: %s' % (lang, name, p.returncode, p.stderr[-400:]))
        return {}
    return json.loads(p.stdout)

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
