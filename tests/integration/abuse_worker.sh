#!/bin/sh
# abuse_worker.sh: the abuse suite's attacks on the worker itself, through a
# real `sandq-worker serve` on a real redis-server, in each jail mode (warm
# and spawn). One zygote and one jail thread, so a warm attack meets the
# very zygote the next tasks use:
#   1. each tests/abuse/worker/NN-name.py first, then honest tasks: the
#      attack gets its own status, the honest results are exactly what they
#      would be on a fresh worker, and the worker is still alive
#   2. a program of 5 MiB runs; one over the jail's 16 MiB is invalid_task
#      naming the limit; the worker goes on
#   3. kill -9 of a worker mid-task: within 10 s no process of its tree
#      (holders, zygotes, inits, the running program) is left
#   4. a host failure in the jail (test hook) stops the worker, and counts a
#      stall for its task: after max_stalls restarts the task is in the dead
#      letter, the rest of the batch finished
# A payload's header: "# expect: STATUS..." and "# limits: --wall-ms N ...".
set -u
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
sq_need_worker_host
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson) is not installed"
sq_start_redis
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_LOG_LEVEL=info
echo '{"max_task_kib": 20480}' >"$SQ_TMP/producer.json" # room for the 17 MiB program
header() { sed -n "s/^# $1: //p" "$2" | head -1; }

# Honest tasks, each with the exact stdout it must produce (metadata.want).
honest() {
  $PY - "$1" <<'PY'
import json, sys
p = sys.argv[1]
tasks = [
    ("sum", "print(sum(range(10)))", "45\n", None),
    ("mem96", "b = bytearray(96 << 20)\nb[-1] = 1\nprint(len(b) >> 20)", "96\n", None),
    ("scratch", "import os\nopen('f.txt', 'w').write('x' * 1000)\nprint(sorted(os.listdir('.')))",
     "['f.txt', 'main.py']\n", None),
    ("files", "fs = [open('/dev/null') for _ in range(55)]\nprint(len(fs))", "55\n", None),
    ("threads", "import threading\nts = [threading.Thread(target=lambda: None) for _ in range(20)]\n"
     "[t.start() for t in ts]\n[t.join() for t in ts]\nprint('threads')", "threads\n", None),
    ("clock", "import time\ntime.sleep(0.5)\nprint('in time')", "in time\n", {"wall_ms": 2500}),
]
for name, code, want, lim in tasks:
    t = {"id": "%s-%s" % (p, name), "code": code, "metadata": {"want": want}}
    if lim: t["limits"] = lim
    print(json.dumps(t))
PY
}

# A task line from a payload file: id, code, limits from its header, allowed statuses.
task_of() {
  $PY -c 'import json,sys,shlex
f, tid, limits, expect = sys.argv[1:5]
lim, args = {}, shlex.split(limits)
for k, v in zip(args[::2], args[1::2]):
    lim[k[2:].replace("-", "_")] = int(v)
t = {"id": tid, "code": open(f).read(), "metadata": {"allowed": expect.split()}}
if lim: t["limits"] = lim
print(json.dumps(t))' "$1" "$2" "$(header limits "$1")" "$(header expect "$1")"
}

# Checks a batch's results (BSON file $1): allowed statuses, exact stdout of
# the honest ones, one result per task of $2 (the task file).
check_results() {
  $PY - "$1" "$2" <<'PY'
import bson, json, sys
docs = {d["_id"]: d for d in bson.decode_all(open(sys.argv[1], "rb").read())}
bad = 0
for line in open(sys.argv[2]):
    t = json.loads(line)
    d = docs.get(t["id"])
    m = t.get("metadata", {})
    if d is None:
        print("no result for %s" % t["id"]); bad += 1; continue
    if "want" in m and (d["status"] != "ok" or d["stdout"] != m["want"]):
        print("%s: status %s stdout %r, want ok %r (%s)" % (t["id"], d["status"], d["stdout"], m["want"], d.get("reason")))
        bad += 1
    if "allowed" in m and d["status"] not in m["allowed"]:
        print("%s: status %s, want one of %s (%s)" % (t["id"], d["status"], m["allowed"], d.get("reason")))
        bad += 1
    if "reason_has" in m and m["reason_has"] not in (d.get("reason") or ""):
        print("%s: reason %r lacks %r" % (t["id"], d.get("reason"), m["reason_has"])); bad += 1
sys.exit(1 if bad else 0)
PY
}

