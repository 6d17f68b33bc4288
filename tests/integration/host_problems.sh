#!/bin/sh
# host_problems.sh: a host that cannot give the jail what it needs is the
# host's problem, never a task's verdict (docs/security.md, "Without
# root"): as root without CAP_SYS_ADMIN (a default Docker container) and as
# an unprivileged uid, `check` names the missing privilege, runs in both
# modes still pass (warm falls back to spawn, saying why), a worker passes a
# batch with no runtime_error; a jail that fails at run time hands the task
# back and leaves the worker's health record naming the reason. Tracebacks
# read as `python3 -I -S main.py` prints them, in both modes.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ "$(id -u)" = 0 ] || sq_skip "needs root to drop privileges from (capsh, setpriv)"
command -v capsh >/dev/null || sq_skip "capsh is not installed (libcap2-bin)"
command -v setpriv >/dev/null || sq_skip "setpriv is not installed (util-linux)"
W="$SQ_BIN/sandq-worker" P="$SQ_BIN/sandq-producer"
chmod 755 "$SQ_TMP"
PY=/usr/bin/python3
printf 'print("hi")\n' >"$SQ_TMP/hi.py"
nocap() { capsh --drop=cap_sys_admin -- -c 'exec "$@"' sandq "$@"; }
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- "$@"; }
mkdir -p "$SQ_TMP/nobody-scratch" && chmod 777 "$SQ_TMP/nobody-scratch"

# 1. `check` without CAP_SYS_ADMIN names it; no "(null)"; warm says it fell back.
set +e
SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" nocap "$W" check >"$SQ_TMP/check.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$SQ_TMP/check.out" >&2; sq_fail "check without CAP_SYS_ADMIN exited $rc, want 1"; }
grep -q "^MISSING  pid_ns .*root without CAP_SYS_ADMIN" "$SQ_TMP/check.out" || { cat "$SQ_TMP/check.out" >&2; sq_fail "check does not name CAP_SYS_ADMIN"; }
grep -q "(null)" "$SQ_TMP/check.out" && { cat "$SQ_TMP/check.out" >&2; sq_fail "check printed (null)"; }
grep -q "^FAILED   run_warm .*ran in spawn mode: warm mode needs pid and mount namespaces" "$SQ_TMP/check.out" ||
  { cat "$SQ_TMP/check.out" >&2; sq_fail "check's warm run does not say it fell back"; }
echo "host_problems: check without CAP_SYS_ADMIN names it and the fallback"

# 2. Runs in both modes, root without CAP_SYS_ADMIN and an unprivileged uid:
#    the program runs (spawn mode, fewer layers), never a runtime_error.
for who in nocap nobody; do
  for mode in spawn warm; do
    root="$SQ_TMP/scratch"; [ $who = nobody ] && root="$SQ_TMP/nobody-scratch"
    set +e
    SANDQ_SCRATCH_ROOT="$root" $who "$W" run --mode $mode "$SQ_TMP/hi.py" >"$SQ_TMP/run.out" 2>"$SQ_TMP/run.err"
    rc=$?
    set -e
    [ $rc -eq 0 ] || { cat "$SQ_TMP/run.err" >&2; sq_fail "$who: run --mode $mode exited $rc"; }
    $PY - "$SQ_TMP/run.out" "$who $mode" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok" and r["stdout"] == "hi\n" and r["mode"] == "spawn", (sys.argv[2], r)
assert "pid_ns" not in r["layers"] and "seccomp" in r["layers"], (sys.argv[2], r["layers"])
PY
    if [ $mode = warm ]; then
      grep -q "warm mode needs pid and mount namespaces, which this host does not give (" "$SQ_TMP/run.err" ||
        { cat "$SQ_TMP/run.err" >&2; sq_fail "$who: the warm fallback is not logged with its reason"; }
    fi
  done
done
grep -q "(not root)" "$SQ_TMP/run.err" || { cat "$SQ_TMP/run.err" >&2; sq_fail "the unprivileged fallback does not say 'not root'"; }
echo "host_problems: runs pass in both modes as root without CAP_SYS_ADMIN and as uid 65534 (spawn fallback, named)"

