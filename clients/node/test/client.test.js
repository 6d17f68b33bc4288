// The sandq client against a real Redis and real sandq workers (node --test).
//
// Run by tests/integration/client_node.sh (ctest client_node, in `make
// test`), which starts them and sets:
//   SANDQ_REDIS_URL          the Redis the workers serve (queue "default")
//   SANDQ_TEST_SHARDED_QUEUE a queue recorded with 3 shards, a worker serving it
//   SQ_BIN                   the build's programs (sandq-producer)
//   SANDQ_TEST_CLUSTER_URL   a three-master Redis Cluster (redis-cluster://seed)
//                            whose queue "sh" has 3 shards and a worker
// Without SANDQ_REDIS_URL the tests that need it are skipped, and the script
// fails a run that skipped anything.
'use strict';

const assert = require('node:assert');
const { execFileSync, spawnSync } = require('node:child_process');
const net = require('node:net');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { describe, it, before, after } = require('node:test');
const { Client, SandqError, TimeoutError, keySlot } = require('..');

const URL = process.env.SANDQ_REDIS_URL;
const SHARDED = process.env.SANDQ_TEST_SHARDED_QUEUE;
const NO_REDIS = !URL && 'SANDQ_REDIS_URL is not set (run through tests/integration/client_node.sh)';
const CLUSTER = process.env.SANDQ_TEST_CLUSTER_URL;
const NO_CLUSTER = !CLUSTER && 'SANDQ_TEST_CLUSTER_URL is not set (run through tests/integration/client_node.sh)';
const NO_SHARDS = (!URL || !SHARDED) && 'SANDQ_TEST_SHARDED_QUEUE is not set (run through tests/integration/client_node.sh)';

describe('keySlot', () => {
  it('is Redis Cluster\'s slot, hash tags included', () => {
    assert.strictEqual(keySlot('123456789'), 12739); // the specification's CRC16 check value
    assert.strictEqual(keySlot(Buffer.from('foo')), 12182);
    assert.strictEqual(keySlot('{user1000}.following'), keySlot('user1000'));
    assert.strictEqual(keySlot('x{a}{b}'), keySlot('a'));
    assert.notStrictEqual(keySlot('a{}b'), keySlot('')); // an empty tag is no tag
    assert.strictEqual(keySlot('k\u00e9'), keySlot(Buffer.from('k\u00e9', 'utf8')));
  });
});

// A loopback port nothing listens on (bound, then closed).
async function deadPort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

// A program pushing through the client to url, as a user would run it:
// its exit status and stderr.
function pushFrom(url) {
  const prog = `const { Client } = require(${JSON.stringify(path.join(__dirname, '..'))});
const c = new Client(${JSON.stringify(url)});
c.push([{ id: 'a', code: 'print(1)' }]).then(() => process.exit(0),
  (e) => { console.error(e.message); c.close(); process.exit(1); });`;
  return spawnSync(process.execPath, ['-e', prog], { encoding: 'utf8', timeout: 60000 });
}

