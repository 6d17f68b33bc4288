#!/bin/sh
# Installs the Debian 12 packages sandq needs to build, test and run the demo.
# Idempotent and quiet when everything is present; must run as root to install.
set -eu

# What `make demo` needs: the toolchain, the libraries, a Redis server and
# Python for the fake LLM.
PKGS="build-essential cmake pkg-config
libhiredis-dev libcurl4-openssl-dev libssl-dev libcjson-dev libseccomp-dev libbson-dev zlib1g-dev
libmicrohttpd-dev
redis-server redis-tools python3 python3-dev"

# libmicrohttpd-dev: the workers' and the producer's scrape endpoint
# (GET /metrics, /healthz) is built on it, so the demo needs it too.
# python3-dev: Python's headers, for the warm zygote's loop, an extension
# module on the stable ABI (common/jail/zygote_loop.c); nothing links
# libpython.

# For the tests only (`make test` sets SANDQ_WITH_TESTS=1; `make demo` does
# not): the Prometheus server and promtool. The tests check the metrics'
# exposition (promtool check metrics) and compose/'s alert rules, and a
# real Prometheus scrapes a fleet (tests/integration/scrape.sh, with curl).
# Also for the tests only: clang and its libFuzzer runtime (tests/fuzz),
# redis-py and pymongo's bson (the integration tests read results),
# python3-requests and python3-pytest (verl's SandboxFusion client and its
# pytest file, tests/integration/api.sh, given a verl checkout), and
# docker-compose (compose/ is validated with `docker-compose config`).
# redis-sentinel: the failover test (tests/integration/sentinel.sh, and
# bench/ha.sh); it is a link to redis-server, which `redis-server
# --sentinel` replaces where the package is missing.
if [ "${SANDQ_WITH_TESTS:-0}" = 1 ]; then
	PKGS="$PKGS prometheus curl clang libclang-rt-14-dev python3-pymongo python3-bson python3-redis python3-requests python3-pytest docker-compose"
	PKGS="$PKGS redis-sentinel"
	# the Python client as a package: a venv and setuptools, no PyPI
	# (tests/integration/client_python.sh runs its README's pip install)
	PKGS="$PKGS python3-venv python3-setuptools"
	# the built-in data profile (tests/integration/profiles.sh): numpy and
	# pandas in the jail, scipy and matplotlib beside them
	PKGS="$PKGS python3-numpy python3-pandas python3-scipy python3-matplotlib"
fi

# zlib1g-dev: `sandq-producer import` reads gzipped datasets (HumanEval.jsonl.gz).

# Test-only (`make test` sets SANDQ_WITH_TESTS=1; `make demo` does not):
# chromium renders the HTML report headless (tests/integration/report_html.sh
# checks its plots are drawn). The test skips (77) without it.
if [ "${SANDQ_WITH_TESTS:-0}" = 1 ]; then
	PKGS="$PKGS chromium"
fi

# Test-only (`make test` sets SANDQ_WITH_TESTS=1; `make demo` does not):
# Node.js and npm for clients/node's test (tests/integration/client_node.sh
# runs `npm ci` from the npm registry into a temporary copy). A Node that
# came from elsewhere (nodesource's nodejs carries its own npm, and clashes
# with Debian's npm package) is used as it is.
if [ "${SANDQ_WITH_TESTS:-0}" = 1 ]; then
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		PKGS="$PKGS nodejs npm"
	fi
fi

# Test-only (`make test` sets SANDQ_WITH_TESTS=1; `make demo` does not):
# the toolchains of the languages besides Python a task may name
# (docs/formats.md, "Languages"; tests/integration/languages.sh): gcc and
# g++ come with build-essential, bash and perl with the base system, node
# above; Debian's rustc (not a rustup one), its TypeScript compiler, Go,
# the JDK, Ruby, PHP's command line and Lua 5.4.
if [ "${SANDQ_WITH_TESTS:-0}" = 1 ]; then
	PKGS="$PKGS golang-go rustc node-typescript default-jdk-headless ruby php-cli lua5.4"
	command -v node >/dev/null 2>&1 || PKGS="$PKGS nodejs"
fi

# The benchmarks (bench/run.sh, `make bench`): the jail's comparisons and
# the queue's side-by-side run against python3-rq; no bc (awk does the sums).
# numpy and pandas: bench/profiles.sh's tasks in the data profile.
if [ "${SANDQ_WITH_BENCH:-0}" = 1 ]; then
	PKGS="$PKGS bubblewrap firejail python3-rq hyperfine python3-numpy python3-pandas"
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
# Redis): sandq starts its own Redis on a private port, and the tests their
# own Prometheus (scrape.sh). policy-rc.d is Debian's switch for that; one the
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
