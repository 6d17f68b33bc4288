#!/bin/sh
# rollout.sh: the gradual provider rollout end to end. Real redis-server,
# two fake LLMs as two providers (baseline and candidate), two workers.
#   1. a healthy candidate climbs 10 -> 30 -> 70 -> 100 % and the rollout ends done;
#   2. a candidate that starts failing (restarted answering 5xx) is rolled
#      back to 0 % by the controller on its own, and gets no more traffic;
#   3. a candidate that turns slow is rolled back on its p95;
# and across both, every pushed task has exactly one result (none lost,
# none doubled), as the workers' own metrics confirm.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import bson, redis' 2>/dev/null || sq_skip "python3-pymongo or python3-redis is not installed"
sq_start_redis
P="$SQ_BIN/sandq-producer"

# Two providers: the baseline on a free port, the candidate on a port we
# keep, so it can be restarted misbehaving.
# (not in a $(...) subshell: sq_bg must record the pid where the cleanup trap sees it)
llm() { # llm NAME PORT [ARGS...]: starts it; the bound port is in $SQ_TMP/NAME.port
  name=$1 port=$2; shift 2
  rm -f "$SQ_TMP/$name.port"
  sq_bg "$name" "$SQ_BIN/sandq-fake-llm" --port "$port" --port-file "$SQ_TMP/$name.port" "$@"
  sq_wait_for "test -s $SQ_TMP/$name.port" 10 || { cat "$SQ_TMP/$name.log" >&2; sq_fail "fake LLM $name did not start"; }
}
llm base 0
base_port=$(cat "$SQ_TMP/base.port")
cand_port=$(sq_free_port)
llm cand "$cand_port"
cat >"$SQ_TMP/fleet.json" <<JSON
{"providers": [
   {"name": "base", "base_url": "http://127.0.0.1:$base_port/v1", "model": "fake-coder", "weight": 1,
    "price_in_usd_per_mtok": 1.0, "price_out_usd_per_mtok": 2.0, "max_retries": 2, "timeout_ms": 5000},
   {"name": "cand", "base_url": "http://127.0.0.1:$cand_port/v1", "model": "fake-coder", "weight": 0,
    "price_in_usd_per_mtok": 0.5, "price_out_usd_per_mtok": 1.0, "max_retries": 2, "timeout_ms": 5000}],
 "risk": "off", "scratch_root": "$SQ_TMP/scratch", "llm_backoff_base_ms": 20, "llm_backoff_cap_ms": 100,
 "backoff_base_ms": 50, "backoff_max_ms": 200, "max_attempts": 10,
 "metrics_flush_ms": 200, "metrics_window_s": 1, "metrics_retention_s": 120,
 "rollout_stages": "10,30,70,100", "rollout_hold_s": 1, "rollout_min_requests": 6, "rollout_min_samples": 4,
 "rollout_window_s": 30, "rollout_max_error_pct": 20, "rollout_error_margin_pct": 5}
JSON
for w in w1 w2; do sq_bg "$w" "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/fleet.json" --worker-id "$w"; done
cfg="--config $SQ_TMP/fleet.json"
served() { # requests a fake LLM has answered
  $PY -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))["requests"])' \
    "http://127.0.0.1:$1/stats"
}
state() { sq_redis_cli hget 'sq:{default}:rollout' "$1"; }
pushed=0
batch() { # batch NAME: 20 prompt tasks, waits for every result
  i=0; : >"$SQ_TMP/$1.jsonl"
  while [ $i -lt 20 ]; do echo "{\"id\": \"$1-$i\", \"prompt\": \"task $1 $i\"}" >>"$SQ_TMP/$1.jsonl"; i=$((i + 1)); done
  $P push $cfg --batch "$1" --wait --timeout-s 120 --out "$SQ_TMP/$1.bson" "$SQ_TMP/$1.jsonl" >"$SQ_TMP/$1.out" 2>&1 ||
    { cat "$SQ_TMP/$1.out" >&2; tail -30 "$SQ_TMP/w1.log" >&2; sq_fail "batch $1 did not complete"; }
  pushed=$((pushed + 20))
  echo "$1" >>"$SQ_TMP/batches"
  sleep 0.2 # traffic spread over the controller's hold and window, not a burst of batches
}
# The loops below give the controller this long to decide (it holds each
# stage 1 s and judges over the last 30 s since the rollout started: enough
# samples at 10 % when a busy host makes each batch take seconds).
deadline() { echo $(($(date +%s) + 180)); } # generous: batches are slow on a busy host
# flushed: the workers' metrics in Redis count every result pushed so far,
# so the LLM samples of those tasks (counted before their results, flushed
# with them) are in windows that began before anything started next.
flushed() {
  $PY - "$SQ_REDIS_PORT" "$pushed" <<'PY' || sq_fail "the workers' metrics never counted the $pushed results"
import redis, sys, time
r, pushed = redis.Redis(port=int(sys.argv[1])), int(sys.argv[2])
for _ in range(1200):  # the flush comes late on a busy host
    m = r.hgetall("sq:{default}:metrics")
    if sum(float(v) for k, v in m.items() if k.startswith(b"sandq_tasks_total{")) >= pushed:
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PY
}
late() { [ "$(date +%s)" -gt "$1" ]; }

