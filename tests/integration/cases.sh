#!/bin/sh
# cases.sh: one program, many inputs, through a real redis-server and a
# real worker: each case a jail run of its own with the case's stdin, its
# stdout judged in the worker by the task's checker; the first failing case
# named in the reason; stop_on_failure; limits per case; huge, empty and
# flooding cases; 1,000 cases in one task; tasks that mix cases with
# tests refused naming the field; APPS rows imported as cases and as
# call-based tests, with exact pass@1; HumanEval+ and MBPP+ tiers and
# their per-input CPU time limits.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_need_worker_host

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

# report: the (problem, case) pairs that failed most, counted from each
# result's cases (every failing case of a task run without stop_on_failure)
$PY - "$SQ_TMP/casefail.jsonl" <<'PY'
import json, sys
cases = [{"stdin": "%d\n" % i, "expected_stdout": "%d" % i} for i in (1, 2, 3)]
progs = [("P", "print(int(input()))\n", True), ("P", "n = int(input())\nprint(0 if n == 2 else n)\n", True),
         ("P", "n = int(input())\nprint(0 if n >= 2 else n)\n", False), ("P", "n = int(input())\nprint(0 if n == 3 else n)\n", True),
         ("Q", "print(0)\n", True)]
with open(sys.argv[1], "w") as f:
    for i, (p, code, stop) in enumerate(progs):
        f.write(json.dumps({"id": "cf-%d" % i, "code": code, "cases": cases, "stop_on_failure": stop,
                            "metadata": {"task_id": p}}) + "\n")
PY
"$P" push --batch casefail --wait --timeout-s 300 "$SQ_TMP/casefail.jsonl" >/dev/null 2>&1
"$P" report casefail --json --k 1 >"$SQ_TMP/casefail.report" || sq_fail "report casefail"
"$P" report casefail --k 1 >"$SQ_TMP/casefail.txt" || sq_fail "report casefail (text)"
$PY - "$SQ_TMP/casefail.report" <<'PY' || sq_fail "the case failures are wrong: $(cat "$SQ_TMP/casefail.txt")"
import json, sys
r = json.load(open(sys.argv[1]))
want = [{"task_id": "P", "case": 2, "failed": 2, "samples": 4}, {"task_id": "P", "case": 3, "failed": 2, "samples": 4},
        {"task_id": "Q", "case": 1, "failed": 1, "samples": 1}]
assert r["case_failures"] == want, r["case_failures"]
assert "case_failures_untracked" not in r, r
PY
grep -A4 "^cases failing most" "$SQ_TMP/casefail.txt" | grep -Eq "^  P +2 +2 +4$" ||
  sq_fail "the text report's cases: $(cat "$SQ_TMP/casefail.txt")"

