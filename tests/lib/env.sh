# env.sh: sourced by integration tests and scripts. Starts real services on
# free loopback ports in a private temp dir and tears everything down on exit.
#
#   . "$SQ_SRC/tests/lib/env.sh"
#   sq_env_init                  # temp dir in $SQ_TMP, cleanup trap
#   sq_start_redis               # sets SQ_REDIS_PORT, SANDQ_REDIS_URL
#   sq_start_fake_llm [REPLIES]  # sets SQ_LLM_PORT, SANDQ_LLM_BASE_URL
#   sq_bg NAME CMD...            # start a background process, killed on exit
#
# The checks and waits (sq_assert_*, sq_run, sq_expect, sq_wait_*) are in
# assert.sh, sourced here.
#
# A test that cannot run here exits 77 (ctest's skip) saying why (sq_skip);
# a part that cannot run is never a pass (the rule: tests/unit/check.h).

: "${SQ_BIN:?SQ_BIN must name the build's bin directory}"
: "${SQ_SRC:?SQ_SRC must name the source tree}"

SQ_PIDS=""

sq_skip() { echo "SKIP: $*" >&2; exit 77; }
sq_fail() { echo "FAIL: $*" >&2; exit 1; }
. "$SQ_SRC/tests/lib/assert.sh"

sq_cleanup() {
  sq_rc=$?
  set +e
  for p in $SQ_PIDS; do kill -TERM "$p" 2>/dev/null; done
  sleep 0.1
  for p in $SQ_PIDS; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  if [ -n "${SQ_TMP:-}" ] && [ -z "${SQ_KEEP_TMP:-}" ]; then rm -rf "$SQ_TMP"; fi
  exit $sq_rc
}

sq_env_init() {
  SQ_TMP=$(mktemp -d "${SQ_TMP_PARENT:-/tmp}/sandq.XXXXXX")
  trap 'sq_cleanup' EXIT
  trap 'exit 130' INT TERM
}

# Prints a free TCP port on 127.0.0.1 (bound then released by the kernel).
sq_free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

sq_bg() {
  name=$1; shift
  "$@" >"$SQ_TMP/$name.log" 2>&1 &
  SQ_PIDS="$SQ_PIDS $!"
  eval "SQ_PID_$name=$!"
}

sq_start_redis() {
  command -v redis-server >/dev/null || sq_skip "redis-server is not installed (scripts/install-deps.sh)"
  for attempt in 1 2 3; do
    SQ_REDIS_PORT=$(sq_free_port)
    mkdir -p "$SQ_TMP/redis"
    sq_bg redis redis-server --port "$SQ_REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$SQ_TMP/redis" --daemonize no --protected-mode yes ${SQ_REDIS_ARGS:-}
    if sq_wait_for "redis-cli -p $SQ_REDIS_PORT ping | grep -q PONG" 10; then
      export SQ_REDIS_PORT SANDQ_REDIS_URL="redis://127.0.0.1:$SQ_REDIS_PORT"
      return 0
    fi
  done
  cat "$SQ_TMP/redis.log" >&2
  sq_fail "redis-server did not start"
}

sq_start_fake_llm() {
  replies=${1:-$SQ_SRC/samples/llm-replies.jsonl}
  rm -f "$SQ_TMP/llm.port"
  sq_bg fake_llm "$SQ_BIN/sandq-fake-llm" --port 0 --port-file "$SQ_TMP/llm.port" --replies "$replies" \
    ${SQ_FAKE_LLM_ARGS:-}
  sq_wait_for "test -s $SQ_TMP/llm.port" 10 || { cat "$SQ_TMP/fake_llm.log" >&2; sq_fail "fake LLM did not start"; }
  SQ_LLM_PORT=$(cat "$SQ_TMP/llm.port")
  export SQ_LLM_PORT SANDQ_LLM_BASE_URL="http://127.0.0.1:$SQ_LLM_PORT/v1" SANDQ_LLM_MODEL="fake-coder"
}

# sq_tree_pids PID: PID and its live descendants, one per line.
sq_tree_pids() {
  echo "$1"
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do sq_tree_pids "$c"; done
}

# sq_tree_asleep PID...: whether a process of a PID's tree sleeps in the
# kernel (time.sleep: its wchan says nanosleep), i.e. a task's program is
# running.
sq_tree_asleep() {
  for sq__root; do
    for p in $(sq_tree_pids "$sq__root"); do grep -q nanosleep "/proc/$p/wchan" 2>/dev/null && return 0; done
  done
  return 1
}

# sq_need_worker_host: skips unless a real worker's jail can run here
# (/usr/bin/python3, root for its namespaces and cgroups); then sets PY, P
# and W to the interpreter, the producer and the worker.
sq_need_worker_host() {
  [ -x /usr/bin/python3 ] || sq_skip "/usr/bin/python3 is not installed"
  [ "$(id -u)" -eq 0 ] || sq_skip "the worker's warm pool needs root (namespaces, cgroups)"
  PY=/usr/bin/python3 P=$SQ_BIN/sandq-producer W=$SQ_BIN/sandq-worker
}

sq_redis_cli() { redis-cli -p "$SQ_REDIS_PORT" "$@"; }
