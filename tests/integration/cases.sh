#!/bin/sh
# cases.sh: one program, many inputs, through a real redis-server and a
# real worker: each case a jail run of its own with the case's stdin, its
# stdout judged in the worker by the task's checker; the first failing case
# named in the reason; stop_on_failure; limits per case; huge, empty and
# flooding cases; 1,000 cases in one task; tasks that mix cases with
# tests refused naming the field.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ -x /usr/bin/python3 ] || sq_skip "/usr/bin/python3 is not installed"
[ "$(id -u)" -eq 0 ] || sq_skip "the worker's warm pool needs root (namespaces, cgroups)"
PY=/usr/bin/python3
P=$SQ_BIN/sandq-producer
W=$SQ_BIN/sandq-worker

$PY - "$SQ_TMP/tasks.jsonl" <<'PY'
import json, sys
SUM = "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n"
NEG = "import sys\nn = sum(int(x) for x in sys.stdin.read().split())\nprint(-n if n == 5 else n)\n"
cases = [{"stdin": "1 2\n", "expected_stdout": "3"}, {"stdin": "2 3", "expected_stdout": "5\n"},
         {"stdin": "", "expected_stdout": "0"}]
t = [
    {"id": "pass", "code": SUM, "cases": cases},
    {"id": "fail", "code": NEG, "cases": cases},
    {"id": "all", "code": NEG, "cases": cases, "stop_on_failure": False},
    {"id": "slow", "code": "import sys\nif sys.stdin.read().strip() == 'loop':\n    while True: pass\nprint('ok')\n",
     "limits": {"wall_ms": 1500, "cpu_ms": 1000},
     "cases": [{"stdin": "x", "expected_stdout": "ok"}, {"stdin": "loop", "expected_stdout": "ok"},
               {"stdin": "y", "expected_stdout": "ok"}]},
    {"id": "huge", "code": "import sys\nd = sys.stdin.buffer.read()\nprint(len(d), d.count(b'7'))\n",
     "cases": [{"stdin": "7" * 200000, "expected_stdout": "200000 200000"},
               {"stdin": "", "expected_stdout": "0 0"}]},
    {"id": "flood", "code": "while True: print('x' * 1000)\n", "limits": {"output_kib": 64},
     "cases": [{"stdin": "", "expected_stdout": "x"}]},
    {"id": "many", "code": "print(int(input()) * 2)\n",
     "cases": [{"stdin": "%d\n" % i, "expected_stdout": "%d" % (2 * i)} for i in range(1000)]},
    {"id": "exact", "code": "print('a  b')\n", "checker": "exact", "cases": [{"expected_stdout": "a b\n"}]},
    {"id": "float", "code": "print(1 / 3)\n", "checker": "float:1e-6", "cases": [{"expected_stdout": "0.333333"}]},
    {"id": "tokens", "code": "print(1 / 3)\n", "cases": [{"expected_stdout": "0.333333"}]},
    # the program sees its case's stdin and nothing of what it must print
    {"id": "blind", "code": "import os, sys\nprint(sys.stdin.read(), sorted(os.listdir('.')))\n",
     "cases": [{"stdin": "in", "expected_stdout": "secret-42"}]},
]
with open(sys.argv[1], "w") as f:
    for x in t:
        f.write(json.dumps(x) + "\n")
PY

sq_start_redis
unset SANDQ_LLM_BASE_URL
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
# a task that mixes cases with tests is refused by push, naming the field
echo '{"id":"mix","code":"x=1","tests":"assert x","cases":[{"expected_stdout":""}]}' >"$SQ_TMP/mix.jsonl"
"$P" push --batch mix "$SQ_TMP/mix.jsonl" >/dev/null 2>"$SQ_TMP/mix.err" && sq_fail "push took cases with tests"
grep -q "cases: not with tests" "$SQ_TMP/mix.err" || sq_fail "push said: $(cat "$SQ_TMP/mix.err")"

sq_bg w1 "$W" serve --worker-id cases-1
sq_wait_for "grep -q 'ready in' $SQ_TMP/w1.log" 60 || { cat "$SQ_TMP/w1.log" >&2; sq_fail "the worker never got ready"; }
"$P" push --batch cases --wait --timeout-s 300 "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/push.out" 2>&1 ||
  grep -q "finished" "$SQ_TMP/push.out" || sq_fail "push --wait: $(tail -5 "$SQ_TMP/push.out")"
"$P" results cases --format jsonl >"$SQ_TMP/results.jsonl" || sq_fail "results"
$PY - "$SQ_TMP/results.jsonl" <<'PY' || sq_fail "the results are wrong"
import json, sys
r = {x["_id"]: x for x in map(json.loads, open(sys.argv[1]))}
def st(i): return [c["status"] for c in r[i]["cases"]]
assert len(r) == 11, sorted(r)
assert r["pass"]["status"] == "passed" and st("pass") == ["passed"] * 3 and r["pass"]["cases_total"] == 3, r["pass"]
assert "reason" not in r["pass"] or r["pass"]["reason"] is None, r["pass"]
assert r["fail"]["status"] == "failed" and st("fail") == ["passed", "failed"], r["fail"]
assert r["fail"]["reason"] == "case 2: expected `5`, got `-5`", r["fail"]["reason"]
assert r["all"]["status"] == "failed" and st("all") == ["passed", "failed", "passed"], r["all"]
assert r["all"]["reason"] == "case 2: expected `5`, got `-5`", r["all"]["reason"]
assert r["slow"]["status"] in ("timeout", "cpu_limit") and st("slow") == ["passed", r["slow"]["status"]], r["slow"]
assert r["slow"]["reason"].startswith("case 2: "), r["slow"]["reason"]
assert r["huge"]["status"] == "passed" and st("huge") == ["passed", "passed"], r["huge"]
assert r["flood"]["status"] == "output_limit" and r["flood"]["reason"].startswith("case 1: "), r["flood"]
assert r["many"]["status"] == "passed" and len(r["many"]["cases"]) == 1000 and r["many"]["cases_total"] == 1000
assert all(c["wall_ms"] >= 0 for c in r["many"]["cases"])
assert r["exact"]["status"] == "failed" and r["exact"]["reason"].startswith("case 1: at byte 2 expected `b?`, got ` b?`"), r["exact"]
assert r["float"]["status"] == "passed", r["float"]
assert r["tokens"]["status"] == "failed", r["tokens"]
b = r["blind"]
assert b["status"] == "failed" and "secret" not in (b.get("stdout") or ""), b
assert (b.get("stdout") or "").startswith("in ['main.py']"), b.get("stdout")
print("cases: 11 tasks as expected; 1000 cases in one task passed")
PY
echo "cases: all checks passed"
