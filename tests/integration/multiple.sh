#!/bin/sh
# multiple.sh: MultiPL-E through `import multipl-e` and a real worker, in
# two languages: completions cut at the records' stop tokens, the program
# prompt + completion + tests in the record's language; right, wrong and
# uncompilable completions give passed, failed and compile_error, and an
# exact pass@1, per language too. Skips without node or g++.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_need_worker_host
[ -x /usr/bin/node ] && [ -x /usr/bin/g++ ] || sq_skip "node or g++ is not installed (scripts/install-deps.sh)"

$PY - "$SQ_TMP" <<'PY'
import json, sys
d = sys.argv[1]
recs = [
    {"name": "HumanEval_0_add", "language": "js", "prompt": "function add(a, b){\n",
     "tests": "const assert = require('node:assert');\nfunction test() {\n  let candidate = add;\n"
              "  assert.deepEqual(candidate(1, 2), 3);\n  assert.deepEqual(candidate(-4, 4), 0);\n}\n\ntest();\n",
     "stop_tokens": ["\nfunction ", "\n/*", "\n//", "\nconsole.log"]},
    {"name": "HumanEval_0_add", "language": "cpp", "prompt": "#include<assert.h>\n#include<bits/stdc++.h>\nlong add(long a, long b) {\n",
     "tests": "}\nint main() {\n    auto candidate = add;\n    assert(candidate(1, 2) == 3);\n    assert(candidate(-4, 4) == 0);\n}\n",
     "stop_tokens": ["\n}"]},
]
with open(d + "/mpe.jsonl", "w") as f:
    for r in recs: f.write(json.dumps(r) + "\n")
comp = [("js", "  return a + b;\n}\nconsole.log(add(2, 2));\n"),   # cut before the console.log
        ("js", "  return a - b;\n}\n"),
        ("cpp", "    return a + b;\n}\n\nint junk() { return 1; }\n"),  # cut at the first "\n}"
        ("cpp", "    return a + ;\n}\n")]
with open(d + "/mpe-c.jsonl", "w") as f:
    for lang, c in comp: f.write(json.dumps({"name": "HumanEval_0_add", "language": lang, "completion": c}) + "\n")
with open(d + "/mpe-bad.jsonl", "w") as f:
    f.write(json.dumps(dict(recs[0], language="jl")) + "\n")
PY
"$P" import multipl-e "$SQ_TMP/mpe.jsonl" --completions "$SQ_TMP/mpe-c.jsonl" >"$SQ_TMP/tasks.jsonl" || sq_fail "import multipl-e"
grep -q 'console.log(add(2, 2))' "$SQ_TMP/tasks.jsonl" && sq_fail "a completion was not cut at its stop token"
"$P" import multipl-e "$SQ_TMP/mpe-bad.jsonl" --completions "$SQ_TMP/mpe-c.jsonl" >/dev/null 2>"$SQ_TMP/bad.err" &&
  sq_fail "a language sandq does not run was imported"
grep -q "mpe-bad.jsonl:1: language: 'jl' is not one sandq runs" "$SQ_TMP/bad.err" || sq_fail "import said: $(cat "$SQ_TMP/bad.err")"
rc=0; "$P" import multipl-e "$SQ_TMP/mpe.jsonl" --samples 2 >/dev/null 2>"$SQ_TMP/mpe-samples.err" || rc=$?
[ "$rc" -eq 2 ] || sq_fail "multipl-e --samples is not a usage error (exit $rc)"
grep -q "multipl-e takes --completions only (it has no reference solutions, and its programs continue" \
  "$SQ_TMP/mpe-samples.err" || sq_fail "multipl-e --samples: the refusal does not say why: $(cat "$SQ_TMP/mpe-samples.err")"

sq_start_redis
unset SANDQ_LLM_BASE_URL
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
sq_bg w1 "$SQ_BIN/sandq-worker" serve --worker-id mpe-1
sq_wait_for "grep -q 'ready in' $SQ_TMP/w1.log" 60 || { cat "$SQ_TMP/w1.log" >&2; sq_fail "the worker never got ready"; }
"$P" push --batch mpe --wait --timeout-s 300 "$SQ_TMP/tasks.jsonl" >/dev/null 2>&1
"$P" results mpe --format jsonl >"$SQ_TMP/results.jsonl" || sq_fail "results"
"$P" report mpe --json --k 1 >"$SQ_TMP/report.json" || sq_fail "report"
$PY - "$SQ_TMP" <<'PY' || sq_fail "the MultiPL-E results are wrong"
import json, sys
d = sys.argv[1]
r = {x["_id"]: x for x in map(json.loads, open(d + "/results.jsonl"))}
got = {k: (x["status"], x.get("language")) for k, x in r.items()}
assert got == {"js/HumanEval_0_add/0": ("passed", "javascript"), "js/HumanEval_0_add/1": ("failed", "javascript"),
               "cpp/HumanEval_0_add/0": ("passed", "cpp"), "cpp/HumanEval_0_add/1": ("compile_error", "cpp")}, got
rep = json.load(open(d + "/report.json"))
assert rep["problems"] == 2 and abs(rep["pass_at_k"]["1"] - 0.5) < 1e-12, rep["pass_at_k"]
assert rep["languages"] == {"javascript": {"problems": 1, "pass_at_k": {"1": 0.5}},
                            "cpp": {"problems": 1, "pass_at_k": {"1": 0.5}}}, rep.get("languages")
print("multiple: js and cpp as expected, pass@1 %.4f" % rep["pass_at_k"]["1"])
PY
echo "multiple: all checks passed"
