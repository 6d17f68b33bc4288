#!/bin/sh
# store_prompt.sh: a worker holds a finished result back only briefly, to
# share a round trip to Redis with others (worker/loop.c, store_due: at most
# STORE_WAIT_MS while jail runs are out), never until its slow neighbours end.
# One default worker claims a slow task (8 s) and fast ones together; each
# fast result must be readable while the slow task still runs (its result
# not there yet), however long they took on a busy host.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ -x /usr/bin/python3 ] || sq_skip "/usr/bin/python3 is not installed"
[ "$(id -u)" -eq 0 ] || sq_skip "the worker's warm pool needs root (namespaces, cgroups)"
sq_start_redis
unset SANDQ_LLM_BASE_URL
SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" sq_bg w "$SQ_BIN/sandq-worker" serve --worker-id prompt --log-level info
sq_wait_for "grep -q 'ready in' $SQ_TMP/w.log" 30 || { cat "$SQ_TMP/w.log" >&2; sq_fail "the worker never got ready"; }
for round in 1 2 3; do
  {
    printf '{"id":"slow","code":"import os, time\\nprint(\\"policy\\", os.sched_getscheduler(0))\\ntime.sleep(8)", "limits": {"wall_ms": 60000}}\n'
    printf '{"id":"fast%d","code":"x = %d"}\n' 1 1 2 2
  } >"$SQ_TMP/tasks.jsonl"
  t0=$(date +%s%N)
  "$SQ_BIN/sandq-producer" push --batch "prompt$round" "$SQ_TMP/tasks.jsonl" >/dev/null
  sq_wait_for "\"$SQ_BIN/sandq-producer\" results prompt$round --format jsonl 2>/dev/null | grep -c '\"fast' | grep -qx 2" 60 ||
    sq_fail "round $round: the fast results were not stored"
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  "$SQ_BIN/sandq-producer" results "prompt$round" --format jsonl >"$SQ_TMP/r.jsonl"
  # The slow task sleeps 8 s: its result beside the fast ones means they
  # were held back until it ended.
  if grep -q '"slow"' "$SQ_TMP/r.jsonl"; then
    sq_fail "round $round: the fast results were stored only after $ms ms, with the slow task's"
  fi
  echo "round $round: both fast results stored after $ms ms, the slow task still running"
  if [ "$round" = 1 ]; then # 3: SCHED_BATCH, field 41 of a thread's stat
    n=0
    for pid in $(sq_tree_pids "$SQ_PID_w"); do
      for t in /proc/$pid/task/*; do
        pol=$(sed 's/.*) //' "$t/stat" 2>/dev/null | cut -d' ' -f39) || continue
        [ -z "$pol" ] && continue
        [ "$pol" = 3 ] || sq_fail "thread $t ($(cat "$t/comm" 2>/dev/null)) runs policy $pol, not SCHED_BATCH (3)"
        n=$((n + 1))
      done
    done
    [ "$n" -ge 10 ] || sq_fail "only $n threads and processes found under the worker"
    echo "round 1: $n threads and processes under the worker, every one SCHED_BATCH"
  fi
  sq_wait_for "\"$SQ_BIN/sandq-producer\" results prompt$round --format jsonl 2>/dev/null | grep -q '\"slow'" 60 ||
    sq_fail "round $round: the slow result was not stored"
  "$SQ_BIN/sandq-producer" results "prompt$round" --format jsonl | grep '"slow"' | grep -q 'policy 3' ||
    sq_fail "round $round: the task did not run SCHED_BATCH: $("$SQ_BIN/sandq-producer" results "prompt$round" --format jsonl | grep '"slow"')"
done
echo "store_prompt: fast results stored while a slow task ran, 3 rounds"