describe('a Redis that does not answer', () => {
  it('is one clear error: the URL (no password) and the cause, nothing else on stderr', async () => {
    const port = await deadPort();
    let r = pushFrom(`redis://user:s3cret@127.0.0.1:${port}`);
    assert.strictEqual(r.status, 1, r.stderr);
    assert.strictEqual(r.stderr, `cannot connect to redis://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}\n`);
    r = pushFrom(`redis-cluster://user:s3cret@127.0.0.1:${port}`);
    assert.strictEqual(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^cannot connect to redis-cluster://127\\.0\\.0\\.1:${port}: no seed answers [^\n]*\n$`));
  });
});

describe('what JSON cannot carry', () => {
  it('refuses NaN and infinities before anything is sent (JSON.stringify would write null)', async () => {
    const c = new Client(`redis://127.0.0.1:${await deadPort()}`);
    try {
      for (const [bad, field] of [[NaN, 'temperature'], [Infinity, 'temperature'], [-Infinity, 'wall_ms']]) {
        const t = field === 'temperature' ? { id: 'n', code: 'print(1)', temperature: bad }
                                          : { id: 'n', code: 'print(1)', limits: { wall_ms: bad } };
        await assert.rejects(c.push([{ id: 'ok', code: 'print(1)' }, t], { batch: 'nan' }), (e) => {
          assert.ok(e instanceof SandqError, e);
          assert.match(e.message, new RegExp(`^task 2 \\(id 'n'\\): ${field} is ${bad}, which JSON cannot carry`));
          return true;
        });
      }
      await assert.rejects(c.wait('nan', { timeout: -5 }), RangeError);
    } finally {
      await c.close();
    }
  });
});

describe('Client', { skip: NO_REDIS }, () => {
  let c;
  before(() => { c = new Client(URL); });
  after(() => c.close());

  it('pushes, waits with progress, reads results and status', async () => {
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
    assert.deepStrictEqual([res.p3.stdout, res.p3._id, res.p3.batch], ['3\n', 'p3', 'node-1']);
    // stored compactly (no _id or batch, layers as a bit mask), read back in full
    const layers = res.p3.jail.layers;
    assert.ok(Array.isArray(layers) && layers.length > 0 && layers.every((n) => typeof n === 'string' && !n.startsWith('bit')), layers);
    assert.ok(seen.length > 0 && seen[seen.length - 1].finished && seen[seen.length - 1].total === 21);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].done >= seen[i - 1].done, 'progress went backwards');
    const st = await c.status(b);
    assert.deepStrictEqual([st.total, st.done, st.statuses], [21, 21, { passed: 20, failed: 1 }]);
    assert.deepStrictEqual(Object.keys(await c.results(b)).sort(), Object.keys(res).sort());
  });

  it('generates a batch id, and a second push grows the batch', async () => {
    const b = await c.push([{ id: 'g1', code: 'print(1)' }]);
    assert.match(b, /^b-\d{8}-\d{6}-[0-9a-f]{4}$/);
    await c.wait(b, { timeout: 60 });
    await c.push([{ id: 'g2', code: 'print(2)' }], { batch: b });
    const res = await c.wait(b, { timeout: 60 });
    assert.deepStrictEqual(Object.keys(res).sort(), ['g1', 'g2']);
    assert.strictEqual((await c.status(b)).total, 2);
  });

  it('reads finished from the server, not from the counts', async () => {
    await c.redis.hset('sq:{default}:batch:flag', 'total', 1, 'done', 1, 'finished', 0);
    assert.strictEqual((await c.status('flag')).finished, false);
    await c.redis.hset('sq:{default}:batch:flag', 'finished', 1);
    assert.strictEqual((await c.status('flag')).finished, true);
    // a batch hash from before the flag: the server's old rule (its finish
    // stamp at its current total), not the client's
    await c.redis.hset('sq:{default}:batch:old', 'total', 2, 'done', 2);
    assert.strictEqual((await c.status('old')).finished, false);
    await c.redis.hset('sq:{default}:batch:old', 'finished_at_ms', 1, 'finished_total', 2);
    assert.strictEqual((await c.status('old')).finished, true);
  });

  it('pushes nothing when a task is refused', async () => {
    const before = await c.redis.llen('sq:{default}:tasks');
    for (const [bad, needle] of [[[{ id: 'x', code: '1', priority: 'urgent' }], 'priority'],
                                 [[{ id: 'x', code: '1' }, { id: 'x', code: '2' }], 'used twice'],
                                 [[{ code: '1' }], "string 'id'"],
                                 [[{ id: 'x', code: '1', idempotency_key: 7 }], 'idempotency_key']]) {
      await assert.rejects(c.push(bad, { batch: 'refused' }),
        (e) => e instanceof SandqError && e.message.includes(needle));
    }
    // a task the server refuses (BADTASK): nothing pushed either
    await assert.rejects(c.enqueue(0, 1, 'refused', ['{"id":"ok","batch":"refused"}', '{"id":""}']),
      (e) => e instanceof SandqError && e.message.includes('BADTASK 2'));
    assert.strictEqual(await c.redis.llen('sq:{default}:tasks'), before);
    assert.strictEqual(await c.redis.exists('sq:{default}:batch:refused'), 0);
    // a damaged shard record is named
    await c.redis.set('sq:{damaged}:shards', 'lots');
    const d = new Client(URL, { queue: 'damaged' });
    await assert.rejects(d.push([{ id: 'd', code: '1' }]),
      (e) => e instanceof SandqError && e.message.includes('sq:{damaged}:shards'));
    await d.close();
    assert.strictEqual(await c.redis.exists('sq:{damaged}:tasks'), 0);
  });

  it('times out with the last counters', async () => {
    const b = await c.push([{ id: 'slow', code: 'import time\ntime.sleep(3)' }]);
    const t0 = Date.now();
    await assert.rejects(c.wait(b, { timeout: 0.5 }),
      (e) => e instanceof TimeoutError && e.status.total === 1 && !e.status.finished);
    assert.ok(Date.now() - t0 < 3000);
    assert.strictEqual((await c.wait(b, { timeout: 60 })).slow.status, 'ok');
  });

  it('refuses at once to wait for a batch the queue does not know', async () => {
    await assert.rejects(c.wait('node-never-pushed', { timeout: 30 }),
      (e) => e instanceof SandqError && !(e instanceof TimeoutError) &&
             e.message === 'batch node-never-pushed is unknown to queue default: nothing was pushed to it ' +
                           '(or its results expired)');
  });

  it('refuses rediss://', () => {
    assert.throws(() => new Client('rediss://example.com:6380'), /docs\/deploy\.md/);
  });
});

