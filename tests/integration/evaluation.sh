#!/bin/sh
# evaluation.sh: sampled pass@k through sandq. Every HumanEval
# problem is imported with --samples 5 --temperature 0.8 --model M; the fake
# LLM answers the five requests of problem i with (i mod 6) right programs
# and the rest wrong; `report --json` must give, per problem and overall,
# the pass@k the unbiased estimator predicts (computed here with exact
# binomials), and the requests and results must carry the temperature and
# the model. Also: `results` in each format, `push --out` refusing an
# unwritable path before pushing anything, and `import` refusing bad input
# with the line and field named and nothing written.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
data=${SANDQ_HUMANEVAL:-${SANDQ_DATA_DIR:+$SANDQ_DATA_DIR/HumanEval.jsonl.gz}}
[ -n "$data" ] && [ -r "$data" ] || sq_skip "HumanEval data not found (SANDQ_DATA_DIR or SANDQ_HUMANEVAL)"
PY=/usr/bin/python3
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson module) is not installed"
sq_env_init
P=$SQ_BIN/sandq-producer

# 1. import refuses bad input: the line and the field, and nothing on stdout.
printf '%s\n' '{"task_id": "HumanEval/0", "prompt": "def f():\n", "canonical_solution": "  return 1\n", "test": "", "entry_point": "f"}' \
  '{"task_id": "HumanEval/1", "prompt": "def g():\n", "test": "", "entry_point": "g"}' >"$SQ_TMP/bad.jsonl"
if "$P" import humaneval "$SQ_TMP/bad.jsonl" --canonical >"$SQ_TMP/bad.out" 2>"$SQ_TMP/bad.err"; then sq_fail "bad dataset accepted"; fi
grep -q "bad.jsonl:2: canonical_solution: missing" "$SQ_TMP/bad.err" || { cat "$SQ_TMP/bad.err"; sq_fail "no line and field named"; }
[ ! -s "$SQ_TMP/bad.out" ] || sq_fail "import wrote tasks half-way"
printf '%s\n' '{"task_id": "HumanEval/0", "completion": "  return 1\n"}' '{"task_id": "HumanEval/999", "completion": ""}' \
  >"$SQ_TMP/bad-samples.jsonl"
if "$P" import humaneval "$data" --completions "$SQ_TMP/bad-samples.jsonl" >"$SQ_TMP/bad.out" 2>"$SQ_TMP/bad.err"; then
  sq_fail "a sample of an unknown problem accepted"
fi
grep -q "bad-samples.jsonl:2: task_id: 'HumanEval/999' is not a problem of" "$SQ_TMP/bad.err" || { cat "$SQ_TMP/bad.err"; sq_fail "unknown problem not named"; }
[ ! -s "$SQ_TMP/bad.out" ] || sq_fail "import wrote tasks half-way"
"$P" import humaneval "$data" --canonical --temperature 0.5 >/dev/null 2>&1 && sq_fail "--temperature with --canonical accepted"
# refused(NAME WANT import-args...): import exits non-zero, writes nothing,
# and says WANT (FILE:LINE: field: why) on stderr.
refused() {
  name=$1 want=$2; shift 2
  if "$P" import "$@" >"$SQ_TMP/$name.out" 2>"$SQ_TMP/$name.err"; then cat "$SQ_TMP/$name.err"; sq_fail "$name: accepted"; fi
  grep -qF -- "$want" "$SQ_TMP/$name.err" || { cat "$SQ_TMP/$name.err"; sq_fail "$name: no '$want'"; }
  [ ! -s "$SQ_TMP/$name.out" ] || sq_fail "$name: import wrote tasks"
}
# a NUL (written \u0000 or raw) in any string would cut it short: the
# failing assert after it would be lost and a wrong solution pass
he_line() { # he_line FIELD VALUE-JSON: a HumanEval line with FIELD replaced
  $PY -c 'import json, sys
d = {"task_id": "HumanEval/0", "prompt": "def f(x):\n", "canonical_solution": "    return x\n",
     "test": "def check(c):\n    assert c(1) == 1\n    assert c(2) == 3\n", "entry_point": "f"}
d[sys.argv[1]] = json.loads(sys.argv[2])
print(json.dumps(d))' "$@"
}
for f in test prompt canonical_solution entry_point task_id; do
  he_line "$f" '"HumanEval/0\u0000 assert c(2) == 3"' >"$SQ_TMP/nul-$f.jsonl"
  refused "nul-$f" "nul-$f.jsonl:1: $f: holds a NUL character" humaneval "$SQ_TMP/nul-$f.jsonl" --canonical
