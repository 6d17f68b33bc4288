#!/bin/sh
set -eu

. "$(dirname "$0")/lib/init.sh"
sq_start_redis
unset SANDQ_LLM_BASE_URL
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
sq_bg w1 "$SQ_BIN/sandq-worker" serve --worker-id probe --log-level warn
sleep 3
PYTHONPATH="$SQ_SRC/clients/python" SANDQ_REDIS_URL="$SANDQ_REDIS_URL" /usr/bin/python3 - <<'PYEOF'
import os, time, bson, sandq
c = sandq.Client(os.environ["SANDQ_REDIS_URL"])
kinds = {
 "fetch": {"code": "print(1)", "fetch_files": ["*"]},
}
res = {k: [] for k in kinds}
for rnd in range(int(os.environ.get("ROUNDS","15"))):
    for k, t in kinds.items():
        b = "p-%s-%d" % (k, rnd)
        c.push([dict(t, id="t")], batch=b)
        c._redis.blpop([c._p + "done:" + b], timeout=30)
        r = bson.BSON(c._redis.hget(c._p + "results:" + b, "t")).decode()
        assert r["status"] in ("ok",), r
        if rnd >= 3: res[k].append((r["timings"]["exec_ms"], r.get("cpu_ms"), r.get("jail",{}).get("mode"), r.get("wall_ms"), r.get("memory_kib")))
for k, v in res.items():
    v.sort(); print(k, "exec p50", sorted(x[0] for x in v)[len(v)//2])
PYEOF
