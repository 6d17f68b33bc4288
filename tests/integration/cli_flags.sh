#!/bin/sh
# cli_flags.sh: argument parsing has no fixed-size array that input can
# overrun. 300 repeated flags (once a SIGSEGV: `serve` kept them in
# flags[8] on its stack) give the documented outcome (docs/configuration.md):
# the last one wins; `run --policy` applies every one, in order.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_start_redis
W="$SQ_BIN/sandq-worker" P="$SQ_BIN/sandq-producer"

repeat() { # repeat FLAG PREFIX N: FLAG PREFIX1 ... FLAG PREFIXN
  i=1
  while [ "$i" -le "$3" ]; do printf '%s\n%s%d\n' "$1" "$2" "$i"; i=$((i + 1)); done
}

# 1. sandq-worker serve: 300 --queue and 300 --worker-id; it serves the last
#    of each, and a SIGTERM ends it with 0.
repeat --queue q 300 >"$SQ_TMP/args"
repeat --worker-id w 300 >>"$SQ_TMP/args"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
(IFS='
'; exec "$W" serve $(cat "$SQ_TMP/args") --log-level info) >"$SQ_TMP/serve.log" 2>&1 &
pid=$!
SQ_PIDS="$SQ_PIDS $pid"
sq_wait_for "grep -q 'serving queue' '$SQ_TMP/serve.log'" 60 || {
  set +e; wait $pid; rc=$?; set -e
  cat "$SQ_TMP/serve.log" >&2
  sq_fail "serve with 300 repeated flags did not start (exit $rc)"
}
grep -q "worker w300 serving queue q300 " "$SQ_TMP/serve.log" || { cat "$SQ_TMP/serve.log" >&2; sq_fail "the last flag did not win"; }
kill -TERM $pid
set +e; wait $pid; rc=$?; set -e
[ $rc -eq 0 ] || sq_fail "serve exited $rc after SIGTERM, want 0"
echo "cli flags: serve with 300 x --queue and 300 x --worker-id served q300 as w300, exit 0"

# 2. sandq-producer push: 300 --queue; the task lands in the last queue.
echo '{"id": "t1", "code": "print(1)"}' >"$SQ_TMP/t.jsonl"
repeat --queue pq 300 >"$SQ_TMP/pargs"
set +e
(IFS='
'; exec "$P" push $(cat "$SQ_TMP/pargs") --batch b "$SQ_TMP/t.jsonl") >"$SQ_TMP/push.out" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || { cat "$SQ_TMP/push.out" >&2; sq_fail "push with 300 x --queue exited $rc, want 0"; }
[ "$(sq_redis_cli LLEN 'sq:{pq300}:tasks')" = 1 ] || sq_fail "the task is not in the last queue named"
echo "cli flags: push with 300 x --queue pushed to pq300, exit 0"

# 3. sandq-worker run: 300 --policy, each applied in order: 299 valid ones,
#    then one naming no finding kind, which must be reached and named
#    (exit 2), not cut off at a fixed count.
repeat --policy all=record 299 | sed 's/record[0-9]*$/record/' >"$SQ_TMP/rargs"
printf '%s\n%s\n' --policy nosuchkind=block >>"$SQ_TMP/rargs"
echo 'print(1)' >"$SQ_TMP/p.py"
set +e
(IFS='
'; exec "$W" run $(cat "$SQ_TMP/rargs") "$SQ_TMP/p.py") >"$SQ_TMP/run.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || { cat "$SQ_TMP/run.out" >&2; sq_fail "run with 300 x --policy exited $rc, want 2"; }
grep -q "nosuchkind" "$SQ_TMP/run.out" || { cat "$SQ_TMP/run.out" >&2; sq_fail "the 300th --policy was not reached"; }
echo "cli flags: run with 300 x --policy applied all 300 (the last one's error named), exit 2"

# 4. sandq-producer import: --samples given twice, then 300 times: the last
#    one wins (2 problems x 3 samples), and the dataset may come on
#    standard input ("-"), gzipped or not.
D="$SQ_SRC/tests/data/cli-humaneval.jsonl"
n=$("$P" import humaneval "$D" --samples 2 --samples 3 2>"$SQ_TMP/imp.err" | wc -l) ||
  { cat "$SQ_TMP/imp.err" >&2; sq_fail "import --samples 2 --samples 3 failed"; }
[ "$n" -eq 6 ] || sq_fail "import --samples 2 --samples 3 wrote $n tasks, want 6 (the last one wins)"
repeat --samples "" 300 | sed 's/^300$/4/' >"$SQ_TMP/iargs"
n=$(IFS='
'; "$P" import humaneval "$D" $(cat "$SQ_TMP/iargs") 2>"$SQ_TMP/imp.err" | wc -l)
[ "$n" -eq 8 ] || { cat "$SQ_TMP/imp.err" >&2; sq_fail "import with 300 x --samples wrote $n tasks, want 8"; }
n=$("$P" import humaneval - --canonical <"$D" 2>"$SQ_TMP/imp.err" | wc -l)
[ "$n" -eq 2 ] || { cat "$SQ_TMP/imp.err" >&2; sq_fail "import humaneval - (stdin) wrote $n tasks, want 2"; }
n=$(gzip -c "$D" | "$P" import humaneval - --completions "$SQ_SRC/tests/data/cli-samples.jsonl" 2>"$SQ_TMP/imp.err" | wc -l)
[ "$n" -eq 2 ] || { cat "$SQ_TMP/imp.err" >&2; sq_fail "import humaneval - (gzipped stdin) wrote $n tasks, want 2"; }
echo "cli flags: import --samples twice and 300 times: the last one won; - read the dataset from stdin"
