#!/bin/sh
# push_resume.sh: a push killed midway, and a batch that Redis loses while
# someone waits for it (real redis-server, real workers):
#   1. a push SIGKILLed midway (blocked on a full queue): status and
#      batches say "incomplete push"; the same push run again skips the ids
#      already in the batch (said on stderr), total = the distinct tasks,
#      and every id gets exactly one result (no task ran twice)
#   2. push --wait and wait on a batch whose Redis restarts empty: both exit
#      7 naming the vanished batch, never waiting for the timeout
#   3. wait on a batch whose total goes back (Redis restarted from older
#      data): exit 7, "went back"
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
sq_need_worker_host
sq_start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_LOG_LEVEL=warn

# 1. A push killed midway, run again.
N=1200
sq_tasks "$SQ_TMP/tasks.jsonl" $N
# No worker yet and room for 600: the push lands a first chunk of 500,
# then waits (--block) for room; it is killed there.
SANDQ_MAX_QUEUE_LEN=600 "$P" push --batch rs --block "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/p1.out" 2>"$SQ_TMP/p1.err" &
pid=$!
sq_wait_for "grep -q 'waiting (--block)' $SQ_TMP/p1.err" 60 || { cat "$SQ_TMP/p1.err" >&2; sq_fail "the push never blocked"; }
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pushed=$(sq_batch_field rs total)
[ "$pushed" -gt 0 ] && [ "$pushed" -lt $N ] || sq_fail "the killed push landed $pushed of $N tasks"
# Its lease (15 s) runs out: the push is incomplete, not a smaller batch.
sq_wait_for "'$P' status rs 2>&1 | grep -q 'incomplete push'" 60 || { "$P" status rs >&2 || true; sq_fail "status does not say incomplete push"; }
"$P" batches | grep -E '^rs .*incomplete push$' >/dev/null || { "$P" batches >&2; sq_fail "batches does not say incomplete push"; }
set +e; "$P" status rs >"$SQ_TMP/st.out" 2>"$SQ_TMP/st.err"; set -e
grep -q 'run the same push again' "$SQ_TMP/st.err" || { cat "$SQ_TMP/st.err" >&2; sq_fail "status gives no hint"; }
# wait on it: finished tasks, an incomplete push: exit 5, said
sq_worker rs-a
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT HGET 'sq:{default}:batch:rs' done)\" = $pushed" 120 ||
  sq_fail "the first $pushed tasks did not run"
set +e; "$P" wait rs --timeout-s 120 >"$SQ_TMP/w0.out" 2>"$SQ_TMP/w0.err"; rc=$?; set -e
[ $rc -eq 5 ] || { cat "$SQ_TMP/w0.err" >&2; sq_fail "wait on an incomplete push exited $rc, want 5"; }
grep -q 'its push did not complete' "$SQ_TMP/w0.err" || { cat "$SQ_TMP/w0.err" >&2; sq_fail "wait does not say the push did not complete"; }
# The same push again: the ids already in the batch are skipped.
sq_worker rs-b
set +e; "$P" push --batch rs --wait --timeout-s 240 "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/p2.out" 2>"$SQ_TMP/p2.err"; rc=$?; set -e
[ $rc -eq 0 ] || { cat "$SQ_TMP/p2.err" >&2; sq_fail "the push run again exited $rc"; }
grep -q "$pushed of $N task(s) were already in batch rs (pushed before): not pushed again; $((N - pushed)) new" "$SQ_TMP/p2.err" ||
  { cat "$SQ_TMP/p2.err" >&2; sq_fail "no line saying how many were already there"; }
