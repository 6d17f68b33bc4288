#!/bin/sh
# bench/agent.sh BUILD_DIR: one AutoGen block's round trip. Against one real
# redis-server and one idle `sandq-worker serve` with default settings, in
# one run, each SQ_BENCH_AGENT_N (200) times, one after the other:
#  1. local:     `python3 -c 'print(1)'` as a subprocess (what AutoGen's
#                local command-line executor does per block, without a jail);
#  2. task:      {"code": "print(1)"} pushed with the Python client, its
#                result awaited on the batch's completion event (BLPOP): the
#                queue, the claim, a warm jail run and the store;
#  3. block:     the same one-line block through SandqLegacyCodeExecutor
#                (clients/python/sandq/autogen.py): task 2 plus workspace.py
#                (files in, new and changed files back, scratch cleared) and
#                work_dir's round trip.
# p50 and p99 of each, and the stages from the results' own timings
# (queue_ms, exec_ms) so what is above the jail's own cost is named.
# Target: block p50 ≤ 15 ms.
set -eu
. "$(dirname "$0")/lib/init.sh"
[ -x "$SQ_BIN/sandq-worker" ] || sq_fail "$SQ_BIN/sandq-worker is missing: build first (make build)"
[ "$(id -u)" -eq 0 ] || sq_fail "agent.sh: run as root (the worker's warm pool needs namespaces)"
PY=/usr/bin/python3
$PY -c 'import redis, bson; redis.Redis.fcall' 2>/dev/null || sq_fail "python3-redis (>= 4.1) and python3-bson are needed"
sq_start_redis
unset SANDQ_LLM_BASE_URL
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
sq_bg w1 "$SQ_BIN/sandq-worker" serve --worker-id bench-agent --log-level warn
sq_wait_for "grep -q 'ready in' '$SQ_TMP/w1.log'" 30 || sq_wait_for "redis-cli -p $SQ_REDIS_PORT FUNCTION LIST | grep -q sq1_claim" 30 ||
  { cat "$SQ_TMP/w1.log" >&2; sq_fail "the worker did not start"; }
N=${SQ_BENCH_AGENT_N:-200}
echo "agent: $N rounds each, load $(bench_load)"
out=$(PYTHONPATH="$SQ_SRC/clients/python" SANDQ_REDIS_URL="$SANDQ_REDIS_URL" timeout 900 $PY - "$N" <<'PYEOF'
import subprocess, sys, threading, time
import bson
import sandq
from sandq.autogen import CodeBlock, SandqLegacyCodeExecutor, _Runner

n = int(sys.argv[1])
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]

local = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(["/usr/bin/python3", "-c", "print(1)"], check=True, capture_output=True)
    local.append((time.perf_counter() - t) * 1000)

c = sandq.Client(__import__("os").environ["SANDQ_REDIS_URL"])
task, tq, te = [], [], []
for i in range(n + 5):
    t = time.perf_counter()
    b = "bt-%d" % i
    c.push([{"id": "t", "code": "print(1)"}], batch=b)
    c._redis.blpop([c._p + "done:" + b], timeout=30)
    res = bson.BSON(c._redis.hget(c._p + "results:" + b, "t")).decode()
    if i >= 5:  # the first runs start the pool
        task.append((time.perf_counter() - t) * 1000)
        tq.append(res["timings"]["queue_ms"]); te.append(res["timings"]["exec_ms"])
    assert res["status"] == "ok", res

ex = SandqLegacyCodeExecutor(__import__("os").environ["SANDQ_REDIS_URL"], timeout=10)
block, be = [], []
orig = ex._r.take_result
def keep(res):
    be.append(res["timings"]["exec_ms"])
    return orig(res)
ex._r.take_result = keep
for i in range(n):
    t = time.perf_counter()
    r = ex.execute_code_blocks([CodeBlock(code="print(1)", language="python")])
    block.append((time.perf_counter() - t) * 1000)
    assert (r.exit_code, r.output) == (0, "1\n"), r
ex.close()
print("local %.1f %.1f" % (pct(local, 50), pct(local, 99)))
print("task %.1f %.1f %d %d" % (pct(task, 50), pct(task, 99), pct(tq, 50), pct(te, 50)))
print("block %.1f %.1f %d" % (pct(block, 50), pct(block, 99), pct(be, 50)))
PYEOF
) || sq_fail "the rounds failed"
echo "$out" | while read -r what p50 p99 rest; do
  case $what in
    local) echo "  local python3 -c:        p50 $p50 ms  p99 $p99 ms" ;;
    task) set -- $rest; echo "  sandq task (print(1)):   p50 $p50 ms  p99 $p99 ms  (its queue_ms p50 $1, exec_ms p50 $2)" ;;
    block) echo "  sandq block (autogen):   p50 $p50 ms  p99 $p99 ms  (its exec_ms p50 $rest)" ;;
  esac
done
lp50=$(echo "$out" | awk '$1 == "local" { print $2 }')
bp50=$(echo "$out" | awk '$1 == "block" { print $2 }')
bp99=$(echo "$out" | awk '$1 == "block" { print $3 }')
ratio=$(awk -v b="$bp50" -v l="$lp50" 'BEGIN { printf "%.2f", b / l }')
met=no; bench_ge 15 "$bp50" && met=yes
bench_target "one AutoGen block, round trip p50 (1 idle worker)" "$bp50 ms (p99 $bp99; ${ratio}x local python3 -c $lp50 ms)" \
  "≤ 15 ms" "$met" "the warm run with workspace.py (exec_ms above), then the queue's round trips"
