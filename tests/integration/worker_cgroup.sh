#!/bin/sh
# worker_cgroup.sh: a worker started in a memory cgroup too small for it
# says so in one line and exits 1, instead of being OOM-killed at start
# with nothing in its log; its sizing line states the limit as it is.
#
# Then the child cgroups a worker makes for its runs (sandq-z<pid>-<slot>
# for warm zygotes, sandq-s<pid>-<slot> for spawn slots, below its own
# cgroup) are gone after every way it ends: SIGTERM with nothing in hand;
# a start-up that fails midway (a profile that cannot start, after the
# main jail's zygotes are up); SIGTERM with a task in hand that outlasts
# shutdown_grace_ms (the worker ends at once, _exit); and kill -9, whose
# groups the next worker to start there removes, leaving alone a group of
# another program whose name merely starts with sandq- (cgroup v1: on v2 a
# worker lives in a leaf of its own below its cgroup, which a second
# worker cannot join, so those cases need v1 and skip on v2).
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ "$(id -u)" = 0 ] || sq_skip "making a cgroup needs root"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  top=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup) limit_file=memory.max
  grep -qw memory "$top/cgroup.subtree_control" 2>/dev/null || sq_skip "the memory controller is not enabled below $top"
else
  top=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup) limit_file=memory.limit_in_bytes
fi
cg="$top/sandq-test-small-$$" big="$top/sandq-test-exits-$$"
# Removes cgroup $1 and what a failed run left below it (processes killed).
rm_cg() {
  [ -d "$1" ] || return 0
  for d in "$1"/sandq-*/ "$1"/; do
    [ -d "$d" ] || continue
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      xargs -r kill -9 <"$d/cgroup.procs" 2>/dev/null
      rmdir "$d" 2>/dev/null && break
      sleep 0.2
    done
  done
}
mkdir "$cg" 2>/dev/null || sq_skip "cannot make a memory cgroup below $top"
# (the processes first: a cgroup that holds one cannot be removed)
trap 'sq_rc0=$?; set +e; for p in $SQ_PIDS; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm_cg "$cg"; rm_cg "$big"; (exit $sq_rc0); sq_cleanup' EXIT
echo $((24 * 1024 * 1024)) >"$cg/$limit_file" || sq_skip "cannot set $cg/$limit_file"
set +e
SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_REDIS_URL="redis://127.0.0.1:1" \
  sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" serve --worker-id small' sandq "$cg" "$SQ_BIN/sandq-worker" \
  >"$SQ_TMP/small.log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$SQ_TMP/small.log" >&2; sq_fail "a worker in a 24 MiB cgroup exited $rc, want 1"; }
grep -q "cgroup allows 24 MiB of memory; a worker needs at least 64 MiB" "$SQ_TMP/small.log" ||
  { cat "$SQ_TMP/small.log" >&2; sq_fail "the worker did not say its cgroup is too small"; }
grep -q "sizing: .*24 MiB" "$SQ_TMP/small.log" || { cat "$SQ_TMP/small.log" >&2; sq_fail "the sizing line does not state 24 MiB"; }
[ -z "$(ls -d "$cg"/sandq-* 2>/dev/null)" ] || sq_fail "the worker in a 24 MiB cgroup left $(ls "$cg" | grep sandq-)"
echo "cgroup: a worker in a 24 MiB cgroup names the limit and exits 1"

[ "$limit_file" = memory.limit_in_bytes ] ||
  sq_skip "the exit-path cases need cgroup v1 (on v2 a second worker cannot join the first one's cgroup)"
command -v redis-cli >/dev/null || sq_skip "redis-cli is not installed (redis-tools)"
sq_start_redis
mkdir "$big"
echo $((2048 * 1024 * 1024)) >"$big/$limit_file"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
# The run cgroups of worker pid $1 below its memory cgroup, one per line.
groups_of() { ls -d "$big/sandq-s$1-"* "$big/sandq-z$1-"* 2>/dev/null || true; }
# Starts a worker in $big (id $1, more arguments after it); sets wpid.
start_in_big() {
  id=$1; shift
  sh -c 'echo $$ >"$1/cgroup.procs" && shift 2 && exec "$@"' sandq "$big" x "$SQ_BIN/sandq-worker" serve \
    --worker-id "$id" --log-level info "$@" >"$SQ_TMP/$id.log" 2>&1 &
  wpid=$!
  SQ_PIDS="$SQ_PIDS $wpid"
}
# Waits (generously: a loaded host) for worker $wpid's run cgroups.
wait_groups() {
  sq_wait_for "ls -d $big/sandq-z$wpid-* $big/sandq-s$wpid-* 2>/dev/null | grep -q ." 120 && return 0
  ! grep -q "running in spawn mode" "$SQ_TMP/$1.log" ||
    sq_skip "this host gives no namespaces: no warm zygotes, so no run cgroup before a task"
  cat "$SQ_TMP/$1.log" >&2
  sq_fail "worker $1 made no cgroup for its runs below $big"
}
# Fails unless worker $wpid ($1) exited $2 and left none of its run cgroups.
ended_clean() {
  set +e; wait "$wpid"; rc=$?; set -e
  [ "$rc" = "$2" ] || { tail -n 20 "$SQ_TMP/$1.log" >&2; sq_fail "worker $1 exited $rc, want $2"; }
  left=$(groups_of "$wpid")
  [ -z "$left" ] || { tail -n 5 "$SQ_TMP/$1.log" >&2; sq_fail "worker $1 ($3) left its cgroups: $(echo $left)"; }
}

