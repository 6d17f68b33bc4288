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
#
# It all runs beside 2 x cores CPU hogs (busy loops started here and killed
# by pid), as on a loaded host, and the URL names first a fourth, real
# sentinel that never learns of the failover: its user on the nodes may use
# no pub/sub channel, so it neither hears the others' hello messages nor
# announces itself, and it names the dead master to the end, as a sentinel
# stuck in TILT mode or cut off from the others does. The programs ask every
# sentinel and follow the newest configuration (the highest config-epoch);
# one that trusted the first sentinel to answer would stay on the dead
# master (then on the old master once it is a replica) and the batch would
# never end.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/ha_env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
command -v redis-cli >/dev/null || sq_skip "redis-cli is not installed (redis-tools)"
N=${SQ_SENTINEL_TASKS:-3000}

# The stuck sentinel's user on every node: PING and INFO, no pub/sub channel
# and nothing that reconfigures a node (it may watch, never act).
# (Split into words where it is used, never globbed: set -f.)
set -f
stuck_user="--user stuck on >stuck ~* resetchannels -@all +ping +info +client|setname"
# The master keeps an AOF, as docs/deploy.md asks; it restarts from it.
# shellcheck disable=SC2086
sq_start_node master --appendonly yes --appendfsync everysec $stuck_user
mport=$SQ_PORT_master
# shellcheck disable=SC2086
sq_start_node replica --replicaof 127.0.0.1 "$mport" $stuck_user
rport=$SQ_PORT_replica
sq_wait_for "redis-cli -p $rport INFO replication | grep -q 'master_link_status:up'" 30 || sq_fail "the replica did not sync"
SQ_DOWN_AFTER_MS=2000 SQ_FAILOVER_TIMEOUT_MS=4000
sq_start_sentinels "$mport" 3
sq_sentinels_ready 30 || sq_fail "the sentinels did not find each other and the replica"
stuck=$(sq_free_port)
mkdir -p "$SQ_TMP/stuck"
printf '%s\n' "port $stuck" "bind 127.0.0.1" "daemonize no" "dir $SQ_TMP/stuck" \
  "sentinel monitor sq 127.0.0.1 $mport 2" "sentinel auth-user sq stuck" "sentinel auth-pass sq stuck" \
  "sentinel down-after-milliseconds sq $SQ_DOWN_AFTER_MS" >"$SQ_TMP/stuck/sentinel.conf"
if command -v redis-sentinel >/dev/null; then
  sq_bg stuck redis-sentinel "$SQ_TMP/stuck/sentinel.conf"
else
  sq_bg stuck redis-server "$SQ_TMP/stuck/sentinel.conf" --sentinel
fi
sq_stuck_names() { redis-cli -p "$stuck" SENTINEL get-master-addr-by-name sq 2>/dev/null | sed -n 2p; }
sq_wait_for "test \"\$(redis-cli -p $stuck SENTINEL get-master-addr-by-name sq | sed -n 2p)\" = $mport" 10 ||
  { cat "$SQ_TMP/stuck.log" >&2; sq_fail "the stuck sentinel did not start"; }
SANDQ_REDIS_URL="redis-sentinel://127.0.0.1:$stuck,${SANDQ_REDIS_URL#redis-sentinel://}"
echo "sentinel: master $mport, replica $rport, sentinels$SQ_SENTINEL_PORTS; stuck sentinel $stuck, named first"
# 2 x cores busy loops from here to the end (env.sh's trap kills them too).
hogs=""
for _ in $(seq $((2 * $(nproc)))); do
  sh -c 'while :; do :; done' &
  hogs="$hogs $!"
done
SQ_PIDS="$SQ_PIDS $hogs"

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
echo "sentinel: replica cut off at $before results (master had $after when killed -9); $at_kill of $N results" \
  "survive; load $(cut -d' ' -f1 /proc/loadavg)"
sq_wait_for "test \"\$(redis-cli -p $rport ROLE | head -1)\" = master" 60 || sq_fail "the sentinels did not promote the replica"
k=0
until [ "$(sq_sentinel_master_port)" = "$rport" ]; do
  k=$((k + 1)); [ $k -lt 300 ] || sq_fail "the sentinels do not name the replica as master"
  sleep 0.1
done
echo "sentinel: replica $rport promoted"
[ "$(sq_stuck_names)" = "$mport" ] || sq_fail "the stuck sentinel heard of the failover: nothing here is stuck"
# The old master's service restarts it; the sentinels make it a replica.
# (On a loaded machine the sentinels may fail over once more, back to it:
# the checks below ask them who the master is at the end.)
# shellcheck disable=SC2086
sq_bg master2 redis-server --port "$mport" --bind 127.0.0.1 --dir "$SQ_TMP/master" --daemonize no --save '' \
  --appendonly yes --appendfsync everysec $stuck_user

sq_push_ended "$N"
[ "$at_kill" -lt "$N" ] || sq_fail "the failover came after the batch had finished"
# Exactly one result per task: as many results as tasks, the done counter
# agrees, and nothing is left waiting or claimed.
sq_batch_once "$(sq_sentinel_master_port)" default fo "$N"
grep -Eq "following the failover|reconnecting|failed" "$SQ_TMP/worker-w1.log" "$SQ_TMP/worker-w2.log" ||
  sq_fail "no worker noticed the failover"
[ "$(sq_stuck_names)" = "$mport" ] || sq_fail "the stuck sentinel heard of the failover: nothing here is stuck"
load=$(cut -d' ' -f1-3 /proc/loadavg)
# shellcheck disable=SC2086
kill $hogs
echo "sentinel: all $N tasks have exactly one result; push --wait ended normally (beside $(echo $hogs | wc -w)" \
  "CPU hogs, load $load; the stuck sentinel still names $mport)"
