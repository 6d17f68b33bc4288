#!/bin/sh
# abuse.sh: the abuse suite. Runs every tests/abuse/NN-name.py through
# `sandq-worker run` (pre-check policy set to record, so the kernel layers
# are what is tested), asserts its status and, from outside the jail, that
# the harm did not happen; then pushes the whole set through a real
# `sandq-worker serve` on a real Redis and checks the worker survives and
# records each with the same status, and the harm checks again.
#
# The `run` pass goes through both jail modes (`--mode spawn`, then
# `--mode warm`); the serve pass uses the configured default.
#
# A payload's header:
#   # expect: STATUS...        allowed statuses (the deep jail's, from the issue)
#   # limits: --wall-ms N ...  flags for `sandq-worker run` (also the task's limits)
#   # requires: LAYER          skipped (and listed) when the jail here lacks it
#   # check: FUNC ARGS...      outside checks (functions below), all must pass
#   # tests: FILE ENTRY        run with tests/abuse/FILE as its tests and ENTRY as its
#                              entry_point (the test harness's attacks)
#   # expected_stdout: TEXT    the task's expected_stdout
#   # policy: default          run under the default pre-check policy, not all=record
#                              (the pre-check's attacks: they must end `blocked`)
# Placeholders substituted before a run: @MARK@ (a /tmp path prefix), @RUN@,
# @COMM@ (a process name to find survivors by), @PROJECT@, @REDIS_PORT@,
# @HOST_IP@, @LISTEN_PORT@, @SENTINEL@.
#
# SANDQ_ABUSE_ONLY=NN runs one payload; SANDQ_ABUSE_FORCE=1 runs payloads
# whose layer is missing too (their harm is reported, never failed on).
set -u
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
PY=/usr/bin/python3
[ -x $PY ] || sq_skip "$PY is not installed"
[ "$(id -u)" -eq 0 ] || sq_skip "the abuse suite needs root (the jail drops to uid 65534 and the checks read /etc/shadow)"
command -v setpriv >/dev/null || sq_skip "setpriv (util-linux) is not installed"
W="$SQ_BIN/sandq-worker"
RUN=$$
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL
CANARY="sandq-canary-$RUN-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
export SANDQ_LLM_API_KEY="$CANARY" # in the worker's environment; must never reach a result
MARK="/tmp/sandq-pwned-$RUN"
COMM="sqabuse$RUN"
COMM=$(printf %.15s "$COMM")
HOST_IP=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$' | grep -v '^127\.' | head -1)
# The listener binds the host's own address, not 0.0.0.0: other tests
# running at the same time probe loopback ports (a restarted Redis), and
# their connections must not read as the jail's.
LISTEN_IP=$HOST_IP
[ -n "$HOST_IP" ] || { HOST_IP=10.255.255.1; LISTEN_IP=127.0.0.1; }
HOSTNAME0=$(cat /proc/sys/kernel/hostname)
SHADOW_SUM=$(sha256sum /etc/shadow | cut -d' ' -f1)
SHADOW_LINE=$(grep -m1 -E '^[^:]+:[^:*!]{8,}' /etc/shadow | cut -d: -f2)
[ -n "$SHADOW_LINE" ] || SHADOW_LINE=$(head -1 /etc/shadow)
PROC1_ENV=$({ tr '\0' '\n' </proc/1/environ; } 2>/dev/null | grep -m1 . || true)
mkdir -p "$SANDQ_SCRATCH_ROOT" "$SQ_TMP/payloads" "$SQ_TMP/out"

# ---- what the payloads aim at ----
sq_start_redis
sq_redis_cli set sandq:abuse:canary untouched >/dev/null
LISTEN_PORT=$(sq_free_port)
: >"$SQ_TMP/listener.log"
sq_bg listener $PY -c '
import socket, sys, threading
port, log, ip = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def note(what):
    with open(log, "a") as f:
        f.write(what + "\n")
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((ip, port))
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); t.bind((ip, port)); t.listen(8)
threading.Thread(target=lambda: [note("udp from %s:%d" % u.recvfrom(512)[1]) for _ in iter(int, 1)], daemon=True).start()
while True:
    c, a = t.accept(); note("tcp from %s:%d" % a); c.close()
