#!/bin/sh
# worker_llm.sh: one real worker, many tasks in flight, against the fake LLM
# over real HTTP: risk verdicts (block, cache, fallback), self-repair, cost
# per task and per batch, --budget-usd, every fault of the fake ending as a
# clear llm_error, and the worker alive after all of it.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson module) is not installed"
sq_start_redis
sq_start_fake_llm "$SQ_SRC/tests/fake_llm/worker-replies.jsonl"
# A key in the worker's environment, so the leak check at the end can fail.
export SQ_WORKER_LLM_KEY="sk-worker-llm-secret-$$-do-not-leak"
cat >"$SQ_TMP/worker.json" <<JSON
{"providers": [{"name": "fake", "base_url": "$SANDQ_LLM_BASE_URL", "model": "fake-coder",
  "api_key_env": "SQ_WORKER_LLM_KEY",
  "price_in_usd_per_mtok": 1.0, "price_out_usd_per_mtok": 2.0, "timeout_ms": 1500,
  "max_retries": 1, "max_in_flight": 100}],
 "max_tasks_in_flight": 100, "max_repairs": 1, "risk": "generated", "risk_fallback": "warn",
 "llm_backoff_base_ms": 50, "llm_backoff_cap_ms": 200, "scratch_root": "$SQ_TMP/scratch",
 "max_attempts": 1, "llm_outage_max_s": 0}
JSON
# max_attempts 1: each LLM fault is seen once here, through the client's own
# retries; the queue's later attempts for transient failures are tested in
# queue_faults.sh (llm_outage_max_s 0: a fault of the provider's ends the
# task too, where it would wait for the provider: llm_outage.sh).
unset SANDQ_LLM_BASE_URL
sq_bg worker "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/worker.json" --worker-id w1 --log-level debug

push() { # push NAME [producer args...] < tasks: results in $SQ_TMP/NAME.bson
  name=$1; shift
  cat >"$SQ_TMP/$name.jsonl"
  "$SQ_BIN/sandq-producer" push --batch "$name" --wait --timeout-s 60 --out "$SQ_TMP/$name.bson" "$@" \
    "$SQ_TMP/$name.jsonl" >"$SQ_TMP/$name.out" 2>&1 || { cat "$SQ_TMP/$name.out" "$SQ_TMP/worker.log" >&2; sq_fail "batch $name"; }
}
check() { # check NAME PYTHON: docs (by id) in d, the batch hash in h
  $PY - "$SQ_TMP/$1.bson" "$SQ_REDIS_PORT" "$1" "$2" <<'PY' || { tail -50 "$SQ_TMP/worker.log" >&2; sq_fail "checks of batch $1"; }
import bson, sys, redis
d = {x["_id"]: x for x in bson.decode_all(open(sys.argv[1], "rb").read())}
h = {k.decode(): v.decode() for k, v in redis.Redis(port=int(sys.argv[2])).hgetall("sq:{default}:batch:" + sys.argv[3]).items()}
exec(sys.argv[4])
PY
}

# 1. Risk: a generated os.system is blocked; safe code runs with a model verdict.
push risk1 <<'T'
{"id": "risky", "prompt": "[w:risky] do it"}
{"id": "safe", "prompt": "[w:safe] do it"}
{"id": "fb", "prompt": "[w:riskfb] do it"}
{"id": "code-only", "code": "import os\nprint(os.getcwd())\n"}
T
check risk1 '
r = d["risky"]
assert r["status"] == "blocked", r
assert "risk verdict (model): high" in r["reason"], r["reason"]
assert r["risk"]["decision"] == "block" and r["risk"]["source"] == "model", r["risk"]
assert "os.system" in r["code"]
s = d["safe"]
assert s["status"] == "ok" and s["risk"]["level"] == "none" and s["risk"]["decision"] == "allow", s
assert s["llm"]["calls"] == 2, s["llm"]
f = d["fb"]
assert f["status"] == "ok" and f["risk"]["source"] == "fallback" and f["risk"]["decision"] == "warn", f["risk"]
assert "risk" not in d["code-only"] and "llm" not in d["code-only"], d["code-only"]
assert d["code-only"]["status"] == "ok"
'
# 2. The same code again: the verdict comes from the Redis cache, one call only.
push risk2 <<'T'
{"id": "safe-again", "prompt": "[w:safe] once more"}
T
check risk2 '
s = d["safe-again"]
assert s["risk"]["source"] == "cache" and s["llm"]["calls"] == 1, s
'
[ "$(sq_redis_cli --scan --pattern 'sq:{default}:cache:risk:*' | wc -l)" -ge 2 ] || sq_fail "no cached verdicts"
ttl=$(sq_redis_cli ttl "$(sq_redis_cli --scan --pattern 'sq:{default}:cache:risk:*' | head -1)")
[ "$ttl" -gt 0 ] || sq_fail "cached verdict has no TTL ($ttl)"

