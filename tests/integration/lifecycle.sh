#!/bin/sh
# lifecycle.sh: batches a person leaves and comes back to, against a real
# redis-server and real workers: Ctrl-C on `push --wait` says how to come
# back and `wait` finishes the batch; `batches --json` lists the batches;
# `cancel` ends 300 waiting tasks with 300 `cancelled` results, also while
# workers claim from the same batch (each task ends exactly once), on a
# plain and on a sharded queue; `cancel --kill` stops the tasks workers
# hold (a run under way is killed, one not started never starts), while a
# plain `cancel` lets a running task finish.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_need_worker_host

# tasks FILE PREFIX N SLEEP_S [WALL_MS]: N code-only tasks that sleep
# SLEEP_S and pass (with WALL_MS, that wall limit each).
tasks() {
  $PY - "$@" <<'PY'
import json, sys
path, prefix, n, s = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(path, "w") as f:
    for i in range(n):
        t = {"id": f"{prefix}-{i:03d}", "code": f"import time\ntime.sleep({s})\n", "tests": "assert True\n"}
        if len(sys.argv) > 5:
            t["limits"] = {"wall_ms": int(sys.argv[5])}
        f.write(json.dumps(t) + "\n")
PY
}

# check_results BATCH N MIN_CANCELLED: the batch has exactly N results, one
# per id, at least MIN_CANCELLED of them 'cancelled' (the rest passed), and
# its counters say the same (finished, done N, no duplicate, no dead).
check_results() {
  "$P" results "$1" --format jsonl >"$SQ_TMP/$1.jsonl" || sq_fail "results $1"
  "$P" status "$1" >"$SQ_TMP/$1.status" || sq_fail "status $1"
  $PY - "$SQ_TMP/$1.jsonl" "$SQ_TMP/$1.status" "$2" "$3" <<'PY' || sq_fail "batch $1: results are wrong"
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
n, least = int(sys.argv[3]), int(sys.argv[4])
ids = collections.Counter(r["_id"] for r in rows)
assert len(rows) == n and len(ids) == n, (len(rows), len(ids))
st = collections.Counter(r["status"] for r in rows)
assert set(st) <= {"cancelled", "passed"}, st
assert st["cancelled"] >= least, st
for r in rows:
    if r["status"] == "cancelled":
        assert r["reason"] == "cancelled by sandq-producer cancel", r
status = open(sys.argv[2]).read()
import re
def field(name):
    m = re.search(r"^\s*" + name + r"\s+(\S+)$", status, re.M)
    return m and m.group(1)
assert field("total") == str(n) and field("done") == str(n) and field("dead") == "0", status
assert field("finished") == "yes", status
assert field("duplicate") is None, status
assert (field("cancelled") or "0") == str(st["cancelled"]), status
print("%s: %d results, %s" % (sys.argv[1], n, dict(st)))
PY
}

sq_start_redis
unset SANDQ_LLM_BASE_URL
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"

# 1. 300 waiting tasks, no worker: cancel ends the batch at once, 300 results.
tasks "$SQ_TMP/c300.jsonl" c 300 0
"$P" push --batch lc-c300 "$SQ_TMP/c300.jsonl" >/dev/null || sq_fail "push lc-c300"
"$P" cancel lc-c300 >"$SQ_TMP/cancel.out" 2>&1 || { cat "$SQ_TMP/cancel.out" >&2; sq_fail "cancel lc-c300"; }
grep -q "300 waiting task(s) cancelled, 0 running" "$SQ_TMP/cancel.out" || sq_fail "cancel said: $(cat "$SQ_TMP/cancel.out")"
"$P" wait lc-c300 --timeout-s 60 >"$SQ_TMP/w300.out" 2>&1 || sq_fail "wait lc-c300: $(cat "$SQ_TMP/w300.out")"
check_results lc-c300 300 300
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{default}:tasks')" 0 "tasks left on the queue"
"$P" cancel no-such-batch >/dev/null 2>&1 && sq_fail "cancel of an unknown batch succeeded"
# a task enqueued by another client without a batch field is batch "default"'s
sq_assert_eq "$(sq_redis_cli FCALL sq1_enqueue 1 'sq:{default}:tasks' default 3600 0 '{"id":"d1","code":"print(1)"}' | tr '\n' ' ')" \
  "1 0 " "enqueue into batch default"
"$P" cancel default >"$SQ_TMP/cdef.out" 2>&1 || sq_fail "cancel default: $(cat "$SQ_TMP/cdef.out")"
grep -q "1 waiting task(s) cancelled" "$SQ_TMP/cdef.out" || sq_fail "cancel default said: $(cat "$SQ_TMP/cdef.out")"

