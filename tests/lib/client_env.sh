# client_env.sh: sourced after env.sh by the client tests (client_python.sh,
# client_node.sh): the servers clients/*/test* expect, real ones on
# loopback, torn down by env.sh's exit trap.
#
#   sq_client_servers NAME   a redis-server with two workers on queue
#                            "default" and one on queue "shq", recorded as 3
#                            shards (like shard_record.sh); with redis-cli, a
#                            three-master Redis Cluster too (tests/lib/ha_env.sh)
#                            whose queue "sh" has 3 shards and a worker
#                            (execution stubbed: SANDQ_TEST_EXEC=noop).
#                            Exports SANDQ_REDIS_URL (the plain server),
#                            SANDQ_TEST_SHARDED_QUEUE and SANDQ_TEST_CLUSTER_URL;
#                            workers are NAME-w1, NAME-w2, NAME-w3, NAME-wc.

. "$SQ_SRC/tests/lib/ha_env.sh"

sq_client_servers() {
  sq_start_redis
  # two warm zygotes a worker: four workers share the machine with other tests
  export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_TEST_SHARDED_QUEUE=shq SANDQ_JAIL_POOL_SIZE=2
  sq_redis_cli SET "sq:{$SANDQ_TEST_SHARDED_QUEUE}:shards" 3 >/dev/null
  sq_bg w1 "$SQ_BIN/sandq-worker" serve --worker-id "$1-w1" --log-level warn
  sq_bg w2 "$SQ_BIN/sandq-worker" serve --worker-id "$1-w2" --log-level warn
  sq_bg w3 "$SQ_BIN/sandq-worker" serve --worker-id "$1-w3" --queue "$SANDQ_TEST_SHARDED_QUEUE" --log-level warn
  sq_wait_for "redis-cli -p $SQ_REDIS_PORT FUNCTION LIST | grep -q sq1_batch_get" 60 ||
    { cat "$SQ_TMP/w1.log" >&2; sq_fail "the workers did not load the functions"; }
  command -v redis-cli >/dev/null || sq_skip "redis-cli is not installed (redis-tools)"
  plain=$SANDQ_REDIS_URL
  sq_start_cluster 3
  export SANDQ_TEST_CLUSTER_URL="$SANDQ_REDIS_URL" SANDQ_REDIS_URL="$plain"
  sq_bg wc env SANDQ_REDIS_URL="$SANDQ_TEST_CLUSTER_URL" SANDQ_SHARDS=3 SANDQ_TEST_HOOKS=1 SANDQ_TEST_EXEC=noop \
    "$SQ_BIN/sandq-worker" serve --worker-id "$1-wc" --queue sh --log-level warn
  seed=$(echo $SQ_CLUSTER_PORTS | cut -d' ' -f1)
  sq_wait_for "redis-cli -c -p $seed GET 'sq:{sh}:shards' | grep -qx 3" 30 ||
    { cat "$SQ_TMP/wc.log" >&2; sq_fail "the cluster's worker did not record queue sh's 3 shards"; }
}