# 3. Self-repair: one round fixes the runtime error; another stays broken.
push repair <<'T'
{"id": "fixable", "prompt": "[w:repair] divide"}
{"id": "hopeless", "prompt": "[w:norepair] divide"}
T
check repair '
r = d["fixable"]
assert r["status"] == "ok" and "fixed" in r["stdout"], r
assert len(r["repairs"]) == 1 and r["repairs"][0]["round"] == 1 and r["repairs"][0]["status"] == "ok", r["repairs"]
assert "fixed" in r["repairs"][0]["code"] and r["repairs"][0]["completion_tokens"] > 0
h2 = d["hopeless"]
assert h2["status"] == "runtime_error" and len(h2["repairs"]) == 1 and h2["repairs"][0]["status"] == "runtime_error", h2
'

# 4. Cost per task and per batch; a missing usage is estimated and flagged.
push cost <<'T'
{"id": "c1", "prompt": "[w:safe] one"}
{"id": "c2", "prompt": "[w:nousage] two"}
T
check cost '
total = sum(x["llm"]["cost_usd"] for x in d.values())
assert total > 0 and abs(float(h["cost_usd"]) - total) < 1e-9, (h, total)
assert d["c2"]["llm"]["usage_estimated"] is True and d["c1"]["llm"]["usage_estimated"] is False
'

# 4b. Spend accounting costs no Redis round trip per task: 40 prompt tasks
#     with a (generous) budget; the worker reads the batch's spend and budget
#     at most every 250 ms and adds its cost once per stored group of
#     results, not once per call (watched with MONITOR), and the counter is
#     still exact when the batch is done.
i=0; : >"$SQ_TMP/spend.in"
while [ $i -lt 40 ]; do echo "{\"id\": \"s$i\", \"prompt\": \"[w:safe] task $i\"}" >>"$SQ_TMP/spend.in"; i=$((i + 1)); done
redis-cli -p "$SQ_REDIS_PORT" MONITOR >"$SQ_TMP/monitor.txt" 2>/dev/null &
mon=$!
# MONITOR says OK once it watches; a marker after the batch, once seen,
# means every command before it was written out.
sq_wait_for "grep -q '^OK' '$SQ_TMP/monitor.txt'" 60 || sq_fail "redis-cli MONITOR did not start"
push spend --budget-usd 100 <"$SQ_TMP/spend.in"
sq_redis_cli ECHO spend-monitor-end >/dev/null
sq_wait_for "grep -q spend-monitor-end '$SQ_TMP/monitor.txt'" 60 || sq_fail "MONITOR did not show the end marker"
kill $mon 2>/dev/null || true
wait $mon 2>/dev/null || true
reads=$(grep -c '"HMGET" "sq:{default}:batch:spend" "cost_usd" "budget_usd"' "$SQ_TMP/monitor.txt" || true)
adds=$(grep -c '"HINCRBYFLOAT" "sq:{default}:batch:spend" "cost_usd"' "$SQ_TMP/monitor.txt" || true)
echo "40 prompt tasks: $reads budget read(s), $adds cost write(s)"
[ "$reads" -ge 1 ] && [ "$reads" -le 10 ] || sq_fail "budget reads for 40 tasks: $reads (want 1..10)"
[ "$adds" -ge 1 ] && [ "$adds" -le 20 ] || sq_fail "cost writes for 40 tasks and 80 calls: $adds (want 1..20)"
check spend '
total = sum(x["llm"]["cost_usd"] for x in d.values())
assert len(d) == 40 and all(x["status"] == "ok" for x in d.values()), [(k, x["status"]) for k, x in d.items()]
assert total > 0 and abs(float(h["cost_usd"]) - total) < 1e-9, (h, total)
'

