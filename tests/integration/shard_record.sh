#!/bin/sh
# shard_record.sh: a queue's shard count is the queue's (docs/operations.md,
# "Sharded queues"), against a real Redis and a real worker: a producer
# configured with shards: 3 records the count; a worker and a producer
# left at the default (1) use the queue's 3, say so, and every task of both
# batches gets its result (none waits where no worker claims); any other
# client's push into the home tag is refused (SHARDED 3); a damaged record
# stops a command with the key named, and a worker keeps trying (naming it)
# until the documented repair; the documented change (drain, stop, delete
# the record) lets the next handle record its own count.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_start_redis
P="$SQ_BIN/sandq-producer"
tasks() { # tasks FILE N PREFIX
  awk -v n="$2" -v p="$3" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"%s%02d\",\"code\":\"print(%d)\"}\n", p, i, i }' >"$1"
}

# 1. The first producer records its count; its tasks spread over three tags.
tasks "$SQ_TMP/a.jsonl" 12 a
SANDQ_SHARDS=3 "$P" push --batch a "$SQ_TMP/a.jsonl" >/dev/null 2>"$SQ_TMP/push-a.err" ||
  { cat "$SQ_TMP/push-a.err" >&2; sq_fail "push with shards 3"; }
sq_assert_eq "$(sq_redis_cli GET 'sq:{default}:shards')" 3 "the recorded count"
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{default}:tasks')" 0 "tasks under the home tag of a sharded queue"
n=0
for k in 0 1 2; do n=$((n + $(sq_redis_cli LLEN "sq:{default#$k}:tasks"))); done
sq_assert_eq "$n" 12 "tasks over the three shards"

# 2. A worker and a producer at the default shards: 1 use the queue's 3.
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
sq_bg worker "$SQ_BIN/sandq-worker" serve --worker-id rec-w1 --log-level info
tasks "$SQ_TMP/b.jsonl" 6 b
"$P" push --batch b --wait --timeout-s 120 "$SQ_TMP/b.jsonl" >"$SQ_TMP/push-b.out" 2>"$SQ_TMP/push-b.err" ||
  { cat "$SQ_TMP/push-b.out" "$SQ_TMP/push-b.err" "$SQ_TMP/worker.log" >&2; sq_fail "batch b did not complete"; }
grep -q "queue default has 3 shard(s), recorded when it was first used: those are used, not this configuration's shards: 1" \
  "$SQ_TMP/push-b.err" || { cat "$SQ_TMP/push-b.err" >&2; sq_fail "the producer did not say it uses the queue's 3 shards"; }
grep -q "WARN .*queue default has 3 shard(s)" "$SQ_TMP/worker.log" ||
  { cat "$SQ_TMP/worker.log" >&2; sq_fail "the worker did not warn that it uses the queue's 3 shards"; }
sq_wait_for "'$P' status a | grep -Eq '^ *done +12'" 60 ||
  { "$P" status a >&2 || true; sq_fail "batch a (pushed with shards 3) was not done by the worker at shards 1"; }
grep -Eq "^ *done +6" "$SQ_TMP/push-b.out" || { cat "$SQ_TMP/push-b.out" >&2; sq_fail "batch b: not 6 done"; }
echo "shard_record: a worker and a producer at shards 1 used the queue's 3; every task of both batches ran"

# 3. Another client's push into the home tag: refused, nothing pushed.
out=$(sq_redis_cli FCALL sq1_enqueue 1 'sq:{default}:tasks' h 60 0 '{"id":"h1","batch":"h","code":"print(1)"}' 2>&1)
echo "$out" | grep -q "SHARDED 3: queue default has 3 shards: push into a shard's key, sq:{default#k}:tasks with k in 0..2" ||
  sq_fail "enqueue into the home tag of a sharded queue: $out"
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{default}:tasks')" 0 "tasks under the home tag after a refused enqueue"
sq_assert_eq "$(sq_redis_cli EXISTS 'sq:{default}:batch:h')" 0 "batch h counted after a refused enqueue"