# Pushes task file $2 as batch $1 and checks the results; the worker $3 must be alive after.
run_batch() {
  if ! "$P" push --config "$SQ_TMP/producer.json" --batch "$1" --wait --timeout-s 180 --out "$SQ_TMP/$1.bson" "$2" >"$SQ_TMP/$1.push" 2>&1; then
    sq_fail_later "$1: push --wait: $(tail -3 "$SQ_TMP/$1.push")"
    return
  fi
  out=$(check_results "$SQ_TMP/$1.bson" "$2") || { sq_fail_later "$1: $out"; return; }
  kill -0 "$3" 2>/dev/null || { sq_fail_later "$1: the worker died"; return; }
  echo "ok   $1"
}

# Whether $2 or more descendants of pid $1 sleep in the kernel (time.sleep).
asleep() {
  n=0
  for p in $(descendants "$1"); do grep -q nanosleep "/proc/$p/wchan" 2>/dev/null && n=$((n + 1)); done
  [ $n -ge "$2" ]
}

# Live (not zombie) descendants of pid $1.
descendants() {
  ps -e -o pid=,ppid=,stat= | awk -v root="$1" '
    { parent[$1] = $2; st[$1] = $3 }
    END {
      d[root] = 1; more = 1
      while (more) { more = 0; for (x in parent) if (!(x in d) && (parent[x] in d)) { d[x] = 1; more = 1 } }
      for (x in d) if (x != root && st[x] !~ /^Z/) print x
    }'
}

# Whether every pid of $tree is gone (a zombie is dead); sets left to the live ones.
tree_gone() {
  left=""
  for p in $tree; do
    s=$(ps -o stat= -p "$p" 2>/dev/null) && case "$s" in Z*) ;; *) left="$left $p" ;; esac
  done
  [ -z "$left" ]
}

for MODE in warm spawn; do
  printf '{"policy": {"actions": {"all": "record"}}, "jail_mode": "%s", "jail_pool_size": 1, "jail_threads": 1, "max_task_kib": 20480}\n' \
    "$MODE" >"$SQ_TMP/worker-$MODE.json"

  # ---- 1. each attack, then honest tasks, one worker ----
  "$W" serve --config "$SQ_TMP/worker-$MODE.json" --worker-id "attacks-$MODE" >>"$SQ_TMP/worker-attacks-$MODE.log" 2>&1 &
  wpid=$!
  SQ_PIDS="$SQ_PIDS $wpid"
  for f in "$SQ_SRC"/tests/abuse/worker/[0-9][0-9]-*.py; do
    name=$(basename "$f" .py)
    case "$name" in "${SANDQ_ABUSE_ONLY:-$name}"*) ;; *) continue ;; esac
    tf="$SQ_TMP/$MODE-$name.jsonl"
    task_of "$f" "$MODE-$name" >"$tf"
    honest "$MODE-$name" >>"$tf"
    run_batch "$MODE-$name" "$tf" "$wpid"
  done

  # ---- 2. program sizes ----
  tf="$SQ_TMP/$MODE-sizes.jsonl"
  $PY -c 'import json, sys
