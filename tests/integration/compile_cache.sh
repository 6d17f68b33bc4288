#!/bin/sh
# compile_cache.sh: the worker's compile cache through a real worker and
# redis-server. The same C tasks twice (a pass, a failed test, a
# compile_error): the second round takes its builds from the cache
# (compile_cached true) and every result is the first round's (status,
# reason, exit code, output); the compile_error is compiled again each
# time. A modified source misses. A program that replaces its own binary
# in scratch does not poison the cache: the next identical task runs the
# compiler's build and passes again. Java (several class files) too when
# it is installed. With compile_cache_mib 0 nothing is cached.
set -u
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
sq_need_worker_host
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson) is not installed"
[ -x /usr/bin/gcc ] || sq_skip "gcc is not installed"
sq_start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL
sq_worker cc1
# The compilers' versions are read while the worker runs; until gcc's is
# known, C compiles without the cache.
sq_wait_for "grep -q 'languages: ' $SQ_TMP/worker-cc1.log && grep -q 'compile cache: c: ' $SQ_TMP/worker-cc1.log" 60 ||
  sq_fail "the worker did not start, or did not read gcc's version: $(tail -3 "$SQ_TMP/worker-cc1.log")"
found=$(sed -n 's/.*languages: [0-9]* of [0-9]* found: //p' "$SQ_TMP/worker-cc1.log" | head -1)

# round N's tasks: tasks.N.jsonl; the names are the same every round, the ids not.
make_round() { # $1 round, $2 variant (same|modified)
  $PY - "$1" "$2" "$found" >"$SQ_TMP/tasks.$1.jsonl" <<'PY'
import json, sys
rnd, variant, found = sys.argv[1], sys.argv[2], sys.argv[3].split(', ')
tests = 'int main(void) {\n    assert(add(2, 3) == 5);\n    return 0;\n}'
# Replaces ./main (its own binary) with a script that fails, then passes.
poison = ('#include <stdio.h>\n#include <unistd.h>\n#include <sys/stat.h>\nint main(void) {\n'
          '  unlink("main");\n  FILE *f = fopen("main", "w");\n  if (!f) return 2;\n'
          '  fputs("#!/bin/sh\\nexit 3\\n", f);\n  fclose(f);\n  chmod("main", 0755);\n  return 0;\n}')
tasks = {
  'pass': ('c', 'int add(int a, int b) { return a + b; }', tests),
  'fail': ('c', 'int add(int a, int b) { return a - b; }', tests),
  'broken': ('c', 'int add(int a, int b) { return a + ; }', tests),
  'poison': ('c', poison, None),
}
if variant == 'modified':
  tasks = {'pass': ('c', 'int add(int a, int b) { return b + a; }', tests)}
if 'java' in found and variant == 'same':
  tasks['java'] = ('java', 'class Problem {\n    interface F { long f(long a); }\n'
                   '    static F inc = new F() { public long f(long a) { return a + 1; } };',
                   '    public static void main(String[] args) {\n        assert(inc.f(4) == 5);\n    }\n}')
for name, (lang, code, t) in tasks.items():
  task = {'id': '%s-%s' % (name, rnd), 'language': lang, 'code': code, 'metadata': {'name': name}}
  if t:
    task['tests'] = t
  print(json.dumps(task))
PY
}

push_round() { # $1 round
  "$P" push --batch "r$1" --wait --timeout-s 300 --out "$SQ_TMP/r$1.bson" "$SQ_TMP/tasks.$1.jsonl" \
    >"$SQ_TMP/push.$1.out" 2>&1 || sq_fail "round $1: push --wait exited $?: $(tail -3 "$SQ_TMP/push.$1.out")"
}

# One round at a time: each finds what the rounds before it left.
make_round 1 same && push_round 1
make_round 2 same && push_round 2
make_round 3 same && push_round 3
make_round 4 modified && push_round 4

$PY - "$SQ_TMP" <<'PY' || sq_fail "results: see above"
import bson, sys
tmp = sys.argv[1]
def load(n):
    return {d['metadata']['name']: d for d in bson.decode_all(open('%s/r%d.bson' % (tmp, n), 'rb').read())}
r = [None] + [load(n) for n in (1, 2, 3, 4)]
bad = 0
def check(ok, what):
    global bad
    print('%s %s' % ('ok  ' if ok else 'FAIL', what))
    bad += not ok
want = {'pass': 'passed', 'fail': 'failed', 'broken': 'compile_error', 'poison': 'ok', 'java': 'passed'}
for name, status in want.items():
    if name not in r[1]:
        continue
    for n in (1, 2, 3):
        d = r[n][name]
        cached = n > 1 and status != 'compile_error'
        check(d['status'] == status, 'round %d %s: %s (%s)' % (n, name, d['status'], d.get('reason')))
        check(d.get('compile_cached') is cached, 'round %d %s: compile_cached %r' % (n, name, d.get('compile_cached')))
        if n > 1:
            for k in ('status', 'reason', 'exit_code', 'signal', 'stdout', 'stderr'):
                check(d.get(k) == r[1][name].get(k), 'round %d %s: %s as in round 1 (%r, %r)' %
                      (n, name, k, d.get(k), r[1][name].get(k)))
d = r[4]['pass']
check(d['status'] == 'passed' and d.get('compile_cached') is False, 'modified source: %s, compile_cached %r' %
      (d['status'], d.get('compile_cached')))
sys.exit(1 if bad else 0)
PY
kill -TERM "$(sq_wpid cc1)" 2>/dev/null
sq_wait_for "! kill -0 $(sq_wpid cc1) 2>/dev/null" 30

# compile_cache_mib 0: the same task twice compiles twice.
SANDQ_COMPILE_CACHE_MIB=0 sq_worker cc0
make_round 5 modified && push_round 5
make_round 6 modified && push_round 6
$PY - "$SQ_TMP" <<'PY' || sq_fail "without a cache: see above"
import bson, sys
for n in (5, 6):
    d = bson.decode_all(open('%s/r%d.bson' % (sys.argv[1], n), 'rb').read())[0]
    ok = d['status'] == 'passed' and d.get('compile_cached') is False
    print('%s round %d without a cache: %s, compile_cached %r' % ('ok  ' if ok else 'FAIL', n, d['status'],
                                                                   d.get('compile_cached')))
    if not ok:
        sys.exit(1)
PY
kill -TERM "$(sq_wpid cc0)" 2>/dev/null
exit 0
