#!/bin/sh
# bench/queue.sh BUILD_DIR: the queue's benchmark, side by side in
# one run against one real redis-server (no persistence):
#  1. queue only, library level: queue_bench, 2 consumers, claims of 1 and 50
#     per round trip, completions pipelined as deep (leases and fencing on)
#  2. queue only, through two real `sandq-worker serve` processes, execution
#     stubbed (SANDQ_TEST_HOOKS=1 SANDQ_TEST_EXEC=noop)
#  3. end to end: jailed print(1) tasks through two `sandq-worker serve`
#     with default settings (sizing derived from the host), jail_mode warm,
#     then spawn for reference
#  4. the same jailed tasks through python3-rq: two `rq worker`s
#     (SimpleWorker, then the default forking Worker), each job running the
#     program through the same jail, one `sandq-worker run --mode spawn FILE`
#     process per job (bench/rq_job.py)
# Sizes: SQ_BENCH_QN (noop, 20000), SQ_BENCH_WARM_N (3000), SQ_BENCH_SPAWN_N
# (500), SQ_BENCH_RQ_N (500). Worker settings: SQ_BENCH_WORKER_JSON (config
# keys merged into the workers' file; default none: the derived sizing).
# Target: sandq warm ≥ 15x the best RQ worker. Any step that fails stops
# the script with a message and a non-zero exit.
set -eu
. "$(dirname "$0")/lib/init.sh"
for b in queue_bench sandq-worker sandq-producer; do
  [ -x "$SQ_BIN/$b" ] || sq_fail "$SQ_BIN/$b is missing: build first (make build)"
done
sq_start_redis
export SANDQ_LOG_LEVEL=warn
U=$SANDQ_REDIS_URL
QN=${SQ_BENCH_QN:-20000} WN=${SQ_BENCH_WARM_N:-3000} SN=${SQ_BENCH_SPAWN_N:-500} RN=${SQ_BENCH_RQ_N:-500}
TUNE=${SQ_BENCH_WORKER_JSON:-}

rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
tasks() { # tasks FILE N: N tasks whose code is print(1)
  awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"t%06d\",\"code\":\"print(1)\"}\n", i }' >"$1"
}

echo "$(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"

echo "== 1. queue only, library level (queue_bench), 50000 tasks, 2 consumers"
for b in 1 50; do
  sq_redis_cli FLUSHALL >/dev/null
  timeout 120 "$SQ_BIN/queue_bench" "$U" 50000 2 $b || sq_fail "queue_bench (claim batch $b) failed"
done

# sandq NAME N MODE [ENV...]: two `sandq-worker serve` (own scratch roots),
# N tasks pushed and waited for; prints the rate, sets $R. Fails unless every
# task ended ok.
sandq() {
  name=$1 n=$2 mode=$3; shift 3
  sq_redis_cli FLUSHALL >/dev/null
  tasks "$SQ_TMP/$name.jsonl" "$n"
  printf '{"jail_mode": "%s"%s}\n' "$mode" "${TUNE:+, $TUNE}" >"$SQ_TMP/$name.json"
  pids=""
  for i in 1 2; do
    env "$@" SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-$name-$i" "$SQ_BIN/sandq-worker" serve \
      --config "$SQ_TMP/$name.json" --worker-id "$name-$i" >"$SQ_TMP/$name-$i.log" 2>&1 &
    pids="$pids $!"; SQ_PIDS="$SQ_PIDS $!"
  done
  sleep 1 # warm pools up, workers blocked on the queue
  for p in $pids; do kill -0 "$p" 2>/dev/null || { cat "$SQ_TMP/$name-"*.log >&2; sq_fail "$name: a worker died at start"; }; done
  t0=$(date +%s.%N)
  timeout 300 "$SQ_BIN/sandq-producer" push --batch "$name" --wait --timeout-s 240 "$SQ_TMP/$name.jsonl" \
    >"$SQ_TMP/$name.out" 2>&1 || { tail -20 "$SQ_TMP/$name.out" "$SQ_TMP/$name-1.log" >&2; sq_fail "$name: the batch did not complete"; }
  t1=$(date +%s.%N)
  kill -TERM $pids; wait $pids 2>/dev/null || true
  grep -Eq "^ *ok +$n\$" "$SQ_TMP/$name.out" || { tail -12 "$SQ_TMP/$name.out" >&2; sq_fail "$name: not every task ended ok"; }
  R=$(rate "$n" "$t0" "$t1")
  echo "sandq $name: $n tasks, $R tasks/s"
}

echo "== 2. queue only, 2 sandq-worker serve, execution stubbed, $QN tasks (${TUNE:-derived sizing})"
sandq noop "$QN" spawn SANDQ_TEST_HOOKS=1 SANDQ_TEST_EXEC=noop

echo "== 3. end to end, 2 sandq-worker serve, jailed print(1)"
sandq warm "$WN" warm; warm=$R
sandq spawn "$SN" spawn; spawn=$R

echo "== 4. the same through python3-rq $(/usr/bin/python3 -c 'import rq; print(rq.__version__)' 2>/dev/null || echo missing), 2 rq workers, one \`sandq-worker run --mode spawn\` per job"
/usr/bin/python3 -c 'import rq' 2>/dev/null || sq_fail "python3-rq is missing: SANDQ_WITH_BENCH=1 scripts/install-deps.sh"
rq_run() { # rq_run CLASS: sets $R
  sq_redis_cli FLUSHALL >/dev/null
  pids=""
  for i in 1 2; do
    SANDQ_BENCH_WORKER="$SQ_BIN/sandq-worker" SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-rq-$i" \
      /usr/bin/python3 -m rq.cli worker -u "$U" -w "$1" -P "$SQ_SRC/bench" -n "rq-$i" sq >"$SQ_TMP/rq-$i.log" 2>&1 &
    pids="$pids $!"; SQ_PIDS="$SQ_PIDS $!"
  done
  R=$(timeout 300 /usr/bin/python3 "$SQ_SRC/bench/rq_job.py" "$U" "$RN" 2 240) \
    || { tail -20 "$SQ_TMP/rq-1.log" >&2; sq_fail "rq ($1) did not complete"; }
  kill -TERM $pids; wait $pids 2>/dev/null || true
  echo "rq $1: $RN jobs, $R jobs/s"
}
rq_run rq.worker.SimpleWorker; rq_simple=$R
rq_run rq.worker.Worker; rq_fork=$R
best=$(awk -v a="$rq_simple" -v b="$rq_fork" 'BEGIN { print (a > b ? a : b) }')

echo "== summary"
echo "sandq warm / best rq: $(ratio "$warm" "$best")x  (sandq warm $warm, rq SimpleWorker $rq_simple, rq Worker $rq_fork tasks/s)"
echo "sandq spawn / best rq: $(ratio "$spawn" "$best")x  (the same jail per task on both sides)"
x=$(ratio "$warm" "$best")
if bench_ge "$x" 15; then met=yes; else met=no; fi
bench_target "sandq warm (two workers, defaults) / best python3-rq worker, the same jail" "${x}x ($warm vs $best tasks/s)" \
  "≥ 15x" $met "RQ: one \`sandq-worker run --mode spawn\` process per job (a fresh interpreter in a fresh jail); sandq: the warm jail's CPU (bench/e2e.sh splits it)"
