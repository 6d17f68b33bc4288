#!/bin/sh
# bench/profiles.sh BUILD_DIR: pandas tasks in the built-in data profile.
# Against one real redis-server and two `sandq-worker serve` with default
# settings (warm mode), in one run:
#  1. sandq:  SQ_BENCH_PROFILES_N (300) tasks with "profile": "data", each
#             building a DataFrame and printing a sum checked by
#             expected_stdout, pushed as one batch and awaited (--wait);
#             a batch of 8 first starts the profile's zygotes (waited for);
#  2. cold:   SQ_BENCH_PROFILES_COLD_N (60) runs of the same program as
#             `python3 -c 'import pandas ...'`, two at a time (xargs -P 2),
#             without any jail.
# Per task: the wall time of all of them over their number. Target: sandq
# at least 20x faster per task.
set -eu
. "$(dirname "$0")/lib/init.sh"
[ -x "$SQ_BIN/sandq-worker" ] || sq_fail "$SQ_BIN/sandq-worker is missing: build first (make build)"
[ "$(id -u)" -eq 0 ] || sq_fail "profiles.sh: run as root (the worker's warm pool needs namespaces)"
PY=/usr/bin/python3
$PY -c 'import pandas, numpy' 2>/dev/null || sq_fail "python3-pandas and python3-numpy are needed (scripts/install-deps.sh)"
N=${SQ_BENCH_PROFILES_N:-300}
COLD_N=${SQ_BENCH_PROFILES_COLD_N:-60}
sq_start_redis
unset SANDQ_LLM_BASE_URL
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
P="$SQ_BIN/sandq-producer"
for w in w1 w2; do sq_bg $w "$SQ_BIN/sandq-worker" serve --worker-id bench-profiles-$w --log-level info; done
for w in w1 w2; do
  sq_wait_for "grep -q 'ready in' '$SQ_TMP/$w.log'" 120 || { cat "$SQ_TMP/$w.log" >&2; sq_fail "worker $w did not start"; }
  grep -q "profile data: started" "$SQ_TMP/$w.log" || sq_fail "worker $w has no data profile: $(grep -i profile "$SQ_TMP/$w.log")"
done
echo "profiles: $N pandas tasks through 2 workers, $COLD_N cold imports two at a time; $(nproc) cores, load $(bench_load)"

# The program, as a task and as a command line.
prog() { printf 'import pandas as pd, numpy as np\ndf = pd.DataFrame({"a": np.arange(%d)})\nprint(int(df["a"].sum()))\n' "$1"; }
tasks() { # FILE COUNT PREFIX
  i=0
  while [ $i -lt "$2" ]; do
    n=$((i % 50 + 10))
    $PY -c 'import json,sys; print(json.dumps({"id": sys.argv[1], "profile": "data", "code": sys.stdin.read(),
      "expected_stdout": "%d\n" % (int(sys.argv[2]) * (int(sys.argv[2]) - 1) // 2)}))' "$3-$i" "$n" <<EOF
$(prog $n)
EOF
    i=$((i + 1))
  done >"$1"
}
tasks "$SQ_TMP/warm.jsonl" 8 warm
tasks "$SQ_TMP/tasks.jsonl" "$N" t
"$P" push --batch warmup --wait --timeout-s 300 "$SQ_TMP/warm.jsonl" >/dev/null 2>&1 || sq_fail "the warm-up batch failed"
# The warm-up's imports started the profile's zygotes with pandas imported: up before the clock starts.
for w in w1 w2; do
  sq_wait_for "grep -q 'full zygotes up' '$SQ_TMP/$w.log'" 120 || sq_fail "worker $w: the data profile's zygotes did not start"
done

t0=$(date +%s%N)
"$P" push --batch bench --wait --timeout-s 900 --out "$SQ_TMP/bench.bson" "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/push.out" 2>&1 ||
  { tail -5 "$SQ_TMP/push.out" >&2; sq_fail "the batch did not finish"; }
t1=$(date +%s%N)
stats=$($PY - "$SQ_TMP/bench.bson" "$N" <<'PYEOF'
import bson, sys
docs = bson.decode_all(open(sys.argv[1], "rb").read())
assert len(docs) == int(sys.argv[2]), len(docs)
bad = [d["_id"] for d in docs if d["status"] != "passed" or d.get("profile") != "data"]
assert not bad, bad[:5]
ex = sorted(d["timings"]["exec_ms"] for d in docs)
modes = {d["jail"]["mode"] for d in docs}
print(ex[len(ex) // 2], ex[len(ex) * 99 // 100], ",".join(sorted(modes)))
PYEOF
) || sq_fail "not every task passed in the data profile"
set -- $stats
sq_ms=$(awk -v a="$t0" -v b="$t1" -v n="$N" 'BEGIN { printf "%.1f", (b - a) / 1e6 / n }')
echo "  sandq, data profile: $N passed in $(( (t1 - t0) / 1000000 )) ms: $sq_ms ms per task (exec_ms p50 $1, p99 $2; mode $3)"

prog 30 >"$SQ_TMP/cold.py"
t0=$(date +%s%N)
seq "$COLD_N" | xargs -P 2 -I{} $PY -c "$(cat "$SQ_TMP/cold.py")" >"$SQ_TMP/cold.out" || sq_fail "a cold run failed"
t1=$(date +%s%N)
[ "$(grep -c '^435$' "$SQ_TMP/cold.out")" = "$COLD_N" ] || sq_fail "the cold runs printed: $(sort "$SQ_TMP/cold.out" | uniq -c)"
cold_ms=$(awk -v a="$t0" -v b="$t1" -v n="$COLD_N" 'BEGIN { printf "%.1f", (b - a) / 1e6 / n }')
echo "  python3 -c 'import pandas ...', two at a time: $COLD_N in $(( (t1 - t0) / 1000000 )) ms: $cold_ms ms per task"
ratio=$(awk -v s="$sq_ms" -v c="$cold_ms" 'BEGIN { printf "%.1f", c / s }')
met=no; bench_ge "$ratio" 20 && met=yes
bench_target "pandas task, data profile, 2 workers / cold python3 -c" "${ratio}x ($sq_ms vs $cold_ms ms per task)" \
  "≥ 20x" "$met" "a warm fork of the pandas zygote per task, then the queue's round trips"
