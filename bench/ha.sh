#!/bin/sh
# bench/ha.sh BUILD_DIR: what scaling past one Redis costs and gives, at the
# library level (queue_bench: push N tasks, then 2 forked consumers claim
# and complete them, leases and fencing on; execution stubbed), all on this
# machine's cores (docs/benchmarks.md):
#  1. one redis-server against a 3-master cluster (redis-cluster://) with a
#     3-shard queue: the same cores, so the ratio is the work per node
#  2. the failover guarantee: a master with one replica, wait_replicas 0
#     against 1 (a WAIT after every push chunk and every pipeline of
#     completions), with claims and completions of 1 and of 50 per round trip
# Sizes: SQ_BENCH_HA_N (tasks, default 30000), SQ_BENCH_HA_RUNS (runs per
# figure, the median is kept; default 3). Prints one line per run and a
# summary of ratios.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}; case $build in /*) ;; *) build=$(pwd)/$build ;; esac
export SQ_BIN=$build/bin SQ_SRC=$here
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/ha_env.sh"
sq_env_init
[ -x "$SQ_BIN/queue_bench" ] || sq_fail "$SQ_BIN/queue_bench is missing: build first (make build)"
N=${SQ_BENCH_HA_N:-30000} RUNS=${SQ_BENCH_HA_RUNS:-3}

echo "$(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"

# run URL BATCH [ENV...]: the medians of RUNS queue_bench runs into $PUSH
# and $CC (tasks/s of push and of claim+complete). FLUSH is a command that
# empties the servers between runs.
run() {
  url=$1 b=$2; shift 2
  pushes="" ccs=""
  k=0
  while [ $k -lt "$RUNS" ]; do
    k=$((k + 1))
    eval "$FLUSH"
    line=$(env "$@" timeout 300 "$SQ_BIN/queue_bench" "$url" "$N" 2 "$b") || sq_fail "queue_bench $url $* failed"
    echo "   $line"
    pushes="$pushes $(echo "$line" | sed 's/^push [0-9]*: \([0-9]*\) tasks.*/\1/')"
    ccs="$ccs $(echo "$line" | sed 's/.*batch [0-9]*: \([0-9]*\) tasks.*/\1/')"
  done
  PUSH=$(echo $pushes | tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  CC=$(echo $ccs | tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
us() { awk -v r="$1" 'BEGIN { printf "%.1f", 1e6 / r }'; }

echo "== 1. one redis-server against a 3-master cluster, 3-shard queue; $N tasks, 2 consumers, claims of 50"
sq_start_node single
FLUSH="redis-cli -p $SQ_PORT_single FLUSHALL >/dev/null"
run "redis://127.0.0.1:$SQ_PORT_single" 50
p1=$PUSH c1=$CC
echo " one redis: push $p1/s, claim+complete $c1/s (medians)"
sq_start_cluster 3
FLUSH='for p in $SQ_CLUSTER_PORTS; do redis-cli -p $p FLUSHALL >/dev/null; done'
run "$SANDQ_REDIS_URL" 50 SQ_BENCH_SHARDS=3
p3=$PUSH c3=$CC
echo " cluster: push $p3/s, claim+complete $c3/s (medians)"

echo "== 2. the failover guarantee: master + 1 replica, wait_replicas 0 against 1; $N tasks, 2 consumers"
sq_start_node primary --appendonly yes --appendfsync everysec
sq_start_node replica2 --replicaof 127.0.0.1 "$SQ_PORT_primary"
sq_wait_for "redis-cli -p $SQ_PORT_replica2 INFO replication | grep -q 'master_link_status:up'" 30 ||
  sq_fail "the replica did not sync"
FLUSH="redis-cli -p $SQ_PORT_primary FLUSHALL >/dev/null; sleep 0.2"
U="redis://127.0.0.1:$SQ_PORT_primary"
for b in 1 50; do
  run "$U" $b SQ_BENCH_WAIT_REPLICAS=0
  eval "p0_$b=\$PUSH c0_$b=\$CC"
  run "$U" $b SQ_BENCH_WAIT_REPLICAS=1
  eval "pw_$b=\$PUSH cw_$b=\$CC"
done

echo "== summary (medians of $RUNS; load now $(cut -d' ' -f1-3 /proc/loadavg))"
echo "cluster/one redis: push x$(ratio "$p3" "$p1"), claim+complete x$(ratio "$c3" "$c1")"
for b in 1 50; do
  eval "a=\$p0_$b w=\$pw_$b ca=\$c0_$b cw=\$cw_$b"
  echo "wait 1/wait 0, round trips of $b: push x$(ratio "$w" "$a") ($(us "$a") -> $(us "$w") us/task)," \
    "claim+complete x$(ratio "$cw" "$ca") ($(us "$ca") -> $(us "$cw") us/task)"
done
