#!/bin/sh
# queue_faults.sh: real workers, real jail, real redis-server, and the
# failures a long unattended batch meets:
#   1. a worker SIGSTOPped past its lease, then resumed: its late result is
#      refused (and counted); the result comes from the worker that reclaimed it
#   2. a poison pill (test hook: the worker SIGKILLs itself on that task):
#      dead letter after max_stalls, with its history; the batch still finishes
#      (exit code 5); `dead list/show/requeue` work
#   3. garbage pushed straight onto the list with redis-cli: each becomes an
#      invalid_task result naming the reason; the workers keep going
#   4. an LLM that cannot be reached: retried with backoff, then llm_error
#      "after N attempts"
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
/usr/bin/python3 -c 'import bson, redis' 2>/dev/null || sq_skip "python3-pymongo and python3-redis are not installed"
sq_start_redis
P="$SQ_BIN/sandq-producer"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_TEST_HOOKS=1 SANDQ_LOG_LEVEL=info \
  SANDQ_LEASE_MS=1500 SANDQ_HEARTBEAT_MS=300 SANDQ_MAX_STALLS=2

# 1. SIGSTOP past the lease.
echo '{"id":"slow","code":"import time; time.sleep(12); print(1)","limits":{"wall_ms":60000}}' >"$SQ_TMP/slow.jsonl"
sq_worker stop-a
"$P" push --batch stop "$SQ_TMP/slow.jsonl" >/dev/null
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT LLEN 'sq:{default}:processing:stop-a')\" = 1" 60 ||
  sq_fail "stop-a did not claim the task"
# The task sleeps 12 s: stop-a is stopped while it runs however slowly
# the host noticed the claim (a task stop-a had already finished would
# leave no late result to refuse; the result's worker is checked below).
kill -STOP "$(sq_wpid stop-a)"
sq_worker stop-b
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT HEXISTS 'sq:{default}:results:stop' slow)\" = 1" 60 ||
  sq_fail "the task was not reclaimed while stop-a was stopped"
kill -CONT "$(sq_wpid stop-a)"
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT HGET 'sq:{default}:stats' fenced)\" = 1" 60 ||
  sq_fail "stop-a's late result was not refused (fenced=$(sq_stat fenced))"
/usr/bin/python3 - "$SQ_REDIS_PORT" <<'PY'
import sys, redis, bson
r = redis.Redis(port=int(sys.argv[1]))
d = bson.decode(r.hget("sq:{default}:results:stop", "slow"))
assert d["worker"] == "stop-b", d["worker"]
assert d["status"] == "ok", d["status"]
assert r.hlen("sq:{default}:results:stop") == 1
PY
[ "$(sq_batch_field stop done)" = 1 ] || sq_fail "done counter $(sq_batch_field stop done)"
grep -q "result refused" "$SQ_TMP/worker-stop-a.log" || sq_fail "stop-a did not log the refusal"
echo "faults: SIGSTOP past the lease: late result refused, result from stop-b"
kill -TERM "$(sq_wpid stop-a)" "$(sq_wpid stop-b)"

# 2. A poison pill among good tasks; a supervisor restarts dead workers.
sq_tasks "$SQ_TMP/pill.jsonl" 20
echo '{"id":"pill","code":"print(2)","metadata":{"sandq_test":"die"}}' >>"$SQ_TMP/pill.jsonl"
sq_worker pill-1
sq_worker pill-2
set +e
"$P" push --batch pill --wait --timeout-s 300 "$SQ_TMP/pill.jsonl" >"$SQ_TMP/pill.out" 2>"$SQ_TMP/pill.err" &
push_pid=$!
set -e
restarts=0
while kill -0 $push_pid 2>/dev/null; do
  for w in pill-1 pill-2; do
    if ! kill -0 "$(sq_wpid $w)" 2>/dev/null; then sq_worker $w; restarts=$((restarts + 1)); fi
  done
  sleep 0.1
done
set +e; wait $push_pid; rc=$?; set -e
[ $rc -eq 5 ] || { cat "$SQ_TMP/pill.err"; sq_fail "push --wait exited $rc, want 5 (finished, one task dead)"; }
[ "$restarts" -ge 2 ] || sq_fail "the poison pill killed $restarts worker(s), want 2"
[ "$(sq_batch_field pill done)" = 20 ] || sq_fail "pill batch done=$(sq_batch_field pill done)"
[ "$(sq_batch_field pill dead)" = 1 ] || sq_fail "pill batch dead=$(sq_batch_field pill dead)"
grep -q "dead letter" "$SQ_TMP/pill.err" || sq_fail "push did not say a task is in the dead letter"
"$P" dead list >"$SQ_TMP/dead.out"
grep -q ' pill ' "$SQ_TMP/dead.out" || sq_fail "dead list: $(cat "$SQ_TMP/dead.out")"
id=$(awk '$3 == "pill" {print $1}' "$SQ_TMP/dead.out")
"$P" dead show "$id" >"$SQ_TMP/show.out"
grep -q 'stalled 2 times' "$SQ_TMP/show.out" || sq_fail "dead show: $(cat "$SQ_TMP/show.out")"
grep -q '"history"' "$SQ_TMP/show.out" || sq_fail "dead show has no history"
"$P" status pill >"$SQ_TMP/st.out" && sq_fail "status of a batch with a dead task exited 0"
grep -Eq '^ *dead +1$' "$SQ_TMP/st.out" || sq_fail "status: $(cat "$SQ_TMP/st.out")"
for w in pill-1 pill-2; do kill -TERM "$(sq_wpid $w)" 2>/dev/null || true; done
for w in pill-1 pill-2; do wait "$(sq_wpid $w)" 2>/dev/null || true; done
"$P" dead requeue "$id" | grep -q "requeued 1" || sq_fail "dead requeue"
[ "$(sq_redis_cli LLEN 'sq:{default}:tasks')" = 1 ] || sq_fail "the requeued task is not waiting"
[ "$(sq_batch_field pill dead)" = 0 ] || sq_fail "requeue did not take the task out of the batch's dead count"
"$P" dead show "$id" 2>/dev/null && sq_fail "entry still there after requeue"
sq_redis_cli DEL 'sq:{default}:tasks' >/dev/null
echo "faults: poison pill dead-lettered after 2 stalls; batch finished (exit 5); requeued"