# 2. Ctrl-C on push --wait, then `wait`, with a real worker.
sq_bg w1 "$W" serve --worker-id lc-1
sq_wait_for "grep -q 'ready in' $SQ_TMP/w1.log" 60 || { cat "$SQ_TMP/w1.log" >&2; sq_fail "worker lc-1 never got ready"; }
tasks "$SQ_TMP/slow.jsonl" s 20 0.2
"$P" push --batch lc-wait --wait "$SQ_TMP/slow.jsonl" >"$SQ_TMP/int.out" 2>"$SQ_TMP/int.err" &
int_pid=$!
SQ_PIDS="$SQ_PIDS $int_pid"
sq_wait_for "grep -q 'batch lc-wait: ' $SQ_TMP/int.err" 20 || sq_fail "no progress: $(cat "$SQ_TMP/int.err")"
kill -INT $int_pid
wait $int_pid
sq_assert_eq "$?" 130 "push --wait exit code after Ctrl-C"
grep -qF 'batch lc-wait keeps running; `sandq-producer wait lc-wait` to re-attach' "$SQ_TMP/int.err" ||
  sq_fail "Ctrl-C said: $(cat "$SQ_TMP/int.err")"
"$P" wait lc-wait --timeout-s 120 >"$SQ_TMP/w.out" 2>"$SQ_TMP/w.err" || sq_fail "wait lc-wait: $(cat "$SQ_TMP/w.err")"
grep -Eq '^ *passed +20$' "$SQ_TMP/w.out" || sq_fail "wait summary: $(cat "$SQ_TMP/w.out")"

# 3. Cancel while workers claim from the batch: every task ends exactly once.
sq_bg w2 "$W" serve --worker-id lc-2
sq_wait_for "grep -q 'ready in' $SQ_TMP/w2.log" 60 || { cat "$SQ_TMP/w2.log" >&2; sq_fail "worker lc-2 never got ready"; }
tasks "$SQ_TMP/race.jsonl" r 300 0.05
"$P" push --batch lc-race "$SQ_TMP/race.jsonl" >/dev/null || sq_fail "push lc-race"
sq_wait_for "[ \$(redis-cli -p $SQ_REDIS_PORT HGET 'sq:{default}:batch:lc-race' done) -ge 1 ]" 60 ||
  sq_fail "the workers never claimed from lc-race"
"$P" cancel lc-race >"$SQ_TMP/race.out" 2>&1 || sq_fail "cancel lc-race: $(cat "$SQ_TMP/race.out")"
"$P" wait lc-race --timeout-s 120 >"$SQ_TMP/wr.out" 2>&1 || sq_fail "wait lc-race: $(cat "$SQ_TMP/wr.out")"
check_results lc-race 300 1
sq_assert_eq "$(sq_redis_cli HGET 'sq:{default}:stats' fenced)" "" "fenced results"

# 4. batches --json: newest first, with the figures of each.
"$P" batches --json >"$SQ_TMP/batches.json" || sq_fail "batches --json"
$PY - "$SQ_TMP/batches.json" <<'PY' || sq_fail "batches --json is wrong: $(cat "$SQ_TMP/batches.json")"
import json, sys
b = json.load(open(sys.argv[1]))
names = [x["batch"] for x in b if x["batch"].startswith("lc-")]
assert names == ["lc-race", "lc-wait", "lc-c300"], names  # latest first
by = {x["batch"]: x for x in b}
assert by["lc-c300"]["total"] == 300 and by["lc-c300"]["cancelled"] == 300 and by["lc-c300"]["passed"] == 0
assert by["lc-c300"]["state"] == "cancelled" and by["lc-c300"]["finished"] is True
assert by["lc-wait"]["passed"] == 20 and by["lc-wait"]["state"] == "finished" and by["lc-wait"]["dead"] == 0
assert all(x["created_at_ms"] > 1.7e12 for x in b), b
assert by["lc-c300"]["created_at_ms"] <= by["lc-wait"]["created_at_ms"] <= by["lc-race"]["created_at_ms"]
PY
"$P" batches --limit 1 >"$SQ_TMP/batches.txt" || sq_fail "batches --limit 1"
sq_assert_eq "$(grep -c '^lc-' "$SQ_TMP/batches.txt")" 1 "batches --limit 1 rows"
grep -q '^lc-race ' "$SQ_TMP/batches.txt" || sq_fail "batches: $(cat "$SQ_TMP/batches.txt")"
"$P" batches --limit 0 >/dev/null 2>&1 && sq_fail "batches --limit 0 accepted"

