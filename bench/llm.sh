#!/bin/sh
# llm.sh BUILD_DIR: one worker process against the fake LLM answering after
# 1 s, side by side in one run: up to 500 tasks in flight vs the same worker
# limited to one (max_tasks_in_flight=1). Prints tasks/s and the worker's
# peak RSS (VmHWM) per scenario:
#   full      prompt -> code -> jail run (risk off): the whole path
#   full-warm the same with jail_mode "warm" (forks from pre-started zygotes)
#   risk      prompt -> code -> risk verdict "block" (2 LLM calls, no jail run)
#   llm-only  prompt -> a reply without code -> llm_error (1 LLM call, no jail run)
#   serial    the "full" tasks with max_tasks_in_flight=1
#   serial-warm the same with jail_mode "warm"
# Sizes: SQ_BENCH_N tasks (default 1500) for "full", twice that for the
# others (so the 1 s ramp weighs less), 8 for serial. SQ_BENCH_ONLY="full risk"
# runs only the scenarios named. Every scenario checks that each task ended
# with the status it should (ok, blocked, llm_error) and fails loudly if not.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
export SQ_BIN="$BUILD/bin" SQ_SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
N=${SQ_BENCH_N:-1500}
cat >"$SQ_TMP/replies.jsonl" <<'R'
{"match": "[full]", "content": "```python\nprint({{n}})\n```"}
{"match": "[risk]", "content": "```python\nprint({{n}})\n```"}
{"match": "print(", "kind": "risk", "content": "{\"level\": \"high\", \"reason\": \"bench\", \"action\": \"block\", \"confidence\": 1}"}
{"match": "[llm-only]", "content": ""}
R
sq_start_redis
SQ_FAKE_LLM_ARGS="--latency-ms 1000 --seed 1" sq_start_fake_llm "$SQ_TMP/replies.jsonl"
ulimit -n 65536 2>/dev/null || true

run() { # run NAME RISK IN_FLIGHT N TAG STATUS [JAIL_MODE]
  name=$1 risk=$2 inflight=$3 n=$4 tag=$5 want=$6 mode=${7:-spawn}
  case " ${SQ_BENCH_ONLY:-$name} " in *" $name "*) ;; *) return 0 ;; esac
  cat >"$SQ_TMP/$name.json" <<JSON
{"providers": [{"name": "fake", "base_url": "$SANDQ_LLM_BASE_URL", "model": "fake-coder",
  "price_in_usd_per_mtok": 0.15, "price_out_usd_per_mtok": 0.6, "timeout_ms": 30000,
  "max_retries": 2, "max_in_flight": 500}],
 "max_tasks_in_flight": $inflight, "jail_threads": 4, "jail_pool_size": 4, "risk": "$risk", "log_level": "warn", "jail_mode": "$mode",
 "scratch_root": "$SQ_TMP/scratch-$name", "queue": "$name"}
JSON
  i=0; : >"$SQ_TMP/$name.jsonl"
  while [ $i -lt "$n" ]; do echo "{\"id\": \"t$i\", \"prompt\": \"$tag task $i\"}"; i=$((i + 1)); done >"$SQ_TMP/$name.jsonl"
  env -u SANDQ_LLM_BASE_URL "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/$name.json" --worker-id "bench-$name" \
    >"$SQ_TMP/$name.log" 2>&1 &
  wpid=$!; SQ_PIDS="$SQ_PIDS $wpid"
  sleep 1 # the warm pool starts
  kill -0 "$wpid" 2>/dev/null || { tail -20 "$SQ_TMP/$name.log" >&2; sq_fail "$name: the worker died at start"; }
  t0=$(date +%s.%N)
  timeout 330 "$SQ_BIN/sandq-producer" push --queue "$name" --batch "$name" --wait --timeout-s 300 "$SQ_TMP/$name.jsonl" \
    >"$SQ_TMP/$name.out" 2>&1 || { tail -15 "$SQ_TMP/$name.out" "$SQ_TMP/$name.log" >&2; sq_fail "$name: the batch did not complete"; }
  t1=$(date +%s.%N)
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$wpid/status" 2>/dev/null || echo 0)
  [ "$hwm" != 0 ] || { tail -20 "$SQ_TMP/$name.log" >&2; sq_fail "$name: the worker is gone"; }
  kill -TERM "$wpid"; wait "$wpid" 2>/dev/null || true
  grep -Eq "^ *$want +$n\$" "$SQ_TMP/$name.out" || { tail -12 "$SQ_TMP/$name.out" >&2; sq_fail "$name: not every task ended $want"; }
  statuses=$(awk 'NF == 2 && $2 ~ /^[0-9]+$/ && $1 ~ /^[a-z_]+$/ && $1 != "total" && $1 != "done" {printf "%s=%s ", $1, $2}' "$SQ_TMP/$name.out")
  awk -v n="$n" -v t0="$t0" -v t1="$t1" -v hwm="$hwm" -v name="$name" -v inflight="$inflight" -v st="$statuses" \
    'BEGIN { printf "%-9s in_flight=%-4s tasks=%-5d %7.1f s %8.1f tasks/s  peak RSS %6.1f MiB  %s\n", name, inflight, n, t1 - t0, n / (t1 - t0), hwm / 1024, st }'
  awk -v n="$n" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f\n", n / (t1 - t0) }' >"$SQ_TMP/$name.rate"
}

ratio() { # ratio A B: A's rate over B's, when both ran
  [ -s "$SQ_TMP/$1.rate" ] && [ -s "$SQ_TMP/$2.rate" ] || return 0
  echo "$1 / $2: $(awk -v a="$(cat "$SQ_TMP/$1.rate")" -v b="$(cat "$SQ_TMP/$2.rate")" 'BEGIN { printf "%.0f", a / b }')x"
}

echo "one worker, fake LLM latency 1000 ms, $(nproc) cores"
run full off 500 "$N" "[full]" ok
run full-warm off 500 "$N" "[full]" ok warm
run risk generated 500 $((N * 2)) "[risk]" blocked
run llm-only off 500 $((N * 2)) "[llm-only]" llm_error
run serial off 1 8 "[full]" ok
run serial-warm off 1 8 "[full]" ok warm
ratio full-warm serial-warm
ratio full serial