done
$PY -c 'import json, sys
d = {"task_id": "HumanEval/0", "prompt": "def f(x):\n", "canonical_solution": "    return x\n",
     "test": "def check(c):\n    assert c(1) == 1\n@    assert c(2) == 3\n", "entry_point": "f"}
sys.stdout.buffer.write(json.dumps(d).replace("@", "\0").encode() + b"\n")' >"$SQ_TMP/nul-raw.jsonl"
refused nul-raw "nul-raw.jsonl:1: test: holds a NUL character" humaneval "$SQ_TMP/nul-raw.jsonl" --canonical
printf '%s\n' '{"task_id": 2, "text": "t", "code": "def f(): return 1", "test_list": ["assert f() == 1\u0000", "assert f() == 2"]}' \
  >"$SQ_TMP/nul-mbpp.jsonl"
refused nul-mbpp "nul-mbpp.jsonl:1: test_list: holds a NUL character" mbpp "$SQ_TMP/nul-mbpp.jsonl" --canonical
printf '%s\n' '{"task_id": 2, "text": "t", "code": "def f(): return 1\u0000", "test_list": ["assert f() == 2"]}' \
  >"$SQ_TMP/nul-mbpp-code.jsonl"
refused nul-mbpp-code "nul-mbpp-code.jsonl:1: code: holds a NUL character" mbpp "$SQ_TMP/nul-mbpp-code.jsonl" --canonical
printf '%s\n' '{"task_id": "HumanEval/0", "completion": "    return 1\n"}' \
  '{"task_id": "HumanEval/1", "completion": "    return x\u0000\n    return None\n"}' >"$SQ_TMP/nul-samples.jsonl"
refused nul-samples "nul-samples.jsonl:2: completion: holds a NUL character" humaneval "$data" --completions "$SQ_TMP/nul-samples.jsonl"
# trailing content after the object: a second object is never dropped
{ he_line test '"def check(c): pass\n"' | tr -d '\n'; echo '{"task_id": "HumanEval/1"}'; } >"$SQ_TMP/two.jsonl"
refused trailing-object "two.jsonl:1: trailing data after the JSON object" humaneval "$SQ_TMP/two.jsonl" --canonical
{ he_line test '"def check(c): pass\n"' | tr -d '\n'; echo ' xyz'; } >"$SQ_TMP/xyz.jsonl"
refused trailing-text "xyz.jsonl:1: trailing data after the JSON object" humaneval "$SQ_TMP/xyz.jsonl" --canonical
printf '%s\n' '{"task_id": "HumanEval/0", "completion": "    return 1\n"} {"task_id": "HumanEval/1", "completion": ""}' \
  >"$SQ_TMP/two-samples.jsonl"
refused trailing-sample "two-samples.jsonl:1: trailing data after the JSON object" humaneval "$data" --completions "$SQ_TMP/two-samples.jsonl"
# what push would refuse is refused here, by push's own rules
he_line entry_point '"f; import os"' >"$SQ_TMP/ep.jsonl"
refused entry-point "ep.jsonl:1: entry_point: must be a Python identifier" humaneval "$SQ_TMP/ep.jsonl" --canonical
he_line task_id '"HumanEval/\u001b[31m0"' >"$SQ_TMP/ctl-id.jsonl"
refused control-id "ctl-id.jsonl:1: task_id: must be 1-128 bytes of valid UTF-8" humaneval "$SQ_TMP/ctl-id.jsonl" --canonical
he_line task_id '"HumanEval/0"' | sed 's|HumanEval/0|HumanEval/\xff|' >"$SQ_TMP/utf8-id.jsonl"
refused utf8-id "utf8-id.jsonl:1: task_id: must be 1-128 bytes of valid UTF-8" humaneval "$SQ_TMP/utf8-id.jsonl" --samples 1
refused utf8-model "--model: must be 1-128 bytes of valid UTF-8" humaneval "$data" --samples 1 --model "$(printf 'm\377')"
$PY -c 'import json; print(json.dumps({"task_id": "HumanEval/0", "completion": "    return x\n" + "#" * 300000}))' \
  >"$SQ_TMP/big-samples.jsonl"
