#!/bin/sh
# idle_cpu.sh: a worker whose tasks come one at a time waits for them; it
# does not spin. One real worker with default settings; 20 trivial tasks,
# each pushed once the one before has its result, 50 ms apart, then a
# second of nothing. The worker process's own CPU time (all its threads;
# its zygotes and their tasks are other processes) must stay far below
# what spinning costs: the worker used to loop on the clock, without
# waiting, for up to 20 ms each time its last task ended within 20 ms of
# finding the queue empty (worker/loop.c, claim_more), about 360 ms of CPU
# for these 20 tasks against some 20 ms of real work.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ "$(id -u)" -eq 0 ] || sq_skip "the worker's warm pool needs root (namespaces, cgroups)"
[ -x /usr/bin/python3 ] || sq_skip "/usr/bin/python3 is not installed"
sq_start_redis
unset SANDQ_LLM_BASE_URL
SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" sq_bg w "$SQ_BIN/sandq-worker" serve --worker-id idle --log-level info
sq_wait_for "grep -q 'ready in' $SQ_TMP/w.log" 30 || { cat "$SQ_TMP/w.log" >&2; sq_fail "the worker never got ready"; }
wpid=$SQ_PID_w
# utime + stime of the worker process (every thread), in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$wpid/stat"; }
hz=$(getconf CLK_TCK)
sleep 0.3 # the pool's start is not what this measures
t0=$(ticks)
i=0
while [ $i -lt 20 ]; do
  printf '{"id":"t%02d","code":"x = %d * 2"}\n' $i $i >"$SQ_TMP/t.jsonl"
  "$SQ_BIN/sandq-producer" push --batch "idle-$i" --wait --timeout-s 30 "$SQ_TMP/t.jsonl" >"$SQ_TMP/p.out" 2>&1 ||
    { cat "$SQ_TMP/p.out" >&2; sq_fail "task $i did not complete"; }
  grep -Eq '^ *ok +1$' "$SQ_TMP/p.out" || { cat "$SQ_TMP/p.out" >&2; sq_fail "task $i did not end ok"; }
  sleep 0.05
  i=$((i + 1))
done
sleep 1
t1=$(ticks)
ms=$(( (t1 - t0) * 1000 / hz ))
echo "the worker's own CPU for 20 tasks one at a time and a second idle: $ms ms"
[ "$ms" -le 150 ] || sq_fail "the worker used $ms ms of CPU waiting for 20 tasks (spinning, not waiting?)"
echo "PASS"
