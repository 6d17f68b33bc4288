#!/bin/sh
# metrics.sh: the workers' metrics and health, fleet-wide, against a real
# redis-server and the fake LLM: N tasks pushed -> N counted by status as
# the results say, cost equals the sum of the results' costs, tokens and LLM
# requests agree, the counts by language match the results' languages,
# windowed hashes carry a TTL, `sandq-producer metrics`
# passes `promtool check metrics` (stdout and the textfile form), and
# `sandq-producer health` tells a live fleet from a dead one.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import bson, redis' 2>/dev/null || sq_skip "python3-pymongo or python3-redis is not installed"
command -v promtool >/dev/null || sq_skip "promtool is not installed (Debian package prometheus; scripts/install-deps.sh)"
sq_start_redis
sq_start_fake_llm "$SQ_SRC/tests/fake_llm/worker-replies.jsonl"
# A key in the workers' environment, so the leak check at the end can fail.
export SQ_METRICS_LLM_KEY="sk-metrics-secret-$$-do-not-leak"
cat >"$SQ_TMP/w.json" <<JSON
{"providers": [{"name": "fake \"one\"", "base_url": "$SANDQ_LLM_BASE_URL", "model": "fake-coder",
   "api_key_env": "SQ_METRICS_LLM_KEY",
   "price_in_usd_per_mtok": 1.5, "price_out_usd_per_mtok": 4.0, "max_retries": 0, "timeout_ms": 3000}],
 "scratch_root": "$SQ_TMP/scratch", "risk": "generated", "max_attempts": 1,
 "metrics_flush_ms": 200, "metrics_window_s": 2, "metrics_retention_s": 60, "health_stale_ms": 8000}
JSON
unset SANDQ_LLM_BASE_URL
cfg="--config $SQ_TMP/w.json"
P="$SQ_BIN/sandq-producer"
# No worker yet: the fleet is unhealthy.
if $P health $cfg >"$SQ_TMP/h0.txt"; then sq_fail "health passed with no worker"; fi
grep -q "UNHEALTHY no live worker" "$SQ_TMP/h0.txt" || sq_fail "health without workers: $(cat "$SQ_TMP/h0.txt")"

sq_bg w1 "$SQ_BIN/sandq-worker" serve $cfg --worker-id w1
sq_bg w2 "$SQ_BIN/sandq-worker" serve $cfg --worker-id w2

# A mixed batch: generated code (ok, blocked by the risk verdict, garbled
# replies, a 400), given code (ok, failing, runtime error; one in bash) and an
# invalid task.
: >"$SQ_TMP/t.jsonl"
i=0; while [ $i -lt 12 ]; do echo "{\"id\": \"gen-$i\", \"prompt\": \"[w:safe] $i\"}" >>"$SQ_TMP/t.jsonl"; i=$((i + 1)); done
cat >>"$SQ_TMP/t.jsonl" <<'T'
{"id": "risky", "prompt": "[w:risky] do it"}
{"id": "garbled", "prompt": "[w:malformed]"}
{"id": "bad-request", "prompt": "[w:400]"}
{"id": "code-ok", "code": "print(1)"}
{"id": "code-bash", "language": "bash", "code": "echo 1"}
{"id": "code-fail", "code": "import sys\nsys.exit(3)"}
{"id": "code-raise", "code": "raise ValueError('x')"}
{"id": "no-limits", "code": "print(1)", "limits": {"wall_ms": "soon"}}
T
n=$(wc -l <"$SQ_TMP/t.jsonl")
# No metadata.expect and nothing dead-lettered: push --wait exits 0.
$P push $cfg --no-validate --batch m1 --wait --timeout-s 60 --out "$SQ_TMP/m1.bson" "$SQ_TMP/t.jsonl" >"$SQ_TMP/push.out" 2>&1 ||
  { cat "$SQ_TMP/push.out" >&2; sq_fail "push --wait of m1 exited $?"; }
$PY -c "import bson,sys; d=bson.decode_all(open('$SQ_TMP/m1.bson','rb').read()); sys.exit(len(d) != $n)" ||
  { cat "$SQ_TMP/push.out" >&2; sq_fail "not every task of m1 has a result"; }

# Wait for the workers' flushes to land, then compare with the results.
sq_wait_for "$P metrics $cfg | awk '/^sandq_tasks_total/ {s += \$2} END {exit !(s >= $n)}'" 60 ||
  sq_fail "metrics never counted $n tasks: $($P metrics $cfg | grep tasks_total)"
