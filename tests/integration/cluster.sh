#!/bin/sh
# cluster.sh: sandq on a real three-master Redis Cluster (redis-server
# --cluster-enabled on loopback ports), producer and workers given one seed
# node (redis-cluster://, the first master):
#   1. three queues whose slots live on three different masters each
#      complete (the workers and the producer follow MOVED from the seed)
#   2. a sharded queue (shards: 3) spreads over the masters and completes
#   3. a batch survives `redis-cli --cluster reshard` of its queue's slot in
#      the middle of the run: every task has exactly one result, push --wait
#      ends normally, and the queue's keys end on the new master
# Execution is stubbed (SANDQ_TEST_EXEC=noop): this is about the queue.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/ha_env.sh"
sq_env_init
command -v redis-cli >/dev/null || sq_skip "redis-cli is not installed (redis-tools)"
sq_start_cluster 3
P="$SQ_BIN/sandq-producer"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_TEST_HOOKS=1 SANDQ_TEST_EXEC=noop SANDQ_LOG_LEVEL=info
seed=$(echo $SQ_CLUSTER_PORTS | cut -d' ' -f1)

tasks() { # FILE N
  awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"t%05d\",\"code\":\"print(1)\"}\n", i }' >"$1"
}
worker() { # ID QUEUE [ENV...] (SQ_WORKER_CONFIG: a config file)
  id=$1; queue=$2; shift 2
  env "$@" "$SQ_BIN/sandq-worker" serve ${SQ_WORKER_CONFIG:+--config "$SQ_WORKER_CONFIG"} --queue "$queue" \
    --worker-id "$id" >>"$SQ_TMP/worker-$id.log" 2>&1 &
  SQ_PIDS="$SQ_PIDS $!"
}
# Results of batch $2 in queue $1 (one hash under the queue's tag), on its owner.
results() { redis-cli -p "$(sq_cluster_owner "sq:{$1}:tasks")" HLEN "sq:{$1}:results:$2"; }

# 1. Three queues, one per master.
owners=""; queues=""
n=0
while [ "$(echo $queues | wc -w)" -lt 3 ] && [ $n -lt 500 ]; do
  o=$(sq_cluster_owner "sq:{q$n}:tasks")
  case " $owners " in *" $o "*) ;; *) owners="$owners $o"; queues="$queues q$n" ;; esac
  n=$((n + 1))
done
[ "$(echo $queues | wc -w)" -eq 3 ] || sq_fail "found no three queue names on three masters ($queues on$owners)"
tasks "$SQ_TMP/t200.jsonl" 200
pids=""
for q in $queues; do
  worker "w-$q" "$q"
  "$P" push --queue "$q" --batch "b-$q" --wait --timeout-s 120 "$SQ_TMP/t200.jsonl" >"$SQ_TMP/push-$q.out" \
    2>"$SQ_TMP/push-$q.err" &
  pids="$pids $!"
done
for p in $pids; do
  wait "$p" || { cat "$SQ_TMP"/push-*.err >&2; sq_fail "push --wait on one of$queues failed"; }
done
for q in $queues; do
  [ "$(results "$q" "b-$q")" = 200 ] || sq_fail "queue $q: $(results "$q" "b-$q") results, want 200"
done
echo "cluster: three queues on masters$owners ($queues) completed through the seed $seed"

# 2. A sharded queue: three tags, spread over the masters.
tasks "$SQ_TMP/t300.jsonl" 300
worker w-sh1 sh SANDQ_SHARDS=3
worker w-sh2 sh SANDQ_SHARDS=3
SANDQ_SHARDS=3 "$P" push --queue sh --batch bs --wait --timeout-s 120 "$SQ_TMP/t300.jsonl" >"$SQ_TMP/push-sh.out" \
  2>"$SQ_TMP/push-sh.err" || { cat "$SQ_TMP/push-sh.err" >&2; sq_fail "push --wait on the sharded queue failed"; }
total=0; shard_owners=""
for s in 0 1 2; do
  o=$(sq_cluster_owner "sq:{sh#$s}:tasks")
  shard_owners="$shard_owners $o"
  r=$(redis-cli -p "$o" HLEN "sq:{sh#$s}:results:bs")
  [ "$r" -gt 0 ] || sq_fail "shard $s holds no result"
  total=$((total + r))
done
[ $total = 300 ] || sq_fail "sharded queue: $total results, want 300"
[ "$(echo $shard_owners | tr ' ' '\n' | sort -u | wc -l)" -ge 2 ] || sq_fail "the shards all live on one master ($shard_owners)"
grep -q "ok *300" "$SQ_TMP/push-sh.out" || sq_fail "push --wait summary: $(cat "$SQ_TMP/push-sh.out")"
echo "cluster: sharded queue (3 shards on masters$shard_owners) completed, 300 results"

