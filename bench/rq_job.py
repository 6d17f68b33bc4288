# rq_job.py: the python3-rq half of bench/queue.sh. As a module, `run` is the
# RQ job: it writes the task's code to a file and runs it through the same
# jail as sandq, one `sandq-worker run --mode MODE FILE` process per job
# ($SANDQ_BENCH_WORKER, $SANDQ_BENCH_RQ_MODE), and fails unless it exited ok.
# As a script: rq_job.py REDIS_URL N WORKERS TIMEOUT_S waits for WORKERS RQ
# workers, enqueues N jobs, waits for all of them, prints the rate.
import json
import os
import subprocess
import sys
import tempfile
import time


def run(code):
    worker = os.environ["SANDQ_BENCH_WORKER"]
    mode = os.environ.get("SANDQ_BENCH_RQ_MODE", "spawn")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)
    try:
        p = subprocess.run([worker, "run", "--mode", mode, f.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    try:
        r = json.loads(p.stdout)
    except ValueError:
        r = {}
    if r.get("status") != "ok" or r.get("stdout") != "1\n":
        raise RuntimeError("jailed run did not succeed (exit %d): %s %s" % (p.returncode, p.stdout[:300], p.stderr[-500:]))
    return r["status"]


def fail(msg):
    print("rq: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def drive(url, n, workers, timeout_s):
    import redis
    from rq import Queue, Worker
    from rq.registry import FailedJobRegistry, FinishedJobRegistry

    conn = redis.Redis.from_url(url)
    deadline = time.monotonic() + 30
    while len(Worker.all(connection=conn)) < workers:
        if time.monotonic() > deadline:
            fail("%d rq worker(s) did not register within 30 s (see the rq worker logs)" % workers)
        time.sleep(0.1)
    q = Queue("sq", connection=conn)
    finished, failed = FinishedJobRegistry(queue=q), FailedJobRegistry(queue=q)
    t0 = time.monotonic()
    q.enqueue_many([Queue.prepare_data("rq_job.run", ("print(1)\n",), result_ttl=3600) for _ in range(n)])
    deadline = t0 + timeout_s
    while True:
        done, bad = finished.count, failed.count
        if done + bad >= n:
            break
        if time.monotonic() > deadline:
            fail("only %d of %d jobs finished (%d failed) within %d s" % (done, n, bad, timeout_s))
        time.sleep(0.05)
    t1 = time.monotonic()
    if bad:
        job = q.fetch_job(failed.get_job_ids()[0])
        fail("%d job(s) failed; the first: %s" % (bad, (job.exc_info or "")[-400:] if job else "?"))
    print("%.1f" % (n / (t1 - t0)))


if __name__ == "__main__":
    drive(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
