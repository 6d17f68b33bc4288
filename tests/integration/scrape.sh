#!/bin/sh
# scrape.sh: a real Prometheus (the Debian prometheus server) scrapes two
# workers' GET /metrics and the producer's fleet view (`metrics --listen`):
#   - after a batch of N tasks, PromQL through Prometheus' HTTP API gives N
#     (per worker summed, and fleet-wide), and up is 1 for every target;
#   - compose/'s alert rules load into that Prometheus and evaluate without
#     error;
#   - every metric the Grafana dashboard and the alerts query is one of the
#     scraped series, and every dashboard query runs;
#   - /healthz says 200 while a worker claims and 503 with a reason when its
#     Redis is gone; bad addresses and busy ports exit 2.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
command -v prometheus >/dev/null || sq_skip "the prometheus server is not installed (Debian package prometheus; make test installs it)"
command -v curl >/dev/null || sq_skip "curl is not installed"
sq_start_redis
sq_start_fake_llm "$SQ_SRC/tests/fake_llm/worker-replies.jsonl"
cat >"$SQ_TMP/w.json" <<JSON
{"providers": [{"name": "base", "base_url": "$SANDQ_LLM_BASE_URL", "model": "fake-coder", "max_retries": 0},
               {"name": "cand", "base_url": "$SANDQ_LLM_BASE_URL", "model": "fake-coder", "max_retries": 0, "weight": 0}],
 "scratch_root": "$SQ_TMP/scratch", "risk": "generated", "max_attempts": 1,
 "metrics_flush_ms": 200, "metrics_window_s": 2, "metrics_retention_s": 120, "health_stale_ms": 5000,
 "rollout_window_s": 10}
JSON
unset SANDQ_LLM_BASE_URL
cfg="--config $SQ_TMP/w.json"
P="$SQ_BIN/sandq-producer"
W="$SQ_BIN/sandq-worker"
p1=$(sq_free_port); p2=$(sq_free_port); pf=$(sq_free_port); pp=$(sq_free_port)
sq_bg w1 "$W" serve $cfg --worker-id w1 --metrics-listen "127.0.0.1:$p1"
# the environment form of the setting, for the second worker
SANDQ_METRICS_LISTEN=":$p2" sq_bg w2 "$W" serve $cfg --worker-id w2
sq_bg fleet "$P" metrics $cfg --listen "127.0.0.1:$pf"
for p in $p1 $p2 $pf; do
  sq_wait_for "curl -sf http://127.0.0.1:$p/healthz" 30 ||
    { cat "$SQ_TMP/w1.log" "$SQ_TMP/w2.log" "$SQ_TMP/fleet.log" >&2; sq_fail "no 200 from /healthz on port $p"; }
done
curl -s "http://127.0.0.1:$p1/healthz" | grep -q "^ok: claiming" || sq_fail "worker /healthz: $(curl -s "http://127.0.0.1:$p1/healthz")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p1/nothing")" = 404 ] || sq_fail "an unknown path is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$p1/metrics")" = 405 ] || sq_fail "POST is not 405"

# Bad addresses and busy ports: exit 2 with the reason.
expect2() { # expect2 WHAT TEXT CMD...
  what=$1 text=$2; shift 2
  rc=0; "$@" >"$SQ_TMP/e.out" 2>&1 || rc=$?
  [ $rc -eq 2 ] || { cat "$SQ_TMP/e.out" >&2; sq_fail "$what: exit $rc, want 2"; }
  grep -q "$text" "$SQ_TMP/e.out" || sq_fail "$what: $(cat "$SQ_TMP/e.out")"
}
expect2 "worker on a busy port" "Address already in use" "$W" serve $cfg --worker-id w3 --metrics-listen "127.0.0.1:$p1"
expect2 "worker on a bad address" "no port" "$W" serve $cfg --worker-id w3 --metrics-listen "localhost"
expect2 "worker on a bad port" "not in 1..65535" "$W" serve $cfg --worker-id w3 --metrics-listen "127.0.0.1:70000"
expect2 "producer on a busy port" "Address already in use" "$P" metrics $cfg --listen "127.0.0.1:$p1"
expect2 "producer on an unresolvable host" "cannot resolve" "$P" metrics $cfg --listen "no-such-host.invalid:9"
expect2 "producer with both --listen and FILE" "usage" "$P" metrics $cfg --listen "127.0.0.1:$pf" "$SQ_TMP/f.prom"

# A rollout, so its series exist too (both providers are configured on the live workers).
$P rollout $cfg start cand base >/dev/null || sq_fail "rollout start refused: both providers are configured"

# Prometheus: 1 s scrapes of the three targets, compose/'s alert rules.
mkdir -p "$SQ_TMP/prom"
cp "$SQ_SRC/compose/prometheus/alerts.yml" "$SQ_TMP/prom/alerts.yml"
cat >"$SQ_TMP/prom/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [alerts.yml]
scrape_configs:
  - job_name: sandq-worker
    static_configs: [{targets: ["127.0.0.1:$p1", "127.0.0.1:$p2"]}]
  - job_name: sandq-fleet
    static_configs: [{targets: ["127.0.0.1:$pf"]}]
YML
sq_bg prometheus prometheus --config.file="$SQ_TMP/prom/prometheus.yml" --storage.tsdb.path="$SQ_TMP/prom/data" \
  --web.listen-address="127.0.0.1:$pp"
