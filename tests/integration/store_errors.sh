#!/bin/sh
# store_errors.sh: a persistent store error. The results
# key of a batch holds a string, so every completion of that batch is
# refused by Redis, the same way every time. A real worker must back off
# (a bounded number of log lines and no reconnect storm), keep every claim
# leased meanwhile (nothing reaped, nothing lost), store another batch's
# results meanwhile (the refused ones wait aside, not in front of them),
# and once the key is repaired store every result. Execution is stubbed (a test hook): the
# jail plays no part here.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
sq_start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_TEST_HOOKS=1 SANDQ_TEST_EXEC=noop SANDQ_LOG_LEVEL=info
export SANDQ_LEASE_MS=2000 SANDQ_HEARTBEAT_MS=400 # leases that would expire many times over without heartbeats
R="sq:{default}:results:bad"
N=5

sq_redis_cli SET "$R" x >/dev/null
sq_tasks "$SQ_TMP/tasks.jsonl" $N
"$SQ_BIN/sandq-producer" push --batch bad "$SQ_TMP/tasks.jsonl" >/dev/null 2>&1 || sq_fail "push"
sq_worker w1
sq_wait_for "grep -qE 'WRONGTYPE|CORRUPT' '$SQ_TMP/worker-w1.log'" 60 || sq_fail "no store failure logged"

# Over 5 s of a store error that does not pass: about one line per backoff
# step (100 ms doubling to 5 s: 7 steps) and no reconnects (the connection
# is fine). Before: ~30,000 lines and ~10,000 reconnects in 6 s.
conns0=$(sq_redis_cli INFO stats | awk -F: '/^total_connections_received:/ {print $2+0}')
lines0=$(wc -l <"$SQ_TMP/worker-w1.log")
sleep 5
conns1=$(sq_redis_cli INFO stats | awk -F: '/^total_connections_received:/ {print $2+0}')
lines1=$(wc -l <"$SQ_TMP/worker-w1.log")
lines=$((lines1 - lines0)) conns=$((conns1 - conns0))
echo "store errors: $lines log line(s), $conns new connection(s) in 5 s of a refused store"
[ "$lines" -le 30 ] || { tail -20 "$SQ_TMP/worker-w1.log" >&2; sq_fail "$lines log lines in 5 s: not backing off"; }
[ "$conns" -le 2 ] || sq_fail "$conns reconnects in 5 s for an error that is not a connection's"
kill -0 "$(sq_wpid w1)" 2>/dev/null || sq_fail "the worker died"

# Nothing lost meanwhile: every task claimed by w1 is still held under a
# live lease, and the rest (past the worker's claim room) still wait.
held=$(sq_redis_cli LLEN 'sq:{default}:processing:w1') waiting=$(sq_redis_cli LLEN 'sq:{default}:tasks')
[ "$held" -ge 1 ] && [ $((held + waiting)) = $N ] ||
  sq_fail "claims dropped: $held held and $waiting waiting of $N"
[ "$(sq_stat stalled)" = 0 ] || sq_fail "stalled=$(sq_stat stalled): a lease expired while the store was refused"
[ "$(sq_redis_cli TYPE "$R")" = string ] || sq_fail "the corrupt key was replaced behind our back"

# Another batch meanwhile: its results are stored, not held behind the
# damaged one (the refused results wait aside, their claims held).
sq_tasks "$SQ_TMP/good.jsonl" 3
sed -i 's/"id":"t/"id":"g/' "$SQ_TMP/good.jsonl"
"$SQ_BIN/sandq-producer" push --batch good "$SQ_TMP/good.jsonl" >/dev/null 2>&1 || sq_fail "push good"
sq_wait_batch good 60 || sq_fail "batch good did not finish while bad's key was damaged"
[ "$(sq_stat stalled)" = 0 ] || sq_fail "stalled=$(sq_stat stalled) while bad's results waited"

# Repaired: every task gets its result, each exactly once.
sq_redis_cli DEL "$R" >/dev/null
sq_wait_batch bad 60 || sq_fail "the batch did not finish after the repair: $(sq_redis_cli HLEN "$R") of $N results"
[ "$(sq_redis_cli HLEN "$R")" = $N ] || sq_fail "results: $(sq_redis_cli HLEN "$R") of $N"
[ "$(sq_batch_field bad done)" = $N ] || sq_fail "done=$(sq_batch_field bad done)"
[ "$(sq_redis_cli LLEN 'sq:{default}:processing:w1')" = 0 ] || sq_fail "claims left after the repair"
grep -q "result stored after its key was repaired" "$SQ_TMP/worker-w1.log" || sq_fail "the recovery was not logged"
echo "store errors: after the repair $N/$N results, stalled=$(sq_stat stalled)"
