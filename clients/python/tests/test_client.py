"""The sandq client against a real Redis and real sandq workers.

Run by tests/integration/client_python.sh (ctest client_python, in `make
test`), which starts them and sets:
  SANDQ_REDIS_URL          the Redis the workers serve (queue "default")
  SANDQ_TEST_SHARDED_QUEUE a queue recorded with 3 shards, a worker serving it
  SQ_BIN                   the build's programs (sandq-producer)
  SANDQ_TEST_CLUSTER_URL   a three-master Redis Cluster (redis-cluster://seed)
                           whose queue "sh" has 3 shards and a worker
Without SANDQ_REDIS_URL every test here is skipped, and the script fails a
run that skipped anything.
"""
import os
import subprocess
import tempfile
import time
import unittest

import bson

import sandq

URL = os.environ.get("SANDQ_REDIS_URL")
SHARDED = os.environ.get("SANDQ_TEST_SHARDED_QUEUE")
CLUSTER = os.environ.get("SANDQ_TEST_CLUSTER_URL")


@unittest.skipUnless(URL, "SANDQ_REDIS_URL is not set (run through tests/integration/client_python.sh)")
class ClientTest(unittest.TestCase):
    def setUp(self):
        self.c = sandq.Client(URL)
        self.r = self.c._redis

    def tearDown(self):
        self.c.close()

    def test_push_wait_results_status(self):
        tasks = [{"id": "p%d" % i, "code": "print(%d)" % i, "expected_stdout": str(i)} for i in range(20)]
        tasks.append({"id": "fails", "code": "assert 1 == 2"})
        seen = []
        b = self.c.push(tasks, batch="py-1")
        self.assertEqual(b, "py-1")
        res = self.c.wait(b, timeout=120, progress=seen.append)
        self.assertEqual(len(res), 21, sorted(res))
        for i in range(20):
            self.assertEqual(res["p%d" % i]["status"], "passed")
        self.assertEqual(res["fails"]["status"], "failed")
        self.assertEqual((res["p3"]["stdout"], res["p3"]["batch"], res["p3"]["_id"]), ("3\n", "py-1", "p3"))
        # stored compactly (no _id or batch, layers as a bit mask), read back in full
        layers = res["p3"]["jail"]["layers"]
        self.assertTrue(layers and all(n in sandq._LAYERS for n in layers), layers)
        raw = bson.decode(self.c._redis.hget(self.c._p + "results:" + b, "p3"))
        self.assertEqual(("_id" in raw, "batch" in raw, type(raw["jail"]["layers"])), (False, False, int), raw)
        self.assertTrue(seen and seen[-1]["finished"] and seen[-1]["total"] == 21, seen[-1])
        for a, later in zip(seen, seen[1:]):
            self.assertLessEqual(a["done"], later["done"], "progress went backwards")
        st = self.c.status(b)
        self.assertEqual((st["total"], st["done"], st["statuses"]), (21, 21, {"passed": 20, "failed": 1}))
        self.assertEqual(self.c.results(b), res)

    def test_generated_batch_grows(self):
        b = self.c.push([{"id": "g1", "code": "print(1)"}])
        self.assertRegex(b, r"^b-\d{8}-\d{6}-[0-9a-f]{4}$")
        self.c.wait(b, timeout=60)
        self.c.push([{"id": "g2", "code": "print(2)"}], batch=b)
        res = self.c.wait(b, timeout=60)
        self.assertEqual(sorted(res), ["g1", "g2"])
        self.assertEqual(self.c.status(b)["total"], 2)

    def test_finished_is_the_servers_flag(self):
        # counts that add up do not finish a batch the server has not marked
        self.r.hset("sq:{default}:batch:flag", mapping={"total": 1, "done": 1, "finished": 0})
        self.assertFalse(self.c.status("flag")["finished"])
        self.r.hset("sq:{default}:batch:flag", "finished", 1)
        self.assertTrue(self.c.status("flag")["finished"])
        # a batch hash from before the flag: the server's old rule (its finish
        # stamp at its current total), not the client's
        self.r.hset("sq:{default}:batch:old", mapping={"total": 2, "done": 2})
        self.assertFalse(self.c.status("old")["finished"])
        self.r.hset("sq:{default}:batch:old", mapping={"finished_at_ms": 1, "finished_total": 2})
        self.assertTrue(self.c.status("old")["finished"])

    def test_refused_push_pushes_nothing(self):
        before = self.r.llen("sq:{default}:tasks")
        for bad, needle in (([{"id": "x", "code": "print(1)", "priority": "urgent"}], "priority"),
                            ([{"id": "x", "code": "1"}, {"id": "x", "code": "2"}], "used twice"),
                            ([{"code": "1"}], "string 'id'"),
                            ([{"id": "x", "code": "1", "idempotency_key": 7}], "idempotency_key")):
            with self.assertRaises(sandq.SandqError) as e:
                self.c.push(bad, batch="refused")
            self.assertIn(needle, str(e.exception))
        self.assertEqual(self.r.llen("sq:{default}:tasks"), before)
        self.assertFalse(self.r.exists("sq:{default}:batch:refused"))
        # a task the server refuses (BADTASK): nothing pushed either
        with self.assertRaises(sandq.SandqError) as e:
            self.c._enqueue(0, 1, "refused", ['{"id":"ok","batch":"refused"}', '{"id":""}'])
        self.assertIn("BADTASK 2", str(e.exception))
        self.assertFalse(self.r.exists("sq:{default}:batch:refused"))
        # a damaged shard record is named
        self.r.set("sq:{damaged}:shards", "lots")
        with self.assertRaises(sandq.SandqError) as e:
            sandq.Client(URL, queue="damaged").push([{"id": "d", "code": "1"}])
        self.assertIn("sq:{damaged}:shards", str(e.exception))
        self.assertFalse(self.r.exists("sq:{damaged}:tasks"))

    def test_timeout(self):
        b = self.c.push([{"id": "slow", "code": "import time\ntime.sleep(3)"}])
        t0 = time.monotonic()
        with self.assertRaises(sandq.TimeoutError) as e:
            self.c.wait(b, timeout=0.5)
        self.assertEqual(e.exception.status["total"], 1)
        self.assertFalse(e.exception.status["finished"])
        self.assertLess(time.monotonic() - t0, 3)
        rs = self.c.wait(b, timeout=60)["slow"]
        self.assertEqual(rs["status"], "ok", (rs.get("reason"), rs.get("stderr")))

    def test_unknown_batch_is_no_zeros(self):
        with self.assertRaises(sandq.SandqError) as e:
            self.c.status("never-pushed")
        self.assertIn("batch 'never-pushed' is unknown in queue 'default'", str(e.exception))
        with self.assertRaises(sandq.SandqError):
            self.c.wait("never-pushed", timeout=5)

    def test_rediss_refused(self):
        with self.assertRaises(sandq.SandqError) as e:
            sandq.Client("rediss://example.com:6380")
        self.assertIn("docs/deploy.md", str(e.exception))



