#!/bin/sh
# client_node.sh: clients/node against a real Redis and real workers: the
# README's install command as written in a copy of the repository's client
# (npm ci: the lock file pins ioredis and bson; npm_config_prefer_offline,
# so the npm cache serves them without the registry), the README example as
# written, then the package's own tests (`npm test`: node --test on
# clients/node/test), with the servers of tests/lib/client_env.sh: a queue recorded as
# sharded (3 shards, like shard_record.sh) and a sharded queue on a real
# three-master Redis Cluster (like cluster.sh), each with a worker. A test
# that skipped fails this script: every case must run here.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/client_env.sh"
sq_env_init
command -v node >/dev/null && command -v npm >/dev/null ||
  sq_skip "node and npm are not installed (SANDQ_WITH_TESTS=1 scripts/install-deps.sh)"
node -e 'process.exit(parseInt(process.versions.node) >= 18 ? 0 : 1)' || sq_skip "node $(node --version) is older than 18"
mkdir -p "$SQ_TMP/repo/clients"
cp -r "$SQ_SRC/clients/node" "$SQ_TMP/repo/clients/node"
rm -rf "$SQ_TMP/repo/clients/node/node_modules"
awk '/^```sh/{on=1; next} /^```/{on=0} on' "$SQ_SRC/clients/node/README.md" >"$SQ_TMP/install.sh"
[ -s "$SQ_TMP/install.sh" ] || sq_fail "no install command in clients/node/README.md"
(cd "$SQ_TMP/repo" && npm_config_prefer_offline=true npm_config_audit=false npm_config_fund=false \
  sh -ex "$SQ_TMP/install.sh") >"$SQ_TMP/npm.log" 2>&1 || {
  cat "$SQ_TMP/npm.log" >&2
  if grep -qE "ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|network" "$SQ_TMP/npm.log"; then
    sq_skip "npm ci cannot reach the npm registry (the client's dependencies are not cached)"
  fi
  sq_fail "the README's install command failed"
}
sq_client_servers node

# 1. The README's example, as written, from the (copied) repository root.
awk '/^```js/{on=1; next} /^```/{on=0} on' "$SQ_SRC/clients/node/README.md" >"$SQ_TMP/repo/example.js"
(cd "$SQ_TMP/repo" && timeout 120 node example.js) >"$SQ_TMP/readme.out" 2>&1 ||
  { cat "$SQ_TMP/readme.out" >&2; sq_fail "the README example failed"; }
grep -q "^add passed" "$SQ_TMP/readme.out" && grep -q "^hello passed" "$SQ_TMP/readme.out" &&
  grep -q "{ passed: 2 }" "$SQ_TMP/readme.out" || { cat "$SQ_TMP/readme.out" >&2; sq_fail "README example output"; }
echo "client_node: the README's install command and example ran as written"

# 2. The package's tests.
(cd "$SQ_TMP/repo/clients/node" && timeout 300 npm test) >"$SQ_TMP/test.log" 2>&1 ||
  { cat "$SQ_TMP/test.log" >&2; sq_fail "clients/node's tests failed"; }
cat "$SQ_TMP/test.log"
grep -qE "^# pass [1-9]" "$SQ_TMP/test.log" || sq_fail "clients/node's tests ran nothing"
grep -qE "^# skipped 0$" "$SQ_TMP/test.log" || sq_fail "clients/node's tests skipped a case"
grep -qE "^# fail 0$" "$SQ_TMP/test.log" || sq_fail "clients/node's tests failed a case"