# 3. A worker (warm, the default) without CAP_SYS_ADMIN passes a batch.
sq_start_redis
printf '%s\n' '{"id":"a","code":"print(1)","expected_stdout":"1","metadata":{"expect":"passed"}}' \
  '{"id":"b","code":"def f(x):\n    return x + 1\n","tests":"assert f(1) == 2\n","metadata":{"expect":"passed"}}' \
  '{"id":"c","code":"raise ValueError(7)","metadata":{"expect":"runtime_error"}}' >"$SQ_TMP/t.jsonl"
SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" sq_bg nocapw capsh --drop=cap_sys_admin -- -c \
  "exec '$W' serve --worker-id nocap-w1 --log-level info"
sq_wait_for "grep -q 'serving queue' '$SQ_TMP/nocapw.log'" 30 || { cat "$SQ_TMP/nocapw.log" >&2; sq_fail "the worker without CAP_SYS_ADMIN did not start"; }
timeout 120 "$P" push --batch nocap --wait --table "$SQ_TMP/t.jsonl" >"$SQ_TMP/push.out" 2>&1 ||
  { cat "$SQ_TMP/push.out" "$SQ_TMP/nocapw.log" >&2; sq_fail "a batch on a worker without CAP_SYS_ADMIN did not pass"; }
grep -q '"jail_mode":"spawn"' <<EOF2 || sq_fail "the health record does not say spawn mode"
$(sq_redis_cli HGET 'sq:{default}:health' nocap-w1)
EOF2
echo "host_problems: a warm worker without CAP_SYS_ADMIN fell back to spawn and passed a batch"

# 4. The jail failing at run time (the test hook): the task is handed back,
#    no result is stored, the worker stops, and `health` names the reason.
kill -TERM "$SQ_PID_nocapw"; wait "$SQ_PID_nocapw" 2>/dev/null || true
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_TEST_HOOKS=1
echo '{"id":"j","code":"print(1)","metadata":{"sandq_test":"jail_fail"}}' >"$SQ_TMP/j.jsonl"
"$P" push --batch hostfail "$SQ_TMP/j.jsonl" >/dev/null
set +e
timeout 60 "$W" serve --worker-id hostfail-w1 >"$SQ_TMP/hostfail.log" 2>&1
rc=$?
set -e
unset SANDQ_TEST_HOOKS
[ $rc -eq 1 ] || { cat "$SQ_TMP/hostfail.log" >&2; sq_fail "a worker whose jail fails exited $rc, want 1"; }
[ "$(sq_redis_cli HLEN 'sq:{default}:results:hostfail')" = 0 ] || sq_fail "a host failure stored a result for the task"
[ "$(sq_redis_cli LLEN 'sq:{default}:tasks')" = 1 ] || sq_fail "the task was not handed back"
set +e
"$P" health hostfail-w1 >"$SQ_TMP/health.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$SQ_TMP/health.out" >&2; sq_fail "health of the stopped worker exited $rc, want 1"; }
grep -q "stopped: its host cannot run the jail" "$SQ_TMP/health.out" || { cat "$SQ_TMP/health.out" >&2; sq_fail "health does not name the host problem"; }
echo "host_problems: a jail failing at run time: task handed back, no result, health names the reason"

# 5. Tracebacks read as python3 -I -S prints them, in both modes.
printf 'def f():\n    raise ValueError("x")\n\nf()\n' >"$SQ_TMP/tb.py"
mkdir -p "$SQ_TMP/plain" && cp "$SQ_TMP/tb.py" "$SQ_TMP/plain/main.py"
(cd "$SQ_TMP/plain" && $PY -I -S main.py 2>&1 | sed "s|$SQ_TMP/plain/|/scratch/|") >"$SQ_TMP/tb.want" || true
for mode in spawn warm; do
  "$W" run --mode $mode "$SQ_TMP/tb.py" | $PY -c 'import json,sys; sys.stdout.write(json.load(sys.stdin)["stderr"])' >"$SQ_TMP/tb.$mode"
  cmp -s "$SQ_TMP/tb.want" "$SQ_TMP/tb.$mode" || { diff "$SQ_TMP/tb.want" "$SQ_TMP/tb.$mode" >&2; sq_fail "the $mode traceback differs from python3 -I -S"; }
done
grep -q 'File "/scratch/main.py", line 2, in f' "$SQ_TMP/tb.warm" || sq_fail "traceback comparison saw no frames"
echo "host_problems: tracebacks in spawn and warm mode are python3 -I -S's, frame for frame"
