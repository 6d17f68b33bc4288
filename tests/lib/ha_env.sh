# ha_env.sh: sourced after env.sh by the Sentinel and Cluster tests and
# bench/cluster.sh: real redis-server processes on free loopback ports in
# $SQ_TMP, torn down by env.sh's exit trap.
#
#   sq_start_node NAME [ARGS...]   a redis-server; sets SQ_PORT_<NAME>
#   sq_start_sentinels MASTER_PORT N   N sentinels watching master "sq" (fast
#                                  failover: down after 1 s); sets
#                                  SQ_SENTINEL_PORTS ("p1 p2 ...") and
#                                  SANDQ_REDIS_URL (redis-sentinel://...)
#   sq_start_cluster N             N empty masters joined into one cluster;
#                                  sets SQ_CLUSTER_PORTS and SANDQ_REDIS_URL
#                                  (redis-cluster://, the first node as seed);
#                                  with SQ_CLUSTER_REPLICAS=R, N nodes make
#                                  N/(R+1) masters with R replicas each
#   sq_cluster_owner KEY           the port of the master serving KEY's slot
#   sq_cluster_node PORT           the number K of the node on PORT (cnodeK)
#   sq_restart_cluster_node K      starts cnodeK again, as its service would
#                                  (same port, same nodes.conf); sets
#                                  SQ_PID_cnodeK
#   sq_push_midway PORT QUEUE BATCH FILE AT [ARGS...]  `push --wait` of FILE in
#                                  the background (SQ_PUSH_PID; push.out,
#                                  push.err), back once the master on PORT
#                                  holds AT results of the batch
#   sq_cut_replica PORT PID        the replica PID stalls (SIGSTOP) and the
#                                  master on PORT drops its link, as a slow
#                                  network would: nothing written from now
#                                  on reaches it
#   sq_push_ended N                fails unless that push --wait exited 0
#                                  with N tasks ok; waits as long as its
#                                  progress lines move (queue_env.sh's
#                                  sq_wait_progress)
#   sq_batch_once PORT QUEUE BATCH N  fails unless batch BATCH of QUEUE, on
#                                  the master on PORT, has exactly one result
#                                  per task and nothing left queued or leased

command -v redis-server >/dev/null || sq_skip "redis-server is not installed (scripts/install-deps.sh)"

# A free port for a cluster node: its bus port, 10,000 higher, must be free
# and at most 65,535 too (Redis refuses a port above 55,535 in cluster
# mode, and a fifth of the kernel's ephemeral range is above it).
sq_free_cluster_port() {
  /usr/bin/python3 -c '
import socket
for _ in range(200):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    if p > 55535:
        s.close(); continue
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", p + 10000))
    except OSError:
        s.close(); continue
    print(p); b.close(); s.close(); break
'
}

sq_start_node() {
  name=$1; shift
  case " $* " in *" --cluster-enabled yes "*) pick=sq_free_cluster_port ;; *) pick=sq_free_port ;; esac
  for attempt in 1 2 3; do
    port=$($pick)
    mkdir -p "$SQ_TMP/$name"
    rm -f "$SQ_TMP/$name.nodes.conf"
    sq_bg "$name" redis-server --port "$port" --bind 127.0.0.1 --dir "$SQ_TMP/$name" --daemonize no \
      --save '' --appendonly no "$@"
    eval "pid=\$SQ_PID_$name"
    # Up to 10 s for its PONG; a server that exited (its port taken
    # meanwhile, say) is started again on another port at once.
    if sq_wait_for "redis-cli -p $port ping | grep -q PONG || ! kill -0 $pid" 10 &&
      redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
      eval "SQ_PORT_$name=$port"
      return 0
    fi
    kill "$pid" 2>/dev/null || true
    echo "redis-server $name on port $port did not start (attempt $attempt):" >&2
    tail -3 "$SQ_TMP/$name.log" >&2
  done
  cat "$SQ_TMP/$name.log" >&2
  sq_fail "redis-server $name did not start"
}

