#!/bin/sh
# producer.sh: sandq-producer against a real redis-server: validation before
# any push, stamping, --no-validate, status, --wait timeouts, and --wait/--out/
# --table against results written into redis the way a worker does.
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
P="$SQ_BIN/sandq-producer"
D="$SQ_SRC/tests/data"
[ -x "$P" ] || sq_fail "$P is not built"
sq_start_redis
PY=/usr/bin/python3

# 1. A file with a malformed line, an unknown field and a duplicate id:
#    every bad line reported with its number, nothing pushed.
sq_run bad "$P" push "$D/producer-bad.jsonl"
sq_assert_rc 1 bad
sq_assert_has bad.err "producer-bad.jsonl:2: "
sq_assert_has bad.err "producer-bad.jsonl:3: colour"
sq_assert_has bad.err "producer-bad.jsonl:5: id 'ok-1' is already used on line 1"
sq_assert_not_has bad.err "producer-bad.jsonl:1:"
sq_assert_not_has bad.err "producer-bad.jsonl:6:"
sq_assert_eq "$(grep -c 'producer-bad.jsonl:[0-9]*: ' "$SQ_TMP/bad.err")" 3 "bad lines reported"
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{default}:tasks')" 0 "LLEN after a bad file"
sq_assert_eq "$(sq_redis_cli DBSIZE)" 0 "keys after a bad file"

# 1b. A repeat far into a large file, and one through standard input: the
#    ids are kept as hashes, and a hash seen twice is checked whole in a
#    second pass: the same error naming both lines; ids that differ pass.
awk 'BEGIN { for (i = 1; i <= 50000; i++) printf "{\"id\":\"t-%d\",\"code\":\"pass\"}\n", i % 49999 == 0 ? 3 : i }' \
  >"$SQ_TMP/dup-far.jsonl"
sq_run dupfar "$P" push "$SQ_TMP/dup-far.jsonl"
sq_assert_rc 1 dupfar
sq_assert_has dupfar.err "dup-far.jsonl:49999: id 't-3' is already used on line 3"
sq_assert_eq "$(grep -c 'already used' "$SQ_TMP/dupfar.err")" 1 "repeats reported in a large file"
sq_run dupstdin sh -c "sed -n '1,10p;49999p' '$SQ_TMP/dup-far.jsonl' | '$P' push -"
sq_assert_rc 1 dupstdin
sq_assert_has dupstdin.err "-:11: id 't-3' is already used on line 3"
sq_assert_eq "$(sq_redis_cli DBSIZE)" 0 "keys after files with a repeated id"

# 2. A good file: batch id on stdout, every task pushed and stamped.
sq_run good "$P" push --batch good-1 "$D/producer-good.jsonl"
sq_assert_rc 0 good
sq_assert_eq "$(cat "$SQ_TMP/good.out")" good-1 "printed batch id"
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{default}:tasks')" 4 "LLEN after a good file"
sq_assert_eq "$(sq_redis_cli HGET 'sq:{default}:batch:good-1' total)" 4 "batch total"
sq_redis_cli ZSCORE 'sq:{default}:batches' good-1 | grep -Eq '^[0-9]+$' || sq_fail "batch not registered"
sq_redis_cli LRANGE 'sq:{default}:tasks' 0 -1 >"$SQ_TMP/good.list"
sq_assert_eq "$(grep -c '"batch":"good-1"' "$SQ_TMP/good.list")" 4 "elements with batch"
sq_assert_eq "$(grep -c '"enqueued_at_ms":[0-9]\{13\}' "$SQ_TMP/good.list")" 4 "elements with enqueued_at_ms"
# FIFO: the first line of the file is the first claimed (the right end)
sq_redis_cli LINDEX 'sq:{default}:tasks' -1 | grep -q '"id":"add"' || sq_fail "first task is not at the claim end"

# 3. A generated batch id, and --queue.
sq_run gen "$P" push --queue q2 "$D/producer-good.jsonl"
sq_assert_rc 0 gen
grep -Eqx 'b-[0-9]{8}-[0-9]{6}-[0-9a-f]{4}' "$SQ_TMP/gen.out" || sq_fail "generated batch id: $(cat "$SQ_TMP/gen.out")"
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{q2}:tasks')" 4 "LLEN of q2"
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{default}:tasks')" 4 "LLEN of default untouched"
sq_run badbatch "$P" push --batch 'no spaces!' "$D/producer-good.jsonl"
sq_assert_rc 2 badbatch
sq_assert_has badbatch.err "--batch"