# APPS: stdin/stdout rows become cases, call-based rows (fn_name) tests for
# the judge (a plain function, and LeetCode's class Solution); right and
# wrong completions give an exact pass@1.
$PY - "$SQ_TMP" <<'PY'
import json, sys
d = sys.argv[1]
rows = [
 {"problem_id": 1, "question": "Sum two integers.", "solutions": json.dumps(["a, b = map(int, input().split())\nprint(a + b)\n"]),
  "input_output": json.dumps({"inputs": ["1 2\n", "5 -7\n"], "outputs": ["3\n", "-2\n"]})},
 {"problem_id": 2, "question": "Largest.", "starter_code": "def biggest(xs):\n",
  "solutions": json.dumps(["def biggest(xs):\n    return max(xs)\n"]),
  "input_output": json.dumps({"fn_name": "biggest", "inputs": [[[1, 5, 2]], [[-3]]], "outputs": [[5], [-3]]})},
 {"problem_id": 3, "question": "Twice.", "starter_code": "class Solution:\n    def twice(self, x):\n",
  "solutions": json.dumps(["class Solution:\n    def twice(self, x):\n        return 2 * x\n"]),
  "input_output": json.dumps({"fn_name": "twice", "inputs": [[2], [0]], "outputs": [4, 0]})},
 {"problem_id": "4", "question": "Echo.", "solutions": json.dumps(["import sys\nprint(sys.stdin.read(), end='')\n"]),
  "input_output": json.dumps({"inputs": [["a", "b"]], "outputs": [["a", "b"]]})},
]
with open(d + "/apps.jsonl", "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
comp = [(1, "a, b = map(int, input().split())\nprint(a + b)\n"), (1, "print(3)\n"),
        (2, "def biggest(xs):\n    return min(xs)\n"), (2, "def biggest(xs):\n    return sorted(xs)[-1]\n"),
        (3, "class Solution:\n    def twice(self, x):\n        return x + x\n"), (4, "print('a')\n")]
with open(d + "/apps-samples.jsonl", "w") as f:
    for pid, c in comp: f.write(json.dumps({"problem_id": pid, "completion": c}) + "\n")
with open(d + "/apps-bad.jsonl", "w") as f:
    f.write(json.dumps(dict(rows[0], input_output=json.dumps({"inputs": ["1"], "outputs": []}))) + "\n")
with open(d + "/apps-nosol.jsonl", "w") as f:
    f.write(json.dumps(dict(rows[0], solutions="[]")) + "\n")
PY
"$P" import apps "$SQ_TMP/apps.jsonl" --canonical >"$SQ_TMP/apps-c.jsonl" || sq_fail "import apps --canonical"
"$P" import apps "$SQ_TMP/apps.jsonl" --completions "$SQ_TMP/apps-samples.jsonl" >"$SQ_TMP/apps-s.jsonl" ||
  sq_fail "import apps --completions"
"$P" import apps "$SQ_TMP/apps-bad.jsonl" --canonical >/dev/null 2>"$SQ_TMP/bad.err" && sq_fail "a bad input_output imported"
grep -q 'apps-bad.jsonl:1: input_output: must hold "inputs" and "outputs", two non-empty lists of one length' "$SQ_TMP/bad.err" ||
  sq_fail "import said: $(cat "$SQ_TMP/bad.err")"
# a row whose cases make a task over max_task_kib: refused, with the way
# out; --max-cases N keeps its first N, said per row
$PY - "$SQ_TMP/apps-big.jsonl" <<'PY'
import json, sys
big = "9" * 80000
io = {"inputs": [big + "%d\n" % i for i in range(5)], "outputs": [big + "%d\n" % i for i in range(5)]}
row = {"problem_id": 7, "question": "Echo.", "solutions": json.dumps(["print(input())"]), "input_output": json.dumps(io)}
open(sys.argv[1], "w").write(json.dumps(row) + "\n")
PY
"$P" import apps "$SQ_TMP/apps-big.jsonl" --canonical >/dev/null 2>"$SQ_TMP/big.err" && sq_fail "a row over max_task_kib imported"
grep -q "apps-big.jsonl:1: input_output: .* (max_task_kib); --max-cases N keeps each row's first N cases" "$SQ_TMP/big.err" ||
  sq_fail "import said: $(cat "$SQ_TMP/big.err")"
"$P" import apps "$SQ_TMP/apps-big.jsonl" --canonical --max-cases 1 >"$SQ_TMP/apps-big-c.jsonl" 2>"$SQ_TMP/big.err" ||
  sq_fail "import --max-cases 1: $(cat "$SQ_TMP/big.err")"
grep -q "apps-big.jsonl:1: input_output: kept the first 1 of 5 cases (--max-cases)" "$SQ_TMP/big.err" ||
  sq_fail "import --max-cases said: $(cat "$SQ_TMP/big.err")"
$PY -c 'import json, sys; t = json.load(open(sys.argv[1])); assert [c["stdin"][-3:] for c in t["cases"]] == ["90\n"], len(t["cases"])' \
  "$SQ_TMP/apps-big-c.jsonl" || sq_fail "--max-cases kept the wrong cases"
"$P" import humaneval "$SQ_TMP/apps-big.jsonl" --canonical --max-cases 1 >/dev/null 2>"$SQ_TMP/big.err" && sq_fail "--max-cases taken for humaneval"
grep -q "max-cases applies to apps only" "$SQ_TMP/big.err" || sq_fail "import said: $(cat "$SQ_TMP/big.err")"
"$P" import apps "$SQ_TMP/apps-big.jsonl" --canonical --max-cases 0 >/dev/null 2>"$SQ_TMP/big.err" && sq_fail "--max-cases 0 taken"
grep -q "must be a whole number in \[1, 1000000\]" "$SQ_TMP/big.err" || sq_fail "import said: $(cat "$SQ_TMP/big.err")"
"$P" import apps "$SQ_TMP/apps-nosol.jsonl" --canonical >/dev/null 2>"$SQ_TMP/nosol.err" && sq_fail "no solution imported"
grep -q "solutions: no solution to import with --canonical" "$SQ_TMP/nosol.err" || sq_fail "import said: $(cat "$SQ_TMP/nosol.err")"
for b in c s; do
  "$P" push --batch "apps-$b" --wait --timeout-s 300 "$SQ_TMP/apps-$b.jsonl" >/dev/null 2>&1
  "$P" report "apps-$b" --json --k 1 >"$SQ_TMP/apps-$b.report" || sq_fail "report apps-$b"
  "$P" results "apps-$b" --format jsonl >"$SQ_TMP/apps-$b.results" || sq_fail "results apps-$b"
done
$PY - "$SQ_TMP" <<'PY' || sq_fail "the APPS results are wrong"
import json, sys
d = sys.argv[1]
c = {r["_id"]: r for r in map(json.loads, open(d + "/apps-c.results"))}
assert all(r["status"] == "passed" for r in c.values()) and len(c) == 4, {k: (r["status"], r.get("reason")) for k, r in c.items()}
assert c["APPS/2/0"]["judge"] == "isolated" and c["APPS/3/0"]["judge"] == "isolated", c["APPS/3/0"]
s = {r["_id"]: r for r in map(json.loads, open(d + "/apps-s.results"))}
want = {"APPS/1/0": "passed", "APPS/1/1": "failed", "APPS/2/0": "failed", "APPS/2/1": "passed",
        "APPS/3/0": "passed", "APPS/4/0": "failed"}
assert {k: r["status"] for k, r in s.items()} == want, {k: r["status"] for k, r in s.items()}
assert s["APPS/1/1"]["reason"] == "case 2: expected `-2`, got `3`", s["APPS/1/1"]["reason"]
assert s["APPS/4/0"]["reason"] == "case 1: expected `b`, got the end of output", s["APPS/4/0"]["reason"]
rc, rs = json.load(open(d + "/apps-c.report")), json.load(open(d + "/apps-s.report"))
assert rc["pass_at_k"]["1"] == 1.0, rc["pass_at_k"]
# per problem c/n: 1/2, 1/2, 1/1, 0/1 -> (0.5 + 0.5 + 1 + 0) / 4
assert abs(rs["pass_at_k"]["1"] - 0.5) < 1e-12, rs["pass_at_k"]
print("cases: APPS canonical 4/4, completions pass@1 %.4f" % rs["pass_at_k"]["1"])
PY

# HumanEval+ and MBPP+: the base tier, then the plus tier, the expected
# values the reference's (computed in the judge); floats within atol.
$PY - "$SQ_TMP" <<'PY'
import json, sys
d = sys.argv[1]
he = {"task_id": "HumanEval/0", "prompt": "def add(a, b):\n    \"\"\"Sum.\"\"\"\n", "canonical_solution": "    return a + b\n",
      "entry_point": "add", "test": "", "base_input": [[1, 2], [0, 0]], "plus_input": [[-1, 1], [0.1, 0.2]], "atol": 0}
mb = {"task_id": "Mbpp/2", "prompt": "\"\"\"\nHalve a number.\n\"\"\"\n", "canonical_solution": "def half(x):\n    return x / 2\n",
      "entry_point": "half", "test": "", "base_input": [[4]], "plus_input": [[1e-9], [3]], "atol": 1e-6}
open(d + "/heplus.jsonl", "w").write(json.dumps(he) + "\n")
open(d + "/mbplus.jsonl", "w").write(json.dumps(mb) + "\n")
comp = ["    return a + b\n", "    return abs(a) + b\n", "    return round(a + b, 9)\n", "    return a - b\n"]
open(d + "/heplus-s.jsonl", "w").write("".join(json.dumps({"task_id": "HumanEval/0", "completion": c}) + "\n" for c in comp))
mcomp = ["def half(x):\n    return x * 0.5 + 1e-9\n", "def half(x):\n    return x // 2\n", "def half(x):\n    return str(x / 2)\n"]
open(d + "/mbplus-s.jsonl", "w").write("".join(json.dumps({"task_id": "Mbpp/2", "completion": c}) + "\n" for c in mcomp))
open(d + "/heplus-bad.jsonl", "w").write(json.dumps(dict(he, base_input=[])) + "\n")
PY
"$P" import humaneval+ "$SQ_TMP/heplus.jsonl" --completions "$SQ_TMP/heplus-s.jsonl" >"$SQ_TMP/he-s.jsonl" || sq_fail "import humaneval+"
"$P" import humaneval+ "$SQ_TMP/heplus.jsonl" --canonical >"$SQ_TMP/he-c.jsonl" || sq_fail "import humaneval+ --canonical"
"$P" import mbpp+ "$SQ_TMP/mbplus.jsonl" --completions "$SQ_TMP/mbplus-s.jsonl" >"$SQ_TMP/mb-s.jsonl" || sq_fail "import mbpp+"
"$P" import humaneval+ "$SQ_TMP/heplus-bad.jsonl" --canonical >/dev/null 2>"$SQ_TMP/heb.err" && sq_fail "an empty base_input imported"
grep -q "heplus-bad.jsonl:1: base_input: must be a list of argument lists" "$SQ_TMP/heb.err" || sq_fail "import said: $(cat "$SQ_TMP/heb.err")"
grep -q '"plus_tests":' "$SQ_TMP/he-c.jsonl" || sq_fail "no plus_tests in the tasks"
for b in he-s he-c mb-s; do
  "$P" push --batch "plus-$b" --wait --timeout-s 300 "$SQ_TMP/$b.jsonl" >/dev/null 2>&1
  "$P" results "plus-$b" --format jsonl >"$SQ_TMP/plus-$b.results" || sq_fail "results plus-$b"
  "$P" report "plus-$b" --json --k 1 >"$SQ_TMP/plus-$b.report" || sq_fail "report plus-$b"
done
"$P" report plus-he-s --k 1 >"$SQ_TMP/plus-he-s.txt" || sq_fail "report plus-he-s"
grep -q "pass@1       0.5000  (1 problem(s)), the plus tier" "$SQ_TMP/plus-he-s.txt" &&
  grep -q "pass@1       0.7500  base tier" "$SQ_TMP/plus-he-s.txt" || sq_fail "report: $(cat "$SQ_TMP/plus-he-s.txt")"
$PY - "$SQ_TMP" <<'PY' || sq_fail "the evalplus tiers are wrong"
import json, sys
d = sys.argv[1]
def load(b): return {r["_id"]: r for r in map(json.loads, open(d + "/plus-%s.results" % b))}
he, hc, mb = load("he-s"), load("he-c"), load("mb-s")
T = lambda r: (r["tiers"]["base"], r["tiers"]["plus"], r["status"])
assert T(hc["HumanEval/0/0"]) == ("passed", "passed", "passed"), hc
got = {k: T(r) for k, r in he.items()}
assert got == {"HumanEval/0/0": ("passed", "passed", "passed"), "HumanEval/0/1": ("passed", "failed", "failed"),
               "HumanEval/0/2": ("passed", "passed", "passed"), "HumanEval/0/3": ("failed", "failed", "failed")}, got
assert "plus input 1 of 2" in he["HumanEval/0/1"]["reason"], he["HumanEval/0/1"]["reason"]
assert "base input 1 of 2" in he["HumanEval/0/3"]["reason"], he["HumanEval/0/3"]["reason"]
got = {k: T(r) for k, r in mb.items()}
# within atol (1e-6) of the reference's; 3 // 2 is 1, not 1.5; a str is never a float
assert got == {"Mbpp/2/0": ("passed", "passed", "passed"), "Mbpp/2/1": ("passed", "failed", "failed"),
               "Mbpp/2/2": ("failed", "failed", "failed")}, got
# pass@1 per tier: base 3 of 4 samples, plus 2 of 4 (the tasks' status)
rep = json.load(open(d + "/plus-he-s.report"))
assert rep["tiers"] == {"base": {"pass_at_k": {"1": 0.75}}, "plus": {"pass_at_k": {"1": 0.5}}}, rep.get("tiers")
assert rep["pass_at_k"]["1"] == 0.5 and "languages" not in rep, rep
assert "tiers" not in json.load(open(d + "/apps-s.report"))
assert "case_failures" not in rep, rep  # no result with cases
print("cases: HumanEval+ and MBPP+ tiers as expected")
PY
# the expected values come from one reference run per tier and problem on
# this worker: 5 tasks of HumanEval/0 (4 samples and the canonical), 3 of Mbpp/2
for p in HumanEval/0/ Mbpp/2/; do
  n=$(grep "expected values: running the reference once" "$SQ_TMP/w1.log" | grep -c "$p")
  [ "$n" = 2 ] || sq_fail "$n reference runs for $p (one per tier expected): $(grep 'expected values' "$SQ_TMP/w1.log")"
done
# evalplus's per-input time limit: max(1 s, 4 x the reference's CPU time on
# that input), counted in CPU time on both sides. The reference spins for a
# while on the plus input; twice its time passes (over the 1 s floor, under
# 4x), eight times and an endless loop end cpu_limit naming the input.
$PY - "$SQ_TMP" <<'PY'
import json, sys
d = sys.argv[1]
spin = "    s = 0\n    for i in range(n):\n        s += i\n"
row = {"task_id": "HumanEval/9", "prompt": "def spin(n):\n", "canonical_solution": spin + "    return s\n",
       "entry_point": "spin", "test": "", "base_input": [[10]], "plus_input": [[30000000]], "atol": 0}
open(d + "/slow.jsonl", "w").write(json.dumps(row) + "\n")
comp = ["    return n * (n - 1) // 2\n", "    for _ in range(2):\n    " + spin.replace("\n    ", "\n        ") + "    return s\n",
        "    for _ in range(8):\n    " + spin.replace("\n    ", "\n        ") + "    return s\n",
        "    while n > 100:\n        pass\n    return n * (n - 1) // 2\n"]
open(d + "/slow-s.jsonl", "w").write("".join(json.dumps({"task_id": "HumanEval/9", "completion": c}) + "\n" for c in comp))
PY
"$P" import humaneval+ "$SQ_TMP/slow.jsonl" --completions "$SQ_TMP/slow-s.jsonl" --cpu-ms 30000 --wall-ms 60000 \
  >"$SQ_TMP/slow-t.jsonl" || sq_fail "import humaneval+ (slow)"
"$P" push --batch plus-slow --wait --timeout-s 300 "$SQ_TMP/slow-t.jsonl" >/dev/null 2>&1
"$P" results plus-slow --format jsonl >"$SQ_TMP/plus-slow.results" || sq_fail "results plus-slow"
$PY - "$SQ_TMP/plus-slow.results" <<'PY' || sq_fail "the per-input time limits are wrong"
import json, sys
r = {x["_id"]: x for x in map(json.loads, open(sys.argv[1]))}
got = {k: (x["tiers"]["base"], x["tiers"]["plus"], x["status"]) for k, x in r.items()}
assert got == {"HumanEval/9/0": ("passed", "passed", "passed"), "HumanEval/9/1": ("passed", "passed", "passed"),
               "HumanEval/9/2": ("passed", "cpu_limit", "cpu_limit"),
               "HumanEval/9/3": ("passed", "cpu_limit", "cpu_limit")}, got
for k in ("HumanEval/9/2", "HumanEval/9/3"):
    assert r[k]["reason"].startswith("plus input 1 of 1: over its CPU time limit"), r[k]["reason"]
print("cases: evalplus per-input CPU limits:", r["HumanEval/9/2"]["reason"])
PY
echo "cases: all checks passed"
