# queue_env.sh: helpers the queue_*.sh integration tests share, on top of
# env.sh: task files, workers that can be killed and restarted, counters.
#
#   sq_tasks FILE N [CODE]        N tasks t00000.. with CODE (default print(1))
#   sq_worker ID                  start `sandq-worker serve --worker-id ID`
#   sq_batch_field BATCH FIELD    a field of the batch hash (0 when absent)
#   sq_stat NAME                  a queue counter from sq:{Q}:stats (0 when absent)
#   sq_wait_batch BATCH S         up to S s for the batch to finish
#   sq_wait_progress BATCH S PID [COUNT]  until PID (its push --wait)
#                                 exits; fails once no task has finished for
#                                 S s (a busy host is slower, never a
#                                 failure); COUNT: a command printing the
#                                 count (default: the batch's done field)
#   sq_push_wait BATCH OUT ARGS   `push --batch BATCH --wait ARGS` (output in
#                                 OUT) while the batch makes progress; its
#                                 exit code (120 s without a result fails)

SQ_Q=${SANDQ_QUEUE:-default}

sq_tasks() {
  awk -v n="$2" -v code="${3:-print(1)}" \
    'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"t%05d\",\"code\":\"%s\"}\n", i, code }' >"$1"
}

sq_worker() {
  "$SQ_BIN/sandq-worker" serve --worker-id "$1" >>"$SQ_TMP/worker-$1.log" 2>&1 &
  SQ_PIDS="$SQ_PIDS $!"
  eval "SQ_WPID_$(echo "$1" | tr -c 'A-Za-z0-9\n' _)=$!"
}

sq_wpid() { eval "echo \$SQ_WPID_$(echo "$1" | tr -c 'A-Za-z0-9\n' _)"; }

sq_batch_field() {
  v=$(sq_redis_cli HGET "sq:{$SQ_Q}:batch:$1" "$2")
  echo "${v:-0}"
}

sq_stat() {
  v=$(sq_redis_cli HGET "sq:{$SQ_Q}:stats" "$1")
  echo "${v:-0}"
}

# Waits up to $2 s for batch $1 to finish (done + dead >= total).
sq_wait_batch() {
  sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT HEXISTS 'sq:{$SQ_Q}:batch:$1' finished_at_ms)\" = 1" "$2"
}

# Waits for process $3 (a `push --wait` of batch $1) to exit for as long as
# the batch makes progress: fails when its done count has not grown for $2 s.
# Returns the process's exit code.
sq_wait_progress() {
  last_done=-1
  last_t=$(date +%s)
  while kill -0 "$3" 2>/dev/null; do
    now=$(date +%s)
    if [ -n "${4:-}" ]; then d=$($4); else d=$(sq_batch_field "$1" done); fi
    if [ "$d" != "$last_done" ]; then
      last_done=$d
      last_t=$now
    fi
    [ $((now - last_t)) -lt "$2" ] || sq_fail "batch $1: no task finished in $2 s ($last_done done)"
    sleep 0.5
  done
  wait "$3"
}

# A big batch's `push --wait` has no fixed budget: it may take as long as
# tasks keep finishing (a busy host is slower, never a failure).
sq_push_wait() {
  sq__pw_batch=$1 sq__pw_out=$2
  shift 2
  "$SQ_BIN/sandq-producer" push --batch "$sq__pw_batch" --wait "$@" >"$sq__pw_out" 2>&1 &
  SQ_PIDS="$SQ_PIDS $!"
  sq_wait_progress "$sq__pw_batch" 120 $!
}
