#!/bin/sh
# audit.sh: the audit trail (docs/operations.md, "Audit trail") against a
# real redis-server, the fake LLM and a real worker:
#   - N programs run give N entries, each with the sha256 of the program the
#     result holds, its status, worker, jail mode, provider and model for
#     generated code only, the blocked syscall when seccomp killed it, and a
#     repair's two runs as two entries (rounds 0 and 1);
#   - `sandq-producer audit` reads them (--batch, --since, --json);
#   - the stream stays capped at about audit_max_len (XADD MAXLEN ~);
#   - the consumer-group recipe of docs/operations.md ships every entry once.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo is not installed"
# Small stream nodes, so the approximate cap (whole nodes are trimmed) is tight.
SQ_REDIS_ARGS="--stream-node-max-entries 10" sq_start_redis
sq_start_fake_llm "$SQ_SRC/tests/fake_llm/worker-replies.jsonl"
CAP=40
cat >"$SQ_TMP/w.json" <<JSON
{"providers": [{"name": "fake", "base_url": "$SANDQ_LLM_BASE_URL", "model": "fake-coder", "max_retries": 0}],
 "scratch_root": "$SQ_TMP/scratch", "risk": "off", "max_repairs": 1, "max_attempts": 1,
 "metrics_flush_ms": 200, "audit_max_len": $CAP}
JSON
unset SANDQ_LLM_BASE_URL
cfg="--config $SQ_TMP/w.json"
P="$SQ_BIN/sandq-producer"
KEY='sq:{default}:audit'
sq_bg w1 "$SQ_BIN/sandq-worker" serve $cfg --worker-id w1

# 1. Given code (ok, failing, raising, a syscall seccomp kills), generated
#    code, and generated code repaired once (two runs).
cat >"$SQ_TMP/a1.jsonl" <<'T'
{"id": "ok", "code": "print(1)"}
{"id": "exit3", "code": "import sys\nsys.exit(3)"}
{"id": "raise", "code": "raise ValueError('x')"}
{"id": "ptrace", "code": "import ctypes\nctypes.CDLL(None).ptrace(0, 0, 0, 0)"}
{"id": "tests", "code": "def add(a, b):\n    return a + b", "tests": "assert add(1, 2) == 3", "entry_point": "add"}
{"id": "gen-1", "prompt": "[w:safe] one"}
{"id": "gen-2", "prompt": "[w:safe] two"}
{"id": "fixed", "prompt": "[w:repair] fix me"}
T
$P push $cfg --batch a1 --wait --timeout-s 60 --out "$SQ_TMP/a1.bson" "$SQ_TMP/a1.jsonl" >"$SQ_TMP/push.out" 2>&1 ||
  { cat "$SQ_TMP/push.out" "$SQ_TMP/w1.log" >&2; sq_fail "batch a1 did not complete"; }
runs=9 # 7 tasks with one run, one repaired with two
sq_wait_for "[ \$($P audit $cfg --batch a1 --json | wc -l) -ge $runs ]" 60 ||
  sq_fail "the audit trail holds $($P audit $cfg --batch a1 --json | wc -l) entries for a1, want $runs"
$P audit $cfg --batch a1 --json >"$SQ_TMP/a1.audit"
$PY - "$SQ_TMP/a1.bson" "$SQ_TMP/a1.audit" $runs <<'PY' || sq_fail "audit entries do not match the results"
import bson, collections, hashlib, json, sys
docs = {d["_id"] if "_id" in d else d["id"]: d for d in bson.decode_all(open(sys.argv[1], "rb").read())}
entries = [json.loads(l) for l in open(sys.argv[2])]
assert len(entries) == int(sys.argv[3]), (len(entries), entries)
by_task = collections.defaultdict(list)
for e in entries:
    by_task[e["task"]].append(e)
    assert e["batch"] == "a1" and e["worker"] == "w1" and e["jail_mode"] in ("warm", "spawn"), e
    assert len(e["sha256"]) == 64 and e["time_ms"] > 0 and e["id"], e