# 4. --no-validate pushes every non-blank line; JSON objects are stamped.
sq_run garb "$P" push --no-validate --queue garb --batch g1 "$D/producer-garbage.jsonl"
sq_assert_rc 0 garb
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{garb}:tasks')" 5 "LLEN after --no-validate"
sq_redis_cli LRANGE 'sq:{garb}:tasks' 0 -1 >"$SQ_TMP/garb.list"
grep -qx 'this is not json' "$SQ_TMP/garb.list" || sq_fail "garbage line not pushed as-is"
grep -qx '\[1, 2, 3\]' "$SQ_TMP/garb.list" || sq_fail "array line not pushed as-is"
grep -qx '{"truncated": ' "$SQ_TMP/garb.list" || sq_fail "truncated line not pushed as-is"
grep -q '"id":"obj".*"batch":"g1"' "$SQ_TMP/garb.list" || sq_fail "object line not stamped"
grep -q '"id":7.*"batch":"g1"' "$SQ_TMP/garb.list" || sq_fail "invalid object line not stamped"
# The three that are not JSON objects count in batch _invalid, where a worker
# files their results, so --wait on g1 waits for the two it will get.
sq_assert_has garb.err "3 line(s) are not JSON objects"
sq_assert_eq "$(sq_redis_cli HGET 'sq:{garb}:batch:g1' total)" 2 "g1 total"
sq_assert_eq "$(sq_redis_cli HGET 'sq:{garb}:batch:_invalid' total)" 3 "_invalid total"

# 5. status prints the counters; an unknown batch is an error.
sq_run st "$P" status good-1
sq_assert_rc 0 st
grep -Eq '^ *total +4$' "$SQ_TMP/st.out" || sq_fail "status total: $(cat "$SQ_TMP/st.out")"
grep -Eq '^ *done +0$' "$SQ_TMP/st.out" || sq_fail "status done: $(cat "$SQ_TMP/st.out")"
sq_run stu "$P" status nobody
sq_assert_rc 1 stu
sq_assert_has stu.err "unknown"

# 6. Bad URLs: a usage error (2) naming the bad part, the password never printed.
sq_run url "$P" push --redis 'redis://:hunter2@127.0.0.1:notaport' "$D/producer-good.jsonl"
sq_assert_rc 2 url
sq_assert_has url.err "port 'notaport'"
sq_assert_not_has url.err hunter2
sq_run conn "$P" push --redis "redis://127.0.0.1:$(sq_free_port)" "$D/producer-good.jsonl"
sq_assert_rc 1 conn
sq_assert_has conn.err "onnection refused"

# 7. --wait with no workers: exit 3 after the timeout, saying how many are missing.
t0=$(date +%s)
sq_run idle "$P" push --queue idle --batch idle-1 --wait --timeout-s 1 "$D/producer-good.jsonl"
sq_assert_rc 3 idle
sq_assert_has idle.err "4 of 4"
sq_assert_eq "$(cat "$SQ_TMP/idle.out")" idle-1 "batch id before the wait"
# A deadline, not a speed: a wait that ignored --timeout-s would never end.
[ $(( $(date +%s) - t0 )) -le 30 ] || sq_fail "--timeout-s 1 took over 30 s"

# store_result BATCH ID STATUS FILE: stores the BSON result in FILE the way
# a worker's sq1_complete does (common/queue/lua/40-claims.lua): the result (first
# one per id wins), the batch's done and status:STATUS counters, and the
# batch's finished flag once every task has a result, in one atomic step:
# `push --wait` ends on the flag alone (the server's decision), never on
# counts, so counts that add up without the flag must keep it waiting.
# Prints HSETNX's answer: 1 stored, 0 a result existed.
STORE_LUA="local n = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[4])
if n == 1 then
  local done = redis.call('HINCRBY', KEYS[2], 'done', 1)
  redis.call('HINCRBY', KEYS[2], 'status:' .. ARGV[2], 1)
  if ARGV[3] ~= 'noflag' and done >= tonumber(redis.call('HGET', KEYS[2], 'total')) then
    local t = redis.call('TIME')
    redis.call('HSET', KEYS[2], 'finished', '1', 'finished_at_ms', t[1] * 1000)
  end
end
return n"
store_result() { # BATCH ID STATUS FILE [noflag]
  sq_redis_cli -x EVAL "$STORE_LUA" 2 "sq:{sim}:results:$1" "sq:{sim}:batch:$1" "$2" "$3" "${5:-}" <"$4"
}

