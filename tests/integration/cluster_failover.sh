#!/bin/sh
# cluster_failover.sh: a Redis Cluster master fails over in the middle of a
# batch and loses no task. Six nodes on loopback ports, three masters with a
# replica each; the producer and two workers are given one seed node
# (redis-cluster://) and wait for one replica on every push and result
# (wait_replicas 1). In the middle of the batch the replica of the master
# that serves the queue's slot stalls and loses its link, then that master is
# killed with -9; the cluster promotes the replica, which has lost the last
# writes (node
# timeout 2 s), and the old master, restarted, rejoins as its replica.
# Every task ends with exactly one result, on the new master, and
# `push --wait` ends normally. (With SQ_TEST_WAIT_REPLICAS=0 it fails:
# results acknowledged but never replicated leave their tasks claimed, their
# leases kept alive by the workers' heartbeats, and the batch never ends.)
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/ha_env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
command -v redis-cli >/dev/null || sq_skip "redis-cli is not installed (redis-tools)"
N=${SQ_CLUSTER_FO_TASKS:-600}
SQ_CLUSTER_REPLICAS=1 SQ_CLUSTER_NODE_TIMEOUT_MS=2000 # kept for the restart below
sq_start_cluster 6
seed=$(echo $SQ_CLUSTER_PORTS | cut -d' ' -f1)

# A queue whose slot lives on a master other than the seed's.
Q=""; n=0
while [ -z "$Q" ] && [ $n -lt 500 ]; do
  o=$(sq_cluster_owner "sq:{fo$n}:tasks")
  [ "$o" != "$seed" ] && Q=fo$n
  n=$((n + 1))
done
[ -n "$Q" ] || sq_fail "found no queue on a master other than the seed"
mport=$(sq_cluster_owner "sq:{$Q}:tasks")
mid=$(redis-cli -p "$mport" CLUSTER MYID)
rport=""
for p in $SQ_CLUSTER_PORTS; do
  redis-cli -p "$p" CLUSTER NODES | grep myself | grep -q "slave $mid" && rport=$p
done
[ -n "$rport" ] || sq_fail "the master $mport of queue $Q has no replica"
sq_wait_for "redis-cli -p $rport INFO replication | grep -q 'master_link_status:up'" 30 || sq_fail "the replica did not sync"
mk=$(sq_cluster_node "$mport") || sq_fail "no cluster node on port $mport"
rk=$(sq_cluster_node "$rport") || sq_fail "no cluster node on port $rport"
eval "mpid=\$SQ_PID_cnode$mk rpid=\$SQ_PID_cnode$rk"
echo "cluster failover: queue $Q on master $mport (pid $mpid), replica $rport, seed $seed"

export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_LOG_LEVEL=warn \
  SANDQ_WAIT_REPLICAS=${SQ_TEST_WAIT_REPLICAS:-1} SANDQ_WAIT_TIMEOUT_MS=1000 SANDQ_LEASE_MS=4000 SANDQ_HEARTBEAT_MS=500
awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"t%05d\",\"code\":\"import time\\ntime.sleep(0.02)\"}\n", i }' \
  >"$SQ_TMP/tasks.jsonl"
# One task at a time per worker, each 20 ms in the real jail: the batch is
# still running when its master dies, and the task each worker has in hand
# when the replica stalls is claimed before the stall and done during it.
echo '{"claim_batch": 1, "max_tasks_in_flight": 1}' >"$SQ_TMP/slow.json"
for w in w1 w2; do
  "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/slow.json" --queue "$Q" --worker-id "$w" >"$SQ_TMP/worker-$w.log" 2>&1 &
  SQ_PIDS="$SQ_PIDS $!"
done
sq_push_midway "$mport" "$Q" fo "$SQ_TMP/tasks.jsonl" $((N / 6))
# The replica is cut off; then the master dies.
sq_cut_replica "$mport" "$rpid"
sleep 0.7
at_kill=$(redis-cli -p "$mport" HLEN "sq:{$Q}:results:fo")
kill -9 "$mpid"
kill -CONT "$rpid"
echo "cluster failover: replica cut off, then master $mport killed with $at_kill of $N results"
sq_wait_for "test \"\$(redis-cli -p $rport ROLE | head -1)\" = master" 60 || sq_fail "the cluster did not promote the replica"
echo "cluster failover: replica $rport promoted"
# With wait_replicas 1 the new master takes no work until it has a replica
# (docs/operations.md): the old master's service restarts it, and it rejoins
# the cluster as the new master's replica.
sq_restart_cluster_node "$mk"
sq_wait_for "redis-cli -p $mport ROLE | head -1 | grep -q slave" 60 || sq_fail "the old master did not rejoin as a replica"
echo "cluster failover: the old master $mport rejoined as a replica"

sq_push_ended "$N"
[ "$at_kill" -lt "$N" ] || sq_fail "the failover came after the batch had finished"
sq_batch_once "$rport" "$Q" fo "$N"
echo "cluster failover: all $N tasks have exactly one result on the promoted replica; push --wait ended normally"