assert set(by_task) == set(docs), (set(by_task), set(docs))
for tid, d in docs.items():
    last = max(by_task[tid], key=lambda e: e["round"])
    code = d["code"].encode() if isinstance(d["code"], str) else d["code"]
    assert last["sha256"] == hashlib.sha256(code).hexdigest(), (tid, last, d["code"])
    assert last["status"] == d["status"], (tid, last, d["status"])
    generated = tid.startswith(("gen", "fixed"))
    assert ("provider" in last and last.get("model") == "fake-coder") == generated, last
rep = sorted(by_task["fixed"], key=lambda e: e["round"])
assert [e["round"] for e in rep] == [0, 1] and rep[0]["status"] == "runtime_error", rep
assert rep[0]["sha256"] != rep[1]["sha256"], rep
assert by_task["ptrace"][0]["status"] == "policy_violation" and by_task["ptrace"][0]["blocked_syscall"] == "ptrace", by_task["ptrace"]
assert by_task["exit3"][0]["exit_code"] == 3, by_task["exit3"]
print("audit: %d entries for %d tasks, hashes and statuses match the results" % (len(entries), len(docs)))
PY

# The text form, and the filters.
$P audit $cfg --batch a1 >"$SQ_TMP/a1.txt"
[ "$(grep -c ' a1 ' "$SQ_TMP/a1.txt")" = $runs ] || sq_fail "text audit: $(cat "$SQ_TMP/a1.txt")"
grep -q "ptrace .*blocked ptrace" "$SQ_TMP/a1.txt" || sq_fail "text audit lacks the blocked syscall: $(cat "$SQ_TMP/a1.txt")"
[ "$($P audit $cfg --since 1h --json | wc -l)" = $runs ] || sq_fail "--since 1h does not give every entry"
[ "$($P audit $cfg --since "$(( $(date +%s) + 3600 ))" --json | wc -l)" = 0 ] || sq_fail "--since the future gives entries"
[ "$($P audit $cfg --batch nosuch --json | wc -l)" = 0 ] || sq_fail "--batch of another batch gives entries"
for bad in "--since yesterday" "--batch bad/name" "extra"; do
  rc=0
  # shellcheck disable=SC2086
  $P audit $cfg $bad >/dev/null 2>"$SQ_TMP/err" || rc=$?
  [ $rc -eq 2 ] || sq_fail "audit $bad: exit $rc, want 2: $(cat "$SQ_TMP/err")"
done

# 2. The consumer-group recipe (docs/operations.md): every entry shipped once.
sq_redis_cli XGROUP CREATE "$KEY" shipper 0 >/dev/null
got=$(sq_redis_cli --no-raw XREADGROUP GROUP shipper s1 COUNT 1000 STREAMS "$KEY" '>' | grep -c '"task"')
[ "$got" = $runs ] || sq_fail "the consumer group read $got entries, want $runs"
ids=$(sq_redis_cli XRANGE "$KEY" - + | grep -E '^[0-9]+-[0-9]+$' | tr '\n' ' ')
# shellcheck disable=SC2086
[ "$(sq_redis_cli XACK "$KEY" shipper $ids)" = $runs ] || sq_fail "XACK did not acknowledge $runs entries"
[ "$(sq_redis_cli XPENDING "$KEY" shipper | head -1)" = 0 ] || sq_fail "entries left pending after XACK"

# 3. The cap: 100 more runs, the stream keeps about audit_max_len entries.
i=0; : >"$SQ_TMP/a2.jsonl"
while [ $i -lt 100 ]; do echo "{\"id\": \"c$i\", \"code\": \"print($i)\"}" >>"$SQ_TMP/a2.jsonl"; i=$((i + 1)); done
$P push $cfg --batch a2 --wait --timeout-s 120 "$SQ_TMP/a2.jsonl" >"$SQ_TMP/push2.out" 2>&1 ||
  { cat "$SQ_TMP/push2.out" >&2; sq_fail "batch a2 did not complete"; }
sq_wait_for "$P audit $cfg --batch a2 --json | grep -q '\"task\":\"c99\"'" 60 || sq_fail "the last run of a2 is not in the trail"
len=$(sq_redis_cli XLEN "$KEY")
[ "$len" -ge $CAP ] && [ "$len" -le $((CAP + 10)) ] || sq_fail "the audit stream holds $len entries, want $CAP..$((CAP + 10))"
echo "audit: all checks passed ($len entries kept under audit_max_len $CAP)"
