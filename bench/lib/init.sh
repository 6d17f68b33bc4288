# init.sh: sourced first by a bench script (`. "$(dirname "$0")/lib/init.sh"`),
# whose $1 is the build directory (default build): sets SQ_BIN and SQ_SRC,
# loads tests/lib/env.sh (services on free loopback ports, cleanup on exit)
# and summary.sh, and makes the run's private temp dir (sq_env_init).
build=${1:-build}; case $build in /*) ;; *) build=$(pwd)/$build ;; esac
SQ_SRC=$(cd "$(dirname "$0")/.." && pwd)
export SQ_BIN="$build/bin" SQ_SRC
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/bench/lib/summary.sh"
sq_env_init
