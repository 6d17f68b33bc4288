#!/bin/sh
# dashboards.sh: compose/'s observability files: the Prometheus config and
# alert rules pass promtool (check config, check rules, test rules), and
# every metric the alerts and the Grafana dashboard query is one sandq
# exports, so a renamed metric breaks this test instead of a dashboard.
# (scrape.sh checks the same against what a real Prometheus scraped.)
set -eu
. "$SQ_SRC/tests/lib/env.sh"
command -v promtool >/dev/null || sq_skip "promtool is not installed (Debian package prometheus; scripts/install-deps.sh)"
d="$SQ_SRC/compose/prometheus"
promtool check config "$d/prometheus.yml" || sq_fail "prometheus.yml"
promtool check rules "$d/alerts.yml" || sq_fail "alerts.yml"
(cd "$d" && promtool test rules alerts_test.yml) || sq_fail "alert rule unit tests"
/usr/bin/python3 - "$SQ_SRC" <<'PY' || sq_fail "the dashboard or the alerts query unknown metrics"
import json, re, sys
src = sys.argv[1]
known = set(re.findall(r'"(sandq_[a-z_]+)"', open(src + "/common/fleet/metrics_text.c").read()))
known |= set(re.findall(r'"(sandq_[a-z_]+)"', open(src + "/producer/metrics_cmd.c").read()))
known |= set(re.findall(r'"(sandq_[a-z_]+)"', open(src + "/worker/endpoint.c").read()))
known |= {k + s for k in list(known) for s in ("_bucket", "_sum", "_count")}
dash = json.load(open(src + "/compose/grafana/dashboards/sandq.json"))
exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
exprs += re.findall(r"expr: (.*(?:\n {10}.*)*)", open(src + "/compose/prometheus/alerts.yml").read())
assert len(exprs) > 15, len(exprs)
for e in exprs:
    for name in re.findall(r"\b([a-z_]+)\b(?![\"'])", e):
        if name.startswith(("sandq_", "node_")):
            assert name in known, (name, e)
print("dashboards: %d queries, every metric known" % len(exprs))
PY
echo "dashboards: all checks passed"