# rollout start asks the live workers which providers they have: wait for both.
sq_wait_for "$P health $cfg | grep -q 'HEALTHY 2 live'" 30 || sq_fail "the workers never reported health: $($P health $cfg)"
# Providers no live worker has configured are refused, naming what they have; --force starts anyway.
rc=0; $P rollout $cfg start new-model old-model 2>"$SQ_TMP/err" || rc=$?
[ $rc = 1 ] || sq_fail "a rollout of providers no worker has: exit $rc, want 1"
grep -q "no live worker has both 'new-model' and 'old-model'" "$SQ_TMP/err" &&
  grep -q "base (2 workers)" "$SQ_TMP/err" && grep -q "cand (2 workers)" "$SQ_TMP/err" ||
  sq_fail "the refusal does not name the live workers' providers: $(cat "$SQ_TMP/err")"
[ -z "$(state state)" ] || sq_fail "a refused rollout wrote its state"
rc=0; $P rollout $cfg start cand old-model 2>"$SQ_TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "old-model" "$SQ_TMP/err" || sq_fail "a rollout against an unknown baseline: exit $rc: $(cat "$SQ_TMP/err")"
$P rollout $cfg start --force new-model old-model >"$SQ_TMP/forced" || sq_fail "rollout start --force refused"
[ "$(state state)" = running ] && [ "$(state candidate)" = new-model ] || sq_fail "--force did not start the rollout"
# Both workers follow it (keeping their weights); then it is cleared and
# the next rollout starts at version 1 again, as this one did: the workers
# must still take it for a new one (it is told apart by its start).
sq_wait_for "grep -q \"rollout of 'new-model'\" $SQ_TMP/w1.log && grep -q \"rollout of 'new-model'\" $SQ_TMP/w2.log" 30 ||
  sq_fail "the workers did not see the forced rollout"
$P rollout $cfg clear >/dev/null

# A plan that cannot work is refused, naming the key.
if $P rollout $cfg start cand cand 2>"$SQ_TMP/err"; then sq_fail "rollout of a provider against itself accepted"; fi
grep -q "two different" "$SQ_TMP/err" || sq_fail "unclear refusal: $(cat "$SQ_TMP/err")"

# 1. Healthy: 10 -> 30 -> 70 -> 100, then done.
$P rollout $cfg start cand base
[ "$(state pct)" = 10 ] && [ "$(state state)" = running ] || sq_fail "rollout did not start at 10%"
# while it runs, status says what the controller would decide now, and no stage of an earlier rollout
$P rollout $cfg status >"$SQ_TMP/status0.txt"
grep -q "^now: holding at 10%" "$SQ_TMP/status0.txt" || sq_fail "status of a fresh rollout: $(cat "$SQ_TMP/status0.txt")"
grep -q "^stage 1:" "$SQ_TMP/status0.txt" && sq_fail "a fresh rollout shows an earlier one's stages"
$P rollout $cfg start cand base 2>/dev/null && sq_fail "a second rollout started while one runs"
seen=""; n=0; limit=$(deadline)
while [ "$(state state)" = running ]; do
  n=$((n + 1)); late "$limit" && { $P rollout $cfg status >&2; sq_fail "healthy rollout stuck at $(state pct)% after 180 s"; }
  batch "up$n"
  seen="$seen $(state pct)"
done
$P rollout $cfg status >"$SQ_TMP/status.txt"
cat "$SQ_TMP/status.txt"
[ "$(state state)" = done ] && [ "$(state pct)" = 100 ] || sq_fail "healthy rollout ended $(state state) at $(state pct)%: $(state reason)"
echo "percentages seen after each batch:$seen"
# status shows each finished stage's figures and how it ended
for st in "stage 1: 10%: held" "stage 2: 30%: held" "stage 3: 70%: held" "stage 4: 100%: held"; do
  grep -q "^$st [0-9]* s, [0-9]* request(s) at this stage; over the last 30 s the candidate had" "$SQ_TMP/status.txt" ||
    sq_fail "status lacks '$st ...'"
done
grep -q "^stage 3: .*; advanced: healthy at 70%" "$SQ_TMP/status.txt" && grep -q "^stage 4: .*; done: healthy at 100%" "$SQ_TMP/status.txt" ||
  sq_fail "status does not say how each stage ended"
$PY - "$seen" <<'PY' || sq_fail "the percentage did not climb through the stages in order:$seen"
import sys
seen = [int(x) for x in sys.argv[1].split()]
assert all(a <= b for a, b in zip(seen, seen[1:])), seen
assert set(seen) <= {10, 30, 70, 100}, seen
assert seen[-1] == 100, seen
PY
# at 100 % every worker sends the candidate everything
batch full
cand_before=$(served "$cand_port"); base_before=$(served "$base_port")
batch full2
cand_after=$(served "$cand_port"); base_after=$(served "$base_port")
[ $((cand_after - cand_before)) -ge 20 ] && [ "$base_after" = "$base_before" ] ||
  sq_fail "at 100% the candidate got $((cand_after - cand_before)) and the baseline $((base_after - base_before)) requests"
