#!/bin/sh
# All 974 MBPP problems through the real pipeline (import -> push -> real
# redis-server, two warm workers with the default settings -> report --json).
# Under MBPP's convention (test_setup_code, the code, each assert) every
# reference solution passes except 367 and 927, whose setup builds a Node
# tree before the solution defines Node (../shared/data/README.md): pass@1 is
# 972/974, and those two say NameError. A broken completion per problem, in
# the {"task_id", "completion"} samples format, gives pass@1 = 0. First,
# without the data: MBPP-sanitized's rows (`prompt`, `test_imports`) and a
# bad test_imports refused.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
P=$SQ_BIN/sandq-producer
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
# MBPP-sanitized's rows: the problem under `prompt` (`text` first when both
# are there), and `test_imports` the first lines of the tests, so that the
# asserts' isclose is the tests' own and not the candidate's.
printf '%s\n' \
  '{"task_id": 2, "prompt": "Area of a circle.", "code": "import math\ndef area(r): return math.pi * r * r", "test_imports": ["from math import isclose", "import math"], "test_list": ["assert isclose(area(1), 3.1416, rel_tol=0.001)"]}' \
  '{"task_id": 3, "text": "From text.", "prompt": "From prompt.", "code": "def g(): return 1", "test_list": ["assert g() == 1"]}' \
  >"$SQ_TMP/sanitized.jsonl"
for how in --canonical "--samples 1"; do
  # shellcheck disable=SC2086
  "$P" import mbpp "$SQ_TMP/sanitized.jsonl" --split all $how >"$SQ_TMP/sanitized.out" 2>"$SQ_TMP/sanitized.err" ||
    { cat "$SQ_TMP/sanitized.err"; sq_fail "import of MBPP-sanitized rows ($how)"; }
  /usr/bin/python3 - "$SQ_TMP/sanitized.out" "$how" <<'PY'
import json, sys
a, b = [json.loads(l) for l in open(sys.argv[1])]
assert a["tests"] == "from math import isclose\nimport math\nassert isclose(area(1), 3.1416, rel_tol=0.001)\n", a
assert b["tests"] == "assert g() == 1\n", b
if sys.argv[2] != "--canonical":
    assert a["prompt"].startswith("Area of a circle. Your code should pass these tests:\n\nassert isclose("), a
    assert b["prompt"].startswith("From text. "), b
PY
done
# a test_imports that is not a list of strings: the line and the field, status 1, nothing written
bad_imports() { # bad_imports VALUE-JSON WANT
  printf '{"task_id": 2, "prompt": "p", "code": "def f(): return 1", "test_imports": %s, "test_list": ["assert f() == 1"]}\n' \
    "$1" >"$SQ_TMP/bad-imports.jsonl"
  rc=0; "$P" import mbpp "$SQ_TMP/bad-imports.jsonl" --canonical --split all >"$SQ_TMP/bad-imports.out" 2>"$SQ_TMP/bad-imports.err" || rc=$?
  [ "$rc" -eq 1 ] && [ ! -s "$SQ_TMP/bad-imports.out" ] || { cat "$SQ_TMP/bad-imports.err"; sq_fail "test_imports $1: exit $rc"; }
  grep -qF "bad-imports.jsonl:1: $2" "$SQ_TMP/bad-imports.err" || { cat "$SQ_TMP/bad-imports.err"; sq_fail "test_imports $1: no '$2'"; }
}
bad_imports '"from math import isclose"' "test_imports: must be an array of strings"
bad_imports '["import math", 3]' "test_imports[1]: must be a string"
data=${SANDQ_MBPP:-${SANDQ_DATA_DIR:+$SANDQ_DATA_DIR/mbpp.jsonl}}
[ -n "$data" ] && [ -r "$data" ] || sq_skip "MBPP data not found (SANDQ_DATA_DIR or SANDQ_MBPP); the checks of MBPP-sanitized rows passed"
sq_start_redis
# every problem (--split all); the default is the test split, 11-510
"$P" import mbpp "$data" --canonical --split all >"$SQ_TMP/canonical.jsonl"
"$P" import mbpp "$data" --canonical >"$SQ_TMP/test-split.jsonl" 2>"$SQ_TMP/split.err" || sq_fail "import (test split)"
[ "$(wc -l <"$SQ_TMP/test-split.jsonl")" -eq 500 ] || sq_fail "the default split is not 500 problems"
grep -q '"id":"Mbpp/11/0"' "$SQ_TMP/test-split.jsonl" && grep -q '"id":"Mbpp/510/0"' "$SQ_TMP/test-split.jsonl" &&
  ! grep -q '"id":"Mbpp/10/0"\|"id":"Mbpp/511/0"' "$SQ_TMP/test-split.jsonl" || sq_fail "the test split is not 11-510"
