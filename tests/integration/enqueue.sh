#!/bin/sh
# enqueue.sh: FCALL sq1_enqueue, the enqueue for any language
# (docs/formats.md, "Enqueueing from any language"), against a real Redis
# and a real worker: the documented example runs as written, its batch
# finishes with an event and sq1_batch_get says it is finished; pushing into a finished batch grows it and a
# second event follows; a bad task refuses the whole call, nothing pushed.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_start_redis
W="$SQ_BIN/sandq-worker"

# Before any sandq program connected, the Function is not there (documented).
sq_redis_cli FCALL sq1_enqueue 1 'sq:{default}:tasks' b 60 0 '{"id":"x"}' 2>&1 | grep -q "Function not found" ||
  sq_fail "FCALL before any sandq program connected should say Function not found"

export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
sq_bg worker "$W" serve --worker-id enq-w1 --log-level warn
sq_wait_for "[ \"\$(redis-cli -p $SQ_REDIS_PORT FUNCTION LIST LIBRARYNAME sandq_v1 | grep -c sq1_enqueue)\" -ge 1 ]" 60 ||
  { cat "$SQ_TMP/worker.log" >&2; sq_fail "the worker did not load the functions"; }

# 1. The docs example, as written (redis-cli pointed at this Redis).
awk '/^redis-cli FCALL sq1_enqueue/{on=1} on{print} on&&/^redis-cli HGETALL/{exit}' "$SQ_SRC/docs/formats.md" \
  >"$SQ_TMP/example.sh"
grep -q BLPOP "$SQ_TMP/example.sh" || sq_fail "the example was not found in docs/formats.md"
mkdir -p "$SQ_TMP/bin"
printf '#!/bin/sh\nexec %s -p %s "$@"\n' "$(command -v redis-cli)" "$SQ_REDIS_PORT" >"$SQ_TMP/bin/redis-cli"
chmod +x "$SQ_TMP/bin/redis-cli"
PATH="$SQ_TMP/bin:$PATH" sh -e "$SQ_TMP/example.sh" >"$SQ_TMP/example.out" 2>&1 ||
  { cat "$SQ_TMP/example.out" >&2; sq_fail "the docs example failed"; }
grep -q '"total":1' "$SQ_TMP/example.out" || { cat "$SQ_TMP/example.out" >&2; sq_fail "no completion event in 60 s"; }
sq_assert_eq "$(sq_redis_cli HGET 'sq:{default}:batch:nightly' done)" 1 "done after the example"
sq_assert_eq "$(sq_redis_cli HGET 'sq:{default}:batch:nightly' status:passed)" 1 "passed after the example"
sq_assert_eq "$(grep -A1 -x finished "$SQ_TMP/example.out" | sed -n 2p)" 1 "sq1_batch_get's finished in the example"
echo "enqueue: the docs example ran as written; its batch finished with an event"

# 2. Pushing into the finished batch grows it; a second event at total 3.
out=$(sq_redis_cli FCALL sq1_enqueue 1 'sq:{default}:tasks' nightly 604800 0 \
  '{"id":"t2","batch":"nightly","code":"print(1)","priority":"high"}' \
  '{"id":"t3","batch":"nightly","code":"print(2)","idempotency_key":"k3"}' | tr '\n' ' ')
sq_assert_eq "$out" "2 0 " "FCALL into an existing batch"
ev=$(sq_redis_cli BLPOP 'sq:{default}:done:nightly' 60 | tail -n 1)
echo "$ev" | grep -q '"total":3' || sq_fail "second event: '$ev'"
sq_assert_eq "$(sq_redis_cli HGET 'sq:{default}:batch:nightly' done)" 3 "done after growing"
# the same idempotency_key again: skipped, counted as a duplicate, total unchanged
out=$(sq_redis_cli FCALL sq1_enqueue 1 'sq:{default}:tasks' nightly 604800 0 \
  '{"id":"t4","batch":"nightly","code":"print(1)","idempotency_key":"k3"}' | tr '\n' ' ')
sq_assert_eq "$out" "0 1 " "a repeated idempotency_key"
sq_assert_eq "$(sq_redis_cli HGET 'sq:{default}:batch:nightly' total)" 3 "total after a skipped task"
echo "enqueue: a second push into a finished batch grew it to 3 and a second event followed"

# 3. Bad tasks refuse the whole call; nothing is pushed or counted.
refused() { # refused NEEDLE TASK...
  needle=$1; shift
  out=$(sq_redis_cli FCALL sq1_enqueue 1 'sq:{default}:tasks' other 604800 0 '{"id":"ok","batch":"other","code":"print(1)"}' "$@" 2>&1)
  echo "$out" | grep -qF "$needle" || sq_fail "want '$needle', got '$out'"
  sq_assert_eq "$(sq_redis_cli EXISTS 'sq:{default}:batch:other')" 0 "batch counted after a refused call ($needle)"
}
sq_redis_cli DEL 'sq:{default}:tasks' >/dev/null
refused "BADTASK 2: its batch is 'nightly', not other" '{"id":"a","batch":"nightly","code":"x"}'
refused "BADTASK 2: its batch is 'default', not other" '{"id":"a","code":"x"}'
refused "BADTASK 2: not a JSON object" 'print(1)'
refused "BADTASK 3: id must be a non-empty string" '{"id":"a","batch":"other","code":"x"}' '{"id":7,"batch":"other"}'
refused "BADTASK 2: priority must be high, normal or low" '{"id":"a","batch":"other","code":"x","priority":"urgent"}'
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{default}:tasks')" 0 "tasks pushed by refused calls"
out=$(sq_redis_cli FCALL sq1_enqueue 1 'sq:{default}:tasks' 'bad batch' 60 0 '{"id":"a"}' 2>&1)
echo "$out" | grep -q "BADTASK 0: batch must be" || sq_fail "a bad batch name: $out"
# the cap: MAX_LEN 1 with one waiting task
sq_redis_cli LPUSH 'sq:{capq}:tasks' '{"id":"w","code":"print(1)","batch":"c"}' >/dev/null
out=$(sq_redis_cli FCALL sq1_enqueue 1 'sq:{capq}:tasks' c 60 1 '{"id":"a","batch":"c","code":"x"}' 2>&1)
echo "$out" | grep -q "QUEUEFULL 1 1" || sq_fail "MAX_LEN: $out"
echo "enqueue: bad tasks, a bad batch name and a full queue refused with nothing pushed"