' "$LISTEN_PORT" "$SQ_TMP/listener.log" "$LISTEN_IP"
# A process of the jail's own uid that must survive every payload (with an
# empty environment: it is not the worker, its secrets are not the point).
sq_bg sentinel env -i setpriv --reuid=65534 --regid=65534 --clear-groups sleep 3600
SENTINEL=$SQ_PID_sentinel
sq_wait_for "$PY -c 'import socket; socket.create_connection((\"$LISTEN_IP\", $LISTEN_PORT)).close()'" 10 \
  || sq_fail "the listener did not start"
# Forget the readiness probe, once the listener has noted it (it may note
# it after the probe returned: truncating before that left a stray line).
sq_wait_for "grep -q 'tcp from' $SQ_TMP/listener.log" 10 || sq_fail "the listener did not note the probe"
: >"$SQ_TMP/listener.log"
kill -0 "$SENTINEL" || sq_fail "the sentinel did not start"
WORKER_PID=""

# ---- outside checks: each prints HARM: ... and returns 1 when harm happened ----
OUT=""
harm() { echo "HARM: $*"; return 1; }
json() { $PY -c 'import json,sys; o=json.load(open(sys.argv[1])); v=o.get(sys.argv[2]); print("" if v is None else v)' "$OUT" "$1"; }
output_contains() { $PY -c 'import json,sys; o=json.load(open(sys.argv[1])); sys.exit(0 if sys.argv[2] in o["stdout"]+o["stderr"] else 1)' "$OUT" "$1"; }
absent() { for p; do if [ -e "$p" ] || [ -L "$p" ]; then rm -f "$p"; harm "$p was created"; return 1; fi; done; }
# Live processes (zombies are dead: the host's init reaps them when it gets to it).
live_named() { ps -eo pid=,stat=,comm= | awk -v c="$1" '$3 == c && $2 !~ /^Z/ {print $1}'; }
no_survivors() {
  i=0
  while [ -n "$(live_named "$COMM")" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
  pids=$(live_named "$COMM")
  [ -z "$pids" ] && return 0
  kill -KILL $pids 2>/dev/null
  harm "processes named $COMM outlived the task: $(echo $pids)"
}
worker_alive() { [ -z "$WORKER_PID" ] || kill -0 "$WORKER_PID" || harm "the worker died"; }
sentinel_alive() { kill -0 "$SENTINEL" 2>/dev/null || harm "the sentinel (uid 65534, pid $SENTINEL) was killed"; }
redis_canary_intact() {
  [ "$(sq_redis_cli get sandq:abuse:canary)" = untouched ] || harm "the Redis canary key changed"
}
listener_quiet() { [ ! -s "$SQ_TMP/listener.log" ] || harm "the outside listener got: $(cat "$SQ_TMP/listener.log")"; }
shadow_not_leaked() { ! output_contains "$SHADOW_LINE" || harm "/etc/shadow contents in the output"; }
proc1_env_not_leaked() { [ -z "$PROC1_ENV" ] || ! output_contains "$PROC1_ENV" || harm "/proc/1/environ in the output"; }
canary_not_leaked() { ! output_contains "$CANARY" || harm "the worker's SANDQ_LLM_API_KEY in the output"; }
hostname_intact() { [ "$(cat /proc/sys/kernel/hostname)" = "$HOSTNAME0" ] || harm "the hostname changed"; }
host_files_intact() {
  [ "$(sha256sum /etc/shadow | cut -d' ' -f1)" = "$SHADOW_SUM" ] || harm "/etc/shadow changed"
  [ -s /etc/hostname ] && [ -s /etc/passwd ] && [ -d "$SANDQ_SCRATCH_ROOT" ] || harm "host files removed by the cleanup"
}
scratch_clean() {
  # The jail's own empty mount point for the new roots (<scratch_root>/root) may stay.
  left=$(find "$SANDQ_SCRATCH_ROOT" -mindepth 1 ! -path "$SANDQ_SCRATCH_ROOT/root" 2>/dev/null | head -5)
  [ -z "$left" ] || harm "left in the scratch root: $left"
}
blocked_syscall() {
  ! output_contains "$1 returned" || harm "$1 returned to the program"
  got=$(json blocked_syscall)
  [ -z "$got" ] || [ "$got" = "$1" ] || harm "blocked_syscall is '$got', want '$1'"
}
memory_below() { [ "$(json memory_kib)" -lt "$1" ] || harm "memory_kib $(json memory_kib) >= $1"; }
cpu_below() { [ "$(json cpu_ms)" -lt "$1" ] || harm "cpu_ms $(json cpu_ms) >= $1"; }
wall_below() { [ "$(json wall_ms)" -lt "$1" ] || harm "wall_ms $(json wall_ms) >= $1"; }
output_at_most() {
  $PY -c 'import json,sys; o=json.load(open(sys.argv[1])); n=int(sys.argv[2]); sys.exit(len(o["stdout"].encode()) > n or len(o["stderr"].encode()) > n)' "$OUT" "$1" \
    || harm "more than $1 bytes of output kept"
}
stdout_is() { [ "$(json stdout)" = "$1" ] || harm "stdout is '$(json stdout)', want '$1'"; }
reason_is() { [ "$(json reason)" = "$1" ] || harm "reason is '$(json reason)', want '$1'"; }

# ---- layers this jail has, as `sandq-worker check` reports them ----
LAYERS=""
check_out=$("$W" check 2>/dev/null || true)
layer_ok() { echo "$check_out" | awk -v l="$1" '$1 == "ok" && $2 == l {found=1} END {exit !found}'; }
layer_ok pid_ns && LAYERS="$LAYERS pidns"
layer_ok net_ns && LAYERS="$LAYERS netns"
layer_ok new_root && LAYERS="$LAYERS newroot scratch_cap"
echo "jail layers detected:${LAYERS:- none of pidns, netns, newroot, scratch_cap}"
has_layer() { case " $LAYERS " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- the payloads ----
header() { sed -n "s/^# $1: //p" "$2" | head -1; }
substitute() {
  sed -e "s|@MARK@|$MARK|g" -e "s|@RUN@|$RUN|g" -e "s|@COMM@|$COMM|g" -e "s|@PROJECT@|$SQ_SRC|g" \
    -e "s|@REDIS_PORT@|$SQ_REDIS_PORT|g" -e "s|@HOST_IP@|$HOST_IP|g" -e "s|@LISTEN_PORT@|$LISTEN_PORT|g" \
    -e "s|@SENTINEL@|$SENTINEL|g"
}

failures=0
skipped=""
harmed_skipped=""
n_run=0
: >"$SQ_TMP/tasks.jsonl"
: >"$SQ_TMP/tasks-verdict.jsonl"
for MODE in spawn warm; do
for f in "$SQ_SRC"/tests/abuse/[0-9][0-9]-*.py; do
  name=$(basename "$f" .py)
  case "$name" in "${SANDQ_ABUSE_ONLY:-$name}"*) ;; *) continue ;; esac
  expect=$(header expect "$f")
  limits=$(header limits "$f")
  requires=$(header requires "$f")
  check=$(header check "$f" | substitute)
  tests=$(header tests "$f")
  expected_stdout=$(header expected_stdout "$f")
  policy=$(header policy "$f")
  [ -n "$expect" ] || { echo "FAIL $name: no '# expect:' header"; failures=$((failures + 1)); continue; }
  forced=""
  if [ -n "$requires" ] && ! has_layer "$requires"; then
    if [ -z "${SANDQ_ABUSE_FORCE:-}" ]; then
      [ "$MODE" = warm ] || skipped="$skipped $name($requires)"
      continue
    fi
    forced=1
  fi
  substitute <"$f" >"$SQ_TMP/payloads/$name.py"
  OUT="$SQ_TMP/out/$name.json"
  set -- --policy all=record
  [ "$policy" != default ] || set --
  # shellcheck disable=SC2086 # tests: FILE ENTRY
  [ -z "$tests" ] || set -- "$@" --tests "$SQ_SRC/tests/abuse/${tests%% *}" --entry-point ${tests#* }
  [ -z "$expected_stdout" ] || set -- "$@" --expected-stdout "$expected_stdout"
  # shellcheck disable=SC2086 # limits are flags
  "$W" run --mode "$MODE" "$@" $limits "$SQ_TMP/payloads/$name.py" >"$OUT" 2>"$SQ_TMP/out/$name.err"
  rc=$?
  status=$( [ $rc -eq 0 ] && json status)
  verdict=ok
  [ $rc -eq 0 ] || verdict="sandq-worker run exited $rc: $(tail -3 "$SQ_TMP/out/$name.err")"
  case " $expect " in *" $status "*) ;; *) [ "$verdict" = ok ] && verdict="status '$status', want one of: $expect" ;; esac
  harm_text=$( [ -z "$check" ] || eval "$check" 2>&1) || true
  [ -z "$harm_text" ] || verdict="$harm_text"
  n_run=$((n_run + 1))
  if [ -n "$forced" ]; then
    echo "FORCED $MODE $name (jail lacks $requires): status=$status; ${verdict}"
    [ "$verdict" = ok ] || harmed_skipped="$harmed_skipped $MODE:$name"
  elif [ "$verdict" = ok ]; then
    echo "ok   $MODE $name: $status"
  else
    echo "FAIL $MODE $name: $verdict"
    head -c 600 "$OUT"; echo
    failures=$((failures + 1))
  fi
  # the same payload as a task for the serve pass
  [ "$MODE" = spawn ] || continue
  $PY -c 'import json,sys,shlex
