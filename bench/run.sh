#!/bin/sh
# run.sh BUILD_DIR: runs every benchmark script in bench/ (not tests: they
# measure and print, and their figures go into docs/benchmarks.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for b in "$here"/*.sh; do
  [ "$(basename "$b")" = run.sh ] && continue
  echo "== $(basename "$b")"
  sh "$b" "${1:-build}"
done
