#!/bin/sh
# run.sh BUILD_DIR: runs every benchmark script in bench/ (not tests: they
# measure and print, and their figures go into docs/benchmarks.md). Each runs
# to its end even when another failed; the exit code says whether all passed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
failed=""
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
[ -z "$failed" ] || { echo "bench/run.sh: failed:$failed" >&2; exit 1; }