f, name, limits, expect, tests, expected_stdout, abuse = sys.argv[1:8]
lim, args = {}, shlex.split(limits)
for k, v in zip(args[::2], args[1::2]):
    lim[k[2:].replace("-", "_")] = int(v)
t = {"id": name, "code": open(f, encoding="utf-8").read(), "metadata": {"allowed": expect.split()}}
if lim: t["limits"] = lim
if tests:
    t["tests"], t["entry_point"] = open("%s/%s" % (abuse, tests.split()[0])).read(), tests.split()[1]
if expected_stdout: t["expected_stdout"] = expected_stdout
print(json.dumps(t))' "$SQ_TMP/payloads/$name.py" "$name" "$limits" "$expect" "$tests" "$expected_stdout" \
    "$SQ_SRC/tests/abuse" >"$SQ_TMP/task.json"
  # The pre-check's payloads go only to the default-policy workers (below).
  [ "$policy" = default ] || cat "$SQ_TMP/task.json" >>"$SQ_TMP/tasks.jsonl"
  [ -z "$tests$expected_stdout$policy" ] || cat "$SQ_TMP/task.json" >>"$SQ_TMP/tasks-verdict.jsonl"
done
done
[ -z "$skipped" ] || echo "skipped, layer missing in this jail:$skipped"
[ -z "$harmed_skipped" ] || echo "HARM with the layer missing (forced runs):$harmed_skipped"
[ "$n_run" -gt 0 ] || sq_fail "no payload ran"

