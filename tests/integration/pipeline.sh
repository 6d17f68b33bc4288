#!/bin/sh
# The whole path, as `make demo` runs it: real redis-server, the fake LLM over
# real HTTP, two real workers, the sample batch. Every task must end with the
# status its metadata.expect names, and the LLM key must appear nowhere.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
/usr/bin/python3 -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson module) is not installed"
key="sk-pipeline-secret-$$-do-not-leak"
mkdir -p "$SQ_TMP/demo"
set +e
SANDQ_LLM_API_KEY=$key SANDQ_DEMO_OUT="$SQ_TMP/results.bson" SQ_TMP_PARENT="$SQ_TMP/demo" SQ_KEEP_TMP=1 \
  "$SQ_SRC/scripts/demo.sh" "$(dirname "$SQ_BIN")" >"$SQ_TMP/demo.out" 2>&1
rc=$?
set -e
cat "$SQ_TMP/demo.out"
[ $rc -eq 0 ] || sq_fail "demo exited $rc (0 = every task got its expected status)"

/usr/bin/python3 - "$SQ_TMP/results.bson" "$SQ_SRC/samples/batch.jsonl" <<'PY'
import json, sys, bson
docs = bson.decode_all(open(sys.argv[1], "rb").read())
tasks = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
by_id = {d["_id"]: d for d in docs}
want = {t["id"]: t["metadata"]["expect"] for t in tasks}
want["malformed-limits"] = "invalid_task"
assert set(by_id) == set(want), (sorted(by_id), sorted(want))
bad = [(i, by_id[i]["status"], w) for i, w in want.items() if by_id[i]["status"] != w]
assert not bad, bad
batches = {d["batch"] for d in docs}
assert len(batches) == 1, batches
for d in docs:
    for k in ("status", "stdout", "stderr", "timings", "worker", "finished_at"):
        assert k in d, (d["_id"], k)
    assert d["timings"]["total_ms"] >= d["timings"]["exec_ms"] >= 0
llm = by_id["prompt-fizzbuzz"]["llm"]
assert llm["model"] == "fake-coder" and llm["prompt_tokens"] > 0 and llm["completion_tokens"] > 0, llm
assert "def fizzbuzz" in by_id["prompt-fizzbuzz"]["code"]
assert "llm" not in by_id["hello"]
j = by_id["hello"]["jail"]
assert j["mode"] in ("spawn", "warm") and "seccomp" in j["layers"] and j["oom_killed"] is False, j
assert "jail" not in by_id["malformed-limits"] and "jail" not in by_id["prompt-garbled-reply"]
assert by_id["output-flood"]["stdout_truncated"] is True
assert len(by_id["output-flood"]["stdout"].encode()) == 16 * 1024
assert "reason" in by_id["malformed-limits"] and "limits.wall_ms" in by_id["malformed-limits"]["reason"]
assert "empty" in by_id["prompt-garbled-reply"]["reason"]
assert len({d["worker"] for d in docs if d["status"] != "invalid_task"}) >= 1
print("pipeline: %d results, every status as expected" % len(docs))
PY

# The key was in the workers' environment: it must not be in results or logs.
if grep -rqa -- "$key" "$SQ_TMP/results.bson" "$SQ_TMP/demo" "$SQ_TMP/demo.out"; then
  sq_fail "the LLM API key leaked into results or logs"
fi
grep -rqa "worker demo-1 serving" "$SQ_TMP/demo" || sq_fail "worker logs not found where expected"
echo "pipeline: the API key appears in no result and no log"
