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
#     /run_code requests from 64 concurrent clients (python3 threads, one
#     http.client keep-alive connection each, loopback only), every answer
#     checked (200, Success, stdout "1\n"); requests/s, p50 and p99.
# Steps 2 and 3 alternate SQ_BENCH_API_REPS (2) times. Targets (the API's):
# api ≥ 80 % of direct's rate; idle p50 ≤ 10 ms. Everything is bounded:
# N requests, 64 clients, `timeout` on each step. Run by hand, not by ctest.
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

direct() { # sets $D
  t0=$(date +%s.%N)
  timeout 300 "$P" push --batch "direct-$1" --wait --timeout-s 240 "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/direct.out" 2>&1 ||
    { tail -20 "$SQ_TMP/direct.out" >&2; sq_fail "direct: the batch did not complete"; }
  t1=$(date +%s.%N)
  grep -Eq "^ *ok +$N\$" "$SQ_TMP/direct.out" || { tail -12 "$SQ_TMP/direct.out" >&2; sq_fail "direct: not every task ended ok"; }
  D=$(rate "$N" "$t0" "$t1")
  echo "direct (push --wait): $N tasks, $D tasks/s"
}

api() { # sets $A, $A50, $A99
  k0=$(bench_tree_ticks "$SQ_PID_api")
  out=$(timeout 300 $PY - "$PORT" "$N" "$CLIENTS" <<'PYEOF'
import http.client, json, sys, threading, time
port, n, clients = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
body = json.dumps({"code": "print(1)", "language": "python"})
lock = threading.Lock()
left = [n]
lat, bad = [], []
start = threading.Barrier(clients + 1)
def client():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.connect()
    start.wait()
    mine = []
    while True:
        with lock:
            if left[0] == 0:
                break
            left[0] -= 1
        t = time.perf_counter()
        c.request("POST", "/run_code", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        a = r.read()
        mine.append((time.perf_counter() - t) * 1000)
        if r.status != 200 or b'"status":"Success"' not in a or b'"stdout":"1\\n"' not in a:
            bad.append((r.status, a[:200]))
    with lock:
        lat.extend(mine)
ts = [threading.Thread(target=client) for _ in range(clients)]
for t in ts:
    t.start()
start.wait()
t0 = time.perf_counter()
for t in ts:
    t.join()
secs = time.perf_counter() - t0
assert not bad and len(lat) == n, (len(bad), bad[:3], len(lat))
lat.sort()
import resource
ru = resource.getrusage(resource.RUSAGE_SELF)
print("%.1f %.1f %.1f %.3f" % (n / secs, lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))],
                               (ru.ru_utime + ru.ru_stime) * 1000 / n))
PYEOF
  ) || { tail -20 "$SQ_TMP/api.log" >&2; sq_fail "api: the clients failed"; }
  k1=$(bench_tree_ticks "$SQ_PID_api")
  set -- $out
  A=$1 A50=$2 A99=$3
  api_ms=$(awk -v t="$((k1 - k0))" -v hz="$(getconf CLK_TCK)" -v n="$N" 'BEGIN { printf "%.3f", t * 1000 / hz / n }')
  echo "api ($CLIENTS clients): $N requests, $A requests/s, p50 $A50 ms, p99 $A99 ms;" \
    "CPU per request: the clients $4 ms, the API $api_ms ms"
}

best_d=0 best_a=0
r=1
while [ "$r" -le "$REPS" ]; do
  echo "== round $r of $REPS (load $(bench_load))"
  direct "$r"
  api
  bench_ge "$D" "$best_d" && best_d=$D
  bench_ge "$A" "$best_a" && { best_a=$A; best_50=$A50; best_99=$A99; }
  r=$((r + 1))
done
pct=$(awk -v a="$best_a" -v d="$best_d" 'BEGIN { printf "%.0f", 100 * a / d }')
met=no; bench_ge "$pct" 80 && met=yes
bench_target "api, $CLIENTS clients ÷ direct push (best of $REPS each)" \
  "$pct % ($best_a vs $best_d tasks/s; api p50 $best_50 ms, p99 $best_99 ms; load $(bench_load))" "≥ 80 %" "$met" \
  "the workers: both sides run the same jailed tasks on the same cores, the API and its 64 client threads beside them"
met=no; bench_ge 10 "$idle_p50" && met=yes
bench_target "api, one idle /run_code print(1), round trip" "p50 $idle_p50 ms, p99 $idle_p99 ms" "p50 ≤ 10 ms" "$met" \
  "the queue's round trips and a warm jail run"
