#!/bin/sh
# with_redis.sh CMD [ARG...]: runs CMD against its own real redis-server on a
# free loopback port and a unix socket (tests/lib/env.sh), then stops the
# server. ctest runs the queue's unit tests (tests/unit/queue) through it:
# each test gets a server of its own, so tests that damage keys or kill
# connections never meet another test's keys, whatever ctest -j runs.
# CMD sees SANDQ_REDIS_URL, SQ_REDIS_PORT and SQ_REDIS_SOCK; its exit code
# is this script's (77: SKIP).

. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ $# -gt 0 ] || sq_fail "usage: with_redis.sh CMD [ARG...]"
SQ_REDIS_SOCK="$SQ_TMP/redis.sock"
SQ_REDIS_ARGS="--unixsocket $SQ_REDIS_SOCK --unixsocketperm 700"
sq_start_redis
export SQ_REDIS_SOCK
"$@"