# 5. A spent budget: no LLM work starts; code-only tasks still run.
sq_redis_cli hset 'sq:{default}:batch:budget' cost_usd 0.5 >/dev/null
push budget --budget-usd 0.25 <<'T'
{"id": "b1", "prompt": "[w:safe] please"}
{"id": "b2", "code": "print(2)"}
T
check budget '
assert d["b1"]["status"] == "llm_error" and "budget exhausted" in d["b1"]["reason"], d["b1"]
assert d["b2"]["status"] == "ok"
assert float(h["budget_usd"]) == 0.25
'

# 6. Every fault ends as llm_error with its reason; retries honour 429.
push faults <<'T'
{"id": "hang", "prompt": "[w:hang]"}
{"id": "reset", "prompt": "[w:reset]"}
{"id": "malformed", "prompt": "[w:malformed]"}
{"id": "truncated", "prompt": "[w:truncated]"}
{"id": "bad-request", "prompt": "[w:400]"}
{"id": "drip", "prompt": "[w:drip]"}
{"id": "rate-limited", "prompt": "[w:429]"}
T
check faults '
for i in ("hang", "reset", "malformed", "truncated", "bad-request", "drip"):
    assert d[i]["status"] == "llm_error", (i, d[i])
assert "after 2 HTTP requests" in d["hang"]["reason"], d["hang"]["reason"]
assert "not JSON" in d["malformed"]["reason"]
assert "HTTP 400" in d["bad-request"]["reason"] and "not retried" in d["bad-request"]["reason"]
assert d["rate-limited"]["status"] == "ok", d["rate-limited"]
'

# 7. Many in flight: 40 tasks whose LLM answers after 1 s are asked for at
# once (the fake counts the requests waiting together; no clock involved).
i=0; : >"$SQ_TMP/many.in"
while [ $i -lt 40 ]; do echo "{\"id\": \"slow-$i\", \"prompt\": \"[w:slow] $i\"}" >>"$SQ_TMP/many.in"; i=$((i + 1)); done
push many <"$SQ_TMP/many.in"
check many 'assert len(d) == 40 and all(x["status"] == "ok" for x in d.values()), [x["status"] for x in d.values()]'
peak=$($PY -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))["peak_waiting_requests"])' \
  "http://127.0.0.1:$SQ_LLM_PORT/stats")
[ "$peak" -ge 10 ] || sq_fail "at most $peak LLM requests waited at once for 40 slow tasks: not concurrent"

# 8. Languages: the system prompt names the task's language (the fake
# answers only when it does), the reply's block in that language is the one
# run, and a repair round asks in the same language.
push langs <<'T'
{"id": "lang-py", "prompt": "[w:lang-py] hello"}
{"id": "lang-sh", "language": "bash", "prompt": "[w:lang-sh] hello"}
T
check langs '
assert d["lang-py"]["status"] == "ok" and d["lang-py"]["stdout"] == "asked for python\n", d["lang-py"]
r = d["lang-sh"]
assert r["status"] == "ok" and r["stdout"] == "repaired\n" and r["language"] == "bash", r
assert r["repairs"][0]["code"] == "echo repaired\n", r["repairs"]
'
lang_gen() { # lang_gen LANGUAGE TOOLCHAIN: the fake's [w:lang-LANGUAGE] rule prints "from LANGUAGE"
  if [ ! -x "$2" ]; then echo "worker_llm: SKIP $1 generation: $2 is not installed"; return; fi
  echo "{\"id\": \"lang-$1\", \"language\": \"$1\", \"prompt\": \"[w:lang-$1] hello\"}" | push "langs_$1"
  check "langs_$1" "r = d['lang-$1']; assert r['status'] == 'ok' and r['stdout'] == 'from $1\\n', r"
}
lang_gen javascript /usr/bin/node
lang_gen java /usr/bin/javac

kill -0 "$SQ_PID_worker" || sq_fail "the worker died"
grep -qa -- "$SQ_WORKER_LLM_KEY" "$SQ_TMP/worker.log" "$SQ_TMP"/*.bson && sq_fail "the LLM API key appears in the worker log or a result"
[ "$($PY -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))["authorization_headers"])' \
    "http://127.0.0.1:$SQ_LLM_PORT/stats")" -gt 0 ] ||
  sq_fail "no request carried the key: the leak check above proves nothing"
echo "worker_llm: all checks passed (up to $peak LLM requests at once)"
