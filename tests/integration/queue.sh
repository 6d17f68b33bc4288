#!/bin/sh
# queue.sh: runs test_queue (tests/unit/test_queue.c) against a real
# redis-server on a free loopback port and a unix socket.

. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ -x "$SQ_BIN/test_queue" ] || sq_fail "$SQ_BIN/test_queue is not built"
SQ_REDIS_SOCK="$SQ_TMP/redis.sock"
SQ_REDIS_ARGS="--unixsocket $SQ_REDIS_SOCK --unixsocketperm 700"
sq_start_redis
export SQ_REDIS_SOCK
if [ -n "${SQ_VALGRIND:-}" ]; then
  valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$SQ_BIN/test_queue"
else
  "$SQ_BIN/test_queue"
fi
