#!/bin/sh
# languages_worker.sh: tasks in every language through two default workers
# (`sandq-worker serve`, a real redis-server): per language found, a passing
# program, a failing test and, when it compiles, a compile_error, each
# result carrying its language; a C fork bomb ends at a limit while the
# rest pass; an unknown language is refused by push, naming the known ones.
# Each worker says at start which languages it found.
set -u
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
sq_need_worker_host
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson) is not installed"
sq_start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL
sq_worker lw1
sq_worker lw2
sq_wait_for "grep -q 'languages: ' $SQ_TMP/worker-lw1.log && grep -q 'languages: ' $SQ_TMP/worker-lw2.log" 30 ||
  sq_fail "the workers did not say which languages they found: $(tail -3 "$SQ_TMP/worker-lw1.log")"
found=$(sed -n 's/.*languages: [0-9]* of [0-9]* found: //p' "$SQ_TMP/worker-lw1.log" | head -1)
echo "languages found: $found"

$PY - "$found" >"$SQ_TMP/tasks.jsonl" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ['SQ_SRC'], 'tests', 'lib'))
from languages import L, WHY, DIAG
found = sys.argv[1].split(', ')
def task(tid, lang, code, tests, want, why=None):
    t = {'id': tid, 'language': lang, 'code': code, 'metadata': {'want': want, 'why': why or '', 'lang': lang}}
    if tests:
        t['tests'] = tests
    print(json.dumps(t))
for lang, (ext, good, bad, tests, broken) in L.items():
    if lang not in found:
        continue
    task(lang + '-pass', lang, good, tests, 'passed')
    task(lang + '-fail', lang, bad, tests, 'failed', WHY[lang])
    if broken:
        task(lang + '-compile', lang, broken, tests, 'compile_error', DIAG[lang])
    if lang == 'c':
        task('c-bomb', 'c', '#include <unistd.h>\nint main(void) { for (;;) fork(); }', None, 'limit')
PY
printf '%s\n' '{"id":"cobol","language":"cobol","code":"x"}' >"$SQ_TMP/cobol.jsonl"
"$SQ_BIN/sandq-producer" push --batch cobol "$SQ_TMP/cobol.jsonl" >"$SQ_TMP/cobol.out" 2>&1 &&
  sq_fail "push took a task in an unknown language"
grep -q "'cobol' is not a language sandq runs (it knows: python, bash" "$SQ_TMP/cobol.out" ||
  sq_fail "push's refusal does not name the languages: $(cat "$SQ_TMP/cobol.out")"
sq_push_wait langs "$SQ_TMP/push.out" --out "$SQ_TMP/langs.bson" "$SQ_TMP/tasks.jsonl" || sq_fail "push --wait exited $?: $(tail -3 "$SQ_TMP/push.out")"

$PY - "$SQ_TMP/langs.bson" "$SQ_TMP/tasks.jsonl" <<'PY' || sq_fail "results: see above"
import bson, json, sys
docs = {d['_id']: d for d in bson.decode_all(open(sys.argv[1], 'rb').read())}
bad = 0
for line in open(sys.argv[2]):
    t = json.loads(line)
    m, d = t['metadata'], docs.get(t['id'])
    if d is None:
        print('FAIL no result for %s' % t['id']); bad += 1; continue
    st, why = d['status'], d.get('reason') or ''
    ok = (st in ('cpu_limit', 'timeout', 'memory_limit', 'runtime_error', 'policy_violation')
          if m['want'] == 'limit' else st == m['want'] and m['why'] in why)
    if m['lang'] and d.get('language') != m['lang']:
        ok = False
    print('%s %s: %s (%s)' % ('ok  ' if ok else 'FAIL', t['id'], st, why[:120]))
    bad += not ok
sys.exit(1 if bad else 0)
PY
for w in lw1 lw2; do kill -TERM "$(sq_wpid $w)" 2>/dev/null; done
exit 0