# ... and both workers' health records (each writes its first one on its own clock)
sq_wait_for "$P metrics $cfg | awk '/^sandq_workers/ && /live/ {n = \$2} END {exit !(n >= 2)}'" 60 ||
  sq_fail "metrics never counted 2 live workers: $($P metrics $cfg | grep sandq_workers)"
$P metrics $cfg >"$SQ_TMP/m.txt"
promtool check metrics <"$SQ_TMP/m.txt" || sq_fail "promtool rejects the exposition"
$PY - "$SQ_TMP/m.txt" "$SQ_TMP/m1.bson" <<'PY' || sq_fail "metrics do not match the results"
import bson, collections, re, sys
samples = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    series, value = line.rsplit(" ", 1)
    # every series carries its queue's label, first; the checks below read the rest
    assert '{queue="default"' in series, series
    series = series.replace('{queue="default"}', "").replace('{queue="default",', "{")
    samples[series] = float(value)
docs = bson.decode_all(open(sys.argv[2], "rb").read())
by_status = collections.Counter(d["status"] for d in docs)
counted = {re.search(r'status="([^"]+)"', k).group(1): v for k, v in samples.items() if k.startswith("sandq_tasks_total{")}
assert counted == {k: float(v) for k, v in by_status.items()}, (counted, by_status)
assert {"ok", "blocked", "llm_error", "runtime_error", "invalid_task"} <= set(counted), counted
# by language: every result whose task was read (blocked and llm_error too), under its language and status
by_lang = collections.Counter((d["language"], d["status"]) for d in docs if "language" in d)
assert by_lang[("python", "blocked")] == 1 and by_lang[("python", "llm_error")] == 2, by_lang
lang = {re.search(r'language="([^"]+)",status="([^"]+)"', k).groups(): v
        for k, v in samples.items() if k.startswith("sandq_language_tasks_total{") and v}
assert lang == {k: float(v) for k, v in by_lang.items()}, (lang, by_lang)
assert by_lang[("bash", "ok")] == 1 and by_lang[("python", "ok")] >= 13, by_lang
prov = 'provider="fake \\"one\\""'
cost = sum(d.get("llm", {}).get("cost_usd", 0) for d in docs)
assert cost > 0 and abs(samples["sandq_llm_cost_usd_total{%s}" % prov] - cost) < 1e-9, (samples, cost)
tok_p = sum(d.get("llm", {}).get("prompt_tokens", 0) for d in docs)
tok_c = sum(d.get("llm", {}).get("completion_tokens", 0) for d in docs)
assert samples['sandq_llm_tokens_total{%s,kind="prompt"}' % prov] == tok_p, tok_p
assert samples['sandq_llm_tokens_total{%s,kind="completion"}' % prov] == tok_c, tok_c
calls = sum(d.get("llm", {}).get("calls", 0) for d in docs)
ok = samples.get('sandq_llm_requests_total{%s,outcome="ok"}' % prov, 0)
err = samples.get('sandq_llm_requests_total{%s,outcome="error"}' % prov, 0)
assert ok + err == calls, (ok, err, calls)  # max_retries 0: one exchange per call
assert samples['sandq_llm_errors_total{%s,kind="bad_reply"}' % prov] >= 1   # the garbled reply
assert samples['sandq_llm_errors_total{%s,kind="http_4xx"}' % prov] >= 1    # the 400
total = samples['sandq_stage_duration_seconds_count{stage="total"}']
assert total == len(docs), (total, len(docs))
assert samples['sandq_stage_duration_seconds_bucket{stage="total",le="+Inf"}'] == total
assert samples['sandq_llm_request_duration_seconds_count{%s}' % prov] == ok + err
assert samples['sandq_stage_duration_seconds_count{stage="jail"}'] >= 14  # 12 generated ok + given code
assert samples['sandq_workers{state="live"}'] == 2
assert samples['sandq_queue_tasks{state="waiting"}'] == 0
print("metrics: %d tasks counted by status, cost %.9f and tokens match the results" % (len(docs), cost))
PY

# Time windows: hashes with a TTL, holding this run's counts.
w=$(sq_redis_cli --scan --pattern 'sq:{default}:metrics:w2:*' | head -1)
[ -n "$w" ] || sq_fail "no windowed metrics hash"
ttl=$(sq_redis_cli ttl "$w")
[ "$ttl" -gt 0 ] && [ "$ttl" -le 60 ] || sq_fail "window $w has TTL $ttl (want 1..60)"
wsum=0
for k in $(sq_redis_cli --scan --pattern 'sq:{default}:metrics:w2:*'); do
  v=$(sq_redis_cli hget "$k" 'sandq_tasks_total{status="ok"}'); wsum=$((wsum + ${v:-0}))
