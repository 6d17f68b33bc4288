// sandq: a Node.js client for the sandq queue (enqueue, wait, read results).
//
// Tasks go in with one atomic Redis Function call (FCALL sq1_enqueue,
// docs/formats.md), which pushes them and counts them into their batch in
// one step; results come back as the BSON documents the workers store,
// decoded with the npm bson package. Redis through ioredis. A sharded queue
// (shards: N, docs/operations.md) is served as the C producer serves it:
// tasks spread over its shards' keys sq:{Q#k}:tasks, counters and results
// added up from every shard.
'use strict';

const crypto = require('crypto');
const Redis = require('ioredis');
const { BSON } = require('bson');

const NAME = /^[A-Za-z0-9._:-]{1,128}$/;
const QUEUE = /^[A-Za-z0-9._:-]{1,63}$/;
const PRIORITIES = ['high', 'normal', 'low'];
const PUSH_CHUNK = 500; // tasks per atomic step on a sharded queue (the C producer's)
const MAX_SHARDS = 64;
const CONNECT_TRIES = 5; // a cluster's seeds tried this often before its first connection fails

class SandqError extends Error {}

class TimeoutError extends SandqError {
  constructor(message, status) {
    super(message);
    this.status = status; // the batch's last counters
  }
}

// CRC16-XMODEM, Redis Cluster's key hash (common/queue/queue_cluster.c).
function crc16(buf) {
  let crc = 0;
  for (const b of buf) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

// The Redis Cluster slot of key (string or Buffer), hash tags included: the
// one sq__key_slot computes, so a task's idempotency_key picks the same
// shard here as in the C producer.
function keySlot(key) {
  let buf = Buffer.isBuffer(key) ? key : Buffer.from(key, 'utf8');
  const o = buf.indexOf('{');
  if (o >= 0) {
    const c = buf.indexOf('}', o + 1);
    if (c > o + 1) buf = buf.subarray(o + 1, c);
  }
  return crc16(buf) & 16383;
}

// A Redis Cluster client for redis-cluster://[user:password@]host:port[,host:port...]
// (the workers' URL; the password, when the URL has none, from
// SANDQ_REDIS_PASSWORD as the workers take it). Each command goes to the
// master of its key's slot; every key of a queue's shard shares one hash
// tag, so each FCALL runs on one node.
function cluster(url, opts) {
  let rest = url.slice('redis-cluster://'.length).replace(/\/$/, '');
  let username;
  let password;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const auth = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = auth.lastIndexOf(':');
    username = colon > 0 ? auth.slice(0, colon) : undefined;
    password = auth.slice(colon + 1);
  }
  password = password || process.env.SANDQ_REDIS_PASSWORD || undefined;
  const seeds = rest.split(',').map((seed) => {
    const m = /^(.+?)(?::([0-9]+))?$/.exec(seed);
    if (!m) throw new SandqError(`redis URL '${url}': want redis-cluster://host:port[,host:port...]`);
    return { host: m[1], port: m[2] ? parseInt(m[2], 10) : 6379 };
  });
  // Seeds that never answer end the client (its commands then fail) rather
  // than queueing commands for ever; once it has been up, it retries as long
  // as it takes.
  let everReady = false;
  const c = new Redis.Cluster(seeds, {
    redisOptions: { ...opts, username, password },
    clusterRetryStrategy: (times) => (!everReady && times > CONNECT_TRIES ? null : Math.min(100 * times, 2000)),
  });
  c.once('ready', () => { everReady = true; });
  return c;
}

// url without its user and password: what messages show.
function safeUrl(url) {
  const m = /^([A-Za-z-]+:\/\/)(.*)$/.exec(url);
  if (!m) return url;
  const at = m[2].lastIndexOf('@');
  return at < 0 ? url : m[1] + m[2].slice(at + 1);
}

// The jail's layers in bit order (docs/formats.md): a stored result keeps
// jail.layers as a bit mask of these.
const LAYERS = ['pid_ns', 'net_ns', 'mount_ns', 'ipc_ns', 'uts_ns', 'cgroup_ns', 'new_root', 'uid', 'caps',
  'no_new_privs', 'rlimits', 'cgroup_memory', 'cgroup_pids', 'seccomp', 'seccomp_notify', 'cgroup_cpu'];

