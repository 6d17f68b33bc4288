#!/bin/sh
# bench/api.sh BUILD_DIR: `sandq-producer api` (docs/api.md) against the
# queue it fronts, in one run against one real redis-server and two
# `sandq-worker serve` with default settings:
#  1. idle: SQ_BENCH_API_IDLE_N (200) trivial Python /run_code requests one
#     after the other on one keep-alive connection (GET /v1/ping beside it:
#     the HTTP floor); p50 and p99 of the round trip;
#  2. direct: SQ_BENCH_API_N (3000) {"code": "print(1)"} tasks pushed
#     through Redis by `sandq-producer push --wait`, timed as bench/queue.sh
#     times it;
#  3. api: the same number of {"code": "print(1)", "language": "python"}
#     /run_code requests from 64 concurrent clients (64 keep-alive
#     connections driven by one python3 thread, bench/api_load.py events,
#     loopback only), every answer checked (200, Success, stdout "1\n");
#     requests/s, p50 and p99;
#  4. api, threads: the same from 64 python3 threads of blocking
#     http.client (verl's own way), for comparison: their GIL and switches
#     cost more CPU on the cores the workers use;
#  5. compiled: SQ_BENCH_API_COMPILE_N (24) requests of one C++ program,
#     each with its own stdin, 8 at a time (verl sends one request per test
#     case with the same code): how many compiled, how many the workers'
#     compile cache answered (compiles avoided), p50 of each.
# Steps 2 to 4 alternate SQ_BENCH_API_REPS (2) times; each prints the CPU
# per task of redis-server, the workers and the front (push, or the API
# and its clients), and their sum: direct's sum ÷ the API's is the ratio
# the rates would have with the cores all theirs, which the machine's
# other load moves less than the rates. Targets (the API's): api (3.) ≥ 80 % of direct's rate;
# idle p50 ≤ 10 ms. Everything is bounded: N requests, 64 clients,
# `timeout` on each step. Run by hand, not by ctest.
set -eu
. "$(dirname "$0")/lib/init.sh"
for b in sandq-worker sandq-producer; do
  [ -x "$SQ_BIN/$b" ] || sq_fail "$SQ_BIN/$b is missing: build first (make build)"
done
[ "$(id -u)" -eq 0 ] || sq_fail "api.sh: run as root (the workers' warm pools need namespaces)"
PY=/usr/bin/python3
sq_start_redis
unset SANDQ_LLM_BASE_URL
N=${SQ_BENCH_API_N:-3000} IDLE_N=${SQ_BENCH_API_IDLE_N:-200} REPS=${SQ_BENCH_API_REPS:-2} CLIENTS=64
COMPILE_N=${SQ_BENCH_API_COMPILE_N:-24}
LOAD="$SQ_SRC/bench/api_load.py"
P="$SQ_BIN/sandq-producer"
for w in 1 2; do
  SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-$w" sq_bg "w$w" "$SQ_BIN/sandq-worker" serve --worker-id "bench-api-$w"
done
for w in 1 2; do
  sq_wait_for "grep -q 'ready in' '$SQ_TMP/w$w.log'" 60 || { cat "$SQ_TMP/w$w.log" >&2; sq_fail "worker $w did not start"; }
done
PORT=$(sq_free_port)
# the access log stays on (info), as a deployment has it; into a file
sq_bg api "$P" api --listen "127.0.0.1:$PORT" --max-in-flight 256
sq_wait_for "curl -sf http://127.0.0.1:$PORT/v1/ping" 30 || { cat "$SQ_TMP/api.log" >&2; sq_fail "the API did not come up"; }
echo "$(date -u +%FT%TZ) $(nproc) cores, load $(bench_load), $N tasks, $CLIENTS clients, 2 default workers"

echo "== 1. idle: $IDLE_N /run_code print(1), one at a time"
idle=$(timeout 300 $PY - "$PORT" "$IDLE_N" <<'PYEOF'
import http.client, json, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
body = json.dumps({"code": "print(1)", "language": "python"})
ping, run = [], []
for i in range(n + 10):
    t = time.perf_counter()
    c.request("GET", "/v1/ping")
    assert c.getresponse().read() == b'"pong"'
    t1 = time.perf_counter()
    c.request("POST", "/run_code", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    a = json.loads(r.read())
    t2 = time.perf_counter()
    assert r.status == 200 and a["status"] == "Success" and a["run_result"]["stdout"] == "1\n", a
    if i >= 10:  # the first ones warm the pools
        ping.append((t1 - t) * 1000)
        run.append((t2 - t1) * 1000)
print("%.2f %.2f %.3f %.3f" % (pct(run, 50), pct(run, 99), pct(ping, 50), pct(ping, 99)))
PYEOF
) || sq_fail "the idle round trips failed"
set -- $idle
idle_p50=$1 idle_p99=$2
echo "idle /run_code round trip: p50 $1 ms, p99 $2 ms (GET /v1/ping: p50 $3 ms, p99 $4 ms)"

awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"t%06d\",\"code\":\"print(1)\"}\n", i }' >"$SQ_TMP/tasks.jsonl"
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) }'; }

# CPU per task, in ms: cpu_snap prints the ticks of redis-server and of
# both workers' trees; ms_per TICKS turns ticks over N tasks into ms each.
cpu_snap() { echo "$(bench_ticks "$SQ_PID_redis") $(($(bench_tree_ticks "$SQ_PID_w1") + $(bench_tree_ticks "$SQ_PID_w2")))"; }
ms_per() { awk -v t="$1" -v hz="$BENCH_HZ" -v n="$N" 'BEGIN { printf "%.3f", t * 1000 / hz / n }'; }