# redis-sentinel is a Debian package of its own (a link to redis-server);
# without it, redis-server --sentinel is the same program.
sq_start_sentinels() {
  mport=$1; n=$2; SQ_SENTINEL_PORTS=""; urlhosts=""
  sn=0
  while [ $sn -lt "$n" ]; do
    sn=$((sn + 1))
    port=$(sq_free_port)
    d="$SQ_TMP/sentinel$sn"; mkdir -p "$d"
    cat >"$d/sentinel.conf" <<EOF
port $port
bind 127.0.0.1
daemonize no
dir $d
sentinel monitor sq 127.0.0.1 $mport 2
sentinel down-after-milliseconds sq ${SQ_DOWN_AFTER_MS:-1000}
sentinel failover-timeout sq ${SQ_FAILOVER_TIMEOUT_MS:-3000}
sentinel parallel-syncs sq 1
EOF
    if command -v redis-sentinel >/dev/null; then
      sq_bg "sentinel$sn" redis-sentinel "$d/sentinel.conf"
    else
      sq_bg "sentinel$sn" redis-server "$d/sentinel.conf" --sentinel
    fi
    sq_wait_for "redis-cli -p $port ping | grep -q PONG" 10 ||
      { cat "$SQ_TMP/sentinel$sn.log" >&2; sq_fail "sentinel $sn did not start"; }
    SQ_SENTINEL_PORTS="$SQ_SENTINEL_PORTS $port"
    urlhosts="${urlhosts:+$urlhosts,}127.0.0.1:$port"
  done
  export SANDQ_REDIS_URL="redis-sentinel://$urlhosts/sq"
}

# The master's port as the sentinels see it (asks each until one answers).
sq_sentinel_master_port() {
  for p in $SQ_SENTINEL_PORTS; do
    a=$(redis-cli -p "$p" SENTINEL get-master-addr-by-name sq 2>/dev/null | sed -n 2p)
    [ -n "$a" ] && { echo "$a"; return 0; }
  done
  return 1
}

# A cluster node's arguments beyond sq_start_node's.
sq__cluster_node_args() {
  echo "--cluster-enabled yes --cluster-config-file $SQ_TMP/cnode$1.nodes.conf" \
    "--cluster-node-timeout ${SQ_CLUSTER_NODE_TIMEOUT_MS:-3000} ${SQ_CLUSTER_NODE_ARGS:-}"
}

sq_cluster_node() {
  for k in $(seq 1 "$(echo $SQ_CLUSTER_PORTS | wc -w)"); do
    eval "[ \"\$SQ_PORT_cnode$k\" = \"$1\" ]" && { echo "$k"; return 0; }
  done
  return 1
}

sq_restart_cluster_node() {
  eval "port=\$SQ_PORT_cnode$1"
  # shellcheck disable=SC2046
  sq_bg "cnode$1" redis-server --port "$port" --bind 127.0.0.1 --dir "$SQ_TMP/cnode$1" --daemonize no --save '' \
    --appendonly no $(sq__cluster_node_args "$1")
}

sq_push_midway() {
  mp=$1 pq=$2 pb=$3 pf=$4 at=$5; shift 5
  "$SQ_BIN/sandq-producer" push --queue "$pq" --batch "$pb" --wait "$@" "$pf" >"$SQ_TMP/push.out" 2>"$SQ_TMP/push.err" &
  SQ_PUSH_PID=$! SQ_PUSH_BATCH=$pb
  SQ_PIDS="$SQ_PIDS $SQ_PUSH_PID"
  sq_wait_for "test \"\$(redis-cli -p $mp HLEN 'sq:{$pq}:results:$pb')\" -ge $at" 120 ||
    { cat "$SQ_TMP/push.err" "$SQ_TMP/worker-w1.log" >&2; sq_fail "the batch did not get going"; }
}

sq_cut_replica() {
  kill -STOP "$2"
  redis-cli -p "$1" CLIENT KILL TYPE replica >/dev/null
}

# The settled count of the last progress line of sq_push_midway's push.
sq__push_settled() {
  sed -n 's/^batch [^:]*: \([0-9]*\)\/.*/\1/p' "$SQ_TMP/push.err" | tail -n 1
}

