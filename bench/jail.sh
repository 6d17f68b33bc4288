#!/bin/sh
# jail.sh: the jail's per-task cost against bare python, bubblewrap and
# firejail (bench/jail_bench.c). Usage: bench/jail.sh [BUILD_DIR] [ROUNDS] [shuffled|fixed]
set -eu
BUILD=${1:-build}
ROUNDS=${2:-100}
ORDER=${3:-shuffled}
[ "$(id -u)" -eq 0 ] || { echo "jail.sh: run as root (namespaces)" >&2; exit 1; }
cmake --build "$BUILD" --target sandq-jail-bench >/dev/null
exec "$BUILD/bin/sandq-jail-bench" "$ROUNDS" "$ORDER"
