// sandq: a Node.js client for the sandq queue (enqueue, wait, read results).
//
// Tasks go in with one atomic Redis Function call (FCALL sq1_enqueue,
// docs/formats.md), which pushes them and counts them into their batch in
// one step; results come back as the BSON documents the workers store,
// decoded with the npm bson package. Redis through ioredis.
'use strict';

const crypto = require('crypto');
const Redis = require('ioredis');
const { BSON } = require('bson');

const NAME = /^[A-Za-z0-9._:-]{1,128}$/;
const QUEUE = /^[A-Za-z0-9._:-]{1,63}$/;

class SandqError extends Error {}

class TimeoutError extends SandqError {
  constructor(message, status) {
    super(message);
    this.status = status; // the batch's last counters
  }
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
    this.redis = url.startsWith('unix://') ? new Redis({ path: url.slice('unix://'.length), ...opts })
                                           : new Redis(url, opts);
    this.prefix = `sq:{${this.queue}}:`;
  }

  async close() {
    await this.redis.quit();
  }

  // Enqueues tasks (objects, docs/formats.md) into batch (a new id when not
  // given) in one atomic step; resolves to the batch id. Each task is stamped
  // with batch and enqueued_at_ms. Pushing into an existing batch grows it.
  // Rejects with SandqError when a task is refused (nothing pushed then).
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
      return JSON.stringify({ enqueued_at_ms: now, ...t, batch });
    });
    try {
      await this.redis.call('FCALL', 'sq1_enqueue', 1, this.prefix + 'tasks', batch, this.retentionS,
                            this.maxQueueLen, ...payloads);
    } catch (e) {
      if (/Function not found/.test(e.message)) {
        throw new SandqError('this Redis has no sandq functions yet: start a sandq worker (or run any ' +
                             'sandq-producer command) against it once');
      }
      throw new SandqError('push refused: ' + e.message);
    }
    return batch;
  }

  // The batch's counters: total, done, dead, duplicate, statuses
  // ({status: count}), cost_usd, finished.
  async status(batch) {
    const h = await this.redis.hgetall(this.prefix + 'batch:' + batch);
    const st = { batch, statuses: {}, cost_usd: Number(h.cost_usd || 0) };
    for (const k of ['total', 'done', 'dead', 'duplicate']) st[k] = parseInt(h[k] || '0', 10);
    for (const [k, v] of Object.entries(h)) {
      if (k.startsWith('status:')) st.statuses[k.slice('status:'.length)] = parseInt(v, 10);
    }
    st.finished = st.total > 0 && st.done + st.dead + st.duplicate >= st.total;
    return st;
  }

  // Every stored result of the batch, decoded: {taskId: document}.
  async results(batch) {
    const out = {};
    const key = this.prefix + 'results:' + batch;
    let cursor = '0';
    do {
      const [next, kv] = await this.redis.hscanBuffer(key, cursor, 'COUNT', 500);
      cursor = next.toString();
      for (let i = 0; i < kv.length; i += 2) out[kv[i].toString('utf8')] = BSON.deserialize(kv[i + 1]);
    } while (cursor !== '0');
    return out;
  }

  // Waits until every task of the batch has a result (or sits in the dead
  // letter) and resolves to results(batch). options.progress(status) is
  // called each time the counters change; options.timeout in seconds
  // (undefined: no limit) rejects with TimeoutError (.status: last counters).
  async wait(batch, { timeout, progress, pollMs = 250 } = {}) {
    const deadline = timeout === undefined ? Infinity : Date.now() + timeout * 1000;
    let last = '';
    for (;;) {
      const st = await this.status(batch);
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

module.exports = { Client, SandqError, TimeoutError };
