#!/bin/sh
# queue.sh: runs the queue's unit tests (tests/unit/queue: test_queue_conn,
# test_queue) against a real redis-server on a free loopback port and a unix
# socket. Exits 1 if either failed, else 77 if either skipped, else 0.

. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
for t in test_queue_conn test_queue test_queue_shard; do
  [ -x "$SQ_BIN/$t" ] || sq_fail "$SQ_BIN/$t is not built"
done
SQ_REDIS_SOCK="$SQ_TMP/redis.sock"
SQ_REDIS_ARGS="--unixsocket $SQ_REDIS_SOCK --unixsocketperm 700"
sq_start_redis
export SQ_REDIS_SOCK
worst=0
for t in test_queue_conn test_queue test_queue_shard; do
  if [ -n "${SQ_VALGRIND:-}" ]; then
    valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$SQ_BIN/$t"
  else
    "$SQ_BIN/$t"
  fi
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then worst=1; fi
  if [ $rc -eq 77 ] && [ $worst -eq 0 ]; then worst=77; fi
done
exit $worst