# 5. import --batch: pushing the file into the batch again resumes it (what
#    was pushed is skipped, the rest runs; every id ends with one result).
$PY - "$SQ_TMP/ds.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(6):
        f.write(json.dumps({"task_id": f"Toy/{i}", "prompt": f"def f{i}():\n", "entry_point": f"f{i}",
                            "canonical_solution": f"    return {i}\n",
                            "test": f"def check(c):\n    assert c() == {i}\n"}) + "\n")
PY
"$P" import humaneval "$SQ_TMP/ds.jsonl" --canonical --batch lc-resume >"$SQ_TMP/resume.jsonl" 2>/dev/null || sq_fail "import --batch"
grep -c '"idempotency_key":"import:lc-resume:humaneval:Toy/' "$SQ_TMP/resume.jsonl" | grep -qx 6 || sq_fail "idempotency keys: $(head -1 "$SQ_TMP/resume.jsonl")"
"$P" import humaneval "$SQ_TMP/ds.jsonl" --canonical >"$SQ_TMP/nokey.jsonl" 2>/dev/null || sq_fail "import"
grep -q idempotency_key "$SQ_TMP/nokey.jsonl" && sq_fail "import without --batch set idempotency keys"
"$P" import humaneval "$SQ_TMP/ds.jsonl" --canonical --batch 'no good' >/dev/null 2>&1 && sq_fail "import --batch 'no good' accepted"
head -n 3 "$SQ_TMP/resume.jsonl" >"$SQ_TMP/half.jsonl"
"$P" push --batch lc-resume --wait --timeout-s 120 "$SQ_TMP/half.jsonl" >/dev/null 2>&1 || sq_fail "first push of lc-resume"
"$P" push --batch lc-resume --wait --timeout-s 120 "$SQ_TMP/resume.jsonl" >"$SQ_TMP/resume.out" 2>"$SQ_TMP/resume.err" ||
  sq_fail "resume push: $(cat "$SQ_TMP/resume.err")"
grep -q "3 task(s) skipped: their idempotency_key was already pushed" "$SQ_TMP/resume.err" || sq_fail "resume: $(cat "$SQ_TMP/resume.err")"
grep -Eq '^ *total +6$' "$SQ_TMP/resume.out" || sq_fail "resume summary: $(cat "$SQ_TMP/resume.out")"
grep -Eq '^ *passed +6$' "$SQ_TMP/resume.out" || sq_fail "resume summary: $(cat "$SQ_TMP/resume.out")"
"$P" results lc-resume --format jsonl | $PY -c 'import sys, json; ids = [json.loads(l)["_id"] for l in sys.stdin]; assert sorted(ids) == ["Toy/%d/0" % i for i in range(6)], ids' ||
  sq_fail "lc-resume results"

# 6. A sharded queue: the tasks spread over 3 shards, cancel ends them all.
tasks "$SQ_TMP/sh.jsonl" h 300 0
SANDQ_SHARDS=3 "$P" push --queue lcs --batch lc-sh "$SQ_TMP/sh.jsonl" >/dev/null || sq_fail "push lc-sh"
[ "$(sq_redis_cli LLEN 'sq:{lcs#2}:tasks')" -gt 0 ] || sq_fail "the sharded push left shard 2 empty"
SANDQ_SHARDS=3 "$P" cancel --queue lcs lc-sh >"$SQ_TMP/sh.out" 2>&1 || sq_fail "cancel lc-sh: $(cat "$SQ_TMP/sh.out")"
grep -q "300 waiting task(s) cancelled" "$SQ_TMP/sh.out" || sq_fail "sharded cancel said: $(cat "$SQ_TMP/sh.out")"
export SANDQ_SHARDS=3 SANDQ_QUEUE=lcs
check_results lc-sh 300 300
unset SANDQ_SHARDS SANDQ_QUEUE
SANDQ_SHARDS=3 "$P" batches --queue lcs --json | grep -q '"batch":"lc-sh"' || sq_fail "sharded batches"

