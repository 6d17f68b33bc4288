#!/bin/sh
# client_python.sh: clients/python against a real Redis and two real
# workers: the README example as written, then push/wait/results/status in
# detail (progress callbacks, a timeout, a refused push that pushes
# nothing, a batch grown by a second push, decoded BSON results).
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import redis, bson; redis.Redis.fcall' 2>/dev/null ||
  sq_skip "python3-redis (>= 4.1, with fcall) or python3-bson is not installed (scripts/install-deps.sh)"
sq_start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
sq_bg w1 "$SQ_BIN/sandq-worker" serve --worker-id py-w1 --log-level warn
sq_bg w2 "$SQ_BIN/sandq-worker" serve --worker-id py-w2 --log-level warn
sq_wait_for "redis-cli -p $SQ_REDIS_PORT FUNCTION LIST | grep -q sq1_enqueue" 20 ||
  { cat "$SQ_TMP/w1.log" >&2; sq_fail "the workers did not load the functions"; }

# 1. The README's example, as written, from the source tree.
awk '/^```python/{on=1; next} /^```/{on=0} on' "$SQ_SRC/clients/python/README.md" >"$SQ_TMP/readme.py"
(cd "$SQ_SRC" && timeout 120 $PY "$SQ_TMP/readme.py") >"$SQ_TMP/readme.out" 2>&1 ||
  { cat "$SQ_TMP/readme.out" >&2; sq_fail "the README example failed"; }
grep -q "^add passed" "$SQ_TMP/readme.out" && grep -q "^hello passed" "$SQ_TMP/readme.out" &&
  grep -q "{'passed': 2}" "$SQ_TMP/readme.out" || { cat "$SQ_TMP/readme.out" >&2; sq_fail "README example output"; }
echo "client_python: the README example ran as written"

# 2. The API in detail.
PYTHONPATH="$SQ_SRC/clients/python" timeout 180 $PY - <<'PY' || sq_fail "client API checks failed"
import os, sandq, time
c = sandq.Client(os.environ["SANDQ_REDIS_URL"])
tasks = [{"id": "p%d" % i, "code": "print(%d)" % i, "expected_stdout": str(i)} for i in range(20)]
tasks.append({"id": "fails", "code": "assert 1 == 2"})
seen = []
b = c.push(tasks, batch="py-1")
assert b == "py-1", b
res = c.wait(b, timeout=120, progress=seen.append)
assert len(res) == 21, sorted(res)
assert all(res["p%d" % i]["status"] == "passed" for i in range(20)), res["p0"]
assert res["fails"]["status"] == "failed", res["fails"]["status"]
assert res["p3"]["stdout"] == "3\n" and res["p3"]["batch"] == "py-1" and res["p3"]["_id"] == "p3"
assert seen and seen[-1]["finished"] and seen[-1]["total"] == 21, seen[-1]
assert all(a["done"] <= b_["done"] for a, b_ in zip(seen, seen[1:])), "progress went backwards"
st = c.status(b)
assert st["total"] == 21 and st["done"] == 21 and st["statuses"] == {"passed": 20, "failed": 1}, st
assert c.results(b) == res

# a generated batch id, and a batch grown by a second push
b2 = c.push([{"id": "g1", "code": "print(1)"}])
assert b2.startswith("b-"), b2
c.wait(b2, timeout=60)
c.push([{"id": "g2", "code": "print(2)"}], batch=b2)
res2 = c.wait(b2, timeout=60)
assert sorted(res2) == ["g1", "g2"] and c.status(b2)["total"] == 2, (sorted(res2), c.status(b2))

# a refused push pushes nothing; duplicates in one push are refused by the client
r = c._redis
before = r.llen("sq:{default}:tasks")
for bad, needle in ([{"id": "x", "code": "print(1)", "priority": "urgent"}], "priority"), \
                   ([{"id": "x", "code": "1"}, {"id": "x", "code": "2"}], "used twice"), \
                   ([{"code": "1"}], "string 'id'"):
    try:
        c.push(bad, batch="refused")
        raise AssertionError("pushed %r" % bad)
    except sandq.SandqError as e:
        assert needle in str(e), str(e)
assert r.llen("sq:{default}:tasks") == before and not r.exists("sq:{default}:batch:refused")
# a sharded queue (its recorded count above 1): the push is refused, nothing pushed
r.set("sq:{wide}:shards", "3")
try:
    sandq.Client(os.environ["SANDQ_REDIS_URL"], queue="wide").push([{"id": "w1", "code": "print(1)"}], batch="w")
    raise AssertionError("pushed into a sharded queue's home tag")
except sandq.SandqError as e:
    assert "SHARDED 3" in str(e) and "sq:{wide#k}:tasks" in str(e), str(e)
assert not r.exists("sq:{wide}:tasks") and not r.exists("sq:{wide}:batch:w")

# a timeout: a task that sleeps longer than we wait
b3 = c.push([{"id": "slow", "code": "import time\ntime.sleep(3)"}])
t0 = time.monotonic()
try:
    c.wait(b3, timeout=0.5)
    raise AssertionError("no timeout")
except sandq.TimeoutError as e:
    assert e.status["total"] == 1 and not e.status["finished"], e.status
assert time.monotonic() - t0 < 3
rs = c.wait(b3, timeout=60)["slow"]
assert rs["status"] == "ok", (rs["status"], rs.get("reason"), rs.get("stderr"))

try:
    sandq.Client("rediss://example.com:6380")
    raise AssertionError("rediss accepted")
except sandq.SandqError as e:
    assert "docs/deploy.md" in str(e), str(e)
print("client_python: push, wait with progress, results, status, timeout, refusals: ok")
PY
