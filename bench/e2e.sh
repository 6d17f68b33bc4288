#!/bin/sh
# bench/e2e.sh BUILD_DIR: what a new user meets. Side by side, in
# one run, against one real redis-server:
#  1. bare `python3 -I -S -c` spawned two at a time, the trivial task each;
#  2. two `sandq-worker serve` with default settings (no config file: the
#     sizing is derived from the host), SQ_BENCH_E2E_N trivial tasks
#     (`x = i * 2`) pushed right after the workers start, timed from their
#     start to the producer's --wait seeing the last result; every result ok;
#     each worker's start-up from its log: "ready in N ms" (claiming, a warm
#     zygote up) and "warm pool: ... up in M ms" (every zygote the batch needs up: the lean ones;
#     the full ones start with the first task that imports, none here);
#     and the run's shape from its results' finish times: the first and the
#     last result, the producer's exit, the steady rate between the 10th
#     and the 90th percentile (what the start and the end of a batch cost);
#  3. CPU per task: a second batch through the same, now warm, workers, the
#     CPU of every process summed (the workers' trees: the worker itself, the
#     jail's inits, the warm zygotes and the tasks they fork; redis-server;
#     the producer), split by process so the bounding stage is named.
# Targets: end to end ≥ 7x bare, ≤ 1.0 ms CPU per task, ready ≤ 300 ms.
#  1b. the floor under any warm design: python3 -I -S forking a child per
#     task that compiles, runs and exits (no jail, no queue): its CPU per
#     task, and the tasks/s it reaches by the clock, one loop on one core and
#     one loop per core side by side (each pinned): the better of the two is
#     the most any fork-per-task design reaches here, printed beside the
#     ratio with how much of it 7x bare asks. Measured, not cores / CPU: on
#     some virtual machines page-table work does not scale across cores.
#  1c. context for both: bare python3 and the floor again with python's
#     files in large pages, as sandq's runs map them (jail_interp.c): how
#     much of the lead is the page cache's shape (not a target).
#  4. the same floor as wide as the pool: as many loops side by side as the
#     two workers keep runs in flight, beside the jail's own CPU per task
#     (each core then switches between several interpreters, as it does
#     between the jail's zygotes).
# Stages 1 and 2 run as SQ_BENCH_E2E_REPS (3) pairs, one after the other
# (bare, then sandq with freshly started workers), and the ratio is the
# median of the pairs' ratios, every pair printed: the machine is shared,
# and a pair measures both sides under about the same load.
# Sizes: SQ_BENCH_E2E_N (2000), SQ_BENCH_BARE_N (1000), SQ_BENCH_CPU_N (3000),
# SQ_BENCH_FLOOR_N (4000).
set -eu
. "$(dirname "$0")/lib/init.sh"
for b in sandq-worker sandq-producer; do
  [ -x "$SQ_BIN/$b" ] || sq_fail "$SQ_BIN/$b is missing: build first (make build)"
done
[ "$(id -u)" -eq 0 ] || sq_fail "e2e.sh: run as root (the workers' warm pools need namespaces)"
sq_start_redis
unset SANDQ_LLM_BASE_URL
EN=${SQ_BENCH_E2E_N:-2000} BN=${SQ_BENCH_BARE_N:-1000} CN=${SQ_BENCH_CPU_N:-3000} FN=${SQ_BENCH_FLOOR_N:-4000}
REPS=${SQ_BENCH_E2E_REPS:-3}
PY=/usr/bin/python3
tasks() { # tasks FILE N PREFIX
  awk -v n="$2" -v p="$3" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"%s%06d\",\"code\":\"x = %d * 2\"}\n", p, i, i }' >"$1"
}
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) }'; }
echo "$(date -u +%FT%TZ) $(nproc) cores, load $(bench_load)"

# 1. bare python3 -I -S, two at a time, BN trivial tasks: its tasks/s in bare.
bare_run() {
  t0=$(date +%s.%N)
  i=0; while [ $i -lt "$BN" ]; do echo $i; i=$((i + 1)); done |
    xargs -P2 -I{} $PY -I -S -c "x = {} * 2" || sq_fail "bare python failed"
  t1=$(date +%s.%N)
  bare=$(rate "$BN" "$t0" "$t1")
  echo "bare python3 -I -S: $BN tasks, $bare tasks/s"
}

