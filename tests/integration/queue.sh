#!/bin/sh
# queue.sh: runs test_queue and test_queue_conn (tests/unit/queue/) against
# a real redis-server on a free loopback port and a unix socket.

. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
for t in test_queue test_queue_conn; do
  [ -x "$SQ_BIN/$t" ] || sq_fail "$SQ_BIN/$t is not built"
done
SQ_REDIS_SOCK="$SQ_TMP/redis.sock"
SQ_REDIS_ARGS="--unixsocket $SQ_REDIS_SOCK --unixsocketperm 700"
sq_start_redis
export SQ_REDIS_SOCK
for t in test_queue test_queue_conn; do
  if [ -n "${SQ_VALGRIND:-}" ]; then
    valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$SQ_BIN/$t" || exit $?
  else
    "$SQ_BIN/$t" || exit $?
  fi
done