// A stored result (BSON bytes) in full, as docs/formats.md shows it: Redis
// keeps neither _id nor batch (its field and key hold them) and jail.layers
// as a bit mask; a result stored in full comes as it is.
function fullResult(taskId, batch, raw) {
  const doc = BSON.deserialize(raw);
  if ('_id' in doc) return doc;
  const jail = doc.jail;
  if (jail && typeof jail.layers === 'number') {
    const names = [];
    for (let b = 0; b < 32; b++) if ((jail.layers >>> b) & 1) names.push(b < LAYERS.length ? LAYERS[b] : `bit${b}`);
    jail.layers = names;
  }
  return { _id: taskId, batch, ...doc };
}

function newBatchId() {
  const d = new Date().toISOString(); // 2026-11-30T15:14:25.123Z
  return 'b-' + d.slice(0, 10).replace(/-/g, '') + '-' + d.slice(11, 19).replace(/:/g, '') + '-' +
         crypto.randomBytes(2).toString('hex');
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A connection to one sandq queue. url: redis://[user:password@]host[:port][/db]
// or unix:///path, as the workers take it. options: queue ("default"),
// retentionS and maxQueueLen (match the workers' retention_s, max_queue_len).
class Client {
  constructor(url = 'redis://127.0.0.1:6379', options = {}) {
    if (url.startsWith('rediss://')) {
      throw new SandqError('rediss:// (TLS) is not supported by sandq: reach Redis through a TLS tunnel ' +
                           '(docs/deploy.md, "Redis over TLS")');
    }
    this.queue = options.queue || 'default';
    if (!QUEUE.test(this.queue)) throw new SandqError(`queue '${this.queue}': 1-63 characters of A-Z a-z 0-9 . _ : -`);
    this.retentionS = options.retentionS || 604800;
    this.maxQueueLen = options.maxQueueLen === undefined ? 1000000 : options.maxQueueLen;
    const opts = { lazyConnect: false, maxRetriesPerRequest: 3 };
    if (url.startsWith('redis-cluster://')) this.redis = cluster(url, opts);
    else if (url.startsWith('unix://')) this.redis = new Redis({ path: url.slice('unix://'.length), ...opts });
    else this.redis = new Redis(url, opts);
    this.url = safeUrl(url);
    // Connection errors are kept for the message of the command they fail
    // (ioredis would print each one on stderr when nothing listens).
    this.connectError = null;
    this.redis.on('error', (e) => { this.connectError = e; });
    this.redis.on('ready', () => { this.connectError = null; });
    this.prefix = `sq:{${this.queue}}:`;
    this.nextShard = 0;
  }

  async close() {
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect(); // never connected (or lost): nothing to say goodbye to
  }

  // Runs fn (a Redis call); a failure to reach Redis rejects with SandqError
  // "cannot connect to URL: why", other errors as they are.
  async r(fn) {
    try {
      return await fn();
    } catch (e) {
      throw this.unreachable(e) || e;
    }
  }

  // The SandqError for e when e means Redis cannot be reached, else null.
  unreachable(e) {
    if (e instanceof SandqError || this.redis.status === 'ready') return null;
    const why = this.connectError || e;
    let text = (why.lastNodeError && why.lastNodeError.message) || why.message;
    if (this.redis instanceof Redis.Cluster) text = `no seed answers (${text})`;
    return new SandqError(`cannot connect to ${this.url}: ${text}`);
  }

  // Enqueues tasks (objects, docs/formats.md) into batch (a new id when not
  // given); resolves to the batch id. Each task is stamped with batch and
  // enqueued_at_ms. Pushing into an existing batch grows it. Rejects with
  // SandqError when a task is refused (nothing pushed then). A queue of one
  // shard takes the tasks in one atomic step; a sharded one in one step per
  // run of tasks on a shard, so a full shard refuses its run and those after
  // it, and the runs before it stay pushed (a prefix of tasks).
  async push(tasks, { batch } = {}) {
    batch = batch || newBatchId();
    if (!NAME.test(batch)) throw new SandqError(`batch '${batch}': 1-128 characters of A-Z a-z 0-9 . _ : -`);
    if (!Array.isArray(tasks) || tasks.length === 0) throw new SandqError('push: no tasks');
    const now = Date.now();
    const seen = new Set();
    const payloads = tasks.map((t, i) => {
      if (!t || typeof t !== 'object' || typeof t.id !== 'string') {
        throw new SandqError(`task ${i + 1}: must be an object with a string 'id'`);
      }
      if (seen.has(t.id)) throw new SandqError(`task ${i + 1}: id '${t.id}' is used twice in this push`);
      seen.add(t.id);
      if (t.priority !== undefined && !PRIORITIES.includes(t.priority)) {
        throw new SandqError(`task ${i + 1}: priority must be high, normal or low`);
      }
      if (t.idempotency_key !== undefined && typeof t.idempotency_key !== 'string') {
        throw new SandqError(`task ${i + 1}: idempotency_key must be a string`);
      }
      // JSON.stringify writes NaN and Infinity as null: the task would run
      // with a value it was not given. Refused, naming the field.
      return JSON.stringify({ enqueued_at_ms: now, ...t, batch }, function finite(k, v) {
        if (typeof v === 'number' && !Number.isFinite(v)) {
          throw new SandqError(`task ${i + 1} (id '${t.id}'): ${k || 'a value'} is ${v}, which JSON cannot carry; ` +
                               'nothing was pushed');
        }
        return v;
      });
    });
    const shards = await this.shards();
    if (shards === 1) { // one atomic step
      await this.enqueue(0, 1, batch, payloads);
      return batch;
    }
    // Sharded, as the C producer pushes (common/queue/queue_batch.c): runs of
    // consecutive tasks, each run one atomic step on one shard (the next in
    // turn, or the one a task's idempotency_key belongs to).
    const chunk = Math.min(Math.max(Math.ceil(tasks.length / shards), 1), PUSH_CHUNK);
    for (let i = 0; i < tasks.length;) {
      let s = shardOf(tasks[i], shards);
      if (s < 0) {
        s = this.nextShard % shards;
        this.nextShard = (s + 1) % shards;
      }
      let j = i + 1;
      while (j < tasks.length && j - i < chunk && [-1, s].includes(shardOf(tasks[j], shards))) j++;
      await this.enqueue(s, shards, batch, payloads.slice(i, j));
      i = j;
    }
    return batch;
  }

  // The queue's shard count, as recorded in sq:{Q}:shards by the first sandq
  // program that opened it (1 when none has).
  async shards() {
    const v = await this.r(() => this.redis.get(this.prefix + 'shards'));
    if (v === null) return 1;
    const n = /^[0-9]+$/.test(v) ? parseInt(v, 10) : 0;
    if (n < 1 || n > MAX_SHARDS) {
      throw new SandqError(`${this.prefix}shards: '${v}' is not a shard count 1-${MAX_SHARDS} ` +
                           '(docs/operations.md, "Sharded queues")');
    }
    return n;
  }

  // The key prefix of shard s (sq:{Q}: for a queue of one shard).
  tag(s, shards) {
    return shards === 1 ? this.prefix : `sq:{${this.queue}#${s}}:`;
  }

  async fcall(fn, tag, ...args) {
    try {
      return await this.redis.call('FCALL', fn, 1, tag + 'tasks', ...args);
    } catch (e) {
      const down = this.unreachable(e);
      if (down) throw down;
      if (/Function not found/.test(e.message)) {
        throw new SandqError('this Redis has no sandq functions yet: start a sandq worker (or run any ' +
                             'sandq-producer command) against it once');
      }
      throw new SandqError((fn === 'sq1_enqueue' ? 'push refused: ' : fn + ': ') + e.message);
    }
  }

  async enqueue(s, shards, batch, payloads) {
    const cap = this.maxQueueLen > 0 ? Math.ceil(this.maxQueueLen / shards) : 0; // each shard's share
    await this.fcall('sq1_enqueue', this.tag(s, shards), batch, this.retentionS, cap, ...payloads);
  }

  // The batch's counters: total, done, dead, duplicate, statuses
  // ({status: count}), cost_usd, finished. finished is the server's decision
  // (sq1_batch_get); a sharded queue's batch is finished when every shard
  // that holds some of its tasks says so.
  async status(batch) {
    const shards = await this.shards();
    const st = { batch, statuses: {}, total: 0, done: 0, dead: 0, duplicate: 0, cost_usd: 0 };
    let finished = true;
    for (let s = 0; s < shards; s++) {
      const r = await this.fcall('sq1_batch_get', this.tag(s, shards), batch);
      const h = {};
      for (let i = 0; i < r.length; i += 2) h[r[i]] = r[i + 1];
      const total = parseInt(h.total || '0', 10);
      for (const k of ['total', 'done', 'dead', 'duplicate']) st[k] += parseInt(h[k] || '0', 10);
      for (const [k, v] of Object.entries(h)) {
        if (k.startsWith('status:')) {
          const name = k.slice('status:'.length);
          st.statuses[name] = (st.statuses[name] || 0) + parseInt(v, 10);
        }
      }
      if (total > 0 && h.finished !== '1') finished = false;
    }
    st.finished = finished && st.total > 0;
    st.cost_usd = Number((await this.r(() => this.redis.hget(this.prefix + 'batch:' + batch, 'cost_usd'))) || 0); // {Q}
    return st;
  }

  // Every stored result of the batch, decoded: {taskId: document}.
  async results(batch) {
    const out = {};
    const shards = await this.shards();
    for (let s = 0; s < shards; s++) {
      const key = this.tag(s, shards) + 'results:' + batch;
      let cursor = '0';
      do {
        const [next, kv] = await this.r(() => this.redis.hscanBuffer(key, cursor, 'COUNT', 500));
        cursor = next.toString();
        for (let i = 0; i < kv.length; i += 2) {
          const taskId = kv[i].toString('utf8');
          out[taskId] = fullResult(taskId, batch, kv[i + 1]);
        }
      } while (cursor !== '0');
    }
    return out;
  }

  // Waits until every task of the batch has a result (or sits in the dead
  // letter) and resolves to results(batch). options.progress(status) is
  // called each time the counters change; options.timeout in seconds
  // (undefined: no limit) rejects with TimeoutError (.status: last counters).
  // A batch the queue has never seen (nothing pushed to it, or expired)
  // rejects at once with SandqError.
  async wait(batch, { timeout, progress, pollMs = 250 } = {}) {
    if (timeout !== undefined && !(typeof timeout === 'number' && timeout >= 0)) {
      throw new RangeError(`timeout ${timeout}: must be a number of seconds >= 0, or undefined for no limit`);
    }
    const deadline = timeout === undefined ? Infinity : Date.now() + timeout * 1000;
    let last = '';
    for (let first = true; ; first = false) {
      const st = await this.status(batch);
      if (first && st.total + st.done + st.dead + st.duplicate === 0 && Object.keys(st.statuses).length === 0) {
        throw new SandqError(`batch ${batch} is unknown to queue ${this.queue}: nothing was pushed to it ` +
                             '(or its results expired)');
      }
      const key = [st.total, st.done, st.dead, st.duplicate].join(' ');
      if (progress && key !== last) progress(st);
      last = key;
      if (st.finished) return this.results(batch);
      if (Date.now() >= deadline) {
        throw new TimeoutError(`batch ${batch}: ${st.done + st.dead + st.duplicate} of ${st.total} tasks settled ` +
                               `after ${timeout}s`, st);
      }
      await sleep(pollMs);
    }
  }
}

function shardOf(task, shards) {
  return task.idempotency_key ? keySlot(task.idempotency_key) % shards : -1;
}

module.exports = { Client, SandqError, TimeoutError, keySlot };