# 4. A damaged record: a command stops, naming the key; nothing is pushed.
sq_redis_cli SET 'sq:{broken}:shards' many >/dev/null
rc=0
"$P" push --queue broken --batch x "$SQ_TMP/b.jsonl" >/dev/null 2>"$SQ_TMP/broken.err" || rc=$?
[ $rc -ne 0 ] || sq_fail "a push onto a queue with a damaged shard record succeeded"
grep -q "CORRUPT sq:{broken}:shards: value 'many' is not a shard count" "$SQ_TMP/broken.err" ||
  { cat "$SQ_TMP/broken.err" >&2; sq_fail "the damaged record was not named"; }
sq_assert_eq "$(sq_redis_cli LLEN 'sq:{broken}:tasks')" 0 "tasks pushed onto the damaged queue"

# 5. The documented change, as written (redis-cli pointed at this Redis):
# drained, every handle stopped, the record deleted; the next handle with
# shards: 2 records 2 and its tasks go to two tags.
kill -TERM "$SQ_PID_worker"
sq_wait_for "! kill -0 $SQ_PID_worker" 30 || sq_fail "the worker did not stop"
awk '/To change the count of a queue/{on=1} on && /^redis-cli DEL/{print; exit}' "$SQ_SRC/docs/operations.md" >"$SQ_TMP/change.sh"
grep -q "sq:{default}:shards" "$SQ_TMP/change.sh" || sq_fail "the change command was not found in docs/operations.md"
mkdir -p "$SQ_TMP/bin"
printf '#!/bin/sh\nexec %s -p %s "$@"\n' "$(command -v redis-cli)" "$SQ_REDIS_PORT" >"$SQ_TMP/bin/redis-cli"
chmod +x "$SQ_TMP/bin/redis-cli"
PATH="$SQ_TMP/bin:$PATH" sh -e "$SQ_TMP/change.sh" >/dev/null || sq_fail "the documented change command failed"
tasks "$SQ_TMP/c.jsonl" 4 c
SANDQ_SHARDS=2 "$P" push --batch c "$SQ_TMP/c.jsonl" >/dev/null 2>"$SQ_TMP/push-c.err" ||
  { cat "$SQ_TMP/push-c.err" >&2; sq_fail "push with shards 2 after the change"; }
sq_assert_eq "$(sq_redis_cli GET 'sq:{default}:shards')" 2 "the count recorded after the change"
sq_assert_eq "$(( $(sq_redis_cli LLEN 'sq:{default#0}:tasks') + $(sq_redis_cli LLEN 'sq:{default#1}:tasks') ))" 4 \
  "tasks over the two new shards"

# 6. A damaged record under a worker: it keeps trying, naming the key, and
# goes on once the documented repair (docs/operations.md, "Damaged keys")
# ran as written.
sq_redis_cli FLUSHALL >/dev/null
sq_redis_cli SET 'sq:{default}:shards' x >/dev/null
: >"$SQ_TMP/worker.log"
sq_bg worker "$SQ_BIN/sandq-worker" serve --worker-id rec-w2 --log-level info
sq_wait_for "grep -q \"CORRUPT sq:{default}:shards: value 'x' is not a shard count\" '$SQ_TMP/worker.log'" 30 ||
  { cat "$SQ_TMP/worker.log" >&2; sq_fail "the worker did not name the damaged record"; }
kill -0 "$SQ_PID_worker" || sq_fail "the worker exited on a damaged record"
grep -E "^\| \`sq:\{Q\}:shards\`" "$SQ_SRC/docs/operations.md" | grep -o "redis-cli SET '[^']*' 1" >"$SQ_TMP/repair.sh"
[ -s "$SQ_TMP/repair.sh" ] || sq_fail "the repair of sq:{Q}:shards was not found in docs/operations.md"
PATH="$SQ_TMP/bin:$PATH" sh -e "$SQ_TMP/repair.sh" >/dev/null || sq_fail "the documented repair failed"
tasks "$SQ_TMP/d.jsonl" 3 d
"$P" push --batch d --wait --timeout-s 60 "$SQ_TMP/d.jsonl" >"$SQ_TMP/push-d.out" 2>&1 ||
  { cat "$SQ_TMP/push-d.out" "$SQ_TMP/worker.log" >&2; sq_fail "batch d did not complete after the repair"; }
grep -Eq "^ *passed +3|^ *ok +3" "$SQ_TMP/push-d.out" || { cat "$SQ_TMP/push-d.out" >&2; sq_fail "batch d: not 3 ok"; }
echo "shard_record: all checks passed"