sq_push_ended() {
  set +e; sq_wait_progress "$SQ_PUSH_BATCH" 120 "$SQ_PUSH_PID" sq__push_settled; rc=$?; set -e
  [ $rc -eq 0 ] || { tail -n 20 "$SQ_TMP/push.err" "$SQ_TMP/worker-w1.log" >&2; sq_fail "push --wait exited $rc across the failover"; }
  grep -q "ok *$1" "$SQ_TMP/push.out" || sq_fail "push --wait summary: $(cat "$SQ_TMP/push.out")"
}

sq_batch_once() {
  bp=$1 bq=$2 bb=$3 bn=$4
  r=$(redis-cli -p "$bp" HLEN "sq:{$bq}:results:$bb")
  [ "$r" = "$bn" ] || sq_fail "$r results, want $bn"
  d=$(redis-cli -p "$bp" HGET "sq:{$bq}:batch:$bb" done)
  [ "$d" = "$bn" ] || sq_fail "batch done counter $d, want $bn (exactly one result per task)"
  t=$(redis-cli -p "$bp" HGET "sq:{$bq}:batch:$bb" total)
  [ "$t" = "$bn" ] || sq_fail "batch total $t, want $bn (a push chunk landed twice?)"
  for k in tasks leases delayed; do
    [ "$(redis-cli -p "$bp" EXISTS "sq:{$bq}:$k")" = 0 ] || sq_fail "sq:{$bq}:$k is not empty after the batch"
  done
}

sq_start_cluster() {
  n=$1; SQ_CLUSTER_PORTS=""; addrs=""
  cn=0
  while [ $cn -lt "$n" ]; do
    cn=$((cn + 1))
    # shellcheck disable=SC2046
    sq_start_node "cnode$cn" $(sq__cluster_node_args "$cn")
    eval "port=\$SQ_PORT_cnode$cn"
    SQ_CLUSTER_PORTS="$SQ_CLUSTER_PORTS $port"
    addrs="$addrs 127.0.0.1:$port"
  done
  # shellcheck disable=SC2086
  redis-cli --cluster create $addrs --cluster-replicas "${SQ_CLUSTER_REPLICAS:-0}" --cluster-yes \
    >"$SQ_TMP/cluster-create.log" 2>&1 ||
    { cat "$SQ_TMP/cluster-create.log" >&2; sq_fail "redis-cli --cluster create failed"; }
  for p in $SQ_CLUSTER_PORTS; do
    sq_wait_for "redis-cli -p $p CLUSTER INFO | grep -q cluster_state:ok" 30 || sq_fail "cluster node $p is not ok"
  done
  first=$(echo $SQ_CLUSTER_PORTS | cut -d' ' -f1)
  export SANDQ_REDIS_URL="redis-cluster://127.0.0.1:$first"
}

# The port of the master serving KEY's slot now (the one that does not
# redirect).
sq_cluster_owner() {
  for p in $SQ_CLUSTER_PORTS; do
    if redis-cli -p "$p" EXISTS "$1" 2>&1 | grep -Eq '^[0-9]+$'; then echo "$p"; return 0; fi
  done
  return 1
}

# A field of `SENTINEL master sq` as sentinel port $2 sees it (e.g.
# num-other-sentinels, num-slaves, flags).
sq_sentinel_field() {
  redis-cli -p "$2" SENTINEL master sq 2>/dev/null | awk -v f="$1" 'prev == f { print; exit } { prev = $0 }'
}

# Waits up to $1 s until every sentinel knows the others and one replica.
sq_sentinels_ready() {
  n=$(echo $SQ_SENTINEL_PORTS | wc -w)
  for p in $SQ_SENTINEL_PORTS; do
    sq_wait_for "test \"\$(redis-cli -p $p SENTINEL master sq | awk 'prev == \"num-other-sentinels\" { print; exit } { prev = \$0 }')\" = $((n - 1))" "$1" ||
      return 1
    sq_wait_for "test \"\$(redis-cli -p $p SENTINEL master sq | awk 'prev == \"num-slaves\" { print; exit } { prev = \$0 }')\" -ge 1" "$1" ||
      return 1
  done
}
