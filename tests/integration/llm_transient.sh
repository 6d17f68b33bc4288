#!/bin/sh
# llm_transient.sh: "transient" is decided once, by the LLM client's retry
# policy (sq_llm_reply.transient), and the worker only reads it. A transport
# error the policy calls unfixable (the fake answers with something that is
# not HTTP) is tried once and ends as llm_error: neither the client nor the
# queue tries it again. A 503, which the policy retries, is retried by the
# queue up to max_attempts, so the test would see a retry if there were one
# (llm_outage_max_s 0: a 503 is an attempt, not a wait for the provider;
# llm_outage.sh tests the wait).
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import bson, redis' 2>/dev/null || sq_skip "python3-pymongo / python3-redis are not installed"
sq_start_redis
cat >"$SQ_TMP/replies.jsonl" <<'R'
{"match": "[t:nothttp]", "fault": "not_http"}
{"match": "[t:503]", "status": 503}
R
sq_start_fake_llm "$SQ_TMP/replies.jsonl"
cat >"$SQ_TMP/worker.json" <<JSON
{"providers": [{"name": "fake", "base_url": "$SANDQ_LLM_BASE_URL", "model": "fake-coder", "timeout_ms": 5000,
  "max_retries": 1}],
 "risk": "off", "max_attempts": 3, "backoff_base_ms": 50, "backoff_max_ms": 100,
 "llm_backoff_base_ms": 20, "llm_backoff_cap_ms": 50, "breaker_min_samples": 256,
 "llm_outage_max_s": 0, "scratch_root": "$SQ_TMP/scratch"}
JSON
unset SANDQ_LLM_BASE_URL
sq_bg worker "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/worker.json" --worker-id w1
cat >"$SQ_TMP/tasks.jsonl" <<'T'
{"id": "nothttp", "prompt": "[t:nothttp] write it"}
{"id": "unavailable", "prompt": "[t:503] write it"}
T
"$SQ_BIN/sandq-producer" push --batch tr --wait --timeout-s 60 "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/push.out" 2>&1 ||
  true # both tasks end as llm_error: a non-zero exit is expected
sq_wait_batch tr 30 || { cat "$SQ_TMP/worker.log" >&2; sq_fail "the batch did not finish"; }
curl -sf "http://127.0.0.1:$SQ_LLM_PORT/stats" >"$SQ_TMP/stats.json" || sq_fail "fake LLM stats"
$PY - "$SQ_REDIS_PORT" "$SQ_TMP/stats.json" <<'PY' || { cat "$SQ_TMP/worker.log" >&2; sq_fail "checks"; }
import bson, json, redis, sys
r = redis.Redis(port=int(sys.argv[1]))
hits = json.load(open(sys.argv[2]))["hits"]
get = lambda i: bson.decode(r.hget("sq:{default}:results:tr", i))
n, u = get("nothttp"), get("unavailable")
print("transient: not_http:", hits.get("[t:nothttp]"), "request(s), reason:", n["reason"])
print("transient: 503:", hits.get("[t:503]"), "request(s), reason:", u["reason"])
assert n["status"] == "llm_error" and "attempts" not in n["reason"], n
assert hits.get("[t:nothttp]") == 1, hits  # one exchange: no client retry, no queue retry
assert u["status"] == "llm_error" and "after 3 attempts" in u["reason"], u
assert hits.get("[t:503]") == 6, hits      # 3 queue attempts x (1 + 1 client retry)
PY
[ "$(sq_stat retried)" = 2 ] || sq_fail "retried=$(sq_stat retried), want 2 (the 503's two later attempts only)"
echo "transient: an unfixable transport error is not retried; a 503 is, up to max_attempts"