grep -q "500 task(s) from 500 mbpp problem(s) (the test split)" "$SQ_TMP/split.err" || sq_fail "import said: $(cat "$SQ_TMP/split.err")"
[ "$("$P" import mbpp "$data" --canonical --split validation 2>/dev/null | wc -l)" -eq 90 ] || sq_fail "validation is not 90"
rc=0; "$P" import mbpp "$data" --split dev >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || sq_fail "an unknown split is not a usage error (exit $rc)"
/usr/bin/python3 - "$data" >"$SQ_TMP/broken-samples.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    # the bare MBPP number, as MBPP samples files carry it
    print(json.dumps({"task_id": json.loads(line)["task_id"], "completion": "def nothing():\n    return None\n"}))
PY
"$P" import mbpp "$data" --split all --completions "$SQ_TMP/broken-samples.jsonl" >"$SQ_TMP/broken.jsonl"
# The default limits: a few reference solutions are CPU-bound for seconds
# (Mbpp/123 sums divisors up to 9999, 2.2 s of CPU), within the default
# 5000 ms of CPU; on a loaded machine the wall clock credits a run's wait
# for a CPU, so none becomes a timeout (docs/security.md). The wait is a
# deadline for the batch, with room for a busy machine, not a speed test
# (that is bench/).
sq_bg w1 "$SQ_BIN/sandq-worker" serve --worker-id mbpp-1
sq_bg w2 "$SQ_BIN/sandq-worker" serve --worker-id mbpp-2
for set in canonical broken; do
  t0=$(date +%s)
  sq_push_wait "mbpp-$set" "$SQ_TMP/push-$set.out" "$SQ_TMP/$set.jsonl" ||
    { cat "$SQ_TMP/push-$set.out"; sq_fail "push of $set exited non-zero"; }
  echo "mbpp: $set: 974 tasks in $(( $(date +%s) - t0 ))s"
  "$P" report "mbpp-$set" --json --k 1 >"$SQ_TMP/report-$set.json"
  "$P" results "mbpp-$set" --format jsonl --out "$SQ_TMP/$set.jsonl.out" 2>/dev/null
done
/usr/bin/python3 - "$SQ_TMP" <<'PY'
import json, sys
tmp = sys.argv[1]
canon = json.load(open(f"{tmp}/report-canonical.json"))
broken = json.load(open(f"{tmp}/report-broken.json"))
rows = [json.loads(l) for l in open(f"{tmp}/canonical.jsonl.out")]
assert len(rows) == 974, len(rows)
bad = {r["metadata"]["task_id"]: r for r in rows if r["status"] != "passed"}
for tid, r in sorted(bad.items()):
    print("not passed:", tid, r["status"], r.get("reason"))
assert set(bad) == {"Mbpp/367", "Mbpp/927"}, sorted(bad)
assert all(r["status"] == "runtime_error" and r["reason"].startswith("NameError: name 'Node' is not defined")
           for r in bad.values())
assert canon["tasks"] == 974 and canon["problems"] == 974
assert abs(canon["pass_at_k"]["1"] - 972 / 974) < 1e-12, canon["pass_at_k"]
assert broken["tasks"] == 974 and broken["pass_at_k"] == {"1": 0.0}, broken["pass_at_k"]
print("mbpp: pass@1 %.4f with the reference solutions (972/974), %.1f with broken ones; failures %s"
      % (canon["pass_at_k"]["1"], broken["pass_at_k"]["1"], {f["kind"]: f["count"] for f in broken["failures"]}))
PY
