#!/bin/sh
# compose/ cannot run here (no Docker engine); check that it is a valid
# compose file that names the services the docs promise.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
command -v docker-compose >/dev/null || sq_skip "docker-compose is not installed"
out=$(cd "$SQ_SRC" && docker-compose -f compose/docker-compose.yml config)
for svc in redis fake-llm worker producer; do
  echo "$out" | grep -q "^  $svc:" || sq_fail "service $svc missing"
done
echo "$out" | grep -q "noeviction" || sq_fail "redis must run with noeviction"
# The worker service as docs/deploy.md describes it (issue: it lacked the
# jail's privileges, relied on deploy.replicas, which docker-compose v1
# ignores, and had no restart policy).
worker=$(echo "$out" | awk '/^  worker:/{on=1; print; next} on && /^  [a-z]/{exit} on')
for want in "SYS_ADMIN" "seccomp=unconfined" "apparmor=unconfined" "/sys/fs/cgroup:/sys/fs/cgroup:rw" \
  "restart: unless-stopped"; do
  echo "$worker" | grep -qF -- "$want" || sq_fail "the worker service lacks $want"
done
! echo "$worker" | grep -qE "replicas:|container_name:|^    ports:" || sq_fail "the worker service cannot be scaled (replicas, container_name or ports)"
for priv in SYS_ADMIN seccomp=unconfined apparmor=unconfined /sys/fs/cgroup; do
  grep -B30 "^    cap_add" "$SQ_SRC/compose/docker-compose.yml" | grep -q "^    # .*$(echo "$priv" | cut -c1-8)" ||
    sq_fail "the worker's $priv has no reason given in compose/docker-compose.yml"
done
# COPY . . must not carry a local build/ into the image (its CMakeCache.txt
# names this machine's paths): the context's .dockerignore leaves it out.
grep -qx "build" "$SQ_SRC/.dockerignore" || sq_fail ".dockerignore does not exclude build"
grep -q "context: \.\." "$SQ_SRC/compose/docker-compose.yml" || sq_fail "the build context moved; move .dockerignore with it"
echo "compose: valid; the worker has its privileges (each with a reason), a restart policy and scales with --scale"