# 7. cancel --kill: four tasks of 300 s (wall limit 60 s) on the two
#    workers: the runs under way are stopped, any held but not started never
#    start, and the batch finishes well inside that minute, one `cancelled`
#    result per task.
tasks "$SQ_TMP/long.jsonl" k 4 300 60000
"$P" push --batch lc-kill "$SQ_TMP/long.jsonl" >/dev/null || sq_fail "push lc-kill"
sq_wait_for "[ \$(redis-cli -p $SQ_REDIS_PORT HLEN 'sq:{default}:claims') -ge 2 ]" 60 || sq_fail "lc-kill never claimed"
# The check below wants one run stopped mid-run: wait until a task's program
# sleeps below a worker (its wchan; where the kernel hides it, the check
# decides alone).
sq_wait_until 60 sq_tree_asleep "$SQ_PID_w1" "$SQ_PID_w2" || :
"$P" cancel --kill lc-kill >"$SQ_TMP/kill.out" 2>&1 || sq_fail "cancel --kill: $(cat "$SQ_TMP/kill.out")"
grep -q "running (their workers stop them)" "$SQ_TMP/kill.out" || sq_fail "cancel --kill said: $(cat "$SQ_TMP/kill.out")"
# Without the kill the runs take their full minute: 45 s is a bound only a stop meets.
"$P" wait lc-kill --timeout-s 45 >"$SQ_TMP/wk.out" 2>&1 || sq_fail "wait lc-kill: $(cat "$SQ_TMP/wk.out")"
"$P" results lc-kill --format jsonl >"$SQ_TMP/kill.jsonl" || sq_fail "results lc-kill"
"$P" status lc-kill >"$SQ_TMP/kill.status" || sq_fail "status lc-kill"
$PY - "$SQ_TMP/kill.jsonl" "$SQ_TMP/kill.status" <<'PY' || sq_fail "lc-kill: results are wrong"
import collections, json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ids = collections.Counter(r["_id"] for r in rows)
assert sorted(ids) == ["k-%03d" % i for i in range(4)] and set(ids.values()) == {1}, ids
assert all(r["status"] == "cancelled" for r in rows), [(r["_id"], r["status"]) for r in rows]
stopped = [r for r in rows if r["reason"] == "stopped by sandq-producer cancel --kill"]
waiting = [r for r in rows if r["reason"] == "cancelled by sandq-producer cancel"]
assert len(stopped) + len(waiting) == 4, [r["reason"] for r in rows]
ran = [r for r in stopped if r.get("timings", {}).get("exec_ms", 0) > 0]
assert len(ran) >= 1 and all(r["timings"]["exec_ms"] < 45000 for r in ran), stopped
status = open(sys.argv[2]).read()
def field(name):
    m = re.search(r"^\s*" + name + r"\s+(\S+)$", status, re.M)
    return m and m.group(1)
assert field("total") == "4" and field("done") == "4" and field("cancelled") == "4", status
assert field("finished") == "yes" and field("duplicate") is None and field("dead") == "0", status
print("lc-kill: %d stopped by a worker (%d mid-run), %d taken off the queue" % (len(stopped), len(ran), len(waiting)))
PY
cat "$SQ_TMP/w1.log" "$SQ_TMP/w2.log" | grep -q "was cancelled with --kill: stopping the task" ||
  sq_fail "no worker said it stopped a task"
# a task pushed into the batch afterwards runs: the mark covers only the
# claims made before the cancel
tasks "$SQ_TMP/after.jsonl" later 1 0
"$P" push --batch lc-kill --wait --timeout-s 60 "$SQ_TMP/after.jsonl" >"$SQ_TMP/after.out" 2>&1 ||
  sq_fail "push into lc-kill after the cancel: $(cat "$SQ_TMP/after.out")"
"$P" results lc-kill --format jsonl | $PY -c '
import json, sys
r = {x["_id"]: x for x in map(json.loads, sys.stdin)}
assert r["later-000"]["status"] == "passed", r["later-000"]' || sq_fail "the task pushed after the cancel did not pass"

# 8. A plain cancel leaves a running task to finish: it passes.
tasks "$SQ_TMP/plain.jsonl" pl 1 3
"$P" push --batch lc-plain "$SQ_TMP/plain.jsonl" >/dev/null || sq_fail "push lc-plain"
sq_wait_for "[ \$(redis-cli -p $SQ_REDIS_PORT HLEN 'sq:{default}:claims') -ge 1 ]" 60 || sq_fail "lc-plain never claimed"
"$P" cancel lc-plain >"$SQ_TMP/plain.out" 2>&1 || sq_fail "cancel lc-plain: $(cat "$SQ_TMP/plain.out")"
grep -q "1 running (they finish)" "$SQ_TMP/plain.out" || sq_fail "cancel lc-plain said: $(cat "$SQ_TMP/plain.out")"
"$P" wait lc-plain --timeout-s 60 >/dev/null 2>&1 || sq_fail "wait lc-plain"
"$P" results lc-plain --format jsonl >"$SQ_TMP/plain.jsonl" || sq_fail "results lc-plain"
$PY -c 'import json, sys; assert json.load(open(sys.argv[1]))["status"] == "passed"' "$SQ_TMP/plain.jsonl" ||
  sq_fail "lc-plain's running task did not pass: $(cat "$SQ_TMP/plain.jsonl")"

echo "lifecycle: all checks passed"
