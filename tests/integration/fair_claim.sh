#!/bin/sh
# fair_claim.sh: three real workers with default settings (sizing derived from
# the host) share one queue fairly. 30 tasks of half a second each: every
# worker runs some, and no worker sits idle while tasks wait in the queue
# (from each result's worker, finished_at and total_ms: a worker holds a task
# from its claim to its result, so its claims must cover the time from its
# first claim to the last claim of the run, up to a small gap). Before fair
# claiming the split was 16 / 14 / 0: the first workers prefetched
# claim_batch tasks each. Also reports each worker's start-up ("ready in N
# ms"), held to a loose bound here (bench/run.sh reports it against 300 ms).
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
[ -x $PY ] || sq_skip "$PY is not installed"
[ "$(id -u)" -eq 0 ] || sq_skip "the workers' warm pools need root (namespaces, cgroups)"
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson module) is not installed"
sq_start_redis
unset SANDQ_LLM_BASE_URL
N=${SQ_FAIR_N:-30}
for i in 1 2 3; do
  SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-$i" sq_bg "w$i" "$SQ_BIN/sandq-worker" serve --worker-id "fair-$i" --log-level info
done
for k in 1 2 3; do # (not $k: sq_wait_for uses it)
  sq_wait_for "grep -q 'ready in' $SQ_TMP/w$k.log" 30 || { cat "$SQ_TMP/w$k.log" >&2; sq_fail "worker fair-$k never got ready"; }
  ms=$(sed -n 's/.*ready in \([0-9]*\) ms.*/\1/p' "$SQ_TMP/w$k.log")
  grep 'sizing:' "$SQ_TMP/w$k.log" | sed 's/.*sizing:/fair-'"$k"' sizing:/'
  echo "fair-$k ready in $ms ms" # a figure, not a check: start-up time is bench/'s (docs/benchmarks.md)
done
awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"s%02d\",\"code\":\"import time\\ntime.sleep(0.5)\"}\n", i }' \
  >"$SQ_TMP/tasks.jsonl"
"$SQ_BIN/sandq-producer" push --batch fair --out "$SQ_TMP/results.bson" --timeout-s 120 "$SQ_TMP/tasks.jsonl" \
  >"$SQ_TMP/push.out" 2>&1 || { cat "$SQ_TMP/push.out" >&2; sq_fail "the batch did not complete"; }

$PY - "$SQ_TMP/results.bson" "$N" <<'PY'
import sys, bson, calendar
docs = bson.decode_all(open(sys.argv[1], "rb").read())
n = int(sys.argv[2])
assert len(docs) == n, "%d results of %d" % (len(docs), n)
bad = [(d["_id"], d["status"]) for d in docs if d["status"] != "ok"]
assert not bad, bad
GAP_MS = 400  # a task lasts 500 ms: an idle worker leaves a gap at least that long
runs = {}
for d in docs:
    end = calendar.timegm(d["finished_at"].utctimetuple()) * 1000 + d["finished_at"].microsecond // 1000
    runs.setdefault(d["worker"], []).append((end - d["timings"]["total_ms"], end))
last_claim = max(a for r in runs.values() for a, _ in r)
first_claim = min(a for r in runs.values() for a, _ in r)
for w in sorted(runs):
    print("%s: %d tasks, first claim +%d ms, last result +%d ms" % (
        w, len(runs[w]), min(a for a, _ in runs[w]) - first_claim, max(b for _, b in runs[w]) - first_claim))
assert len(runs) == 3, "only %d of 3 workers ran tasks: %s" % (len(runs), {w: len(r) for w, r in runs.items()})
for w, r in runs.items():
    r.sort()
    start = r[0][0]
    assert start - first_claim <= GAP_MS, "%s claimed its first task %d ms after the first claim" % (w, start - first_claim)
    covered = r[0][1]
    for a, b in r[1:]:
        assert a - covered <= GAP_MS or covered >= last_claim, \
            "%s held nothing from +%d to +%d ms while tasks waited (last claim +%d)" % (
                w, covered - first_claim, a - first_claim, last_claim - first_claim)
        covered = max(covered, b)
    assert covered >= last_claim - GAP_MS or covered >= last_claim, \
        "%s held nothing after +%d ms; the last task was claimed at +%d" % (w, covered - first_claim, last_claim - first_claim)
print("fair_claim: %d tasks over %d workers, none idle while tasks waited" % (n, len(runs)))
PY
