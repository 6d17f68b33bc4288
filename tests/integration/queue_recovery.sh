#!/bin/sh
# queue_recovery.sh: a real worker, real jail, real redis-server, and the
# Redis faults after which a batch must still finish:
#   1. Redis goes back in time (killed -9 and restarted from a snapshot taken
#      while a task was claimed, as AOF everysec or an RDB snapshot loses
#      the last writes): the acknowledged result is lost and the claim is
#      listed for the worker again. The worker no longer holds it, so its
#      heartbeat hands it back (no stall) and the task runs again: the batch
#      finishes with its result.
#   2. Redis at maxmemory under noeviction (an OOM episode): heartbeats and
#      completions still pass (allow-oom), so the task in hand keeps its
#      lease and its result is stored; claims are refused with a line that
#      names the out-of-memory condition; no stall is counted.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
sq_need_worker_host
command -v redis-server >/dev/null || sq_skip "redis-server is not installed (scripts/install-deps.sh)"

# A redis-server on a fixed port and directory, so it can be killed and
# started again from a copy of its snapshot.
SQ_REDIS_PORT=$(sq_free_port)
export SQ_REDIS_PORT SANDQ_REDIS_URL="redis://127.0.0.1:$SQ_REDIS_PORT"
mkdir -p "$SQ_TMP/redis"
start_redis() {
  sq_bg redis redis-server --port "$SQ_REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$SQ_TMP/redis" --dbfilename dump.rdb --daemonize no --protected-mode yes
  sq_wait_for "redis-cli -p $SQ_REDIS_PORT ping | grep -q PONG" 20 || { cat "$SQ_TMP/redis.log" >&2; sq_fail "redis-server did not start"; }
}
start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_LOG_LEVEL=info SANDQ_LEASE_MS=3000 \
  SANDQ_HEARTBEAT_MS=300
Q=default

# 1. Redis goes back to a snapshot taken while the task was claimed.
echo '{"id":"slow","code":"import time; time.sleep(3); print(1)"}' >"$SQ_TMP/back.jsonl"
sq_worker w1
"$P" push --batch back "$SQ_TMP/back.jsonl" >/dev/null
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT LLEN 'sq:{$Q}:processing:w1')\" = 1" 60 || sq_fail "w1 did not claim the task"
sq_redis_cli SAVE >/dev/null
cp "$SQ_TMP/redis/dump.rdb" "$SQ_TMP/snap.rdb"
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT HEXISTS 'sq:{$Q}:results:back' slow)\" = 1" 60 ||
  sq_fail "w1 did not store the result"
grep -q "status=ok" "$SQ_TMP/worker-w1.log" || sq_fail "w1 did not log the result stored"
kill -KILL "$SQ_PID_redis"
wait "$SQ_PID_redis" 2>/dev/null || true
cp "$SQ_TMP/snap.rdb" "$SQ_TMP/redis/dump.rdb"
start_redis
[ "$(sq_redis_cli HEXISTS "sq:{$Q}:results:back" slow)" = 0 ] || sq_fail "the restored snapshot has the result"
[ "$(sq_redis_cli LLEN "sq:{$Q}:processing:w1")" = 1 ] || sq_fail "the restored snapshot lacks the claim"
# The claim's lease is 3 s; a heartbeat that renewed every listed claim
# kept it (and the batch unfinished) for ever.
sq_wait_batch back 60 || { tail -20 "$SQ_TMP/worker-w1.log" >&2; sq_fail "the batch did not finish after redis went back"; }
[ "$(sq_batch_field back done)" = 1 ] || sq_fail "back: done=$(sq_batch_field back done)"
[ "$(sq_redis_cli HEXISTS "sq:{$Q}:results:back" slow)" = 1 ] || sq_fail "back: no result"
[ "$(sq_stat stalled)" = 0 ] || sq_fail "the lost result was counted as a stall ($(sq_stat stalled))"
grep -q "that it does not hold" "$SQ_TMP/worker-w1.log" || sq_fail "w1 did not say it handed back a claim it does not hold"
echo "recovery: redis went back to a snapshot: the claim whose result was lost ran again; batch finished"

# 2. An OOM episode while a task runs.
echo '{"id":"oom","code":"import time; time.sleep(4); print(1)"}' >"$SQ_TMP/oom.jsonl"
"$P" push --batch oom "$SQ_TMP/oom.jsonl" >/dev/null
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT LLEN 'sq:{$Q}:processing:w1')\" = 1" 60 || sq_fail "w1 did not claim the oom task"
tok=$(sq_redis_cli LINDEX "sq:{$Q}:processing:w1" 0)
sq_redis_cli CONFIG SET maxmemory-policy noeviction >/dev/null
sq_redis_cli CONFIG SET maxmemory 1 >/dev/null
sq_redis_cli SET probe 1 2>&1 | grep -q OOM || sq_fail "redis does not refuse writes at maxmemory 1"
s0=$(sq_redis_cli ZSCORE "sq:{$Q}:leases" "$tok")
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT ZSCORE 'sq:{$Q}:leases' $tok)\" != '$s0'" 30 ||
  sq_fail "no heartbeat renewed the lease while redis was out of memory"
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT HEXISTS 'sq:{$Q}:results:oom' oom)\" = 1" 60 ||
  { tail -20 "$SQ_TMP/worker-w1.log" >&2; sq_fail "the result was not stored while redis was out of memory"; }
sq_wait_for "grep -q 'redis refuses writes: it is out of memory' $SQ_TMP/worker-w1.log" 30 ||
  sq_fail "w1 did not say redis is out of memory"
sq_redis_cli CONFIG SET maxmemory 0 >/dev/null
[ "$(sq_stat stalled)" = 0 ] || sq_fail "the OOM episode counted a stall"
[ "$(sq_batch_field oom done)" = 1 ] || sq_fail "oom: done=$(sq_batch_field oom done)"
echo "recovery: OOM episode: the lease was kept and the result stored; claims refused with a clear line"
