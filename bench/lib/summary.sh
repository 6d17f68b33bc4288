# bench/lib/summary.sh: sourced by bench/*.sh. Each benchmark states its
# targets with bench_target; bench/run.sh gathers them into one side-by-side
# table at the end ($SQ_BENCH_SUMMARY names the file; a script run alone
# prints its lines as it goes).
#
#   bench_target NAME MEASURED GOAL MET BOUND
#     NAME      what is measured ("end to end, defaults / bare python")
#     MEASURED  the figure with its unit ("3.4x (760 vs 224 tasks/s)")
#     GOAL      the target ("≥ 7x")
#     MET       yes | no
#     BOUND     when not met: which stage bounds it; else what limits it
#
#   bench_ge A B: exit 0 when A >= B (decimal numbers)

bench_target() {
  line=$(printf '%s|%s|%s|%s|%s' "$1" "$2" "$3" "$4" "$5")
  echo "target: $line"
  [ -z "${SQ_BENCH_SUMMARY:-}" ] || echo "$line" >>"$SQ_BENCH_SUMMARY"
}

bench_ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

# bench_load: the machine's load average now, for every printed figure.
bench_load() { cut -d' ' -f1-3 /proc/loadavg; }

# bench_tree_ticks PID: CPU ticks (user + system, each process's own and its
# reaped children's) summed over PID and every live descendant.
bench_tree_ticks() {
  t=0
  for q in $(sq_tree_pids "$1"); do
    v=$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$q/stat" 2>/dev/null || echo 0)
    t=$((t + v))
  done
  echo "$t"
}

# bench_worker_ticks WORKER_PID...: the CPU ticks of the workers' trees by
# kind, one line "WORKER HELPERS ZYGOTES TASKS": the worker processes
# themselves (main loop and jail threads), the jail's helpers (slot
# holders, namespace inits, what the worker reaped), the zygotes (python3)
# alone, and what the zygotes forked and reaped (the tasks).
bench_worker_ticks() {
  for wp in "$@"; do
    for q in $(sq_tree_pids "$wp"); do
      awk -v w="$wp" -v q="$q" '{ comm = $2; own = $14 + $15; kids = $16 + $17
        kind = (q == w) ? "worker" : (comm == "(python3)" ? "zygotes" : "helpers")
        print kind, own, kids }' "/proc/$q/stat" 2>/dev/null || true
    done
  done | awk '{ own[$1] += $2; kids[$1] += $3 } END {
    printf "%d %d %d %d\n", own["worker"], kids["worker"] + own["helpers"] + kids["helpers"], own["zygotes"], kids["zygotes"] }'
}

# bench_ticks PID: CPU ticks of PID alone (all its threads, no children).
bench_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

BENCH_HZ=$(getconf CLK_TCK 2>/dev/null || echo 100)