# 8. --wait --out --table while results arrive the way a worker writes them
#    (store_result above).
put_result() { # ID STATUS EXPECT(or -) TOTAL_MS
  $PY - "$1" "$2" "$3" "$4" >"$SQ_TMP/r.bson" <<'EOF' || sq_fail "bson encode"
import sys, bson
i, st, ex, ms = sys.argv[1:]
doc = {"_id": i, "batch": "sim-1", "status": st,
       "timings": {"queue_ms": bson.Int64(1), "llm_ms": bson.Int64(0), "exec_ms": bson.Int64(2), "total_ms": bson.Int64(int(ms))}}
if ex != "-":
    doc["metadata"] = {"expect": ex}
sys.stdout.buffer.write(bson.encode(doc))
EOF
  sq_assert_eq "$(store_result sim-1 "$1" "$2" "$SQ_TMP/r.bson")" 1 "result $1 stored"
}
"$P" push --queue sim --batch sim-1 --out "$SQ_TMP/out.bson" --table "$D/producer-good.jsonl" \
  >"$SQ_TMP/sim.out" 2>"$SQ_TMP/sim.err" &
sim_pid=$!
SQ_PIDS="$SQ_PIDS $sim_pid"
sq_wait_for "redis-cli -p $SQ_REDIS_PORT HGET 'sq:{sim}:batch:sim-1' total | grep -qx 4" 10 || sq_fail "sim batch not pushed"
put_result hello passed passed 120
put_result add passed passed 340
# Two progress lines at 2 of 4 (2 s apart): it looked at the half-done
# batch, twice, and kept waiting.
sq_wait_for "test \$(grep -c 'batch sim-1: 2/4' $SQ_TMP/sim.err) -ge 2 || ! kill -0 $sim_pid 2>/dev/null" 60 ||
  sq_fail "the producer never showed 2 of 4 results: $(tail -3 "$SQ_TMP/sim.err")"
kill -0 $sim_pid 2>/dev/null || sq_fail "--wait returned before every task had a result"
# a report of the batch meanwhile says it is not final (text, JSON, HTML)
sq_run part "$P" report --queue sim sim-1 --html "$SQ_TMP/part.html"
sq_assert_rc 0 part
sq_assert_has part.out "batch not finished: 2 of 4 results; the figures below are not final"
sq_assert_has part.html "batch not finished: 2 of 4 results"
sq_run partj "$P" report --queue sim sim-1 --json
sq_assert_rc 0 partj
sq_assert_eq "$($PY -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["finished"], d["batch_tasks"], d["batch_results"], d["tasks"])' \
  "$SQ_TMP/partj.out")" "False 4 2 2" "report --json of a running batch"
put_result plain ok - 50
put_result crash failed runtime_error 77
wait $sim_pid
rc=$?
sq_assert_rc 4 sim
sq_assert_has sim.err "crash: expected runtime_error, got failed"
sq_assert_has sim.err "1 of 3 expectation(s) differed"
sq_assert_has sim.out "sim-1"
grep -Eq '^ *passed +2$' "$SQ_TMP/sim.out" || sq_fail "summary: $(cat "$SQ_TMP/sim.out")"
grep -Eq '^ *failed +1$' "$SQ_TMP/sim.out" || sq_fail "summary: $(cat "$SQ_TMP/sim.out")"
grep -Eq '^ *ok +1$' "$SQ_TMP/sim.out" || sq_fail "summary: $(cat "$SQ_TMP/sim.out")"
sq_assert_has sim.out "elapsed:"
# the table: one row per task, sorted by id, with marks and total time
grep -E '^(add|crash|hello|plain) ' "$SQ_TMP/sim.out" | awk '{print $1}' | tr '\n' ' ' >"$SQ_TMP/sim.ids"
sq_assert_eq "$(cat "$SQ_TMP/sim.ids")" "add crash hello plain " "table rows"
grep -Eq '^add +passed +passed +✓ +340$' "$SQ_TMP/sim.out" || sq_fail "add row: $(cat "$SQ_TMP/sim.out")"
grep -Eq '^crash +failed +runtime_error +✗ +77$' "$SQ_TMP/sim.out" || sq_fail "crash row"
grep -Eq '^plain +ok +- +50$' "$SQ_TMP/sim.out" || sq_fail "plain row"
# the BSON file: the four documents, whole, each once (in the store's order:
# written as they are read); no .tmp left behind
[ -e "$SQ_TMP/out.bson.tmp" ] && sq_fail "out.bson.tmp left behind"
ids=$($PY -c 'import sys, bson; print(" ".join(sorted(d["_id"] for d in bson.decode_all(open(sys.argv[1], "rb").read()))))' \
  "$SQ_TMP/out.bson") || sq_fail "out.bson does not decode"
