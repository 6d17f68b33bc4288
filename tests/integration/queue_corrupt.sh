#!/bin/sh
# queue_corrupt.sh: runs test_queue_corrupt (tests/unit/queue/) against a
# real redis-server: every queue Function with each of its keys damaged.

. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ -x "$SQ_BIN/test_queue_corrupt" ] || sq_fail "$SQ_BIN/test_queue_corrupt is not built"
sq_start_redis
if [ -n "${SQ_VALGRIND:-}" ]; then
  valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$SQ_BIN/test_queue_corrupt"
else
  "$SQ_BIN/test_queue_corrupt"
fi