sq_wait_for "curl -sf http://127.0.0.1:$pp/-/ready" 60 || { tail -20 "$SQ_TMP/prometheus.log" >&2; sq_fail "prometheus did not start"; }
query() { # query PROMQL: prints the first sample's value ("" when none)
  curl -sf "http://127.0.0.1:$pp/api/v1/query" --data-urlencode "query=$1" |
    $PY -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
query_is() { [ "$(query "$1")" = "$2" ]; } # query_is PROMQL WANT: whether the query gives WANT

# A batch of N tasks: generated code (ok, blocked by the risk verdict), given code.
: >"$SQ_TMP/t.jsonl"
i=0; while [ $i -lt 12 ]; do echo "{\"id\": \"gen-$i\", \"prompt\": \"[w:safe] $i\"}" >>"$SQ_TMP/t.jsonl"; i=$((i + 1)); done
i=0; while [ $i -lt 12 ]; do echo "{\"id\": \"code-$i\", \"code\": \"print($i)\"}" >>"$SQ_TMP/t.jsonl"; i=$((i + 1)); done
echo '{"id": "risky", "prompt": "[w:risky] do it"}' >>"$SQ_TMP/t.jsonl"
echo '{"id": "raise", "code": "raise ValueError(1)"}' >>"$SQ_TMP/t.jsonl"
n=$(wc -l <"$SQ_TMP/t.jsonl")
$P push $cfg --batch s1 --wait --timeout-s 120 "$SQ_TMP/t.jsonl" >"$SQ_TMP/push.out" 2>&1 ||
  { cat "$SQ_TMP/push.out" >&2; sq_fail "batch s1 did not complete"; }

sq_wait_until 30 query_is 'sum(sandq_tasks_total{job="sandq-worker"})' "$n" ||
  sq_fail "Prometheus counts $(query 'sum(sandq_tasks_total{job="sandq-worker"})') tasks from the workers, want $n"
sq_wait_until 30 query_is 'sum(sandq_tasks_total{job="sandq-fleet"})' "$n" ||
  sq_fail "Prometheus counts $(query 'sum(sandq_tasks_total{job="sandq-fleet"})') tasks fleet-wide, want $n"
[ "$(query 'count(up == 1)')" = 3 ] || sq_fail "up: $(curl -s "http://127.0.0.1:$pp/api/v1/query?query=up")"
[ "$(query 'count(count by (worker) (sandq_tasks_total{job="sandq-worker",queue="default"}))')" = 2 ] ||
  sq_fail "the workers' series lack their worker and queue labels"
[ "$(query 'sum(sandq_workers{state="live",queue="default"})')" = 2 ] || sq_fail "the fleet view does not see 2 live workers"
[ "$(query 'sandq_rollout_candidate_ratio{queue="default"}')" = 0.1 ] || sq_fail "the rollout's share is not scraped"

# The alert rules: loaded, evaluated, no error.
sq_wait_for "curl -sf http://127.0.0.1:$pp/api/v1/rules | $PY -c '
import json, sys
g = json.load(sys.stdin)[\"data\"][\"groups\"]
rules = [r for x in g for r in x[\"rules\"]]
sys.exit(not (len(rules) >= 8 and all(r[\"health\"] == \"ok\" for r in rules)))'" 30 ||
  { curl -s "http://127.0.0.1:$pp/api/v1/rules" >&2; sq_fail "compose/'s alert rules are not all loaded and healthy"; }

# The dashboard and the alerts query only scraped series; every dashboard query runs.
curl -sf "http://127.0.0.1:$pp/api/v1/label/__name__/values" >"$SQ_TMP/names.json"
$PY - "$SQ_SRC" "$SQ_TMP/names.json" "http://127.0.0.1:$pp" <<'PY' || sq_fail "the dashboard or the alerts query series nobody exports"
import json, re, sys, urllib.parse, urllib.request
src, names, base = sys.argv[1], set(json.load(open(sys.argv[2]))["data"]), sys.argv[3]
dash = json.load(open(src + "/compose/grafana/dashboards/sandq.json"))
exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
alerts = re.findall(r"expr: (.*(?:\n {10}.*)*)", open(src + "/compose/prometheus/alerts.yml").read())
assert len(exprs) > 10 and len(alerts) >= 8, (len(exprs), len(alerts))
for e in exprs + alerts:
    for name in re.findall(r"\b(sandq_[a-z_]+)\b", e):
        assert name in names, "%s (in %s) is not a scraped series" % (name, e)
for e in exprs:
    r = json.load(urllib.request.urlopen(base + "/api/v1/query?" + urllib.parse.urlencode({"query": e})))
    assert r["status"] == "success", (e, r)
print("scrape: %d dashboard and %d alert expressions, every series scraped" % (len(exprs), len(alerts)))
PY

# /healthz turns 503 with a reason when the worker's Redis is gone; the endpoint stays up.
kill -TERM "$SQ_PID_redis"
sq_wait_for "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$p1/healthz)\" = 503 ]" 30 ||
  sq_fail "worker /healthz stayed $(curl -s "http://127.0.0.1:$p1/healthz") without redis"
curl -s "http://127.0.0.1:$p1/healthz" | grep -q "^not claiming: .*redis" || sq_fail "503 without a reason: $(curl -s "http://127.0.0.1:$p1/healthz")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$pf/healthz")" = 503 ] || sq_fail "fleet /healthz is not 503 without redis"
sq_wait_for "curl -sf http://127.0.0.1:$p1/metrics | grep -q '^sandq_worker_claiming{worker=\"w1\",queue=\"default\"} 0'" 30 ||
  sq_fail "the worker's metrics do not say it stopped claiming"
echo "scrape: all checks passed ($n tasks counted through Prometheus)"