class RefusedBeforeRedisTest(unittest.TestCase):
    """What the client refuses itself, with no Redis asked (none listens)."""

    def setUp(self):
        self.c = sandq.Client("redis://127.0.0.1:1")

    def tearDown(self):
        self.c.close()

    def test_non_finite_numbers(self):
        # json.dumps wrote a bare NaN: the worker filed the task under _invalid
        # and the batch never finished
        for bad in (float("nan"), float("inf"), -float("inf")):
            for task in ({"id": "n", "code": "1", "temperature": bad},
                         {"id": "n", "code": "1", "limits": {"wall_ms": bad}},
                         {"id": "n", "code": "1", "metadata": {"score": [bad]}}):
                with self.assertRaises(ValueError) as e:
                    self.c.push([{"id": "ok", "code": "1"}, task], batch="nan")
                self.assertIn("task 2 (id 'n'): holds NaN or an infinity", str(e.exception))
                self.assertIsInstance(e.exception, sandq.SandqError)

    def test_bad_arguments(self):
        for timeout in (-5, -0.1, float("nan"), "10"):
            with self.assertRaises(ValueError) as e:
                self.c.wait("b", timeout=timeout)
            self.assertIn("timeout", str(e.exception))
        for batch in ("a b", "", "x" * 129, None):
            with self.assertRaises(sandq.SandqError):
                self.c.status(batch)


class KeySlotTest(unittest.TestCase):
    def test_key_slot(self):
        # the Redis Cluster specification's CRC16 check value, and "foo"
        self.assertEqual(sandq.key_slot("123456789"), 12739)
        self.assertEqual(sandq.key_slot(b"foo"), 12182)
        # a hash tag: only what is between the first { and the } after it
        self.assertEqual(sandq.key_slot("{user1000}.following"), sandq.key_slot("user1000"))
        self.assertEqual(sandq.key_slot("x{a}{b}"), sandq.key_slot("a"))
        # an empty tag is no tag
        self.assertNotEqual(sandq.key_slot("a{}b"), sandq.key_slot(""))
        self.assertEqual(sandq.key_slot("k\u00e9"), sandq.key_slot("k\u00e9".encode("utf-8")))


