#!/bin/sh
# sentinel.sh: a failover in the middle of a batch loses no task. A master,
# one replica and three sentinels (redis-sentinel, or redis-server
# --sentinel) on loopback ports; the producer and two workers are given
# only the sentinels (redis-sentinel://.../sq) and wait for one replica on
# every push and result (wait_replicas 1). In the middle of a 3,000-task
# batch the replica stalls and loses its link (SIGSTOP and CLIENT KILL) so
# the last writes never reach it, and then the master is killed with -9; the
# sentinels promote the replica, which has lost those writes; the old
# master comes back (as its service manager would restart it) and rejoins
# as a replica. Every task ends with exactly one result and `push --wait`
# ends normally. (Run with SQ_TEST_WAIT_REPLICAS=0 to see it fail: results
# acknowledged but never replicated leave their tasks claimed forever.)
# The tasks are trivial programs (print(1)) run in the real jail.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/ha_env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
command -v redis-cli >/dev/null || sq_skip "redis-cli is not installed (redis-tools)"
N=${SQ_SENTINEL_TASKS:-3000}

# The master keeps an AOF, as docs/deploy.md asks; it restarts from it.
sq_start_node master --appendonly yes --appendfsync everysec
mport=$SQ_PORT_master
sq_start_node replica --replicaof 127.0.0.1 "$mport"
rport=$SQ_PORT_replica
sq_wait_for "redis-cli -p $rport INFO replication | grep -q 'master_link_status:up'" 30 || sq_fail "the replica did not sync"
SQ_DOWN_AFTER_MS=2000 SQ_FAILOVER_TIMEOUT_MS=4000
sq_start_sentinels "$mport" 3
sq_sentinels_ready 30 || sq_fail "the sentinels did not find each other and the replica"
echo "sentinel: master $mport, replica $rport, sentinels$SQ_SENTINEL_PORTS"

export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_LOG_LEVEL=warn \
  SANDQ_WAIT_REPLICAS=${SQ_TEST_WAIT_REPLICAS:-1} SANDQ_WAIT_TIMEOUT_MS=1000 SANDQ_LEASE_MS=4000 SANDQ_HEARTBEAT_MS=500
awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"t%05d\",\"code\":\"print(1)\"}\n", i }' \
  >"$SQ_TMP/tasks.jsonl"
for w in w1 w2; do
  "$SQ_BIN/sandq-worker" serve --worker-id "$w" >"$SQ_TMP/worker-$w.log" 2>&1 &
  SQ_PIDS="$SQ_PIDS $!"
done
sq_push_midway "$mport" default fo "$SQ_TMP/tasks.jsonl" $((N / 5))
# The replica is cut off; then the master dies.
sq_cut_replica "$mport" "$SQ_PID_replica"
before=$(redis-cli -p "$mport" HLEN 'sq:{default}:results:fo')
sleep 0.7
after=$(redis-cli -p "$mport" HLEN 'sq:{default}:results:fo')
kill -9 "$SQ_PID_master"
kill -CONT "$SQ_PID_replica"
at_kill=$(redis-cli -p "$rport" HLEN 'sq:{default}:results:fo')
echo "sentinel: replica cut off at $before results (master had $after when killed -9); $at_kill of $N results survive"
sq_wait_for "test \"\$(redis-cli -p $rport ROLE | head -1)\" = master" 60 || sq_fail "the sentinels did not promote the replica"
k=0
until [ "$(sq_sentinel_master_port)" = "$rport" ]; do
  k=$((k + 1)); [ $k -lt 300 ] || sq_fail "the sentinels do not name the replica as master"
  sleep 0.1
done
echo "sentinel: replica $rport promoted"
# The old master's service restarts it; the sentinels make it a replica.
# (On a loaded machine the sentinels may fail over once more, back to it:
# the checks below ask them who the master is at the end.)
sq_bg master2 redis-server --port "$mport" --bind 127.0.0.1 --dir "$SQ_TMP/master" --daemonize no --save '' \
  --appendonly yes --appendfsync everysec

sq_push_ended "$N"
[ "$at_kill" -lt "$N" ] || sq_fail "the failover came after the batch had finished"
# Exactly one result per task: as many results as tasks, the done counter
# agrees, and nothing is left waiting or claimed.
sq_batch_once "$(sq_sentinel_master_port)" default fo "$N"
grep -Eq "following the failover|reconnecting|failed" "$SQ_TMP/worker-w1.log" "$SQ_TMP/worker-w2.log" ||
  sq_fail "no worker noticed the failover"
echo "sentinel: all $N tasks have exactly one result; push --wait ended normally"
