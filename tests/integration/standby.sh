#!/bin/sh
# standby.sh: node's standby runtime (docs/jail-performance.md, "Standby
# runtimes") through a real worker with one jail thread and one full slot,
# tasks one at a time so each lands on the slot the last one left:
#  - a JavaScript task after another takes the standby the first left
#    (jail.standby) and gets what a cold start gives it: stdout, stderr,
#    status, exit code, argv, execArgv, require.main, files, stdin (cases);
#  - an uncaught error and a CPU-bound loop end as they do cold;
#  - a task of another kind after it has the standby dropped first: a
#    Python task's memory peak and CPU are those it has with no JavaScript
#    before it (the verdict depends on the task alone);
#  - a JavaScript task with other limits does not take it (a cold start).
set -u
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
sq_need_worker_host
[ -x /usr/bin/node ] || sq_skip "node is not installed (scripts/install-deps.sh installs it for make test)"
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson) is not installed"
sq_start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_JAIL_THREADS=1 SANDQ_JAIL_POOL_SIZE=1
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL
sq_worker sb
sq_wait_for "grep -q 'languages: .*javascript' $SQ_TMP/worker-sb.log" 60 ||
  sq_fail "the worker did not find node: $(tail -3 "$SQ_TMP/worker-sb.log")"

# one TASK_JSON: pushes it, waits, and leaves its result as JSON in $SQ_TMP/ID.json
n=0
one() {
  n=$((n + 1))
  printf '%s\n' "$1" >"$SQ_TMP/t$n.jsonl"
  id=$($PY -c 'import json, sys; print(json.loads(sys.argv[1])["id"])' "$1")
  "$SQ_BIN/sandq-producer" push --batch "b$n" --wait --timeout-s 120 --out "$SQ_TMP/b$n.bson" "$SQ_TMP/t$n.jsonl" \
    >"$SQ_TMP/b$n.out" 2>&1 || sq_fail "task $id: push --wait: $(tail -3 "$SQ_TMP/b$n.out")"
  $PY -c 'import bson, json, sys
d = bson.decode_all(open(sys.argv[1], "rb").read())[0]
json.dump(d, open(sys.argv[2], "w"), default=str)' "$SQ_TMP/b$n.bson" "$SQ_TMP/$id.json" || sq_fail "task $id: no result"
}

PROBE='const fs = require("fs");
fs.writeFileSync("out.txt", "x");
console.log(JSON.stringify([process.argv.slice(1), process.execArgv, require.main === module, __filename,
  process.cwd(), fs.readdirSync(".").sort(), Object.keys(process.env).sort()]));
console.error("to stderr");
process.exitCode = 3;'
ERR='function f() { throw new Error("boom"); }
f();'
js() { $PY -c 'import json, sys
t = {"id": sys.argv[1], "language": "javascript", "code": sys.argv[2]}
if len(sys.argv) > 3: t.update(json.loads(sys.argv[3]))
print(json.dumps(t))' "$@"; }

one '{"id":"py-prime","code":"import json\nx = [0] * 1000\nprint(json.dumps(len(x)))"}'
one '{"id":"py-first","code":"import json\nx = [0] * 1000\nprint(json.dumps(len(x)))"}'
one "$(js js-cold "$PROBE")"
one "$(js js-warm "$PROBE")"
one '{"id":"py-after","code":"import json\nx = [0] * 1000\nprint(json.dumps(len(x)))"}'
one "$(js err-cold "$ERR")"
one "$(js err-warm "$ERR")"
one "$(js loop-prime 'console.log(1)' '{"limits": {"cpu_ms": 2000, "wall_ms": 30000}}')"
one "$(js loop-warm 'for (;;) {}' '{"limits": {"cpu_ms": 2000, "wall_ms": 30000}}')"
one "$(js mem-other "$PROBE" '{"limits": {"memory_mib": 384}}')"
one "$(js cases-warm 'const s = require("fs").readFileSync(0, "utf8"); console.log(s.split(" ").map(Number).reduce((a, b) => a + b, 0));' \
  '{"cases": [{"stdin": "1 2", "expected_stdout": "3"}, {"stdin": "40 2", "expected_stdout": "42"}]}')"
one "$(js files-warm 'console.log(require("fs").readFileSync("data.txt", "utf8"))' \
  '{"files": {"data.txt": "aGVsbG8="}}')"

$PY - "$SQ_TMP" <<'PY' || sq_fail "see above"
import json, sys
d = lambda i: json.load(open('%s/%s.json' % (sys.argv[1], i)))
bad = 0
def check(ok, what):
    global bad
    if not ok:
        print('FAIL', what); bad += 1
def sb(r): return r.get('jail', {}).get('standby', False)
cold, warm = d('js-cold'), d('js-warm')
check(not sb(cold), 'the first JavaScript task took a standby')
check(sb(warm), 'the second JavaScript task did not take the standby: %s' % warm.get('jail'))
for k in ('status', 'exit_code', 'stdout', 'stderr'):
    check(cold.get(k) == warm.get(k), '%s differs: %r cold, %r warm' % (k, cold.get(k), warm.get(k)))
check(cold.get('exit_code') == 3 and 'main.js' in cold.get('stdout', ''), 'the probe: %r' % cold.get('stdout'))
ec, ew = d('err-cold'), d('err-warm')
check(not sb(ec) and sb(ew), 'standby after the Python task: %s %s' % (ec.get('jail'), ew.get('jail')))
for k in ('status', 'exit_code'):
    check(ec.get(k) == ew.get(k), 'the error: %s differs: %r %r' % (k, ec.get(k), ew.get(k)))
top = lambda r: r.get('stderr', '').split('    at ')[0]
check(top(ec) == top(ew) and 'Error: boom' in top(ew), 'the error text differs: %r / %r' % (top(ec), top(ew)))
lw = d('loop-warm')
check(sb(lw) and lw.get('status') == 'cpu_limit', 'the loop in a standby: %s %s' % (lw.get('status'), lw.get('jail')))
mo = d('mem-other')
check(not sb(mo) and mo.get('exit_code') == 3, 'other limits took the standby: %s' % mo.get('jail'))
cw = d('cases-warm')
check(cw.get('status') == 'passed', 'cases through the standby: %s %s' % (cw.get('status'), cw.get('reason')))
fw = d('files-warm')
check(sb(fw) and fw.get('stdout', '').strip() == 'hello', 'files with the standby: %r %s' % (fw.get('stdout'), fw.get('jail')))
p0, p1 = d('py-first'), d('py-after')
r0, r1 = p0.get('resources', {}), p1.get('resources', {})
print('python task: memory %s KiB with nothing before, %s KiB after JavaScript; cpu %s / %s ms'
      % (r0.get('memory_kib'), r1.get('memory_kib'), r0.get('cpu_ms'), r1.get('cpu_ms')))
check(not sb(p1) and p1.get('status') == 'ok', 'the Python task after JavaScript: %s' % p1.get('status'))
check(r1.get('memory_kib', 1 << 30) < r0.get('memory_kib', 0) + 3072,
      'the Python task after JavaScript was charged the standby: %s KiB against %s' % (r1.get('memory_kib'), r0.get('memory_kib')))
check(r1.get('cpu_ms', 1 << 30) < r0.get('cpu_ms', 0) + 60,
      'the Python task after JavaScript was charged the standby\'s CPU: %s ms against %s' % (r1.get('cpu_ms'), r0.get('cpu_ms')))
sys.exit(1 if bad else 0)
PY
echo "PASS standby"