[ "$(sq_batch_field rs total)" -eq $N ] || sq_fail "total $(sq_batch_field rs total), want $N (the distinct tasks)"
[ "$(sq_batch_field rs done)" -eq $N ] || sq_fail "done $(sq_batch_field rs done), want $N"
[ "$(sq_batch_field rs duplicate)" -eq 0 ] || sq_fail "$(sq_batch_field rs duplicate) task(s) ran twice"
[ "$(sq_redis_cli HLEN 'sq:{default}:results:rs')" -eq $N ] || sq_fail "results: $(sq_redis_cli HLEN 'sq:{default}:results:rs'), want $N"
"$P" status rs >"$SQ_TMP/st2.out" 2>&1 || { cat "$SQ_TMP/st2.out" >&2; sq_fail "status after the re-run"; }
! grep -q 'push' "$SQ_TMP/st2.out" || { cat "$SQ_TMP/st2.out" >&2; sq_fail "the completed push still shows as not complete"; }
"$P" batches | grep -E '^rs .*finished$' >/dev/null || { "$P" batches >&2; sq_fail "batches does not say finished"; }
echo "push_resume: a push killed after $pushed of $N tasks: incomplete push; run again: $((N - pushed)) new, total $N, one result each"

# 2. Redis restarts empty under push --wait and wait.
kill "$(sq_wpid rs-a)" "$(sq_wpid rs-b)"
wait "$(sq_wpid rs-a)" "$(sq_wpid rs-b)" 2>/dev/null || true
sq_tasks "$SQ_TMP/ten.jsonl" 10
"$P" push --batch gone --wait --timeout-s 600 "$SQ_TMP/ten.jsonl" >"$SQ_TMP/g1.out" 2>"$SQ_TMP/g1.err" &
gp=$!
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT HGET 'sq:{default}:batch:gone' total)\" = 10" 60 || sq_fail "gone not pushed"
"$P" wait gone --timeout-s 600 >"$SQ_TMP/g2.out" 2>"$SQ_TMP/g2.err" &
gw=$!
sleep 1
kill -9 "$SQ_PID_redis"
wait "$SQ_PID_redis" 2>/dev/null || true
sq_bg redis redis-server --port "$SQ_REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$SQ_TMP/redis" --daemonize no --protected-mode yes
sq_wait_for "redis-cli -p $SQ_REDIS_PORT ping | grep -q PONG" 30 || sq_fail "redis-server did not restart"
# Both notice within their outage backoff, far inside --timeout-s 600.
sq_wait_for "! kill -0 $gp 2>/dev/null && ! kill -0 $gw 2>/dev/null" 120 || sq_fail "push --wait / wait still polling a vanished batch"
set +e; wait $gp; rc1=$?; wait $gw; rc2=$?; set -e
[ $rc1 -eq 7 ] || { cat "$SQ_TMP/g1.err" >&2; sq_fail "push --wait exited $rc1, want 7"; }
[ $rc2 -eq 7 ] || { cat "$SQ_TMP/g2.err" >&2; sq_fail "wait exited $rc2, want 7"; }
grep -q 'batch gone vanished' "$SQ_TMP/g1.err" || { cat "$SQ_TMP/g1.err" >&2; sq_fail "push --wait does not name the vanished batch"; }
grep -q 'batch gone vanished' "$SQ_TMP/g2.err" || { cat "$SQ_TMP/g2.err" >&2; sq_fail "wait does not name the vanished batch"; }
! grep -q '0/0' "$SQ_TMP/g2.err" || { cat "$SQ_TMP/g2.err" >&2; sq_fail "wait polled 0 of 0"; }
echo "push_resume: Redis restarted empty: push --wait and wait exit 7 naming the vanished batch"

# 3. A batch whose total goes back (as after a restart from older data).
"$P" push --batch back "$SQ_TMP/ten.jsonl" >/dev/null 2>&1
"$P" wait back --timeout-s 600 >"$SQ_TMP/b.out" 2>"$SQ_TMP/b.err" &
bw=$!
sleep 1
sq_redis_cli HSET 'sq:{default}:batch:back' total 4 >/dev/null
sq_wait_for "! kill -0 $bw 2>/dev/null" 60 || sq_fail "wait did not notice the total going back"
set +e; wait $bw; rc=$?; set -e
[ $rc -eq 7 ] || { cat "$SQ_TMP/b.err" >&2; sq_fail "wait exited $rc, want 7"; }
grep -q 'batch back went back: its total fell from 10 to 4' "$SQ_TMP/b.err" || { cat "$SQ_TMP/b.err" >&2; sq_fail "no went-back line"; }
echo "push_resume: a total that went back: wait exits 7 saying so"
