"""sandq: a Python client for the sandq queue (enqueue, wait, read results).

Tasks go in with one atomic Redis Function call (``FCALL sq1_enqueue``,
docs/formats.md), which pushes them and counts them into their batch in one
step; results come back as the BSON documents the workers store, decoded
with pymongo's ``bson``. Needs redis-py (>= 4.1, for FCALL) and bson
(Debian: python3-redis, python3-bson). A sharded queue (``shards: N``,
docs/operations.md) is served as the C producer serves it: tasks spread
over its shards' keys ``sq:{Q#k}:tasks``, counters and results added up
from every shard.

    import sandq
    c = sandq.Client("redis://127.0.0.1:6379")
    batch = c.push([{"id": "t1", "code": "print(42)", "expected_stdout": "42"}])
    results = c.wait(batch, timeout=60)
    print(results["t1"]["status"])      # "passed"
"""
import json
import os
import re
import time

import bson
import redis

__all__ = ["Client", "SandqError", "TimeoutError", "key_slot"]
__version__ = "0.1.0"

_NAME = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_QUEUE = re.compile(r"^[A-Za-z0-9._:-]{1,63}$")
_PRIORITIES = ("high", "normal", "low")
_PUSH_CHUNK = 500  # tasks per atomic step on a sharded queue (the C producer's)
_MAX_SHARDS = 64


class SandqError(Exception):
    """A refused push, a Redis that lacks the sandq functions, a bad argument."""


class _ValueError(SandqError, ValueError):
    """A task or an argument no JSON or wait can take (NaN, a negative
    timeout): a ValueError, and a SandqError as every refusal is."""


class TimeoutError(SandqError):  # noqa: A001 (the name users expect)
    """wait() ran out of time; .status holds the batch's last counters."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _crc16(data):
    """CRC16-XMODEM, Redis Cluster's key hash (common/queue/queue_cluster.c)."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def key_slot(key):
    """The Redis Cluster slot of key (str or bytes), hash tags included: the
    one sq__key_slot computes, so a task's idempotency_key picks the same
    shard here as in the C producer."""
    if isinstance(key, str):
        key = key.encode("utf-8")
    o = key.find(b"{")
    if o >= 0:
        c = key.find(b"}", o + 1)
        if c > o + 1:
            key = key[o + 1:c]
    return _crc16(key) & 16383


def _cluster(url):
    """A Redis Cluster client for redis-cluster://[user:password@]host:port[,host:port...]
    (the workers' URL; the password, when the URL has none, from
    SANDQ_REDIS_PASSWORD as the workers take it). Each command goes to the
    master of its key's slot; every key of a queue's shard shares one hash
    tag, so each FCALL runs on one node."""
    from redis.cluster import ClusterNode, RedisCluster

    rest = url[len("redis-cluster://"):].rstrip("/")
    user = password = None
    if "@" in rest:
        auth, rest = rest.rsplit("@", 1)
        user, _, password = auth.rpartition(":")
        user = user or None
    password = password or os.environ.get("SANDQ_REDIS_PASSWORD") or None
    nodes = []
    for seed in rest.split(","):
        host, _, port = seed.rpartition(":") if ":" in seed else (seed, "", "6379")
        if not host or not port.isdigit():
            raise SandqError("redis URL %r: want redis-cluster://host:port[,host:port...]" % (url,))
        nodes.append(ClusterNode(host, int(port)))
    return RedisCluster(startup_nodes=nodes, username=user, password=password)


# The jail's layers in bit order (docs/formats.md): a stored result keeps
# jail.layers as a bit mask of these.
_LAYERS = ("pid_ns", "net_ns", "mount_ns", "ipc_ns", "uts_ns", "cgroup_ns", "new_root", "uid", "caps",
           "no_new_privs", "rlimits", "cgroup_memory", "cgroup_pids", "seccomp", "seccomp_notify", "cgroup_cpu")


def _full_result(task_id, batch, raw):
    """A stored result (BSON bytes) in full, as docs/formats.md shows it:
    Redis keeps neither _id nor batch (its field and key hold them) and
    jail.layers as a bit mask; a result stored in full comes as it is."""
    doc = bson.BSON(raw).decode()
    if "_id" in doc:
        return doc
    jail = doc.get("jail")
    if isinstance(jail, dict) and isinstance(jail.get("layers"), int):
        mask = jail["layers"]
        jail["layers"] = [_LAYERS[b] if b < len(_LAYERS) else "bit%d" % b for b in range(32) if mask >> b & 1]
    return {"_id": task_id, "batch": batch, **doc}


def _new_batch_id():
    return time.strftime("b-%Y%m%d-%H%M%S-", time.gmtime()) + os.urandom(2).hex()


