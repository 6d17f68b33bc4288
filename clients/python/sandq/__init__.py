"""sandq: a Python client for the sandq queue (enqueue, wait, read results).

Tasks go in with one atomic Redis Function call (``FCALL sq1_enqueue``,
docs/formats.md), which pushes them and counts them into their batch in one
step; results come back as the BSON documents the workers store, decoded
with pymongo's ``bson``. Needs redis-py (>= 4.1, for FCALL) and bson
(Debian: python3-redis, python3-bson).

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

__all__ = ["Client", "SandqError", "TimeoutError"]
__version__ = "0.1.0"

_NAME = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_QUEUE = re.compile(r"^[A-Za-z0-9._:-]{1,63}$")


class SandqError(Exception):
    """A refused push, a Redis that lacks the sandq functions, a bad argument."""


class TimeoutError(SandqError):  # noqa: A001 (the name users expect)
    """wait() ran out of time; .status holds the batch's last counters."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


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
        self._redis = redis.Redis.from_url(url)
        self._p = "sq:{%s}:" % queue

    def close(self):
        self._redis.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def push(self, tasks, batch=None):
        """Enqueues tasks (dicts, docs/formats.md) into batch (a new id when
        None) in one atomic step and returns the batch id. Each task is
        stamped with ``batch`` and ``enqueued_at_ms``. Pushing into an
        existing batch grows it. Raises SandqError when a task is refused
        (nothing is pushed then) or the queue is full."""
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
            t = dict(t, batch=batch)
            t.setdefault("enqueued_at_ms", now)
            payloads.append(json.dumps(t, ensure_ascii=False, separators=(",", ":")))
        try:
            self._redis.fcall("sq1_enqueue", 1, self._p + "tasks", batch, self.retention_s,
                              self.max_queue_len, *payloads)
        except redis.exceptions.ResponseError as e:
            msg = str(e)
            if "Function not found" in msg:
                raise SandqError("this Redis has no sandq functions yet: start a sandq worker (or run any "
                                 "sandq-producer command) against it once") from None
            raise SandqError("push refused: " + msg) from None
        return batch

    def status(self, batch):
        """The batch's counters: total, done, dead, duplicate, statuses
        ({status: count}), cost_usd, finished (bool)."""
        h = {k.decode(): v.decode() for k, v in self._redis.hgetall(self._p + "batch:" + batch).items()}
        st = {"batch": batch, "statuses": {}, "cost_usd": float(h.get("cost_usd", 0) or 0)}
        for k in ("total", "done", "dead", "duplicate"):
            st[k] = int(h.get(k, 0) or 0)
        for k, v in h.items():
            if k.startswith("status:"):
                st["statuses"][k[len("status:"):]] = int(v)
        st["finished"] = st["total"] > 0 and st["done"] + st["dead"] + st["duplicate"] >= st["total"]
        return st

    def results(self, batch):
        """Every stored result of the batch, decoded: {task id: document}."""
        out = {}
        for k, v in self._redis.hscan_iter(self._p + "results:" + batch):
            out[k.decode("utf-8", "replace")] = bson.BSON(v).decode()
        return out

    def wait(self, batch, timeout=None, progress=None, poll_s=0.25):
        """Waits until every task of the batch has a result (or sits in the
        dead letter) and returns results(batch). progress, when given, is
        called with status(batch) each time the counters change. Raises
        TimeoutError after timeout seconds (None: no limit)."""
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