done
[ "$wsum" = "$(sq_redis_cli hget 'sq:{default}:metrics' 'sandq_tasks_total{status="ok"}')" ] ||
  sq_fail "windows hold $wsum ok tasks, the totals $(sq_redis_cli hget 'sq:{default}:metrics' 'sandq_tasks_total{status="ok"}')"

# The textfile-collector form: written atomically, also valid.
$P metrics $cfg "$SQ_TMP/sandq.prom"
promtool check metrics <"$SQ_TMP/sandq.prom" || sq_fail "promtool rejects the textfile"
[ ! -e "$SQ_TMP/sandq.prom.tmp" ] || sq_fail "temporary textfile left behind"

# Health: both workers live; one named; an unknown one is not; --json for scripts.
$P health $cfg --json >"$SQ_TMP/h1.json" || sq_fail "health --json of a healthy fleet failed"
$PY -c '
import json, sys
h = json.load(open(sys.argv[1]))
assert h["healthy"] is True and h["live"] == 2, h
assert sorted(w["worker"] for w in h["workers"]) == ["w1", "w2"], h
assert all(w["state"] == "ok" and w["record"]["jail_mode"] in ("warm", "spawn") for w in h["workers"]), h
' "$SQ_TMP/h1.json" || sq_fail "health --json: $(cat "$SQ_TMP/h1.json")"
rc=0; $P health $cfg --json nobody >"$SQ_TMP/hn.json" || rc=$?
[ $rc = 1 ] && $PY -c 'import json, sys; h = json.load(open(sys.argv[1])); assert h["healthy"] is False and "nobody" in h["summary"], h' \
  "$SQ_TMP/hn.json" || sq_fail "health --json of an unknown worker: exit $rc, $(cat "$SQ_TMP/hn.json")"
$P health $cfg >"$SQ_TMP/h1.txt" || { cat "$SQ_TMP/h1.txt" >&2; sq_fail "healthy fleet reported unhealthy"; }
grep -q "HEALTHY 2 live worker" "$SQ_TMP/h1.txt" || sq_fail "health: $(cat "$SQ_TMP/h1.txt")"
grep -q "worker w1 .* ok .*heartbeat" "$SQ_TMP/h1.txt" || sq_fail "health lacks w1's heartbeat: $(cat "$SQ_TMP/h1.txt")"
$P health $cfg w2 >/dev/null || sq_fail "health w2 failed"
if $P health $cfg nobody >/dev/null; then sq_fail "health of an unknown worker passed"; fi
# A worker killed outright goes stale; the other keeps the fleet healthy.
kill -KILL "$SQ_PID_w2"
sq_wait_for "! $P health $cfg w2" 60 || sq_fail "a killed worker stayed healthy"
$P health $cfg w2 | grep -q "stale" || sq_fail "killed worker not reported stale"
$P health $cfg >/dev/null || sq_fail "one live worker left, yet the fleet is unhealthy"
# A worker stopped cleanly removes itself; with none left the fleet is unhealthy.
kill -TERM "$SQ_PID_w1"
sq_wait_for "! kill -0 $SQ_PID_w1" 20 || sq_fail "w1 did not stop"
if $P health $cfg >"$SQ_TMP/h2.txt"; then sq_fail "health passed with no live worker"; fi
grep -q "UNHEALTHY no live worker" "$SQ_TMP/h2.txt" || sq_fail "health after stop: $(cat "$SQ_TMP/h2.txt")"
grep -q "w1" "$SQ_TMP/h2.txt" && sq_fail "a cleanly stopped worker is still listed"
grep -qa -- "$SQ_METRICS_LLM_KEY" "$SQ_TMP/m.txt" "$SQ_TMP/sandq.prom" "$SQ_TMP/w1.log" "$SQ_TMP/w2.log" &&
  sq_fail "the LLM API key appears in the metrics or a worker's log"
[ "$($PY -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))["authorization_headers"])' \
    "http://127.0.0.1:$SQ_LLM_PORT/stats")" -gt 0 ] ||
  sq_fail "no request carried the key: the leak check above proves nothing"
echo "metrics: all checks passed"
