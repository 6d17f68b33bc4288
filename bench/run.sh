#!/bin/sh
# run.sh BUILD_DIR: runs every benchmark script in bench/ (not tests: they
# measure and print, and their figures go into docs/benchmarks.md). Each runs
# to its end even when another failed; the exit code says whether all ran.
# At the end, one table side by side: every target the scripts stated
# (bench/lib/summary.sh), measured, met or not, and what bounds it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
failed=""
SQ_BENCH_SUMMARY=$(mktemp)
export SQ_BENCH_SUMMARY
trap 'rm -f "$SQ_BENCH_SUMMARY"' EXIT
echo "==== make bench: $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "$here"/*.sh; do
  name=$(basename "$b")
  [ "$name" = run.sh ] && continue
  echo "==== $name ($(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
  start=$(date +%s)
  if sh "$b" "$build"; then
    echo "==== $name: done in $(( $(date +%s) - start )) s"
  else
    echo "==== $name: FAILED (exit $?) after $(( $(date +%s) - start )) s" >&2
    failed="$failed $name"
  fi
done
echo
echo "==== targets side by side (load now $(cut -d' ' -f1-3 /proc/loadavg); figures under load are not the machine's best)"
awk -F'|' '{ printf "%-4s %-62s %-46s target %-12s\n", ($4 == "yes" ? "ok" : "MISS"), $1, $2, $3
             if ($4 != "yes") printf "       bounded by: %s\n", $5
             else printf "       limited by: %s\n", $5 }' "$SQ_BENCH_SUMMARY"
missed=$(awk -F'|' '$4 != "yes"' "$SQ_BENCH_SUMMARY" | wc -l)
echo "==== $(wc -l <"$SQ_BENCH_SUMMARY") targets, $missed missed"
[ -z "$failed" ] || { echo "bench/run.sh: failed:$failed" >&2; exit 1; }