sq_assert_eq "$ids" "add crash hello plain" "documents in out.bson"

sq_run whole "$P" report --queue sim sim-1 --json
sq_assert_rc 0 whole
sq_assert_eq "$($PY -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["finished"], d["batch_tasks"], d["batch_results"])' \
  "$SQ_TMP/whole.out")" "True 4 4" "report --json of a finished batch"
sq_run wholet "$P" report --queue sim sim-1
sq_assert_not_has wholet.out "not finished"

# 9. Every expectation met: exit 0.
"$P" push --queue sim --batch sim-2 --wait --timeout-s 20 "$SQ_TMP/one.jsonl" >/dev/null 2>&1 && sq_fail "missing file accepted"
head -n 1 "$D/producer-good.jsonl" >"$SQ_TMP/one.jsonl"
"$P" push --queue sim --batch sim-2 --wait --timeout-s 20 "$SQ_TMP/one.jsonl" >"$SQ_TMP/ok.out" 2>"$SQ_TMP/ok.err" &
ok_pid=$!
SQ_PIDS="$SQ_PIDS $ok_pid"
sq_wait_for "redis-cli -p $SQ_REDIS_PORT HGET 'sq:{sim}:batch:sim-2' total | grep -qx 1" 10 || sq_fail "sim-2 not pushed"
$PY -c 'import sys, bson; sys.stdout.buffer.write(bson.encode({"_id": "add", "status": "passed", "metadata": {"expect": ["passed", "ok"]}}))' \
  >"$SQ_TMP/r2.bson"
sq_assert_eq "$(store_result sim-2 add passed "$SQ_TMP/r2.bson")" 1 "result add stored"
wait $ok_pid
rc=$?
sq_assert_rc 0 ok
sq_assert_has ok.out "expectations: 1/1 matched"
grep -Eq '^ *passed +1$' "$SQ_TMP/ok.out" || sq_fail "summary: $(cat "$SQ_TMP/ok.out")"

# 10. --wait ends on the server's finished flag, not on counts: a result
#     that makes done = total without the flag keeps it waiting.
"$P" push --queue sim --batch sim-3 --wait --timeout-s 30 "$SQ_TMP/one.jsonl" >"$SQ_TMP/flag.out" 2>"$SQ_TMP/flag.err" &
flag_pid=$!
SQ_PIDS="$SQ_PIDS $flag_pid"
sq_wait_for "redis-cli -p $SQ_REDIS_PORT HGET 'sq:{sim}:batch:sim-3' total | grep -qx 1" 10 || sq_fail "sim-3 not pushed"
sq_assert_eq "$(store_result sim-3 add passed "$SQ_TMP/r2.bson" noflag)" 1 "result add stored without the flag"
# Two progress lines at 1 of 1 (2 s apart): it saw done = total, twice, and kept waiting.
sq_wait_for "test \$(grep -c 'batch sim-3: 1/1' $SQ_TMP/flag.err) -ge 2 || ! kill -0 $flag_pid 2>/dev/null" 60 ||
  sq_fail "the producer never showed 1 of 1 results: $(tail -3 "$SQ_TMP/flag.err")"
kill -0 $flag_pid 2>/dev/null || sq_fail "--wait decided 'finished' from the counts, not the server's flag"
sq_redis_cli HSET 'sq:{sim}:batch:sim-3' finished 1 finished_at_ms 1 >/dev/null
wait $flag_pid
rc=$?
sq_assert_rc 0 flag

# 11. Ctrl-C on push --wait leaves the batch running and says how to come
#     back (exit 130); `wait` re-attaches and ends with the summary.
"$P" push --queue sim --batch sim-4 --wait "$D/producer-good.jsonl" >"$SQ_TMP/int.out" 2>"$SQ_TMP/int.err" &
int_pid=$!
SQ_PIDS="$SQ_PIDS $int_pid"
sq_wait_for "redis-cli -p $SQ_REDIS_PORT HGET 'sq:{sim}:batch:sim-4' total | grep -qx 4" 10 || sq_fail "sim-4 not pushed"
sq_wait_for "grep -q 'batch sim-4: 0/4' $SQ_TMP/int.err" 10 || sq_fail "no progress line: $(cat "$SQ_TMP/int.err")"
kill -INT $int_pid
wait $int_pid
rc=$?
sq_assert_rc 130 int
sq_assert_has int.err "batch sim-4 keeps running; \`sandq-producer wait sim-4\` to re-attach"
sq_assert_eq "$(sq_redis_cli LRANGE 'sq:{sim}:tasks' 0 -1 | grep -c '"batch":"sim-4"')" 4 "sim-4's tasks still queued after Ctrl-C"
sq_run wunknown "$P" wait --queue sim no-such-batch
sq_assert_rc 1 wunknown
sq_assert_has wunknown.err "batch no-such-batch is unknown to queue sim"
sq_run wbad "$P" wait --queue sim 'bad batch'
sq_assert_rc 2 wbad
sq_run wnone "$P" wait --queue sim
sq_assert_rc 2 wnone
"$P" wait --queue sim sim-4 --out "$SQ_TMP/w.bson" >"$SQ_TMP/w.out" 2>"$SQ_TMP/w.err" &
w_pid=$!
SQ_PIDS="$SQ_PIDS $w_pid"
for id in hello add plain crash; do
  sq_assert_eq "$(store_result sim-4 $id passed "$SQ_TMP/r2.bson")" 1 "sim-4 result $id stored"
