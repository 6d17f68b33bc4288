#!/bin/sh
# docs_evaluation.sh: every command of docs/evaluation.md runs as written.
# The ```sh blocks are extracted in order and run as one script (sh -e) in
# a directory holding the two datasets, with the built programs on the
# PATH and the fake LLM as the workers' provider: the page's first section
# ("Start here") with no Redis given (evaluate starts its own), the rest
# with a real redis-server at SANDQ_REDIS_URL; then what the page says
# about the output is checked.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
[ -n "${SANDQ_DATA_DIR:-}" ] && [ -r "$SANDQ_DATA_DIR/HumanEval.jsonl.gz" ] && [ -r "$SANDQ_DATA_DIR/mbpp.jsonl" ] ||
  sq_skip "the datasets are not found (SANDQ_DATA_DIR)"
sq_env_init
sq_start_redis
sq_start_fake_llm
doc="$SQ_SRC/docs/evaluation.md"
{ echo 'unset SANDQ_REDIS_URL'
  awk '/^## A fleet of your own/ {print "export SANDQ_REDIS_URL=\"$SQ_DOC_REDIS_URL\""}
       /^```sh$/ {on = 1; next} /^```/ {on = 0} on' "$doc"; } >"$SQ_TMP/doc.sh"
grep -q '^export SANDQ_REDIS_URL=' "$SQ_TMP/doc.sh" || sq_fail "no section 'A fleet of your own' in $doc"
export SQ_DOC_REDIS_URL="$SANDQ_REDIS_URL"
n=$(grep -c . "$SQ_TMP/doc.sh")
[ "$n" -ge 15 ] || sq_fail "only $n command lines found in $doc"
mkdir "$SQ_TMP/work"
ln -s "$SANDQ_DATA_DIR/HumanEval.jsonl.gz" "$SANDQ_DATA_DIR/mbpp.jsonl" "$SQ_TMP/work/"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
stop_workers() { [ -f "$SQ_TMP/work/workers.pid" ] && kill $(cat "$SQ_TMP/work/workers.pid") 2>/dev/null || true; }
if ! (cd "$SQ_TMP/work" && PATH="$SQ_BIN:$PATH" sh -e "$SQ_TMP/doc.sh") >"$SQ_TMP/doc.out" 2>"$SQ_TMP/doc.err"; then
  stop_workers
  tail -n 30 "$SQ_TMP/doc.out" "$SQ_TMP/doc.err"
  sq_fail "a command of docs/evaluation.md failed"
fi
stop_workers
w="$SQ_TMP/work"
grep -q "pass@1       1.0000  (164 problem(s))" "$SQ_TMP/doc.out" || sq_fail "HumanEval's reference solutions: pass@1 is not 1"
# the first section: evaluate on a fleet of its own, the import counting the problems with samples
grep -q "evaluate: a private redis-server at" "$SQ_TMP/doc.err" || sq_fail "evaluate did not start a fleet of its own"
grep -q "3 task(s) from 2 humaneval problem(s); 162 of the dataset's 164 problems have no sample" "$SQ_TMP/doc.err" ||
  sq_fail "the import does not count the problems with samples as the page says"
/usr/bin/python3 - "$SQ_TMP/work/first.json" <<'PY' || sq_fail "the first section's pass@k differ from the page"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["pass_at_k"] == {"1": 0.75, "2": 1.0} and r["pass_at_k_problems"] == {"1": 2, "2": 1}, r["pass_at_k"]
PY
[ -s "$SQ_TMP/work/he-model.html" ] || sq_fail "evaluate --html wrote no page"
grep -q "pass@1       0.9980  (500 problem(s))" "$SQ_TMP/doc.out" || sq_fail "MBPP's reference solutions: pass@1 is not 499/500"
grep -q "pass@1       0.7500  (2 problem(s))" "$SQ_TMP/doc.out" && grep -q "pass@2       1.0000  (1 problem(s))" "$SQ_TMP/doc.out" ||
  { cat "$SQ_TMP/doc.out"; sq_fail "the completions' pass@k differ from what the page says"; }
grep -q "pass@1       0.5000  (2 problem(s))" "$SQ_TMP/doc.out" && grep -q 'case 1: expected `3`, got `-1`' "$SQ_TMP/doc.out" ||
  { cat "$SQ_TMP/doc.out"; sq_fail "the APPS example's pass@1 or reason differs from the page"; }
grep -Eq "^  APPS/1 +1 +1 +1$" "$SQ_TMP/doc.out" || sq_fail "the APPS example's failing cases differ from the page"
grep -q "apps.jsonl:1: input_output: kept the first 1 of 2 cases (--max-cases)" "$SQ_TMP/doc.err" &&
  [ "$(head -1 "$SQ_TMP/work/apps-first.jsonl" | /usr/bin/python3 -c 'import json, sys; print(len(json.load(sys.stdin)["cases"]))')" = 1 ] ||
  sq_fail "import apps --max-cases 1 did not keep one case, saying so: $(grep max-cases "$SQ_TMP/doc.err")"
grep -q "assertion failed at line 24: assert candidate(\[1.0, 2.0, 3.9, 4.0, 5.0, 2.2\], 0.3) == True" "$SQ_TMP/doc.out" ||
  sq_fail "the wrong sample's reason differs from the page"
/usr/bin/python3 - "$w/compare.json" <<'PY' || sq_fail "the documented comparison is wrong"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["schema"] == "sandq.compare/1" and c["batches"] == ["he-canonical", "he-sampled"], c["batches"]
assert c["common_problems"] == 164 and len(c["problems"]) == 164, c["common_problems"]
k = c["pass_at_k"]["1"]
assert k["a"] == 1.0 and k["problems"] == 164 and abs(k["delta"] - (k["b"] - k["a"])) < 1e-12, k
assert not c["only_b"], c["only_b"]  # the reference solutions pass everywhere
PY
for f in he-sampled.html he-sampled.bson he-sampled.results.jsonl he-sampled.csv he-sampled.report.json; do
  [ -s "$w/$f" ] || sq_fail "$f was not written"
done
/usr/bin/python3 - "$w/heplus.results.jsonl" <<'PY' || sq_fail "the HumanEval+ example's tiers differ from the page"
import json, sys
r = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda x: x["_id"])
assert [x["tiers"] for x in r] == [{"base": "passed", "plus": "passed"}, {"base": "passed", "plus": "failed"}], r
assert [x["status"] for x in r] == ["passed", "failed"], r
PY
/usr/bin/python3 - "$w/mpe.report.json" <<'PY' || sq_fail "the MultiPL-E example's pass@1 differs from the page"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["tasks"] == 2 and r["pass_at_k"]["1"] == 0.5, r["pass_at_k"]
PY
/usr/bin/python3 - "$w/mbpp-limits.jsonl" <<'PY'
import json, sys
t = [json.loads(l) for l in open(sys.argv[1])]
assert len(t) == 500 and all(x["limits"] == {"cpu_ms": 8000, "memory_mib": 256} for x in t), t[0].get("limits")
PY
/usr/bin/python3 - "$w/he-sampled.report.json" "$w/he-sampled.csv" <<'PY'
import csv, json, sys
r = json.load(open(sys.argv[1]))
assert r["tasks"] == 820 and r["problems"] == 164 and set(r["pass_at_k"]) == {"1", "5"}, r["pass_at_k"]
assert r["llm"] and r["latency_ms"]["llm"]["count"] == 820
assert len(list(csv.DictReader(open(sys.argv[2], newline="")))) == 820
print("docs_evaluation: the commands of docs/evaluation.md ran; sampled pass@1 %.3f" % r["pass_at_k"]["1"])
PY