@unittest.skipUnless(URL and SHARDED, "SANDQ_TEST_SHARDED_QUEUE is not set (run through "
                     "tests/integration/client_python.sh)")
class ShardedTest(unittest.TestCase):
    def setUp(self):
        self.c = sandq.Client(URL, queue=SHARDED)
        self.r = self.c._redis

    def tearDown(self):
        self.c.close()

    def test_push_spreads_and_completes(self):
        self.assertEqual(self.c.shards(), 3)
        tasks = [{"id": "s%02d" % i, "code": "print(%d)" % i, "expected_stdout": str(i)} for i in range(12)]
        b = self.c.push(tasks, batch="sh-1")
        parts = [int(self.r.hget("sq:{%s#%d}:batch:sh-1" % (SHARDED, k), "total") or 0) for k in range(3)]
        self.assertEqual(parts, [4, 4, 4])  # runs of 4, one per shard
        self.assertFalse(self.r.exists("sq:{%s}:tasks" % SHARDED), "tasks under the home tag")
        res = self.c.wait(b, timeout=120)
        self.assertEqual(sorted(res), ["s%02d" % i for i in range(12)])
        self.assertTrue(all(r["status"] == "passed" for r in res.values()), res)
        st = self.c.status(b)
        self.assertEqual((st["total"], st["done"], st["statuses"], st["finished"]), (12, 12, {"passed": 12}, True))

    def test_finished_when_every_part_is(self):
        for k, fin in ((0, 1), (1, 0)):
            self.r.hset("sq:{%s#%d}:batch:parts" % (SHARDED, k), mapping={"total": 1, "done": 1, "finished": fin})
        self.assertFalse(self.c.status("parts")["finished"])
        self.r.hset("sq:{%s#1}:batch:parts" % SHARDED, "finished", 1)
        st = self.c.status("parts")
        self.assertTrue(st["finished"])
        self.assertEqual((st["total"], st["done"]), (2, 2))

    def test_idempotency_key_picks_the_c_producers_shard(self):
        keys = ["key-%d" % i for i in range(6)]
        self.c.push([{"id": k, "code": "print(1)", "idempotency_key": k} for k in keys], batch="idem-py")
        for k in keys:
            s = sandq.key_slot(k) % 3
            self.assertTrue(self.r.exists("sq:{%s#%d}:idem:%s" % (SHARDED, s, k)), k)
        sq_bin = os.environ.get("SQ_BIN")
        if not sq_bin:
            self.skipTest("SQ_BIN is not set: the C producer is not at hand")
        # the C producer, given the same keys, finds each on the shard the
        # client chose: every task a duplicate, nothing pushed
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            for k in keys:
                f.write('{"id":"%s","code":"print(1)","idempotency_key":"%s"}\n' % (k, k))
        try:
            subprocess.run([os.path.join(sq_bin, "sandq-producer"), "push", "--queue", SHARDED, "--batch",
                            "idem-c", f.name], check=True, capture_output=True,
                           env=dict(os.environ, SANDQ_REDIS_URL=URL))
        finally:
            os.unlink(f.name)
        with self.assertRaises(sandq.SandqError) as e:  # every task a duplicate: no batch was made
            self.c.status("idem-c")
        self.assertIn("unknown", str(e.exception))
        self.c.wait("idem-py", timeout=120)


@unittest.skipUnless(CLUSTER, "SANDQ_TEST_CLUSTER_URL is not set (run through tests/integration/client_python.sh)")
class ClusterTest(unittest.TestCase):
    def test_sharded_queue_over_the_masters(self):
        with sandq.Client(CLUSTER, queue="sh") as c:
            self.assertEqual(c.shards(), 3)
            owners = {c._redis.get_node_from_key("sq:{sh#%d}:tasks" % k).name for k in range(3)}
            self.assertGreaterEqual(len(owners), 2, "the shards all live on one master")
            tasks = [{"id": "c%02d" % i, "code": "print(%d)" % i} for i in range(30)]
            b = c.push(tasks, batch="cl-1")
            parts = [int(c._redis.hget("sq:{sh#%d}:batch:cl-1" % k, "total") or 0) for k in range(3)]
            self.assertEqual(parts, [10, 10, 10])
            res = c.wait(b, timeout=120)
            self.assertEqual(sorted(res), ["c%02d" % i for i in range(30)])
            st = c.status(b)
            self.assertEqual((st["total"], st["done"], st["finished"]), (30, 30, True))


if __name__ == "__main__":
    unittest.main()
