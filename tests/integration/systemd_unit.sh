#!/bin/sh
# systemd_unit.sh: compose/systemd/sandq-worker@.service as docs/deploy.md
# installs it: `systemd-analyze verify` finds nothing to say (a warning is
# a failure), it keeps the settings deploy.md promises, and its ExecStart,
# with the unit's Environment= and an EnvironmentFile like the documented
# one, serves a real Redis and stops with 0 on SIGTERM.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
UNIT="$SQ_SRC/compose/systemd/sandq-worker@.service"
command -v systemd-analyze >/dev/null || sq_skip "systemd-analyze is not installed (the systemd package)"

# 1. verify, with ExecStart pointing at this build (verify checks the binary).
mkdir -p "$SQ_TMP/units"
sed "s|/usr/local/bin/sandq-worker|$SQ_BIN/sandq-worker|" "$UNIT" >"$SQ_TMP/units/sandq-worker@.service"
cp "$SQ_TMP/units/sandq-worker@.service" "$SQ_TMP/units/sandq-worker@1.service"
set +e
(cd "$SQ_TMP/units" && systemd-analyze verify --man=no ./sandq-worker@1.service) >"$SQ_TMP/verify.out" 2>&1
rc=$?
set -e
# systemd-analyze says nothing when it cannot reach a system manager in a
# container for reasons of its own; anything else it says is a finding
grep -v -e "^$" -e "Failed to connect to bus" -e "Failed to setup working directory" "$SQ_TMP/verify.out" >"$SQ_TMP/findings" || true
[ $rc -eq 0 ] && [ ! -s "$SQ_TMP/findings" ] || { cat "$SQ_TMP/verify.out" >&2; sq_fail "systemd-analyze verify: exit $rc"; }
# the same verify does catch a broken unit (so the check above can fail)
sed 's/^Restart=on-failure/Restart=sometimes/' "$SQ_TMP/units/sandq-worker@1.service" >"$SQ_TMP/units/broken@1.service"
(cd "$SQ_TMP/units" && systemd-analyze verify --man=no ./broken@1.service) 2>&1 | grep -q "restart specifier" ||
  sq_fail "systemd-analyze verify does not notice a bad Restart= here"
echo "systemd_unit: systemd-analyze verify: no findings"

# 2. The settings docs/deploy.md promises.
for want in "RestartPreventExitStatus=2" "Restart=on-failure" "Delegate=yes" "KillMode=mixed" \
  "Environment=SANDQ_WORKER_ID=%H-%i" "EnvironmentFile=/etc/sandq/worker.env" "ExecStart=/usr/local/bin/sandq-worker serve" \
  "WantedBy=multi-user.target"; do
  grep -qx -- "$want" "$UNIT" || sq_fail "the unit lacks '$want'"
done
stop_s=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s$/\1/p' "$UNIT")
[ -n "$stop_s" ] && [ "$stop_s" -gt 30 ] || sq_fail "TimeoutStopSec must leave shutdown_grace_ms (30 s) room, got '$stop_s'"
grep -q "^install -m 0644 compose/systemd/sandq-worker@.service /etc/systemd/system/" "$SQ_SRC/docs/deploy.md" ||
  sq_fail "docs/deploy.md does not install this unit"

# 3. Its ExecStart with its environment serves, and SIGTERM ends it with 0.
sq_start_redis
printf 'SANDQ_REDIS_URL=%s\n' "$SANDQ_REDIS_URL" >"$SQ_TMP/worker.env"
env_args=$(sed -n 's/^Environment=//p' "$UNIT" | sed "s/%H/$(hostname)/g; s/%i/1/g; s|/var/lib/sandq|$SQ_TMP/state|g")
mkdir -p "$SQ_TMP/state/scratch-1"
cmd=$(sed -n 's/^ExecStart=//p' "$UNIT" | sed "s|/usr/local/bin/|$SQ_BIN/|")
# shellcheck disable=SC2086
(set -a; . "$SQ_TMP/worker.env"; exec env $env_args $cmd) >"$SQ_TMP/unit.log" 2>&1 &
pid=$!
SQ_PIDS="$SQ_PIDS $pid"
sq_wait_for "grep -q 'serving queue' '$SQ_TMP/unit.log'" 30 || { cat "$SQ_TMP/unit.log" >&2; sq_fail "the unit's command did not serve"; }
grep -q "worker $(hostname)-1 serving" "$SQ_TMP/unit.log" || { cat "$SQ_TMP/unit.log" >&2; sq_fail "worker id is not %H-%i"; }
kill -TERM $pid
set +e; wait $pid; rc=$?; set -e
[ $rc -eq 0 ] || { cat "$SQ_TMP/unit.log" >&2; sq_fail "SIGTERM: exit $rc, want 0"; }
echo "systemd_unit: the unit's command served as $(hostname)-1 and stopped with 0 on SIGTERM"