m = sys.argv[1]
print(json.dumps({"id": m + "-5mib", "code": "x = \x27" + "a" * (5 << 20) + "\x27\nprint(len(x))", "metadata": {"want": "5242880\n"}}))
print(json.dumps({"id": m + "-17mib", "code": "#" * (17 << 20), "metadata": {"allowed": ["invalid_task"], "reason_has": "limit of 16777216 bytes"}}))' \
    "$MODE" >"$tf"
  honest "$MODE-sizes" >>"$tf"
  run_batch "$MODE-sizes" "$tf" "$wpid"
  grep -q "jail cannot run" "$SQ_TMP/worker-attacks-$MODE.log" && sq_fail_later "$MODE: the worker logged a host failure"
  kill -TERM "$wpid" 2>/dev/null
  wait "$wpid" 2>/dev/null

  # ---- 3. kill -9 mid-task: the whole tree goes ----
  "$W" serve --config "$SQ_TMP/worker-$MODE.json" --worker-id "killed-$MODE" >>"$SQ_TMP/worker-killed-$MODE.log" 2>&1 &
  wpid=$!
  SQ_PIDS="$SQ_PIDS $wpid"
  printf '%s\n' '{"id":"sleeper","code":"import os, time\nif os.fork() == 0:\n    time.sleep(60)\ntime.sleep(60)"}' >"$SQ_TMP/sleeper.jsonl"
  "$P" push --batch "killed-$MODE" "$SQ_TMP/sleeper.jsonl" >/dev/null
  sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT LLEN 'sq:{default}:processing:killed-$MODE')\" = 1" 60 ||
    sq_fail_later "$MODE: killed-$MODE did not claim the sleeper"
  # mid-task: the sleeper and its child both asleep below the worker (their
  # wchan; where the kernel hides it, the checks below decide alone)
  sq_wait_until 60 asleep "$wpid" 2 || :
  tree=$(descendants "$wpid")
  [ -n "$tree" ] || sq_fail_later "$MODE: the worker has no processes below it"
  kill -KILL "$wpid"
  wait "$wpid" 2>/dev/null
  if ! sq_wait_until 10 tree_gone; then
    sq_fail_later "$MODE: 10 s after kill -9 of the worker, its processes$left are alive: $(ps -o pid=,uid=,args= -p "$(echo $left | tr ' ' ,)" | cut -c1-80 | tr '\n' ';')"
    kill -KILL $left 2>/dev/null
  else
    echo "ok   $MODE: kill -9 of the worker took its $(echo $tree | wc -w) processes with it"
  fi
  sq_redis_cli DEL 'sq:{default}:tasks' "sq:{default}:processing:killed-$MODE" >/dev/null
done

# ---- 4. a host failure in the jail: the worker stops, the task stalls ----
tf="$SQ_TMP/hostfail.jsonl"
honest hostfail >"$tf.honest"
{ echo '{"id":"hostfail","code":"print(1)","metadata":{"sandq_test":"jail_fail"}}'; cat "$tf.honest"; } >"$tf"
export SANDQ_TEST_HOOKS=1 SANDQ_MAX_STALLS=2 SANDQ_LEASE_MS=3000 SANDQ_HEARTBEAT_MS=500
"$P" push --batch hostfail --wait --timeout-s 120 --out "$SQ_TMP/hostfail.bson" "$tf" >"$SQ_TMP/hostfail.out" 2>&1 &
push_pid=$!
restarts=0
"$W" serve --worker-id hf >>"$SQ_TMP/worker-hf.log" 2>&1 &
hf=$!
while kill -0 $push_pid 2>/dev/null; do
  if ! kill -0 $hf 2>/dev/null; then
    wait $hf 2>/dev/null
    restarts=$((restarts + 1))
    [ $restarts -le 5 ] || break
    "$W" serve --worker-id hf >>"$SQ_TMP/worker-hf.log" 2>&1 &
    hf=$!
  fi
  sleep 0.1
done
wait $push_pid
rc=$?
kill -TERM $hf 2>/dev/null
wait $hf 2>/dev/null
if [ $rc -ne 5 ]; then
  sq_fail_later "host failure: push --wait exited $rc, want 5 (finished, one task dead): $(tail -3 "$SQ_TMP/hostfail.out")"
elif [ $restarts -ne 2 ]; then
  sq_fail_later "host failure: the worker stopped $restarts time(s), want 2 (max_stalls)"
elif ! "$P" dead list 2>/dev/null | grep -q ' hostfail '; then
  sq_fail_later "host failure: the task is not in the dead letter"
elif ! out=$(check_results "$SQ_TMP/hostfail.bson" "$tf.honest"); then
  sq_fail_later "host failure: $out"
else
  id=$("$P" dead list | awk '$3 == "hostfail" {print $1}')
  "$P" dead show "$id" | grep -q 'jail failure' || sq_fail_later "host failure: the dead letter's history does not say 'jail failure'"
  echo "ok   host failure: the worker stopped twice, the task is in the dead letter, the rest finished"
fi

[ "$SQ_FAILURES" -eq 0 ] || sq_fail "$SQ_FAILURES worker attack check(s) failed (logs in $SQ_TMP)"
echo "abuse_worker: every attack on the worker met, in both modes"
