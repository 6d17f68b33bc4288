#!/bin/sh
# client_node.sh: clients/node against a real Redis and two real workers:
# `npm ci` into a temporary copy of the client (the lock file pins ioredis
# and bson), the README example as written, then push/wait/results/status
# in detail (progress callbacks, a timeout, a refused push that pushes
# nothing, a grown batch, decoded BSON results).
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
command -v node >/dev/null && command -v npm >/dev/null ||
  sq_skip "node and npm are not installed (SANDQ_WITH_TESTS=1 scripts/install-deps.sh)"
node -e 'process.exit(parseInt(process.versions.node) >= 18 ? 0 : 1)' || sq_skip "node $(node --version) is older than 18"
mkdir -p "$SQ_TMP/repo/clients"
cp -r "$SQ_SRC/clients/node" "$SQ_TMP/repo/clients/node"
rm -rf "$SQ_TMP/repo/clients/node/node_modules"
(cd "$SQ_TMP/repo/clients/node" && npm ci --no-audit --no-fund --prefer-offline) >"$SQ_TMP/npm.log" 2>&1 || {
  cat "$SQ_TMP/npm.log" >&2
  if grep -qE "ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|network" "$SQ_TMP/npm.log"; then
    sq_skip "npm ci cannot reach the npm registry (the client's dependencies are not cached)"
  fi
  sq_fail "npm ci failed"
}
sq_start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
sq_bg w1 "$SQ_BIN/sandq-worker" serve --worker-id node-w1 --log-level warn
sq_bg w2 "$SQ_BIN/sandq-worker" serve --worker-id node-w2 --log-level warn
sq_wait_for "redis-cli -p $SQ_REDIS_PORT FUNCTION LIST | grep -q sq1_enqueue" 20 ||
  { cat "$SQ_TMP/w1.log" >&2; sq_fail "the workers did not load the functions"; }

# 1. The README's example, as written, from the (copied) repository root.
awk '/^```js/{on=1; next} /^```/{on=0} on' "$SQ_SRC/clients/node/README.md" >"$SQ_TMP/repo/example.js"
(cd "$SQ_TMP/repo" && timeout 120 node example.js) >"$SQ_TMP/readme.out" 2>&1 ||
  { cat "$SQ_TMP/readme.out" >&2; sq_fail "the README example failed"; }
grep -q "^add passed" "$SQ_TMP/readme.out" && grep -q "^hello passed" "$SQ_TMP/readme.out" &&
  grep -q "{ passed: 2 }" "$SQ_TMP/readme.out" || { cat "$SQ_TMP/readme.out" >&2; sq_fail "README example output"; }
echo "client_node: the README example ran as written"

# 2. The API in detail.
cat >"$SQ_TMP/repo/api.js" <<'JS'
const assert = require('assert');
const { Client, SandqError, TimeoutError } = require('./clients/node');
(async () => {
  const c = new Client(process.env.SANDQ_REDIS_URL);
  const tasks = [];
  for (let i = 0; i < 20; i++) tasks.push({ id: `p${i}`, code: `print(${i})`, expected_stdout: String(i) });
  tasks.push({ id: 'fails', code: 'assert 1 == 2' });
  const seen = [];
  const b = await c.push(tasks, { batch: 'node-1' });
  assert.strictEqual(b, 'node-1');
  const res = await c.wait(b, { timeout: 120, progress: (st) => seen.push(st) });
  assert.strictEqual(Object.keys(res).length, 21);
  for (let i = 0; i < 20; i++) assert.strictEqual(res[`p${i}`].status, 'passed');
  assert.strictEqual(res.fails.status, 'failed');
  assert.strictEqual(res.p3.stdout, '3\n');
  assert.strictEqual(res.p3._id, 'p3');
  assert.strictEqual(res.p3.batch, 'node-1');
  assert.ok(seen.length > 0 && seen[seen.length - 1].finished && seen[seen.length - 1].total === 21);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].done >= seen[i - 1].done, 'progress went backwards');
  const st = await c.status(b);
  assert.deepStrictEqual([st.total, st.done, st.statuses], [21, 21, { passed: 20, failed: 1 }]);
  assert.deepStrictEqual(Object.keys(await c.results(b)).sort(), Object.keys(res).sort());

  const b2 = await c.push([{ id: 'g1', code: 'print(1)' }]);
  assert.match(b2, /^b-\d{8}-\d{6}-[0-9a-f]{4}$/);
  await c.wait(b2, { timeout: 60 });
  await c.push([{ id: 'g2', code: 'print(2)' }], { batch: b2 });
  const res2 = await c.wait(b2, { timeout: 60 });
  assert.deepStrictEqual(Object.keys(res2).sort(), ['g1', 'g2']);

  const before = await c.redis.llen('sq:{default}:tasks');
  for (const [bad, needle] of [[[{ id: 'x', code: '1', priority: 'urgent' }], 'priority'],
                               [[{ id: 'x', code: '1' }, { id: 'x', code: '2' }], 'used twice'],
                               [[{ code: '1' }], "string 'id'"]]) {
    await assert.rejects(c.push(bad, { batch: 'refused' }), (e) => e instanceof SandqError && e.message.includes(needle));
  }
  assert.strictEqual(await c.redis.llen('sq:{default}:tasks'), before);
  assert.strictEqual(await c.redis.exists('sq:{default}:batch:refused'), 0);
  // a sharded queue (its recorded count above 1): the push is refused, nothing pushed
  await c.redis.set('sq:{wide}:shards', '3');
  const wide = new Client(process.env.SANDQ_REDIS_URL, { queue: 'wide' });
  await assert.rejects(wide.push([{ id: 'w1', code: 'print(1)' }], { batch: 'w' }),
    (e) => e instanceof SandqError && e.message.includes('SHARDED 3') && e.message.includes('sq:{wide#k}:tasks'));
  await wide.close();
  assert.strictEqual(await c.redis.exists('sq:{wide}:tasks', 'sq:{wide}:batch:w'), 0);

  const b3 = await c.push([{ id: 'slow', code: 'import time\ntime.sleep(3)' }]);
  const t0 = Date.now();
  await assert.rejects(c.wait(b3, { timeout: 0.5 }), (e) => e instanceof TimeoutError && e.status.total === 1);
  assert.ok(Date.now() - t0 < 3000);
  assert.strictEqual((await c.wait(b3, { timeout: 60 })).slow.status, 'ok');
  assert.throws(() => new Client('rediss://example.com:6380'), /docs\/deploy\.md/);
  await c.close();
  console.log('client_node: push, wait with progress, results, status, timeout, refusals: ok');
})().catch((e) => { console.error(e); process.exit(1); });
JS
(cd "$SQ_TMP/repo" && timeout 180 node api.js) || sq_fail "client API checks failed"
