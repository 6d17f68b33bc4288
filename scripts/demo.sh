#!/bin/sh
# demo.sh BUILD_DIR: the sample batch through real workers, end to end.
# Starts a private redis-server and the fake LLM on free loopback ports, two
# workers, pushes samples/, waits with progress, prints the summary and one
# row per task next to the status it should have, writes demo-results.bson
# (or $SANDQ_DEMO_OUT), and stops everything it started, also on Ctrl-C.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
SQ_BIN=$build/bin
SQ_SRC=$here
out=${SANDQ_DEMO_OUT:-$here/demo-results.bson}
workers=${SANDQ_DEMO_WORKERS:-2}
. "$SQ_SRC/tests/lib/env.sh"

[ -x "$SQ_BIN/sandq-worker" ] || { echo "demo: $SQ_BIN/sandq-worker missing; run 'make build' first" >&2; exit 1; }
sq_env_init
sq_start_redis
sq_start_fake_llm "$SQ_SRC/samples/llm-replies.jsonl"
echo "demo: redis on 127.0.0.1:$SQ_REDIS_PORT, fake LLM on 127.0.0.1:$SQ_LLM_PORT, logs in $SQ_TMP"

# A key the workers hold and must never leak into the jail, logs or results.
export SANDQ_LLM_API_KEY=${SANDQ_LLM_API_KEY:-sk-demo-not-a-real-key-0000}
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
i=1
while [ $i -le "$workers" ]; do
  sq_bg "worker$i" "$SQ_BIN/sandq-worker" serve --worker-id "demo-$i"
  i=$((i + 1))
done

batch="demo-$(date +%Y%m%d-%H%M%S)"
# The malformed task goes in as a foreign service would push it: unvalidated.
"$SQ_BIN/sandq-producer" push --batch "$batch" --no-validate "$SQ_SRC/samples/malformed.jsonl" >/dev/null
set +e
"$SQ_BIN/sandq-producer" push --batch "$batch" --wait --timeout-s "${SANDQ_DEMO_TIMEOUT_S:-120}" --table \
  --out "$out" "$SQ_SRC/samples/batch.jsonl"
rc=$?
set -e
echo "demo: results in $out"
# What an operator's dashboard and health check see (docs/operations.md):
# the workers flush their metrics about once a second.
sleep 1.5
echo "demo: sandq-producer health"
"$SQ_BIN/sandq-producer" health || true
echo "demo: sandq-producer metrics (an excerpt)"
"$SQ_BIN/sandq-producer" metrics | grep -E '^sandq_(tasks_total|llm_requests_total|llm_cost_usd_total|workers)' || true
echo "demo: sandq-producer audit --batch $batch (the last programs run)"
"$SQ_BIN/sandq-producer" audit --batch "$batch" | tail -5 || true
exit $rc
