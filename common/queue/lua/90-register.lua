-- 90-register.lua: the library's Functions by name, its whole interface
-- (the sandq_v1 library, part 7 of 7; common/queue/*.c call them).
-- Uses the Functions of 30-push.lua, 40-claims.lua and 50-upkeep.lua.

redis.register_function('sq1_push', push)
redis.register_function('sq1_push_once', push_once)
redis.register_function('sq1_seq_floor', seq_floor)
redis.register_function('sq1_enqueue', enqueue)
redis.register_function{function_name = 'sq1_batch_get', callback = batch_get, flags = {'no-writes'}}
redis.register_function('sq1_cancel', cancel)
redis.register_function('sq1_claim', claim)
redis.register_function('sq1_claim_undo', claim_undo)
redis.register_function('sq1_heartbeat', heartbeat)
redis.register_function('sq1_complete', complete)
redis.register_function('sq1_complete_n', complete_n)
redis.register_function('sq1_retry', retry)
redis.register_function('sq1_release', release)
redis.register_function('sq1_release_all', release_all)
redis.register_function('sq1_stall', stall_one)
redis.register_function('sq1_recover', recover)
redis.register_function('sq1_reap', reap)
redis.register_function('sq1_dead_requeue', dead_requeue)
redis.register_function('sq1_hash_cas', hash_cas)
