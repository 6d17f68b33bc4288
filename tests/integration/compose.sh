#!/bin/sh
# compose/ cannot run here (no Docker engine); check that it is a valid
# compose file that names the services the docs promise.
set -eu
command -v docker-compose >/dev/null || { echo "SKIP: docker-compose is not installed" >&2; exit 77; }
out=$(cd "$SQ_SRC" && docker-compose -f compose/docker-compose.yml config)
for svc in redis fake-llm worker producer; do
  echo "$out" | grep -q "^  $svc:" || { echo "FAIL: service $svc missing" >&2; exit 1; }
done
echo "$out" | grep -q "noeviction" || { echo "FAIL: redis must run with noeviction" >&2; exit 1; }
echo "compose: valid"