# 3. Garbage straight onto the list.
sq_worker garb-1
sq_worker garb-2
sq_redis_cli LPUSH 'sq:{default}:tasks' 'not json at all' '[1,2,3]' '{"id":5}' '{"id":"g1","code":7}' \
  '{"id":"g2","batch":"gb","code":"1","cmd":"rm -rf /"}' >/dev/null
/usr/bin/python3 -c 'import sys; sys.stdout.buffer.write(b"{\"id\":\"huge\",\"code\":\"" + b"x" * 2000000 + b"\"}")' |
  sq_redis_cli -x LPUSH 'sq:{default}:tasks' >/dev/null
printf '\377\376\000binary' | sq_redis_cli -x LPUSH 'sq:{default}:tasks' >/dev/null
sq_tasks "$SQ_TMP/after.jsonl" 5
"$P" push --batch after --wait --timeout-s 300 "$SQ_TMP/after.jsonl" >/dev/null 2>&1 ||
  sq_fail "the workers did not keep going after the garbage"
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT LLEN 'sq:{default}:tasks')\" = 0" 10 ||
  sq_fail "the garbage was not all taken off the list"
/usr/bin/python3 - "$SQ_REDIS_PORT" <<'PY'
import sys, redis, bson
r = redis.Redis(port=int(sys.argv[1]))
inv = [bson.decode(v) for v in r.hvals("sq:{default}:results:_invalid")]
assert len(inv) == 3, [d["reason"] for d in inv]   # not JSON, array, binary: no batch can be read
assert all(d["status"] == "invalid_task" and d["reason"] for d in inv), inv
g1 = bson.decode(r.hget("sq:{default}:results:default", "g1"))
assert g1["status"] == "invalid_task" and "code" in g1["reason"], g1
g2 = bson.decode(r.hget("sq:{default}:results:gb", "g2"))
assert g2["status"] == "invalid_task" and "cmd" in g2["reason"], g2
# objects are filed under their own batch (default when absent), so that batch finishes:
# the one without a valid id under raw-<hash>, the huge one under its id
dflt = {k.decode(): bson.decode(v) for k, v in r.hgetall("sq:{default}:results:default").items()}
raw = [d for k, d in dflt.items() if k.startswith("raw-")]
assert len(raw) == 1 and raw[0]["status"] == "invalid_task" and "id" in raw[0]["reason"], dflt
huge = dflt["huge"]
assert huge["status"] == "invalid_task" and "more than the 262144 allowed" in huge["reason"], huge
print("faults: garbage:", "; ".join(sorted(d["reason"][:40] for d in inv + [g1, g2, raw[0], huge])))
PY
[ "$(sq_redis_cli HLEN 'sq:{default}:dead')" = 0 ] || sq_fail "garbage went to the dead letter instead of a result"

# 4. An unreachable LLM: transient, retried with backoff, then llm_error.
kill -TERM "$(sq_wpid garb-1)" "$(sq_wpid garb-2)"
# (SANDQ_LLM_OUTAGE_MAX_S=0: each failure is an attempt; llm_outage.sh tests the wait for a provider)
SANDQ_LLM_BASE_URL="http://127.0.0.1:$(sq_free_port)/v1" SANDQ_LLM_MODEL=m SANDQ_MAX_ATTEMPTS=3 SANDQ_LLM_OUTAGE_MAX_S=0 \
  sq_worker llm-1
echo '{"id":"gen","prompt":"write hello world"}' >"$SQ_TMP/gen.jsonl"
"$P" push --batch gen --wait --timeout-s 300 "$SQ_TMP/gen.jsonl" >"$SQ_TMP/gen.out" 2>&1 ||
  { cat "$SQ_TMP/gen.out" >&2; sq_fail "push --wait of gen exited $? (an llm_error result is still a result: 0)"; }
/usr/bin/python3 - "$SQ_REDIS_PORT" <<'PY'
import sys, redis, bson
r = redis.Redis(port=int(sys.argv[1]))
d = bson.decode(r.hget("sq:{default}:results:gen", "gen"))
assert d["status"] == "llm_error" and "after 3 attempts" in d["reason"], d
# the result counts its attempts and the time across them (backoff included)
t = d["timings"]
assert d["attempts"] == 3 and t["all_attempts_ms"] > t["total_ms"] + 100, (d["attempts"], t)
print("faults: %d attempts, %d ms across them, %d ms in the last" % (d["attempts"], t["all_attempts_ms"], t["total_ms"]))
PY
[ "$(sq_stat retried)" = 2 ] || sq_fail "retried=$(sq_stat retried), want 2"
grep -q "retrying in" "$SQ_TMP/worker-llm-1.log" || sq_fail "no retry logged"
echo "faults: unreachable LLM retried twice, then llm_error"
