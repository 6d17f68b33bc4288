#!/bin/sh
# bench/queue.sh BUILD_DIR [N]: the queue's benchmark, side by side in one run:
#  1. queue only (execution stubbed): queue_bench, 2 consumers, claims of 1 and of 50
#  2. end to end: N jailed print(1) tasks through two `sandq-worker serve`
#  3. the same N tasks through python3-rq with two `rq worker`s, each job
#     running the same jail through `sandq-worker run` (subprocess)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}; case $build in /*) ;; *) build=$here/$build ;; esac
N=${2:-1000}
SQ_BIN=$build/bin SQ_SRC=$here
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
sq_start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_LOG_LEVEL=warn
U="redis://127.0.0.1:$SQ_REDIS_PORT"
echo "== queue only (execution stubbed), 50,000 tasks"
for b in 1 50; do sq_redis_cli FLUSHALL >/dev/null; "$SQ_BIN/queue_bench" "$U" 50000 2 $b; done

echo "== end to end: $N jailed print(1) tasks, 2 sandq workers"
sq_redis_cli FLUSHALL >/dev/null
sq_tasks "$SQ_TMP/t.jsonl" "$N"
sq_worker e-1; sq_worker e-2; sleep 0.5
t0=$(date +%s.%N)
"$SQ_BIN/sandq-producer" push --batch e2e --wait "$SQ_TMP/t.jsonl" >/dev/null 2>&1
t1=$(date +%s.%N)
sandq=$(echo "$N / ($t1 - $t0)" | bc -l)
printf 'sandq: %.1f tasks/s\n' "$sandq"
kill -TERM "$(sq_wpid e-1)" "$(sq_wpid e-2)"

echo "== end to end: the same through python3-rq, 2 rq workers"
/usr/bin/python3 -c 'import rq' 2>/dev/null || { echo "python3-rq missing (SANDQ_WITH_BENCH=1 scripts/install-deps.sh)"; exit 0; }
mkdir -p "$SQ_TMP/rqjob"
cat >"$SQ_TMP/rqjob/sqjob.py" <<PY
import subprocess
def run(code):
    with open("/tmp/sq-rq-%d.py" % hash(code), "w") as f: f.write(code)
    return subprocess.run(["$SQ_BIN/sandq-worker", "run", f.name], capture_output=True).stdout
PY
sq_redis_cli FLUSHALL >/dev/null
for i in 1 2; do
  (cd "$SQ_TMP/rqjob" && PYTHONPATH=. exec /usr/bin/python3 -m rq.cli worker -u "$U" --burst -q sq) >"$SQ_TMP/rq$i.log" 2>&1 &
done
t0=$(date +%s.%N)
/usr/bin/python3 - "$U" "$N" "$SQ_TMP/rqjob" <<'PY'
import sys, time, redis
sys.path.insert(0, sys.argv[3])
from rq import Queue
import sqjob
q = Queue("sq", connection=redis.Redis.from_url(sys.argv[1]))
jobs = [q.enqueue(sqjob.run, "print(1)\n") for _ in range(int(sys.argv[2]))]
while any(j.get_status(refresh=True) not in ("finished", "failed") for j in jobs[-20:]) or q.count:
    time.sleep(0.1)
PY
wait
t1=$(date +%s.%N)
rqr=$(echo "$N / ($t1 - $t0)" | bc -l)
printf 'rq: %.1f tasks/s\nratio sandq/rq: %.1fx\n' "$rqr" "$(echo "$sandq / $rqr" | bc -l)"