# Context, not the target's comparison: the same bare run and the floor
# below with the interpreter's files in large pages, as sandq's runs map
# them (common/jail/jail_interp.c copies python and its shared objects into
# a huge=within_size tmpfs). Here in a mount namespace of the bench's own,
# each file copied into such a tmpfs and bound over its path: so the report
# can say how much of sandq's lead is the page cache's shape rather than
# the warm pool (docs/jail-performance.md, "The interpreter in large pages").
in_large_pages() { # in_large_pages CMD...: CMD with python's files in large pages
  SQ_PAGES_PARENT="$SQ_TMP" unshare -m sh -eu -c '
    mount --make-rprivate /
    d=$(mktemp -d "$SQ_PAGES_PARENT/pages.XXXXXX") # below the bench temp dir: removed with it
    mount -t tmpfs -o huge=within_size,size=256m sandq-bench-pages "$d"
    py=$(readlink -f "$0")
    for f in "$py" $(LD_TRACE_LOADED_OBJECTS=1 "$py" -I -S -c "" | sed -n "s/.*=> \(\/[^ ]*\) (0x.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p"); do
      r=$(readlink -f "$f"); n=$(echo "$r" | tr / _)
      cp "$r" "$d/$n" && mount --bind -o ro "$d/$n" "$r"
    done
    shift; exec "$@"' "$PY" -- "$@"
}