# ---- the same set through a real worker ----
echo '{"policy": {"actions": {"all": "record"}}}' >"$SQ_TMP/worker.json"
sq_bg worker "$W" serve --config "$SQ_TMP/worker.json" --worker-id abuse-1
WORKER_PID=$SQ_PID_worker
# As long as the batch makes progress (a busy host is slower, never a failure).
sq_push_wait "abuse-$RUN" "$SQ_TMP/push.out" --out "$SQ_TMP/results.bson" "$SQ_TMP/tasks.jsonl" \
  || { cat "$SQ_TMP/push.out" "$SQ_TMP/worker.log" | tail -20; sq_fail "push --wait through the worker failed"; }
kill -0 "$WORKER_PID" || { tail -20 "$SQ_TMP/worker.log"; sq_fail "the worker died during the abuse set"; }
$PY - "$SQ_TMP/results.bson" "$SQ_TMP/out" "$SQ_TMP/tasks.jsonl" <<'PY' || sq_fail "the worker's results differ (above)"
import bson, json, os, sys
docs = bson.decode_all(open(sys.argv[1], "rb").read())
tasks = {json.loads(l)["id"]: json.loads(l) for l in open(sys.argv[3])}
bad = 0
for d in docs:
    want = tasks[d["_id"]]["metadata"]["allowed"]
    if d["status"] not in want:
        print("FAIL serve %s: status %s, want one of %s (%s)" % (d["_id"], d["status"], want, d.get("reason")))
        bad += 1
    if "findings" not in d:
        print("FAIL serve %s: no findings array" % d["_id"])
        bad += 1
    # the outside checks read the same fields as from `run`
    o = {"status": d["status"], "reason": d.get("reason"), "stdout": d["stdout"], "stderr": d["stderr"],
         "cpu_ms": d["resources"]["cpu_ms"], "memory_kib": d["resources"]["memory_kib"],
         "wall_ms": d["timings"]["exec_ms"], "blocked_syscall": d.get("blocked_syscall")}
    json.dump(o, open(os.path.join(sys.argv[2], "serve-%s.json" % d["_id"]), "w"))
missing = set(tasks) - {d["_id"] for d in docs}
if missing:
    print("FAIL serve: no result for %s" % sorted(missing))
    bad += 1