# 1. SIGTERM with nothing in hand.
start_in_big term
wait_groups term
kill -TERM "$wpid"
ended_clean term 0 "SIGTERM"
echo "cgroup: SIGTERM with nothing in hand: the run cgroups are gone"

# 2. Start-up fails midway: a profile whose module is missing (exit 2),
# checked in its own jail after the main jail's zygotes came up.
echo '{"profiles": {"broken": {"preload": ["sandq_no_such_module"]}}}' >"$SQ_TMP/broken.json"
start_in_big broken --config "$SQ_TMP/broken.json"
ended_clean broken 2 "a profile that cannot start"
grep -q "profiles.broken" "$SQ_TMP/broken.log" ||
  { cat "$SQ_TMP/broken.log" >&2; sq_fail "the worker did not name the profile"; }
grep -q "zygotes up" "$SQ_TMP/broken.log" ||
  { cat "$SQ_TMP/broken.log" >&2; sq_fail "no zygote came up before the failure"; }
echo "cgroup: a start-up that fails midway (a profile that cannot start) leaves no run cgroup"

# 3. kill -9: its groups stay, and the next worker to start removes them,
# not another program's group named sandq-test-keep-<a dead pid>.
start_in_big killed
wait_groups killed
killed=$wpid killed_groups=$(groups_of "$wpid")
sh -c 'exit 0' &
dead=$!
wait "$dead"
mkdir "$big/sandq-test-keep-$dead"
kill -9 "$killed"
wait "$killed" 2>/dev/null || true
[ -n "$(groups_of "$killed")" ] || sq_fail "kill -9 left no cgroup: nothing for the next worker to sweep"
start_in_big next
wait_groups next
left=$(groups_of "$killed")
[ -z "$left" ] ||
  { cat "$SQ_TMP/next.log" >&2; sq_fail "the next worker left the killed one's cgroups: $(echo $left)"; }
[ -d "$big/sandq-test-keep-$dead" ] ||
  sq_fail "the next worker removed sandq-test-keep-$dead, a cgroup not of its making"
rmdir "$big/sandq-test-keep-$dead"
kill -TERM "$wpid"
ended_clean next 0 "SIGTERM after its sweep"
echo "cgroup: kill -9 left $(echo "$killed_groups" | wc -l) run cgroup(s); the next worker removed them and kept" \
  "another program's"

# 4. SIGTERM with a task in hand that outlasts shutdown_grace_ms: the
# heartbeat thread hands it back and ends the process at once.
printf '%s\n' '{"shutdown_grace_ms": 1000, "max_limits": {"wall_ms": 600000, "cpu_ms": 600000}}' >"$SQ_TMP/grace.json"
start_in_big grace --config "$SQ_TMP/grace.json"
wait_groups grace
printf '%s\n' '{"id":"slow","code":"import time\ntime.sleep(600)","limits":{"wall_ms":600000,"cpu_ms":600000}}' \
  >"$SQ_TMP/slow.jsonl"
"$SQ_BIN/sandq-producer" push --batch slow "$SQ_TMP/slow.jsonl" >/dev/null 2>"$SQ_TMP/push.err" ||
  { cat "$SQ_TMP/push.err" >&2; sq_fail "cannot push the slow task"; }
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT HLEN 'sq:{default}:claims')\" = 1" 120 ||
  { cat "$SQ_TMP/grace.log" >&2; sq_fail "worker grace did not claim the task"; }
kill -TERM "$wpid"
ended_clean grace 0 "SIGTERM past its shutdown grace"
grep -q "shutdown grace of 1000 ms ran out" "$SQ_TMP/grace.log" ||
  { cat "$SQ_TMP/grace.log" >&2; sq_fail "worker grace did not end by its shutdown grace"; }
echo "cgroup: SIGTERM past shutdown_grace_ms (the worker ends at once) leaves no run cgroup"
