#!/bin/sh
# Installs the Debian 12 packages sandq needs to build, test and run the demo.
# Idempotent and quiet when everything is present; must run as root to install.
set -eu

PKGS="build-essential cmake pkg-config clang libclang-rt-14-dev
libhiredis-dev libcurl4-openssl-dev libssl-dev libcjson-dev libseccomp-dev libbson-dev
redis-server redis-tools python3 python3-pymongo python3-redis docker-compose
prometheus redis-sentinel"

# prometheus is here for promtool only: the tests check the metrics'
# exposition (promtool check metrics) and compose/'s alert rules with it.
# redis-sentinel is here for the tests only (tests/integration/sentinel.sh;
# it is a link to redis-server, which `redis-server --sentinel` replaces).

# The benchmarks (bench/run.sh, `make bench`): the jail's comparisons and
# the queue's side-by-side run against python3-rq; no bc (awk does the sums).
if [ "${SANDQ_WITH_BENCH:-0}" = 1 ]; then
	PKGS="$PKGS bubblewrap firejail python3-rq hyperfine"
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing" >&2
	echo "install-deps: run as root (or: sudo apt-get install$missing)" >&2
	exit 1
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# No service starts from these packages (a Prometheus server, a system
# Redis): sandq starts its own Redis on a private port, and uses only
# promtool of prometheus. policy-rc.d is Debian's switch for that; one the
# host already has is left alone.
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
	policy=/usr/sbin/policy-rc.d
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
log=$(mktemp)
# shellcheck disable=SC2086
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } >"$log" 2>&1; then
	cat "$log" >&2
	rm -f "$log"
	echo "install-deps: apt-get failed (see above)" >&2
	exit 1
fi
rm -f "$log"