done
wait $w_pid
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 4 ] || { cat "$SQ_TMP/w.err" >&2; sq_fail "wait: exit code $rc"; }
grep -Eq '^ *passed +4$' "$SQ_TMP/w.out" || sq_fail "wait summary: $(cat "$SQ_TMP/w.out")"
sq_assert_has w.out "elapsed:"
[ -s "$SQ_TMP/w.bson" ] || sq_fail "wait --out wrote nothing"

# 12. --wait when every task is skipped by its idempotency_key: the batch gets
#     no task and would never finish; push says so and ends (it waited for
#     ever, showing 0/0; --timeout-s bounds the old behaviour here: exit 3).
printf '%s\n' '{"id":"k1","code":"print(1)","idempotency_key":"key-1"}' \
  '{"id":"k2","code":"print(2)","idempotency_key":"key-2"}' >"$SQ_TMP/keyed.jsonl"
sq_run keyed1 "$P" push --queue idem --batch keyed-1 "$SQ_TMP/keyed.jsonl"
sq_assert_rc 0 keyed1
sq_run keyed2 "$P" push --queue idem --batch keyed-2 --wait --timeout-s 20 "$SQ_TMP/keyed.jsonl"
sq_assert_rc 0 keyed2
sq_assert_has keyed2.err "2 task(s) skipped: their idempotency_key was already pushed"
sq_assert_has keyed2.err "batch keyed-2 has no tasks to wait for: every task was skipped"
sq_assert_eq "$(sq_redis_cli EXISTS 'sq:{idem}:batch:keyed-2')" 0 "batch of skipped tasks"

# 13. report groups failures by kind and LLM use by provider and model in a
#     hash: many groups, each counted right (the time is measured by hand).
$PY - "$SQ_TMP/groups.resp" <<'EOF' || sq_fail "groups: generating results"
import os, sys, bson
sys.path.insert(0, os.environ["SQ_SRC"] + "/tests/lib")
from resp import cmd
with open(sys.argv[1], "wb") as f:
    for i in range(3000):
        doc = {"_id": f"g{i}", "status": "failed", "reason": f"Kind{i % 1000}Error: case {i}",
               "llm": {"provider": f"p{i % 30}", "model": "m" if (i // 30) % 2 else "n", "prompt_tokens": 1,
                       "completion_tokens": 2, "cost_usd": 0.5}}
        f.write(cmd("HSET", "sq:{grp}:results:groups", f"g{i}", bson.encode(doc)))
    f.write(cmd("HSET", "sq:{grp}:batch:groups", "total", 3000, "done", 3000, "finished_at_ms", 1))
EOF
redis-cli -p "$SQ_REDIS_PORT" --pipe <"$SQ_TMP/groups.resp" >/dev/null || sq_fail "groups: loading results"
sq_run groups "$P" report --queue grp groups --json
sq_assert_rc 0 groups
$PY - "$SQ_TMP/groups.out" <<'EOF' || sq_fail "groups: $(head -c 300 "$SQ_TMP/groups.out")"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["failures"]
assert len(f) == 1000 and all(x["count"] == 3 and x["status"] == "failed" for x in f), len(f)
assert sorted(x["kind"] for x in f) == sorted(f"Kind{k}Error" for k in range(1000))
for x in f:
    k = int(x["kind"][4:-5])
    assert sorted(x["ids"]) == sorted(f"g{i}" for i in (k, k + 1000, k + 2000)), x
llm = {(g["provider"], g["model"]): g for g in d["llm"]}
assert len(llm) == 60 and all(g["tasks"] == 50 and g["prompt_tokens"] == 50 and g["cost_usd"] == 25 for g in llm.values())
EOF

echo "producer: all checks passed"