# The bare run again with python's files in large pages (timed inside the
# namespace, after the copies are made).
bare_lp_run() {
  bare_lp=$(in_large_pages sh -c '
    t0=$(date +%s.%N)
    i=0; while [ $i -lt "$1" ]; do echo $i; i=$((i + 1)); done | xargs -P2 -I{} "$2" -I -S -c "x = {} * 2" || exit 1
    t1=$(date +%s.%N)
    awk -v n="$1" -v a="$t0" -v b="$t1" "BEGIN { printf \"%.1f\", n / (b - a) }"' sh "$BN" "$PY") ||
    sq_fail "bare python in large pages failed"
  echo "bare python3 -I -S, python's files in large pages: $BN tasks, $bare_lp tasks/s"
}

# The floor under any warm design on this machine: a warm interpreter that
# forks one child per task, which compiles and runs it and exits; no jail,
# no queue, no result. Its CPU per task (the loop's and its children's) is
# the least a warm task costs here, and cores / that CPU the most tasks/s
# any warm design could reach. Context for the ratio, not a target: what
# 7x bare asks of it depends on how fork and exec compare on the machine.
echo "== 1b. the warm-fork floor: python3 -I -S forking a child per task (no jail, no queue), $FN tasks"
floor_py='import os, sys, resource
def cpu():
    return sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
def task(i):
    exec(compile("x = %d * 2\n" % i, "main.py", "exec"), {"__name__": "__main__"})
n = int(sys.argv[1])
task(0)  # warm, as any warm design is: the compiler set up once, not in every child
t0 = cpu()
for i in range(n):
    pid = os.fork()
    if pid == 0:
        task(i)
        os._exit(0)
    os.waitpid(pid, 0)
print("%.4f" % ((cpu() - t0) * 1000 / n))'
floor_ms=$($PY -I -S -c "$floor_py" "$FN") || sq_fail "the warm-fork floor loop failed"
echo "warm-fork floor: $floor_ms ms of CPU per task"
# floor_rate LOOPS: the floor's tasks/s by the clock, LOOPS loops side by
# side, loop k pinned to the k-th core this process may use (FN tasks in all).
cpus=$($PY -I -S -c 'import os; print(*sorted(os.sched_getaffinity(0)))')
floor_rate() {
  t0=$(date +%s.%N); k=0; fpids=""
  for cpu in $cpus; do
    [ $k -lt "$1" ] || break
    taskset -c "$cpu" $PY -I -S -c "$floor_py" $((FN / $1)) >/dev/null & fpids="$fpids $!"
    k=$((k + 1))
  done
  wait $fpids || sq_fail "the warm-fork floor loops failed"
  t1=$(date +%s.%N)
  rate $(($1 * (FN / $1))) "$t0" "$t1"
}
floor1=$(floor_rate 1)
floorn=$(floor_rate "$(nproc)")
floor=$(awk -v a="$floor1" -v b="$floorn" 'BEGIN { print (a > b ? a : b) }')
echo "warm-fork floor by the clock: one loop on one core $floor1 tasks/s, one loop per core ($(nproc)) $floorn tasks/s"
floor_lp_ms=$(in_large_pages $PY -I -S -c "$floor_py" "$FN") || sq_fail "the warm-fork floor in large pages failed"
echo "warm-fork floor with python's files in large pages: $floor_lp_ms ms of CPU per task"

# 2. two sandq-worker serve, default settings, EN trivial tasks pushed at
# start (batch e2e-R): e2e in tasks/s from the workers' start; the workers
# (wpids) keep running; ready: the later of their claiming and pool up.
e2e_run() {
tasks "$SQ_TMP/e2e.jsonl" "$EN" "e$1-"
t0=$(date +%s.%N)
wpids=""
for k in 1 2; do
  SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-$k" "$SQ_BIN/sandq-worker" serve --worker-id "e2e-$k" >"$SQ_TMP/w$k.log" 2>&1 &
  wpids="$wpids $!"; SQ_PIDS="$SQ_PIDS $!"
done
timeout 300 "$SQ_BIN/sandq-producer" push --batch "e2e-$1" --wait --timeout-s 240 "$SQ_TMP/e2e.jsonl" >"$SQ_TMP/e2e.out" 2>&1 ||
  { tail -20 "$SQ_TMP/e2e.out" "$SQ_TMP/w1.log" >&2; sq_fail "e2e: the batch did not complete"; }
t1=$(date +%s.%N)
grep -Eq "^ *ok +$EN\$" "$SQ_TMP/e2e.out" || { tail -12 "$SQ_TMP/e2e.out" >&2; sq_fail "e2e: not every task ended ok"; }
e2e=$(rate "$EN" "$t0" "$t1")
# Where the time went: the results' own finish times, against the
# workers' start (t0) and the producer's exit (t1): the first and the last
# result, and the steady rate between the 10th and the 90th percentile.
"$SQ_BIN/sandq-producer" results "e2e-$1" --format jsonl --out "$SQ_TMP/e2e-$1.jsonl" 2>/dev/null ||
  sq_fail "e2e: reading the results back failed"
shape=$($PY -I -S - "$SQ_TMP/e2e-$1.jsonl" "$t0" "$t1" <<'PY'
import sys, json, datetime
t0, t1 = float(sys.argv[2]), float(sys.argv[3])
def at(r):
    return datetime.datetime.fromisoformat(r["finished_at"]["$date"].replace("Z", "+00:00")).timestamp()
ts = sorted(at(json.loads(l)) for l in open(sys.argv[1]))
n = len(ts); a, b = ts[n // 10], ts[n * 9 // 10]
steady = (n * 9 // 10 - n // 10) / (b - a) if b > a else 0
print("%.1f %d %d %d" % (steady, (ts[0] - t0) * 1000, (ts[-1] - t0) * 1000, (t1 - ts[-1]) * 1000))
PY
) || sq_fail "e2e: the results' finish times could not be read"
steady=$(echo "$shape" | cut -d' ' -f1) first_ms=$(echo "$shape" | cut -d' ' -f2)
last_ms=$(echo "$shape" | cut -d' ' -f3) tail_ms=$(echo "$shape" | cut -d' ' -f4)
echo "its shape: the first result at $first_ms ms, the last at $last_ms ms, the producer's exit $tail_ms ms after it; between the 10th and the 90th percentile $steady tasks/s"
grep -h 'sizing:' "$SQ_TMP/w1.log" | sed 's/.*sizing:/sizing:/' | head -1
# ready: claiming (a warm zygote up); the whole pool up a little later.
# The target is judged on the later of the two.
ready=0
for k in 1 2; do
  ms=$(sed -n 's/.*ready in \([0-9]*\) ms.*/\1/p' "$SQ_TMP/w$k.log")
  pool=$(sed -n 's/.*warm pool: .* up in \([0-9]*\) ms.*/\1/p' "$SQ_TMP/w$k.log" | sort -n | tail -1) # the last kind up
  echo "e2e-$k claiming in ${ms:-?} ms, its whole warm pool up in ${pool:-?} ms"
  for v in $ms $pool; do [ "$v" -gt "$ready" ] && ready=$v; done
done
echo "sandq defaults: $EN tasks, $e2e tasks/s (from the workers' start)"
}

r=1; pairs=""; ready_max=0; wpids=""
while [ $r -le "$REPS" ]; do
  if [ -n "$wpids" ]; then kill -TERM $wpids; wait $wpids 2>/dev/null || true; fi
  echo "== 1. pair $r of $REPS: bare python3 -I -S, two at a time, $BN trivial tasks (load $(bench_load))"
  bare_run
  echo "== 2. pair $r of $REPS: two sandq-worker serve, default settings, $EN trivial tasks pushed at start (load $(bench_load))"
  e2e_run "$r"
  x=$(awk -v a="$e2e" -v b="$bare" 'BEGIN { printf "%.2f", a / b }')
  sx=$(awk -v a="$steady" -v b="$bare" 'BEGIN { printf "%.2f", a / b }')
  echo "pair $r: ${x}x ($e2e vs $bare tasks/s); its steady state ${sx}x"
  pairs="$pairs $x:$e2e:$bare:$sx:$first_ms:$tail_ms"
  [ "$ready" -gt "$ready_max" ] && ready_max=$ready
  r=$((r + 1))
done
ready=$ready_max
echo "== 1c. context: bare python3 -I -S, two at a time, $BN trivial tasks, python's files in large pages (load $(bench_load))"
bare_lp_run
# The median pair (the lower of the middle two for an even count).
med=$(for p in $pairs; do echo "$p"; done | sort -t: -k1,1n | awk -v n="$REPS" 'NR == int((n + 1) / 2)')
e2e=$(echo "$med" | cut -d: -f2); bare=$(echo "$med" | cut -d: -f3); sx=$(echo "$med" | cut -d: -f4)
first_ms=$(echo "$med" | cut -d: -f5); tail_ms=$(echo "$med" | cut -d: -f6)
all=$(for p in $pairs; do echo "$p" | cut -d: -f1; done | tr '\n' ' ' | sed 's/ $//; s/ /x, /g')x
echo "pairs: $all; the median: $e2e vs $bare tasks/s"

echo "== 3. CPU per task: $CN more trivial tasks through the same workers (load $(bench_load))"
tasks "$SQ_TMP/cpu.jsonl" "$CN" c
before=$(bench_worker_ticks $wpids); r0=$(bench_ticks "$SQ_PID_redis")
# The producer's CPU: the shell's reaped child (fields 16 and 17 of its stat).
ptick=$(sh -c '"$@" >"'"$SQ_TMP"'/cpu.out" 2>&1 || exit 1; awk "{ print \$16 + \$17 }" /proc/$$/stat' sh \
  timeout 300 "$SQ_BIN/sandq-producer" push --batch cpu --wait --timeout-s 240 "$SQ_TMP/cpu.jsonl") ||
  { tail -12 "$SQ_TMP/cpu.out" >&2; sq_fail "cpu: the batch did not complete"; }
after=$(bench_worker_ticks $wpids); r1=$(bench_ticks "$SQ_PID_redis")
grep -Eq "^ *ok +$CN\$" "$SQ_TMP/cpu.out" || { tail -12 "$SQ_TMP/cpu.out" >&2; sq_fail "cpu: not every task ended ok"; }
kill -TERM $wpids; wait $wpids 2>/dev/null || true

# One line per stage, ms per task: name ms
echo "$before $after $r0 $r1 $ptick" | awk -v n="$CN" -v hz="$BENCH_HZ" '{
  ms = 1000 / hz / n
  printf "worker process (claim, parse, pre-check, BSON, complete, jail supervision) %.3f\n", ($5 - $1) * ms
  printf "jail helpers (slot holders and namespace inits: fresh scratch mounts)      %.3f\n", ($6 - $2) * ms
  printf "warm zygotes (fork, reaping, the loop)                                     %.3f\n", ($7 - $3) * ms
  printf "tasks (the forked children: copy-on-write faults, the program, exit)         %.3f\n", ($8 - $4) * ms
  printf "redis-server                                                               %.3f\n", ($10 - $9) * ms
  printf "producer (push, --wait)                                                    %.3f\n", $11 * ms
}' >"$SQ_TMP/stages"
awk '{ v = $NF; $NF = ""; printf "  %-80s %7.3f ms/task\n", $0, v; t += v } END { printf "  %-80s %7.3f ms/task\n", "total", t }' "$SQ_TMP/stages"
cpu=$(awk '{ t += $NF } END { printf "%.3f", t }' "$SQ_TMP/stages")
top=$(awk '{ v = $NF; $NF = ""; if (v > m) { m = v; s = $0 } } END { sub(/ +$/, "", s); printf "%s, %.3f ms", s, m }' "$SQ_TMP/stages")
jail=$(awk 'NR >= 2 && NR <= 4 { t += $NF } END { printf "%.3f", t }' "$SQ_TMP/stages")
rest=$(awk -v c="$cpu" -v j="$jail" 'BEGIN { printf "%.3f", c - j }')
ceiling=$(awk -v c="$cpu" -v n="$(nproc)" 'BEGIN { printf "%.0f", (c > 0 ? n * 1000 / c : 0) }')

# 4. The floor again, as wide as the pool: as many loops side by side as
# the two workers keep runs in flight (2 x jail_threads), so each core
# switches between several interpreters and their children, as the jail's
# does. Set beside the jail's own processes (zygotes and tasks).
width=$(sed -n 's/.*sizing: jail_threads=\([0-9]*\).*/\1/p' "$SQ_TMP/w1.log" | head -1)
width=$((2 * ${width:-1}))
echo "== 4. the warm-fork floor as wide as the pool: $width loops side by side, $FN tasks in all (load $(bench_load))"
k=0; fpids=""
while [ $k -lt "$width" ]; do
  $PY -I -S -c "$floor_py" $((FN / width)) >"$SQ_TMP/floor-$k" & fpids="$fpids $!"
  k=$((k + 1))
done
wait $fpids || sq_fail "the wide warm-fork floor failed"
wide_ms=$(cat "$SQ_TMP"/floor-* | awk '{ t += $1; n++ } END { printf "%.4f", t / n }')
echo "warm-fork floor, $width loops side by side: $wide_ms ms of CPU per task"

echo "== summary (load $(bench_load))"
x=$(awk -v a="$e2e" -v b="$bare" 'BEGIN { printf "%.1f", a / b }')
fx=$(awk -v a="$floor" -v b="$bare" 'BEGIN { printf "%.1f", a / b }')
of=$(awk -v a="$e2e" -v f="$floor" 'BEGIN { printf "%.0f", 100 * a / f }')
need=$(awk -v b="$bare" -v f="$floor" 'BEGIN { printf "%.0f", 100 * 7 * b / f }')
echo "warm-fork floor: at best $floor tasks/s (one loop $floor1, one per core $floorn) = ${fx}x bare; sandq end to end reached $of% of it; 7x bare is $need% of it"
echo "as wide as the pool ($width loops): $wide_ms ms per task; the jail's zygotes and tasks: $jail ms; the rest (worker, redis, producer): $rest ms"
lpx=$(awk -v a="$e2e" -v b="$bare_lp" 'BEGIN { printf "%.1f", a / b }')
echo "context: with python's files in large pages, as sandq's runs map them, bare python ran at $bare_lp tasks/s (sandq ${lpx}x that) and the warm-fork floor cost $floor_lp_ms ms per task (the host's page cache: $floor_ms)"
bound="its steady state (the 10th to the 90th percentile of results) ${sx}x bare, the batch's start (the first result $first_ms ms after the workers' start) and its end (the producer's exit $tail_ms ms after the last result) the rest; CPU: $cpu ms per task on $(nproc) cores allows about $ceiling tasks/s; the largest part: $top (the jail in all: $jail ms, the warm-fork floor as wide as the pool $wide_ms ms; worker, redis and producer $rest ms); the warm-fork floor alone (no jail, no queue: $floor_ms ms of CPU) reaches at best $floor tasks/s (one loop $floor1, one per core $floorn), ${fx}x bare, of which this is $of% and 7x is $need%"
if bench_ge "$x" 7; then met=yes; else met=no; fi
bench_target "end to end, defaults / bare python3 -I -S two at a time" "${x}x ($e2e vs $bare tasks/s; median of $REPS pairs: $all)" "≥ 7x" $met "$bound"
if bench_ge 1.0 "$cpu"; then met=yes; else met=no; fi
bench_target "CPU per trivial task, every process" "$cpu ms" "≤ 1.0 ms" $met "$top (the jail in all: $jail ms)"
if [ "$ready" -le 300 ]; then met=yes; else met=no; fi
bench_target "worker start-up (whole warm pool up, claiming)" "$ready ms" "≤ 300 ms" $met \
  "the warm zygotes' start (Python and its imports), side by side; under load $(bench_load)"
