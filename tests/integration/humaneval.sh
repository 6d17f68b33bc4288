#!/bin/sh
# All 164 HumanEval canonical solutions through the real pipeline: producer,
# real redis-server, two workers in each jail mode (default-deny seccomp,
# namespaces, the static pre-check under its default policy). Every one must
# pass: the jail's allowlist and the pre-check are sized for real code, and
# a wrong solution must still fail (a mutated copy of each is pushed too).
set -eu
. "$SQ_SRC/tests/lib/env.sh"
data=${SANDQ_HUMANEVAL:-${SANDQ_DATA_DIR:+$SANDQ_DATA_DIR/HumanEval.jsonl.gz}}
[ -n "$data" ] && [ -r "$data" ] || sq_skip "HumanEval data not found (SANDQ_DATA_DIR or SANDQ_HUMANEVAL)"
/usr/bin/python3 -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson module) is not installed"
sq_env_init
sq_start_redis
/usr/bin/python3 - "$data" "$SQ_TMP/tasks.jsonl" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt") as f, open(sys.argv[2], "w") as out:
    for line in f:
        p = json.loads(line)
        base = {"tests": p["test"], "entry_point": p["entry_point"], "limits": {"wall_ms": 20000}}
        ok = dict(base, id=p["task_id"], code=p["prompt"] + p["canonical_solution"], metadata={"expect": "passed"})
        # A wrong solution: the function returns None. Checks assert on it
        # (failed) or trip over it (a TypeError: runtime_error); never passed.
        bad = dict(base, id=p["task_id"] + "/wrong", metadata={"expect": ["failed", "runtime_error"]},
                   code=p["prompt"] + "    return None\n")
        out.write(json.dumps(ok) + "\n" + json.dumps(bad) + "\n")
PY
for mode in warm spawn; do
  export SANDQ_JAIL_MODE=$mode SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-$mode"
  sq_bg "w1$mode" "$SQ_BIN/sandq-worker" serve --worker-id "he-1-$mode"
  sq_bg "w2$mode" "$SQ_BIN/sandq-worker" serve --worker-id "he-2-$mode"
  set +e
  "$SQ_BIN/sandq-producer" push --batch "he-$mode" --wait --timeout-s 400 --out "$SQ_TMP/$mode.bson" \
    "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/push-$mode.out" 2>&1
  rc=$?
  set -e
  /usr/bin/python3 - "$SQ_TMP/$mode.bson" "$mode" <<'PY'
import sys, bson
docs = bson.decode_all(open(sys.argv[1], "rb").read())
def expected(d):
    e = d["metadata"]["expect"]
    return d["status"] in (e if isinstance(e, list) else [e])
bad = [(d["_id"], d["status"], d.get("reason"), d["stderr"][-300:]) for d in docs if not expected(d)]
modes = {d["jail"]["mode"] for d in docs}
assert modes == {sys.argv[2]}, modes
wrong_failed = sum(1 for d in docs if d["_id"].endswith("/wrong") and d["status"] == "failed")
for b in bad[:10]:
    print("MISMATCH", *b)
assert len(docs) == 328, len(docs)
assert not bad, "%d of 328 differ from their expectation (mode %s)" % (len(bad), sys.argv[2])
print("humaneval (%s): 164 canonical solutions passed; of 164 wrong ones, %d failed an assertion, "
      "the rest raised" % (sys.argv[2], wrong_failed))
PY
  [ $rc -eq 0 ] || { cat "$SQ_TMP/push-$mode.out"; sq_fail "producer exited $rc in mode $mode"; }
  # Stop this pair (SIGTERM: finish and leave) so the next mode's workers do all of its work.
  eval "p1=\$SQ_PID_w1$mode p2=\$SQ_PID_w2$mode"
  kill -TERM "$p1" "$p2"
  wait "$p1" "$p2" || sq_fail "a $mode worker did not stop cleanly on SIGTERM"
done
