#!/bin/sh
# jail.sh: the jail's per-task cost against bare python, bubblewrap and
# firejail (bench/jail_bench.c). Usage: bench/jail.sh [BUILD_DIR] [ROUNDS] [shuffled|fixed]
# Targets (no regression): trivial program, spawn ≤ 1.15x
# bare python, warm ≤ 1 ms (medians).
set -eu
BUILD=${1:-build}
ROUNDS=${2:-100}
ORDER=${3:-shuffled}
. "$(cd "$(dirname "$0")" && pwd)/lib/summary.sh"
[ "$(id -u)" -eq 0 ] || { echo "jail.sh: run as root (namespaces)" >&2; exit 1; }
cmake --build "$BUILD" --target sandq-jail-bench >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$BUILD/bin/sandq-jail-bench" "$ROUNDS" "$ORDER" | tee "$out"
# The first table is the trivial program's: "sandq spawn  MEDIAN MEAN P90 RATIOx".
spawn=$(awk '/^sandq spawn/ { sub(/x$/, "", $6); print $6; exit }' "$out")
warm=$(awk '/^sandq warm/ { print $3; exit }' "$out")
[ -n "$spawn" ] && [ -n "$warm" ] || { echo "jail.sh: no spawn/warm figures in the output" >&2; exit 1; }
if bench_ge 1.15 "$spawn"; then met=yes; else met=no; fi
bench_target "jail, spawn mode / bare python3 -I -S (trivial, median)" "${spawn}x" "≤ 1.15x" $met \
  "a fresh interpreter per task: bare python's own start is most of it (docs/benchmarks.md)"
if bench_ge 1.0 "$warm"; then met=yes; else met=no; fi
bench_target "jail, warm mode per trivial task (median)" "$warm ms" "≤ 1 ms" $met \
  "the fork of the warm interpreter, its copy-on-write faults and exit (load $(bench_load))"
