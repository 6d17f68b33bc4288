#!/bin/sh
# client_python.sh: clients/python as a package, against a real Redis and
# real workers: the README's install commands as written (a venv, pip
# install of a copy of clients/python; PIP_NO_INDEX: this machine has no
# PyPI, the dependencies come from Debian's packages), the README example
# as written, then the package's own tests (clients/python/tests, python3 -m
# unittest), with the servers of tests/lib/client_env.sh: a queue recorded as
# sharded (3 shards, like shard_record.sh) and a sharded queue on a real
# three-master Redis Cluster (like cluster.sh), each with a worker. A test
# that skipped fails this script: every case must run here, but the data
# profile's where the machine has no numpy and pandas for it.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/client_env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import redis, bson, setuptools; redis.Redis.fcall' 2>/dev/null ||
  sq_skip "python3-redis (>= 4.1, with fcall), python3-bson or python3-setuptools is not installed (scripts/install-deps.sh)"
$PY -c 'import ensurepip, venv' 2>/dev/null || sq_skip "python3-venv is not installed"
sq_client_servers py

# 1. The README's install commands, as written, from a copy of the
#    repository's client (pip builds in the tree it is given).
mkdir -p "$SQ_TMP/repo/clients"
cp -r "$SQ_SRC/clients/python" "$SQ_TMP/repo/clients/python"
rm -rf "$SQ_TMP/repo/clients/python/build" "$SQ_TMP/repo/clients/python"/*.egg-info
awk '/^```sh/{on=1; next} /^```/{on=0} on' "$SQ_SRC/clients/python/README.md" >"$SQ_TMP/install.sh"
[ -s "$SQ_TMP/install.sh" ] || sq_fail "no install commands in clients/python/README.md"
(cd "$SQ_TMP/repo" && PATH="/usr/bin:$PATH" PIP_NO_INDEX=1 sh -ex "$SQ_TMP/install.sh") >"$SQ_TMP/install.log" 2>&1 ||
  { cat "$SQ_TMP/install.log" >&2; sq_fail "the README's install commands failed"; }
VPY="$SQ_TMP/repo/.venv/bin/python"
[ -x "$VPY" ] || sq_fail "the README's commands made no .venv"

# 2. The README's example, as written, against the installed package (run
#    outside the tree, so nothing but the install can provide sandq).
awk '/^```python/{on=1; next} /^```/{on=0} on' "$SQ_SRC/clients/python/README.md" >"$SQ_TMP/readme.py"
(cd "$SQ_TMP" && timeout 120 "$VPY" "$SQ_TMP/readme.py") >"$SQ_TMP/readme.out" 2>&1 ||
  { cat "$SQ_TMP/readme.out" >&2; sq_fail "the README example failed"; }
grep -q "^add passed" "$SQ_TMP/readme.out" && grep -q "^hello passed" "$SQ_TMP/readme.out" &&
  grep -q "{'passed': 2}" "$SQ_TMP/readme.out" || { cat "$SQ_TMP/readme.out" >&2; sq_fail "README example output"; }
"$VPY" -c 'import sandq, sys; sys.exit(0 if "site-packages" in sandq.__file__ else 1)' ||
  sq_fail "the example did not use the installed package"
echo "client_python: the README's install commands and example ran as written"

# 3. The package's tests.
(cd "$SQ_TMP/repo/clients/python" && timeout 300 "$VPY" -m unittest -v) >"$SQ_TMP/unittest.log" 2>&1 ||
  { cat "$SQ_TMP/unittest.log" >&2; sq_fail "clients/python's tests failed"; }
cat "$SQ_TMP/unittest.log"
# The one case that may skip: the data profile's, on a machine without
# Debian's numpy and pandas (its reason says so).
grep "skipped" "$SQ_TMP/unittest.log" | grep -v "^OK (skipped=1)$" | grep -v "the worker has no data profile" |
  grep -q . && sq_fail "clients/python's tests skipped a case"
grep -Eq "^OK( \(skipped=1\))?$" "$SQ_TMP/unittest.log" || sq_fail "clients/python's tests did not report OK"
