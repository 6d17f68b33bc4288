#!/bin/sh
# Bad configuration and flags, as an operator meets them: each is refused
# with exit 2 and a message that names the field, before anything starts.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
W="$SQ_BIN/sandq-worker" P="$SQ_BIN/sandq-producer"

echo '{"queue": "a", "colour": 1}' >"$SQ_TMP/unknown.json"
echo '{"max_limits": {"wall_ms": "soon"}}' >"$SQ_TMP/type.json"
echo '{"providers": [{"name": "p", "base_url": "http://x", "model": "m", "api_key": "sk-live-123"}]}' \
  >"$SQ_TMP/key.json"
echo '{"queue": ' >"$SQ_TMP/broken.json"

sq_expect 2 "SANDQ_LOG_LEVEL" env SANDQ_LOG_LEVEL=loud "$W" serve
sq_expect 2 "colour: unknown setting" "$W" serve --config "$SQ_TMP/unknown.json"
sq_expect 2 "max_limits.wall_ms" "$W" serve --config "$SQ_TMP/type.json"
sq_expect 2 "providers[0].api_key: keys are never read from files" "$W" serve --config "$SQ_TMP/key.json"
sq_expect 2 "not a JSON object" "$W" serve --config "$SQ_TMP/broken.json"
sq_expect 2 "nonexistent.json" "$W" serve --config "$SQ_TMP/nonexistent.json"
sq_expect 2 "redis_url: must start with redis://" "$W" serve --redis http://user:hunter2@x
grep -q hunter2 "$SQ_TMP/err" && sq_fail "the password in a bad URL was printed"
sq_expect 2 "queue" "$W" serve --queue 'a{b}'
sq_expect 2 "jail_mode" env SANDQ_JAIL_MODE=fast "$W" serve
sq_expect 2 "--budget-usd 'abc'" "$P" push --budget-usd abc "$SQ_SRC/samples/batch.jsonl"
sq_expect 2 "--budget-usd '-1'" "$P" push --budget-usd -1 "$SQ_SRC/samples/batch.jsonl"
sq_expect 2 "unrecognized option '--frobnicate'" "$P" push --frobnicate "$SQ_SRC/samples/batch.jsonl"
# Metrics, health and rollout: bad plans and bad usage, refused before Redis is asked.
echo '{"rollout_stages": "10,30,70"}' >"$SQ_TMP/stages.json"
echo '{"metrics_window_s": 30, "metrics_retention_s": 40}' >"$SQ_TMP/window.json"
sq_expect 2 "rollout_stages: '10,30,70' must be" "$P" rollout --config "$SQ_TMP/stages.json" start a b
sq_expect 2 "rollout_stages" "$W" serve --config "$SQ_TMP/stages.json"
sq_expect 2 "metrics_retention_s: 40 must be at least twice metrics_window_s" "$W" serve --config "$SQ_TMP/window.json"
sq_expect 2 "usage: sandq-producer rollout" "$P" rollout start onlyone
sq_expect 2 "usage: sandq-producer rollout" "$P" rollout promote
sq_expect 2 "usage: sandq-producer metrics" "$P" metrics a b
sq_expect 2 "usage: sandq-producer health" "$P" health a b
# A Redis that is not there: a clear error, nothing pushed, exit 1.
sq_expect 1 "cannot connect to redis" "$P" push --redis "redis://127.0.0.1:1" "$SQ_SRC/samples/batch.jsonl"
# Options before the command are the command's options.
sq_expect 1 "cannot connect to redis" "$P" --redis "redis://127.0.0.1:1" status some-batch
sq_expect 1 "cannot connect to redis" "$P" --log-level=warn --redis "redis://127.0.0.1:1" push "$SQ_SRC/samples/batch.jsonl"
# A typo of a command or an option: one line naming the nearest, exit 2.
one_line() { [ "$(wc -l <"$SQ_TMP/err")" -eq 1 ] || { cat "$SQ_TMP/err" >&2; sq_fail "'$1' printed more than one line"; }; }
sq_expect 2 "unknown command 'stauts' (did you mean status?)" "$P" stauts some-batch
one_line stauts
sq_expect 2 "unknown command 'sreve' (did you mean serve?)" "$W" sreve
one_line sreve
sq_expect 2 "unknown command 'frobnicate' (sandq-producer --help lists the commands)" "$P" frobnicate
sq_expect 2 "unrecognized option '--qeue' (did you mean --queue?)" "$P" status b --qeue q
# An empty file name is refused before any work (Redis is never asked).
sq_expect 2 "--html needs a file name" "$P" report b1 --html "" --redis "redis://127.0.0.1:1"
sq_expect 2 "--out needs a file name" "$P" results b1 --out "" --redis "redis://127.0.0.1:1"
sq_expect 2 "--out needs a file name" "$P" push --out "" --redis "redis://127.0.0.1:1" "$SQ_SRC/samples/batch.jsonl"
sq_expect 2 "--config needs a file name" "$W" check --config ""
# A malformed Redis URL is configuration: exit 2 with the reason, from the
# producer and from a worker (which must not retry it), before any
# connection. `timeout` only keeps a regression from hanging the suite.
while IFS='|' read -r url why; do
  sq_expect 2 "redis_url: $why" "$P" status b --redis "$url"
  sq_expect 2 "redis_url: $why" timeout 60 "$W" serve --redis "$url"
done <<'URLS'
redis://h:0|port '0' is not a number in 1..65535
redis://h:65536|port '65536' is not a number
redis://h:x|port 'x' is not a number
redis://:pw@|missing host
redis://h:1/db|database 'db' is not a number
redis://[::1|unterminated '['
redis-sentinel://h:1|the master's name is missing
redis-sentinel://h:1/m?dbx=1|the only option is ?db=N
redis-sentinel://h:1,,h:2/m|address '' is not host:port
redis-cluster://h:0|address 'h:0' is not host:port
redis-cluster://a:1/2|a cluster has one database
unix://relative/path|unix socket path must be absolute
redis://h:1%|port '1%' is not a number
URLS
# A password is never shown, not even a piece of one holding a '/'.
for url in "redis://u:ab12/SECRET@h:1" "redis-cluster://u:ab12/SECRET@h:1" "redis-sentinel://:ab12?SECRET@h:1/m" \
  "redis://u:SECRET@h:0"; do
  sq_expect 2 "redis_url: " "$P" status b --redis "$url"
  ! grep -q -e SECRET -e ab12 "$SQ_TMP/err" || { cat "$SQ_TMP/err" >&2; sq_fail "'$url': a piece of the password was printed"; }
  sq_expect 2 "redis_url: " timeout 60 "$W" serve --redis "$url"
  ! grep -q -e SECRET -e ab12 "$SQ_TMP/err" || { cat "$SQ_TMP/err" >&2; sq_fail "serve '$url': a piece of the password was printed"; }
done
echo "cli_errors: every bad setting, command, URL and empty file name refused with a message naming it"
