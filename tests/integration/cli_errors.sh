#!/bin/sh
# Bad configuration and flags, as an operator meets them: each is refused
# with exit 2 and a message that names the field, before anything starts.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
W="$SQ_BIN/sandq-worker" P="$SQ_BIN/sandq-producer"

# expect CODE NEEDLE CMD...: CMD exits CODE and its stderr contains NEEDLE.
expect() {
  code=$1 needle=$2; shift 2
  set +e
  "$@" >"$SQ_TMP/out" 2>"$SQ_TMP/err"
  rc=$?
  set -e
  [ $rc -eq "$code" ] || { cat "$SQ_TMP/err" >&2; sq_fail "'$*' exited $rc, want $code"; }
  grep -qF -- "$needle" "$SQ_TMP/err" || { cat "$SQ_TMP/err" >&2; sq_fail "'$*': stderr lacks '$needle'"; }
}

echo '{"queue": "a", "colour": 1}' >"$SQ_TMP/unknown.json"
echo '{"max_limits": {"wall_ms": "soon"}}' >"$SQ_TMP/type.json"
echo '{"providers": [{"name": "p", "base_url": "http://x", "model": "m", "api_key": "sk-live-123"}]}' \
  >"$SQ_TMP/key.json"
echo '{"queue": ' >"$SQ_TMP/broken.json"

expect 2 "SANDQ_LOG_LEVEL" env SANDQ_LOG_LEVEL=loud "$W" serve
expect 2 "colour: unknown setting" "$W" serve --config "$SQ_TMP/unknown.json"
expect 2 "max_limits.wall_ms" "$W" serve --config "$SQ_TMP/type.json"
expect 2 "providers[0].api_key: keys are never read from files" "$W" serve --config "$SQ_TMP/key.json"
expect 2 "not a JSON object" "$W" serve --config "$SQ_TMP/broken.json"
expect 2 "nonexistent.json" "$W" serve --config "$SQ_TMP/nonexistent.json"
expect 2 "redis_url: must start with redis://" "$W" serve --redis http://user:hunter2@x
grep -q hunter2 "$SQ_TMP/err" && sq_fail "the password in a bad URL was printed"
expect 2 "queue" "$W" serve --queue 'a{b}'
expect 2 "jail_mode" env SANDQ_JAIL_MODE=fast "$W" serve
expect 2 "--budget-usd 'abc'" "$P" push --budget-usd abc "$SQ_SRC/samples/batch.jsonl"
expect 2 "--budget-usd '-1'" "$P" push --budget-usd -1 "$SQ_SRC/samples/batch.jsonl"
expect 2 "unrecognized option '--frobnicate'" "$P" push --frobnicate "$SQ_SRC/samples/batch.jsonl"
# Metrics, health and rollout: bad plans and bad usage, refused before Redis is asked.
echo '{"rollout_stages": "10,30,70"}' >"$SQ_TMP/stages.json"
echo '{"metrics_window_s": 30, "metrics_retention_s": 40}' >"$SQ_TMP/window.json"
expect 2 "rollout_stages: '10,30,70' must be" "$P" rollout --config "$SQ_TMP/stages.json" start a b
expect 2 "rollout_stages" "$W" serve --config "$SQ_TMP/stages.json"
expect 2 "metrics_retention_s: 40 must be at least twice metrics_window_s" "$W" serve --config "$SQ_TMP/window.json"
expect 2 "usage: sandq-producer rollout" "$P" rollout start onlyone
expect 2 "usage: sandq-producer rollout" "$P" rollout promote
expect 2 "usage: sandq-producer metrics" "$P" metrics a b
expect 2 "usage: sandq-producer health" "$P" health a b
# A Redis that is not there: a clear error, nothing pushed, exit 1.
expect 1 "cannot connect to redis" "$P" push --redis "redis://127.0.0.1:1" "$SQ_SRC/samples/batch.jsonl"
echo "cli_errors: every bad setting refused with a message naming it"