direct() { # sets $D, and $DCPU: the CPU per task of every process
  set -- "$1" $(cpu_snap)
  t0=$(date +%s.%N)
  # the push's own CPU: the ticks its shell reaped, written to push.ticks
  timeout 300 sh -c 'f=$1; shift; "$@"; rc=$?; awk "{ print \$16 + \$17 }" /proc/$$/stat >"$f"; exit $rc' \
    sh "$SQ_TMP/push.ticks" "$P" push --batch "direct-$1" --wait --timeout-s 240 "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/direct.out" 2>&1 ||
    { tail -20 "$SQ_TMP/direct.out" >&2; sq_fail "direct: the batch did not complete"; }
  t1=$(date +%s.%N)
  set -- "$@" $(cpu_snap)
  grep -Eq "^ *ok +$N\$" "$SQ_TMP/direct.out" || { tail -12 "$SQ_TMP/direct.out" >&2; sq_fail "direct: not every task ended ok"; }
  D=$(rate "$N" "$t0" "$t1")
  push=$(cat "$SQ_TMP/push.ticks") redis=$(($4 - $2)) workers=$(($5 - $3))
  DCPU=$(ms_per $((push + redis + workers)))
  echo "direct (push --wait): $N tasks, $D tasks/s; CPU per task: push $(ms_per "$push") ms," \
    "redis-server $(ms_per "$redis") ms, the workers $(ms_per "$workers") ms; every process $DCPU ms"
}

api() { # $1: events or threads; sets $A, $A50, $A99, and $ACPU: the CPU per request of every process
  mode=$1
  set -- $(cpu_snap) "$(bench_tree_ticks "$SQ_PID_api")"
  out=$(timeout 300 $PY "$LOAD" "$mode" "$PORT" "$N" "$CLIENTS") ||
    { tail -20 "$SQ_TMP/api.log" >&2; sq_fail "api: the clients failed"; }
  set -- "$@" $(cpu_snap) "$(bench_tree_ticks "$SQ_PID_api")"
  redis=$(($4 - $1)) workers=$(($5 - $2)) front=$(($6 - $3))
  set -- $out
  A=$1 A50=$2 A99=$3
  ACPU=$(awk -v t="$(ms_per $((redis + workers + front)))" -v c="$4" 'BEGIN { printf "%.3f", t + c }')
  echo "api ($CLIENTS clients, $mode): $N requests, $A requests/s, p50 $A50 ms, p99 $A99 ms;" \
    "CPU per request: the clients $4 ms, the API $(ms_per "$front") ms, redis-server $(ms_per "$redis") ms," \
    "the workers $(ms_per "$workers") ms; every process $ACPU ms (direct's ÷ this: $(cpu_pct) %)"
}
cpu_pct() { awk -v a="$ACPU" -v d="$DCPU" 'BEGIN { printf "%.0f", 100 * d / a }'; }

best_d=0 best_a=0 best_t=0 ratios="" cpu_ratios=""
r=1
while [ "$r" -le "$REPS" ]; do
  echo "== round $r of $REPS (load $(bench_load))"
  direct "$r"
  api events
  ratios="$ratios $(awk -v a="$A" -v d="$D" 'BEGIN { printf "%.0f%%", 100 * a / d }')"
  cpu_ratios="$cpu_ratios $(cpu_pct)%"
  bench_ge "$D" "$best_d" && best_d=$D
  bench_ge "$A" "$best_a" && { best_a=$A; best_50=$A50; best_99=$A99; }
  api threads
  bench_ge "$A" "$best_t" && best_t=$A
  r=$((r + 1))
done
pct=$(awk -v a="$best_a" -v d="$best_d" 'BEGIN { printf "%.0f", 100 * a / d }')
pct_t=$(awk -v a="$best_t" -v d="$best_d" 'BEGIN { printf "%.0f", 100 * a / d }')
echo "api ÷ direct, round by round:$ratios; best of each: $pct % (threads: $pct_t %)"
# What the rates would be if the two cores were all theirs: direct's CPU per
# task (every process) ÷ the API's. The machine's other load moves it less.
echo "direct's CPU per task ÷ the API's (events), round by round:$cpu_ratios"

echo "== 5. compiled: $COMPILE_N requests of one C++ program, one stdin each, 8 at a time"
if command -v g++ >/dev/null; then
  out=$(timeout 600 $PY "$LOAD" compile "$PORT" "$COMPILE_N" cpp) ||
    { tail -20 "$SQ_TMP/api.log" >&2; sq_fail "compiled: the requests failed"; }
  set -- $out
  echo "compiled: $1 requests, $2 compiled, $3 from the compile cache ($3 compiles avoided);" \
    "p50 $4 ms compiled, $5 ms cached"
else
  echo "compiled: SKIP, g++ is not installed"
fi

met=no; bench_ge "$pct" 80 && met=yes
bench_target "api, $CLIENTS clients ÷ direct push (best of $REPS each)" \
  "$pct % ($best_a vs $best_d tasks/s; api p50 $best_50 ms, p99 $best_99 ms; 64 threads: $pct_t %; CPU per task, direct's ÷ the API's:$cpu_ratios; load $(bench_load))" \
  "≥ 80 %" "$met" \
  "the workers: both sides run the same jailed tasks on the same cores, the API and its clients beside them"
met=no; bench_ge 10 "$idle_p50" && met=yes
bench_target "api, one idle /run_code print(1), round trip" "p50 $idle_p50 ms, p99 $idle_p99 ms" "p50 ≤ 10 ms" "$met" \
  "the queue's round trips and a warm jail run"