refused too-big "big-samples.jsonl:1: task: " humaneval "$data" --completions "$SQ_TMP/big-samples.jsonl"
grep -qF "more than the 262144 allowed (max_task_kib)" "$SQ_TMP/too-big.err" || { cat "$SQ_TMP/too-big.err"; sq_fail "too-big: no limit named"; }
# a gzip file cut short: the stream's end is missing, whatever came before
$PY - "$data" "$SQ_TMP" <<'PY'
import gzip, sys, zlib
lines = gzip.open(sys.argv[1]).read().splitlines(keepends=True)
c = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip, cut at a full flush after 100 problems
open(f"{sys.argv[2]}/flushed.jsonl.gz", "wb").write(c.compress(b"".join(lines[:100])) + c.flush(zlib.Z_FULL_FLUSH))
whole = gzip.compress(b"".join(lines))
open(f"{sys.argv[2]}/cut.jsonl.gz", "wb").write(whole[: len(whole) * 2 // 3])
PY
refused gz-flushed "flushed.jsonl.gz: truncated or corrupt gzip" humaneval "$SQ_TMP/flushed.jsonl.gz" --canonical
refused gz-cut "cut.jsonl.gz: truncated or corrupt gzip" humaneval "$SQ_TMP/cut.jsonl.gz" --canonical
# problems are found by id, however many (a hash; the answer is checked here, the time in bench)
$PY - "$SQ_TMP/many.jsonl" "$SQ_TMP/many-samples.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f, open(sys.argv[2], "w") as s:
    for i in range(3000):
        f.write(json.dumps({"task_id": f"P/{i}", "prompt": f"def f{i}():\n", "canonical_solution": "", "test": "",
                            "entry_point": f"f{i}"}) + "\n")
    for i in reversed(range(0, 3000, 7)):
        s.write(json.dumps({"task_id": f"P/{i}", "completion": f"    return {i}\n"}) + "\n")
PY
"$P" import humaneval "$SQ_TMP/many.jsonl" --completions "$SQ_TMP/many-samples.jsonl" >"$SQ_TMP/many.out" 2>/dev/null ||
  sq_fail "import of 3000 problems failed"
$PY - "$SQ_TMP/many.out" <<'PY'
import json, sys
tasks = [json.loads(l) for l in open(sys.argv[1])]
assert len(tasks) == len(range(0, 3000, 7)), len(tasks)
for t in tasks:
    i = int(t["metadata"]["task_id"].split("/")[1])
    assert t["code"] == f"def f{i}():\n    return {i}\n" and t["entry_point"] == f"f{i}", t
PY
printf '%s\n' "$(he_line test '""')" "$(he_line test '""')" >"$SQ_TMP/dup.jsonl"
refused dup-id "dup.jsonl:2: task_id: 'HumanEval/0' appears twice" humaneval "$SQ_TMP/dup.jsonl" --canonical
echo "evaluation: import refuses NUL, trailing data, what push refuses, cut gzip; finds problems by id"
for bad in "--wall-ms 0" "--cpu-ms 86400001" "--memory-mib 15" "--wall-ms 2s"; do
  set +e
  # shellcheck disable=SC2086 # the flag and its value, split on purpose
  "$P" import humaneval "$data" --canonical $bad >"$SQ_TMP/bad.out" 2>"$SQ_TMP/bad.err"
  rc=$?
  set -e
  [ $rc -eq 2 ] || sq_fail "import $bad: exit $rc, want 2"
  grep -q -- "${bad%% *} '${bad#* }' must be a whole number in" "$SQ_TMP/bad.err" || { cat "$SQ_TMP/bad.err"; sq_fail "import $bad: no message naming it"; }
  [ ! -s "$SQ_TMP/bad.out" ] || sq_fail "import $bad wrote tasks"
done

# 1b. The limits go into every task, as the task format spells them; unset
# ones are left to the worker's default_limits.
"$P" import humaneval "$data" --canonical --wall-ms 20000 --cpu-ms 8000 --memory-mib 256 >"$SQ_TMP/lim.jsonl" 2>/dev/null
"$P" import humaneval "$data" --samples 2 --cpu-ms 3000 >"$SQ_TMP/lim2.jsonl" 2>/dev/null
$PY - "$SQ_TMP/lim.jsonl" "$SQ_TMP/lim2.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == 164 and all(t["limits"] == {"wall_ms": 20000, "cpu_ms": 8000, "memory_mib": 256} for t in a), a[0]
assert len(b) == 328 and all(t["limits"] == {"cpu_ms": 3000} for t in b), b[0]
PY

# 2. The sampled run. Replies: (i mod 6) of five right for problem i.
"$P" import humaneval "$data" --samples 5 --temperature 0.8 --model fake-sampler >"$SQ_TMP/tasks.jsonl" 2>/dev/null
$PY - "$data" "$SQ_TMP/replies.jsonl" "$SQ_TMP/expected.json" <<'PY'
import gzip, json, sys
rules, expected = [], {}
for i, line in enumerate(gzip.open(sys.argv[1], "rt")):
    p = json.loads(line)
    right = "```python\n" + p["prompt"] + p["canonical_solution"] + "\n```\n"
    wrong = "```python\n" + p["prompt"] + "    return None\n```\n"
    c = i % 6
    # the right ones first for even problems, last for odd: order must not matter
    contents = [right] * c + [wrong] * (5 - c) if i % 2 == 0 else [wrong] * (5 - c) + [right] * c
    rules.append({"match": p["prompt"], "kind": "code", "contents": contents})
    expected[p["task_id"]] = c
with open(sys.argv[2], "w") as f:
    for r in rules:
        f.write(json.dumps(r) + "\n")
json.dump(expected, open(sys.argv[3], "w"))
PY
sq_start_redis
sq_start_fake_llm "$SQ_TMP/replies.jsonl"
cat >"$SQ_TMP/worker.json" <<JSON
{"providers": [{"name": "fake", "base_url": "$SANDQ_LLM_BASE_URL", "model": "fake-coder",
  "price_in_usd_per_mtok": 1.0, "price_out_usd_per_mtok": 2.0, "max_in_flight": 64}],
 "scratch_root": "$SQ_TMP/scratch"}
JSON
unset SANDQ_LLM_BASE_URL
sq_bg w1 "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/worker.json" --worker-id ev-1
sq_bg w2 "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/worker.json" --worker-id ev-2

# push --out to a path that cannot be written fails before anything is pushed
if "$P" push --batch never --wait --out "$SQ_TMP/no/such/dir/r.bson" "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/never.out" 2>&1; then
  sq_fail "push --out into a missing directory went ahead"
fi
grep -q "cannot write" "$SQ_TMP/never.out" || { cat "$SQ_TMP/never.out"; sq_fail "no reason for the --out refusal"; }
[ "$(sq_redis_cli EXISTS 'sq:{default}:batch:never')" = 0 ] || sq_fail "push --out refused, but the batch was pushed"
"$P" results never --format csv >/dev/null 2>"$SQ_TMP/never.err" && sq_fail "results of an unknown batch succeeded"
grep -q "batch never has no results" "$SQ_TMP/never.err" || { cat "$SQ_TMP/never.err"; sq_fail "unknown batch not explained"; }

t0=$(date +%s)
sq_push_wait sampled "$SQ_TMP/push.out" "$SQ_TMP/tasks.jsonl" ||
  { cat "$SQ_TMP/push.out"; tail -20 "$SQ_TMP/w1.log"; sq_fail "the sampled batch did not finish"; }
echo "evaluation: 820 sampled tasks in $(( $(date +%s) - t0 ))s"
"$P" report sampled --json --k 1,2,5,10 >"$SQ_TMP/report.json"
"$P" report sampled --k 1,2,5 >"$SQ_TMP/report.txt"
"$P" results sampled --out "$SQ_TMP/r.bson" 2>/dev/null
"$P" results sampled --format jsonl >"$SQ_TMP/r.jsonl"
"$P" results sampled --format csv --out "$SQ_TMP/r.csv" 2>/dev/null
curl -sf "http://127.0.0.1:$SQ_LLM_PORT/stats" >"$SQ_TMP/stats.json"
$PY - "$SQ_TMP" <<'PY'
import csv, json, math, sys, bson
tmp = sys.argv[1]
expected = json.load(open(f"{tmp}/expected.json"))
rep = json.load(open(f"{tmp}/report.json"))
def pass_at_k(n, c, k):  # Chen et al. 2021, exactly
    return 1 - math.comb(n - c, k) / math.comb(n, k)
assert rep["schema"] == "sandq.report/1" and rep["tasks"] == 820 and rep["problems"] == 164, rep["tasks"]
per = {p["task_id"]: p for p in rep["per_problem"]}
assert set(per) == set(expected)
for tid, c in expected.items():
    p = per[tid]
    assert p["n"] == 5 and p["c"] == c, (tid, p, c)
    for k in (1, 2, 5):
        assert abs(p["pass_at_k"][str(k)] - pass_at_k(5, c, k)) < 1e-12, (tid, k, p)
    assert p["pass_at_k"]["10"] is None
for k in (1, 2, 5):
    want = sum(pass_at_k(5, c, k) for c in expected.values()) / len(expected)
    got = rep["pass_at_k"][str(k)]
    assert abs(got - want) < 1e-12, (k, got, want)
    assert rep["pass_at_k_problems"][str(k)] == 164
assert rep["pass_at_k"]["10"] is None and rep["pass_at_k_problems"]["10"] == 0
assert rep["status_counts"]["passed"] == sum(expected.values())
# tokens and cost per provider and model; the task's model went into the request
assert [(g["provider"], g["model"], g["tasks"]) for g in rep["llm"]] == [("fake", "fake-sampler", 820)], rep["llm"]
assert rep["llm"][0]["cost_usd"] > 0 and rep["llm"][0]["prompt_tokens"] > 0
assert rep["latency_ms"]["llm"]["count"] == 820 and rep["latency_ms"]["exec"]["count"] == 820
assert len(rep["slowest"]) == 10 and len(rep["costliest"]) == 10
assert sum(f["count"] for f in rep["failures"]) == 820 - sum(expected.values())
stats = json.load(open(f"{tmp}/stats.json"))
assert stats["temperatures"].get("0.8") == 820, stats["temperatures"]   # the code requests
assert stats["models"].get("fake-sampler") == 820, stats["models"]
docs = bson.decode_all(open(f"{tmp}/r.bson", "rb").read())
assert len(docs) == 820
assert all(d["llm"]["temperature"] == 0.8 and d["llm"]["model"] == "fake-sampler" for d in docs)
assert all(d["attempts"] == 1 and d["timings"]["all_attempts_ms"] >= d["timings"]["total_ms"] for d in docs)
assert all(d.get("reason") for d in docs if d["status"] != "passed")
lines = [json.loads(l) for l in open(f"{tmp}/r.jsonl")]
assert sorted(l["_id"] for l in lines) == sorted(d["_id"] for d in docs) and len(set(d["_id"] for d in docs)) == 820
rows = list(csv.DictReader(open(f"{tmp}/r.csv", newline="")))
assert len(rows) == 820 and rows[0]["model"] == "fake-sampler" and {r["status"] for r in rows} == {"passed", "failed", "runtime_error"}
print("evaluation: pass@1 %.4f pass@2 %.4f pass@5 %.4f as predicted; temperature and model carried"
      % (rep["pass_at_k"]["1"], rep["pass_at_k"]["2"], rep["pass_at_k"]["5"]))
PY
grep -q "pass@5" "$SQ_TMP/report.txt" && grep -q "failures by reason" "$SQ_TMP/report.txt" ||
  { cat "$SQ_TMP/report.txt"; sq_fail "the text report lacks pass@k or failures"; }