describe('a sharded queue', { skip: NO_SHARDS }, () => {
  let c;
  before(() => { c = new Client(URL, { queue: SHARDED }); });
  after(() => c.close());
  const part = (k, b) => `sq:{${SHARDED}#${k}}:batch:${b}`;

  it('spreads a push over the shards and completes it', async () => {
    assert.strictEqual(await c.shards(), 3);
    const tasks = [];
    for (let i = 0; i < 12; i++) tasks.push({ id: `s${i}`, code: `print(${i})`, expected_stdout: String(i) });
    const b = await c.push(tasks, { batch: 'sh-1' });
    const parts = [];
    for (let k = 0; k < 3; k++) parts.push(parseInt((await c.redis.hget(part(k, b), 'total')) || '0', 10));
    assert.deepStrictEqual(parts, [4, 4, 4]); // runs of 4, one per shard
    assert.strictEqual(await c.redis.exists(`sq:{${SHARDED}}:tasks`), 0, 'tasks under the home tag');
    const res = await c.wait(b, { timeout: 120 });
    assert.strictEqual(Object.keys(res).length, 12);
    for (const r of Object.values(res)) assert.strictEqual(r.status, 'passed');
    const st = await c.status(b);
    assert.deepStrictEqual([st.total, st.done, st.statuses, st.finished], [12, 12, { passed: 12 }, true]);
  });

  it('is finished when every part is', async () => {
    await c.redis.hset(part(0, 'parts'), 'total', 1, 'done', 1, 'finished', 1);
    await c.redis.hset(part(1, 'parts'), 'total', 1, 'done', 1, 'finished', 0);
    assert.strictEqual((await c.status('parts')).finished, false);
    await c.redis.hset(part(1, 'parts'), 'finished', 1);
    const st = await c.status('parts');
    assert.deepStrictEqual([st.finished, st.total, st.done], [true, 2, 2]);
  });

  it('puts an idempotency_key on the shard the C producer picks', async (t) => {
    const keys = [0, 1, 2, 3, 4, 5].map((i) => `key-${i}`);
    await c.push(keys.map((k) => ({ id: k, code: 'print(1)', idempotency_key: k })), { batch: 'idem-node' });
    for (const k of keys) {
      assert.strictEqual(await c.redis.exists(`sq:{${SHARDED}#${keySlot(k) % 3}}:idem:${k}`), 1, k);
    }
    if (!process.env.SQ_BIN) return t.skip('SQ_BIN is not set: the C producer is not at hand');
    // the C producer, given the same keys, finds each on the shard the client
    // chose: every task a duplicate, nothing pushed
    const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sandq-node-')), 'idem.jsonl');
    fs.writeFileSync(f, keys.map((k) => JSON.stringify({ id: k, code: 'print(1)', idempotency_key: k })).join('\n') + '\n');
    execFileSync(path.join(process.env.SQ_BIN, 'sandq-producer'), ['push', '--queue', SHARDED, '--batch', 'idem-c', f],
      { stdio: 'pipe' });
    fs.rmSync(path.dirname(f), { recursive: true });
    assert.strictEqual((await c.status('idem-c')).total, 0);
    await c.wait('idem-node', { timeout: 120 });
  });
});

describe('a sharded queue on a Redis Cluster', { skip: NO_CLUSTER }, () => {
  it('spreads over the masters and completes', async () => {
    const c = new Client(CLUSTER, { queue: 'sh' });
    try {
      assert.strictEqual(await c.shards(), 3);
      // the master of each shard's slot, from the client's slot map
      const owners = new Set([0, 1, 2].map((k) => (c.redis.slots[keySlot(`sq:{sh#${k}}:tasks`)] || [])[0]));
      assert.ok(owners.size >= 2 && !owners.has(undefined), `the shards all live on one master (${[...owners]})`);
      const tasks = [];
      for (let i = 0; i < 30; i++) tasks.push({ id: `c${String(i).padStart(2, '0')}`, code: `print(${i})` });
      const b = await c.push(tasks, { batch: 'cl-1' });
      const parts = [];
      for (let k = 0; k < 3; k++) parts.push(parseInt((await c.redis.hget(`sq:{sh#${k}}:batch:cl-1`, 'total')) || '0', 10));
      assert.deepStrictEqual(parts, [10, 10, 10]);
      const res = await c.wait(b, { timeout: 120 });
      assert.strictEqual(Object.keys(res).length, 30);
      const st = await c.status(b);
      assert.deepStrictEqual([st.total, st.done, st.finished], [30, 30, true]);
    } finally {
      await c.close();
    }
  });
});