class Client:
    """A connection to one sandq queue.

    url: ``redis://[user:password@]host[:port][/db]`` or ``unix:///path``
    (the same URL the workers take). queue: the queue name (default
    "default"). retention_s and max_queue_len should match the workers'
    ``retention_s`` and ``max_queue_len`` (docs/configuration.md).
    """

    def __init__(self, url="redis://127.0.0.1:6379", queue="default", retention_s=604800,
                 max_queue_len=1000000):
        if url.startswith("rediss://"):
            raise SandqError("rediss:// (TLS) is not supported by sandq: reach Redis through a TLS tunnel "
                             "(docs/deploy.md, \"Redis over TLS\")")
        if not _QUEUE.match(queue):
            raise SandqError("queue %r: 1-63 characters of A-Z a-z 0-9 . _ : -" % (queue,))
        self.queue = queue
        self.retention_s = int(retention_s)
        self.max_queue_len = int(max_queue_len)
        self._redis = _cluster(url) if url.startswith("redis-cluster://") else redis.Redis.from_url(url)
        self._p = "sq:{%s}:" % queue
        self._next_shard = 0
        self._shards = None  # the recorded count, once read (shards())

    def close(self):
        self._redis.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def push(self, tasks, batch=None):
        """Enqueues tasks (dicts, docs/formats.md) into batch (a new id when
        None) and returns the batch id. Each task is stamped with ``batch``
        and ``enqueued_at_ms``. Pushing into an existing batch grows it.
        Raises SandqError when a task is refused (nothing is pushed then) or
        the queue is full. A queue of one shard takes the tasks in one
        atomic step; a sharded one in one step per run of tasks on a shard,
        so a full shard refuses its run and those after it, and the runs
        before it stay pushed (a prefix of tasks)."""
        batch = batch or _new_batch_id()
        if not _NAME.match(batch):
            raise SandqError("batch %r: 1-128 characters of A-Z a-z 0-9 . _ : -" % (batch,))
        tasks = list(tasks)
        if not tasks:
            raise SandqError("push: no tasks")
        now = int(time.time() * 1000)
        seen, payloads = set(), []
        for i, t in enumerate(tasks):
            if not isinstance(t, dict) or not isinstance(t.get("id"), str):
                raise SandqError("task %d: must be a dict with a string 'id'" % (i + 1))
            if t["id"] in seen:
                raise SandqError("task %d: id %r is used twice in this push" % (i + 1, t["id"]))
            seen.add(t["id"])
            if t.get("priority", "normal") not in _PRIORITIES:
                raise SandqError("task %d: priority must be high, normal or low" % (i + 1))
            if not isinstance(t.get("idempotency_key", ""), str):
                raise SandqError("task %d: idempotency_key must be a string" % (i + 1))
            t = dict(t, batch=batch)
            t.setdefault("enqueued_at_ms", now)
            try:  # NaN and Infinity are not JSON: a worker would file the task under _invalid
                payloads.append(json.dumps(t, ensure_ascii=False, separators=(",", ":"), allow_nan=False))
            except ValueError:
                raise _ValueError("task %d (id %r): holds NaN or an infinity, which JSON cannot carry; "
                                 "nothing was pushed" % (i + 1, t["id"])) from None
        shards = self.shards()
        if shards == 1:  # one atomic step
            self._enqueue(0, 1, batch, payloads)
            return batch
        # Sharded, as the C producer pushes (common/queue/queue_batch.c): runs
        # of consecutive tasks, each run one atomic step on one shard (the
        # next in turn, or the one a task's idempotency_key belongs to).
        chunk = min(max(-(-len(tasks) // shards), 1), _PUSH_CHUNK)
        i = 0
        while i < len(tasks):
            s = self._shard_of(tasks[i], shards)
            if s < 0:
                s = self._next_shard % shards
                self._next_shard = (s + 1) % shards
            j = i + 1
            while j < len(tasks) and j - i < chunk and self._shard_of(tasks[j], shards) in (-1, s):
                j += 1
            self._enqueue(s, shards, batch, payloads[i:j])
            i = j
        return batch

    def shards(self):
        """The queue's shard count, as recorded in sq:{Q}:shards by the first
        sandq program that opened it (1 when none has). A recorded count is
        read once: it changes only with every handle stopped
        (docs/operations.md, "Sharded queues")."""
        if self._shards is not None:
            return self._shards
        v = self._redis.get(self._p + "shards")
        if v is None:
            return 1
        try:
            n = int(v)
        except ValueError:
            n = 0
        if not 1 <= n <= _MAX_SHARDS:
            raise SandqError("%sshards: %r is not a shard count 1-%d (docs/operations.md, \"Sharded queues\")" %
                             (self._p, v, _MAX_SHARDS))
        self._shards = n
        return n

    def _tag(self, shard, shards):
        """The key prefix of shard (sq:{Q}: for a queue of one shard)."""
        return self._p if shards == 1 else "sq:{%s#%d}:" % (self.queue, shard)

    @staticmethod
    def _shard_of(task, shards):
        key = task.get("idempotency_key")
        return key_slot(key) % shards if key else -1

    def _fcall(self, fn, tag, *args):
        try:
            return self._redis.fcall(fn, 1, tag + "tasks", *args)
        except redis.exceptions.ResponseError as e:
            msg = str(e)
            if "Function not found" in msg:
                raise SandqError("this Redis has no sandq functions yet: start a sandq worker (or run any "
                                 "sandq-producer command) against it once") from None
            raise SandqError(("push refused: " if fn == "sq1_enqueue" else fn + ": ") + msg) from None

    def _enqueue(self, shard, shards, batch, payloads):
        cap = -(-self.max_queue_len // shards) if self.max_queue_len > 0 else 0  # each shard's share
        self._fcall("sq1_enqueue", self._tag(shard, shards), batch, self.retention_s, cap, *payloads)

    def status(self, batch):
        """The batch's counters: total, done, dead, duplicate, statuses
        ({status: count}), cost_usd, finished (bool). finished is the
        server's decision (sq1_batch_get); a sharded queue's batch is
        finished when every shard that holds some of its tasks says so.
        Raises SandqError for a batch name sandq cannot hold and for a
        batch no shard knows (never pushed, or past retention_s), rather
        than counting it as zeros."""
        if not isinstance(batch, str) or not _NAME.match(batch):
            raise SandqError("batch %r: 1-128 characters of A-Z a-z 0-9 . _ : -" % (batch,))
        shards = self.shards()
        known = False
        st = {"batch": batch, "statuses": {}, "total": 0, "done": 0, "dead": 0, "duplicate": 0, "cost_usd": 0.0}
        finished = True
        for s in range(shards):
            r = self._fcall("sq1_batch_get", self._tag(s, shards), batch)
            h = {r[i].decode(): r[i + 1].decode() for i in range(0, len(r), 2)}
            known = known or any(k != "finished" for k in h)  # sq1_batch_get always says finished
            part = {k: int(h.get(k, 0) or 0) for k in ("total", "done", "dead", "duplicate")}
            for k in part:
                st[k] += part[k]
            for k, v in h.items():
                if k.startswith("status:"):
                    name = k[len("status:"):]
                    st["statuses"][name] = st["statuses"].get(name, 0) + int(v)
            if part["total"] > 0 and h.get("finished") != "1":
                finished = False
        if not known:
            raise SandqError("batch %r is unknown in queue %r (never pushed, or past retention_s)" %
                             (batch, self.queue))
        st["finished"] = finished and st["total"] > 0
        cost = self._redis.hget(self._p + "batch:" + batch, "cost_usd")  # the spend lives under {Q}
        st["cost_usd"] = float(cost or 0)
        return st

    def results(self, batch):
        """Every stored result of the batch, decoded: {task id: document}."""
        out, shards = {}, self.shards()
        for s in range(shards):
            for k, v in self._redis.hscan_iter(self._tag(s, shards) + "results:" + batch):
                task_id = k.decode("utf-8", "replace")
                out[task_id] = _full_result(task_id, batch, v)
        return out

    def wait(self, batch, timeout=None, progress=None, poll_s=0.25):
        """Waits until every task of the batch has a result (or sits in the
        dead letter) and returns results(batch). progress, when given, is
        called with status(batch) each time the counters change. Raises
        TimeoutError after timeout seconds (None: no limit; a negative or
        NaN timeout is a ValueError)."""
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout >= 0):
            raise _ValueError("timeout %r: must be a number of seconds >= 0, or None for no limit" % (timeout,))
        if not (isinstance(poll_s, (int, float)) and poll_s > 0):
            raise _ValueError("poll_s %r: must be a number of seconds > 0" % (poll_s,))
        deadline = None if timeout is None else time.monotonic() + timeout
        last = None
        while True:
            st = self.status(batch)
            key = (st["total"], st["done"], st["dead"], st["duplicate"])
            if progress and key != last:
                progress(st)
            last = key
            if st["finished"]:
                return self.results(batch)
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError("batch %s: %d of %d tasks settled after %ss" %
                                   (batch, st["done"] + st["dead"] + st["duplicate"], st["total"], timeout), st)
            time.sleep(poll_s)
