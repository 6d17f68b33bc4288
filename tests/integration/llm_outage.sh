#!/bin/sh
# llm_outage.sh: a provider outage longer than a task's attempts. A task
# that failed only because the provider is unavailable (connection refused,
# then every breaker open) waits in the delayed set without spending an
# attempt, and runs once the provider is back: with max_attempts 2 and the
# provider down for several cool-downs, the task still ends ok on its first
# attempt. An outage longer than llm_outage_max_s ends the task llm_error
# saying how long it waited.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import bson, redis' 2>/dev/null || sq_skip "python3-pymongo / python3-redis are not installed"
sq_start_redis
port=$(sq_free_port)
config() { # $1: llm_outage_max_s
  cat <<JSON
{"providers": [{"name": "fake", "base_url": "http://127.0.0.1:$port/v1", "model": "fake-coder", "timeout_ms": 5000,
  "max_retries": 1}],
 "risk": "off", "max_attempts": 2, "backoff_base_ms": 50, "backoff_max_ms": 100,
 "llm_backoff_base_ms": 20, "llm_backoff_cap_ms": 50, "breaker_min_samples": 2, "breaker_open_ms": 1000,
 "llm_outage_max_s": $1, "scratch_root": "$SQ_TMP/scratch"}
JSON
}
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL

# 1. The provider is down for a while, then back: the task waits for it.
config 600 >"$SQ_TMP/w1.json"
sq_bg w1 "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/w1.json" --worker-id w1
echo '{"id": "gen", "prompt": "write hello world"}' >"$SQ_TMP/gen.jsonl"
"$SQ_BIN/sandq-producer" push --batch down "$SQ_TMP/gen.jsonl" >/dev/null
# three waits: longer than the two attempts max_attempts allows
sq_wait_for "test \$(grep -c 'provider unavailable, waiting' $SQ_TMP/w1.log) -ge 3" 60 ||
  { cat "$SQ_TMP/w1.log" >&2; sq_fail "the task did not wait for the provider"; }
[ "$(sq_redis_cli HEXISTS 'sq:{default}:results:down' gen)" = 0 ] || sq_fail "the task ended during the outage"
sq_bg fake_llm "$SQ_BIN/sandq-fake-llm" --port "$port"
sq_wait_batch down 60 || { tail -20 "$SQ_TMP/w1.log" >&2; sq_fail "the batch did not finish once the provider was back"; }
$PY - "$SQ_REDIS_PORT" <<'PY' || { tail -20 "$SQ_TMP/w1.log" >&2; sq_fail "outage checks"; }
import bson, redis, sys
r = redis.Redis(port=int(sys.argv[1]))
d = bson.decode(r.hget("sq:{default}:results:down", "gen"))
assert d["status"] == "ok", d
assert d["attempts"] == 1, d["attempts"]  # the waits charged no attempt
print("outage: ok after waiting %d ms for the provider" % d["timings"]["all_attempts_ms"])
PY
[ "$(sq_stat retried)" = 0 ] || sq_fail "retried=$(sq_stat retried): the waits were charged as attempts"
[ "$(sq_stat deferred)" -ge 3 ] || sq_fail "deferred=$(sq_stat deferred), want 3 or more"
grep -q 'llm_error' "$SQ_TMP/w1.log" && sq_fail "a wait was logged as llm_error"
kill -TERM "$SQ_PID_w1" "$SQ_PID_fake_llm"
wait "$SQ_PID_w1" 2>/dev/null || true
wait "$SQ_PID_fake_llm" 2>/dev/null || true

# 2. An outage longer than llm_outage_max_s: a named llm_error.
config 3 >"$SQ_TMP/w2.json"
sq_bg w2 "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/w2.json" --worker-id w2
"$SQ_BIN/sandq-producer" push --batch long "$SQ_TMP/gen.jsonl" >/dev/null
sq_wait_batch long 90 || { tail -20 "$SQ_TMP/w2.log" >&2; sq_fail "the batch did not finish after llm_outage_max_s"; }
$PY - "$SQ_REDIS_PORT" <<'PY' || { tail -20 "$SQ_TMP/w2.log" >&2; sq_fail "long outage checks"; }
import bson, redis, sys
r = redis.Redis(port=int(sys.argv[1]))
d = bson.decode(r.hget("sq:{default}:results:long", "gen"))
assert d["status"] == "llm_error", d
assert "the provider was unavailable; waited" in d["reason"] and "llm_outage_max_s is 3" in d["reason"], d["reason"]
print("outage: past llm_outage_max_s:", d["reason"])
PY
[ "$(grep -c 'WARN.*llm_error' "$SQ_TMP/w2.log")" = 1 ] || sq_fail "want one llm_error line, the final one: $(grep llm_error "$SQ_TMP/w2.log")"
echo "outage: a task waits for its provider without spending attempts, up to llm_outage_max_s"