# 2b. The audit trail of a sharded queue lives under its home tag, on a
# master other than its first shards', while the results go to the shards:
# one entry per program run (a real one here: noop runs none), none lost or
# doubled (a worker sends them behind its completions, in one round trip).
A=""; n=0
while [ -z "$A" ] && [ $n -lt 500 ]; do
  h=$(sq_cluster_owner "sq:{a$n}:audit")
  [ "$h" != "$(sq_cluster_owner "sq:{a$n#0}:tasks")" ] && [ "$h" != "$(sq_cluster_owner "sq:{a$n#1}:tasks")" ] && A=a$n
  n=$((n + 1))
done
[ -n "$A" ] || sq_fail "found no queue name whose home tag is on another master than its shards"
tasks "$SQ_TMP/t30.jsonl" 30
worker w-a1 "$A" SANDQ_SHARDS=3 SANDQ_TEST_EXEC=real
SANDQ_SHARDS=3 "$P" push --queue "$A" --batch ba --wait --timeout-s 120 "$SQ_TMP/t30.jsonl" >"$SQ_TMP/push-a.out" \
  2>"$SQ_TMP/push-a.err" || { cat "$SQ_TMP/push-a.err" "$SQ_TMP/worker-w-a1.log" >&2; sq_fail "push --wait (real runs) failed"; }
home=$(sq_cluster_owner "sq:{$A}:audit")
sq_wait_for "[ \$(redis-cli -p $home XLEN 'sq:{$A}:audit') -ge 30 ]" 60 || true
audit=$(redis-cli -p "$home" XLEN "sq:{$A}:audit")
[ "$audit" = 30 ] || sq_fail "sharded queue $A: $audit audit entries under sq:{$A}:audit on $home, want 30"
echo "cluster: sharded queue $A: 30 programs run, 30 audit entries on the home tag's master $home"

# 3. Reshard the queue's slot mid-run. mig28452 hashes to slot 0, the first
# slot of the first master, which `reshard --cluster-slots 1` moves first.
Q=mig28452
slot=$(redis-cli -p "$seed" CLUSTER KEYSLOT "sq:{$Q}:tasks")
[ "$slot" = 0 ] || sq_fail "queue $Q is in slot $slot, want 0"
from_port=$(sq_cluster_owner "sq:{$Q}:tasks")
to_port=$(echo $SQ_CLUSTER_PORTS | cut -d' ' -f2)
from_id=$(redis-cli -p "$from_port" CLUSTER MYID)
to_id=$(redis-cli -p "$to_port" CLUSTER MYID)
# One task at a time per worker (a round trip each way), so the run lasts
# long enough for the slot to move in its middle.
N=20000
tasks "$SQ_TMP/t$N.jsonl" $N
echo '{"claim_batch": 1, "max_tasks_in_flight": 1}' >"$SQ_TMP/slow.json"
SQ_WORKER_CONFIG="$SQ_TMP/slow.json"
worker w-m1 "$Q" SANDQ_LOG_LEVEL=warn
worker w-m2 "$Q" SANDQ_LOG_LEVEL=warn
SQ_WORKER_CONFIG=
"$P" push --queue "$Q" --batch bm --wait --timeout-s 300 "$SQ_TMP/t$N.jsonl" >"$SQ_TMP/push-m.out" 2>"$SQ_TMP/push-m.err" &
push_pid=$!
sq_wait_for "test \"\$(redis-cli -p $from_port HLEN 'sq:{$Q}:results:bm')\" -ge 200" 120 ||
  sq_fail "the batch did not get going on $from_port"
redis-cli --cluster reshard "127.0.0.1:$seed" --cluster-from "$from_id" --cluster-to "$to_id" --cluster-slots 1 \
  --cluster-yes >"$SQ_TMP/reshard.log" 2>&1 || { cat "$SQ_TMP/reshard.log" >&2; sq_fail "reshard failed"; }
moved_at=$(redis-cli -p "$to_port" HLEN "sq:{$Q}:results:bm")
set +e; wait $push_pid; rc=$?; set -e
[ $rc -eq 0 ] || { cat "$SQ_TMP/push-m.err" >&2; sq_fail "push --wait exited $rc across the reshard"; }
[ "$(sq_cluster_owner "sq:{$Q}:tasks")" = "$to_port" ] || sq_fail "slot 0 did not move to $to_port"
[ "$moved_at" -lt $N ] || sq_fail "the reshard came after the batch had finished ($moved_at results)"
r=$(redis-cli -p "$to_port" HLEN "sq:{$Q}:results:bm")
[ "$r" = $N ] || sq_fail "after the reshard: $r results, want $N"
done_n=$(redis-cli -p "$to_port" HGET "sq:{$Q}:batch:bm" done)
[ "$done_n" = $N ] || sq_fail "batch done counter $done_n, want $N (exactly one result per task)"
[ "$(redis-cli -p "$from_port" EXISTS "sq:{$Q}:results:bm" 2>&1 | grep -c MOVED)" = 1 ] ||
  sq_fail "the old master still answers for the queue's keys"
grep -q "ok *$N" "$SQ_TMP/push-m.out" || sq_fail "push --wait summary: $(cat "$SQ_TMP/push-m.out")"
echo "cluster: slot $slot of queue $Q moved $from_port -> $to_port with $moved_at of $N results in; all $N done once"
