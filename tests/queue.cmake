# tests of the queue module and the producer: both need a real redis-server,
# so they run through shell scripts that start one (tests/lib/env.sh).

# test_queue is built like a unit test but run by integration/queue.sh.
add_executable(test_queue unit/test_queue.c unit/check.c)
target_link_libraries(test_queue PRIVATE sandq sq_warnings)
target_include_directories(test_queue PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)

sq_script_test(queue integration/queue.sh)
sq_script_test(producer integration/producer.sh)
sq_script_test(queue_storm integration/queue_storm.sh TIMEOUT 300)
sq_script_test(queue_faults integration/queue_faults.sh TIMEOUT 300)
sq_script_test(queue_redis integration/queue_redis.sh TIMEOUT 300)
