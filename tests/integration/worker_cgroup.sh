#!/bin/sh
# worker_cgroup.sh: a worker started in a memory cgroup too small for it
# says so in one line and exits 1, instead of being OOM-killed at start
# with nothing in its log; its sizing line states the limit as it is.
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
cg="$top/sandq-test-small-$$"
mkdir "$cg" 2>/dev/null || sq_skip "cannot make a memory cgroup below $top"
trap 'sq_rc0=$?; rmdir "$cg" 2>/dev/null; (exit $sq_rc0); sq_cleanup' EXIT
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
echo "cgroup: a worker in a 24 MiB cgroup names the limit and exits 1"