print("serve: %d results recorded by one worker" % len(docs))
sys.exit(1 if bad else 0)
PY
for f in "$SQ_TMP"/out/serve-*.json; do
  name=$(basename "$f" .json); name=${name#serve-}
  OUT=$f
  check=$(header check "$SQ_SRC/tests/abuse/$name.py" | substitute)
  harm_text=$( [ -z "$check" ] || eval "$check" 2>&1) || true
  if [ -n "$harm_text" ]; then
    echo "FAIL serve $name: $harm_text"
    failures=$((failures + 1))
  fi
done
worker_alive || failures=$((failures + 1))

# ---- the harness's and the pre-check's payloads through real workers, both modes ----
# Per mode a worker of its own (default policy, a queue of its own) takes the
# payloads with tests, an expected_stdout or the default policy: the attacks
# first, the honest ones last (their verdicts must stand), the worker alive
# after, and the outside checks (reason_is among them) on what it stored.
n_verdict=$(wc -l <"$SQ_TMP/tasks-verdict.jsonl")
for MODE in spawn warm; do
  [ "$n_verdict" -gt 0 ] || break
  export SANDQ_QUEUE="abuse-verdict-$MODE" SANDQ_JAIL_MODE=$MODE
  sq_bg "vworker$MODE" "$W" serve --worker-id "abuse-v-$MODE"
  eval "WORKER_PID=\$SQ_PID_vworker$MODE"
  SQ_Q=$SANDQ_QUEUE
  if ! sq_push_wait "abuse-v-$MODE-$RUN" "$SQ_TMP/push-v-$MODE.out" --out "$SQ_TMP/verdict-$MODE.bson" \
      "$SQ_TMP/tasks-verdict.jsonl"; then
    cat "$SQ_TMP/push-v-$MODE.out"; tail -20 "$SQ_TMP/vworker$MODE.log"
    echo "FAIL verdict $MODE: push --wait through the worker failed"
    failures=$((failures + 1))
  fi
  $PY - "$SQ_TMP/verdict-$MODE.bson" "$SQ_TMP/out" "$MODE" "$n_verdict" <<'PY' || failures=$((failures + 1))
import bson, json, os, sys
path, out, mode, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
docs = bson.decode_all(open(path, "rb").read()) if os.path.exists(path) else []
bad = 0
for d in docs:
    want = d["metadata"]["allowed"]
    ok = d["status"] in want and d["jail"]["mode"] == mode if d["status"] != "blocked" else d["status"] in want
    print("%s verdict %s %s: %s%s" % ("ok  " if ok else "FAIL", mode, d["_id"], d["status"],
                                      " (%s)" % d["reason"] if d.get("reason") else ""))
    bad += not ok
    o = {"status": d["status"], "reason": d.get("reason"), "stdout": d["stdout"], "stderr": d["stderr"]}
    json.dump(o, open(os.path.join(out, "verdict-%s-%s.json" % (mode, d["_id"])), "w"))
if len(docs) != n:
    print("FAIL verdict %s: %d results for %d tasks" % (mode, len(docs), n))
    bad += 1
sys.exit(1 if bad else 0)
PY
  for f in "$SQ_TMP"/out/verdict-"$MODE"-*.json; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .json); name=${name#verdict-"$MODE"-}
    OUT=$f
    check=$(header check "$SQ_SRC/tests/abuse/$name.py" | substitute)
    harm_text=$( [ -z "$check" ] || eval "$check" 2>&1) || true
    [ -z "$harm_text" ] || { echo "FAIL verdict $MODE $name: $harm_text"; failures=$((failures + 1)); }
  done
  worker_alive || failures=$((failures + 1))
  kill -TERM "$WORKER_PID"
  wait "$WORKER_PID" || { echo "FAIL verdict $MODE: the worker did not stop cleanly"; failures=$((failures + 1)); }
  WORKER_PID=""
  unset SANDQ_QUEUE SANDQ_JAIL_MODE
done

sentinel_alive || failures=$((failures + 1))
canary_in_results=$(grep -c "$CANARY" "$SQ_TMP/results.bson")
[ "$canary_in_results" -eq 0 ] || { echo "HARM: the key is in the results"; failures=$((failures + 1)); }
[ $failures -eq 0 ] || sq_fail "$failures abuse check(s) failed"
echo "abuse: $n_run payload runs (spawn and warm), every status as expected and no harm, through run and through a worker"
# payloads not run for a layer this jail lacks: never a pass (tests/unit/check.h)
[ -z "$skipped" ] || sq_skip "payloads not run, layer missing in this jail:$skipped"