for w in w1 w2; do grep -q "cand gets 100% of LLM traffic" "$SQ_TMP/$w.log" || sq_fail "worker $w never followed the rollout to 100%"; done

# 2. Degrading: a fresh rollout; the candidate then fails every request.
#    Just before it, the candidate is slow at 100 % (the rollout above is
#    done): the fresh rollout is judged on its own traffic, so it rolls
#    back for the errors, not for what the window held from before it.
kill "$SQ_PID_cand"; wait "$SQ_PID_cand" 2>/dev/null || true
llm cand "$cand_port" --latency-ms 700
batch slow-before
flushed # its slow samples are the earlier rollout's, wherever the flush lands
kill "$SQ_PID_cand"; wait "$SQ_PID_cand" 2>/dev/null || true
llm cand "$cand_port"
$P rollout $cfg clear
$P rollout $cfg start cand base
batch pre
kill "$SQ_PID_cand"; wait "$SQ_PID_cand" 2>/dev/null || true
llm cand "$cand_port" --error-rate 1.0
n=0; limit=$(deadline)
while [ "$(state state)" = running ]; do
  n=$((n + 1)); late "$limit" && { $P rollout $cfg status >&2; sq_fail "failing candidate never rolled back after 180 s"; }
  batch "down$n"
done
$P rollout $cfg status
[ "$(state state)" = rolled_back ] && [ "$(state pct)" = 0 ] || sq_fail "failing candidate ended $(state state) at $(state pct)%"
state reason | grep -q "error rate" || sq_fail "rollback reason does not name the error rate: $(state reason)"
sq_wait_for "grep -q 'cand gets 0%' $SQ_TMP/w1.log && grep -q 'cand gets 0%' $SQ_TMP/w2.log" 60 ||
  sq_fail "a worker did not follow the rollback"
c0=$(served "$cand_port")
batch after
c1=$(served "$cand_port")
[ "$c0" = "$c1" ] || sq_fail "the rolled-back candidate still got $((c1 - c0)) requests"

# 3. Slow: a candidate that answers correctly but slowly is rolled back on
#    its p95 (the baseline's p95 x 150 % + 100 ms is the bound); the
#    failing phase's errors, before this rollout, are not judged.
$P rollout $cfg clear
kill "$SQ_PID_cand"; wait "$SQ_PID_cand" 2>/dev/null || true
llm cand "$cand_port" --latency-ms 700
$P rollout $cfg start cand base
n=0; limit=$(deadline)
while [ "$(state state)" = running ]; do
  n=$((n + 1)); late "$limit" && { $P rollout $cfg status >&2; sq_fail "slow candidate never rolled back after 180 s"; }
  batch "slow$n"
done
[ "$(state state)" = rolled_back ] && [ "$(state pct)" = 0 ] || sq_fail "slow candidate ended $(state state) at $(state pct)%"
state reason | grep -q "p95" || sq_fail "slow rollback reason does not name p95: $(state reason)"
echo "slow candidate: $(state reason)"

# 4. No task lost or doubled: one result per pushed task, and the workers'
#    own count agrees once their last flush landed.
$PY - "$SQ_TMP" "$SQ_REDIS_PORT" "$pushed" <<'PY' || sq_fail "results do not match the tasks pushed"
import bson, glob, sys, redis, time
tmp, port, pushed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ids = []
for b in open(tmp + "/batches").read().split():
    docs = bson.decode_all(open(f"{tmp}/{b}.bson", "rb").read())
    assert len(docs) == 20, (b, len(docs))
    ids += [d["_id"] for d in docs]
    bad = [(d["_id"], d["status"], d.get("reason")) for d in docs if d["status"] != "ok"]
    assert not bad, bad
assert len(ids) == pushed == len(set(ids)), (len(ids), pushed, len(set(ids)))
r = redis.Redis(port=port)
assert r.hlen("sq:{default}:dead") == 0
for _ in range(600):  # the last flush may come late on a busy host
    m = {k.decode(): float(v) for k, v in r.hgetall("sq:{default}:metrics").items()}
    counted = sum(v for k, v in m.items() if k.startswith("sandq_tasks_total{"))
    if counted >= pushed:
        break
    time.sleep(0.1)
assert counted == pushed, (counted, pushed)
errs = sum(v for k, v in m.items() if k.startswith('sandq_llm_errors_total{provider="cand"'))
assert errs > 0, "the candidate's failures were not counted"
print(f"rollout: {pushed} tasks, {pushed} results, {int(errs)} candidate errors counted")
PY
grep -q "rollout of cand rolled back" "$SQ_TMP/w1.log" "$SQ_TMP/w2.log" || sq_fail "no worker logged the rollback"
[ "$(grep -h "rollout of cand rolled back" "$SQ_TMP/w1.log" "$SQ_TMP/w2.log" | wc -l)" = 2 ] ||
  sq_fail "each of the two rollbacks must be decided by exactly one controller"
echo "rollout: all checks passed"
