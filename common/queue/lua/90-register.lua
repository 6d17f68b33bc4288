-- 90-register.lua: the library's Functions by name, its whole interface
-- (the sandq_v1 library, part 7 of 7; common/queue/*.c call them).
-- Uses the Functions of 30-push.lua, 40-claims.lua and 50-upkeep.lua.
-- 'allow-oom': the steps that keep or settle a claim already taken run
-- when Redis is at maxmemory under noeviction (every other write is refused
-- with OOM), so an OOM episode pauses new claims and pushes but counts no
-- healthy task a stall: heartbeats keep their leases, results are stored.

redis.register_function('sq1_push', push)
redis.register_function('sq1_push_once', push_once)
redis.register_function('sq1_push_ids', push_ids)
redis.register_function{function_name = 'sq1_batch_has', callback = batch_has, flags = {'no-writes'}}
redis.register_function('sq1_push_mark', push_mark)
redis.register_function('sq1_seq_floor', seq_floor)
redis.register_function('sq1_enqueue', enqueue)
redis.register_function{function_name = 'sq1_batch_get', callback = batch_get, flags = {'no-writes'}}
redis.register_function('sq1_cancel', cancel)
redis.register_function('sq1_claim', claim)
redis.register_function('sq1_claim_undo', claim_undo)
redis.register_function{function_name = 'sq1_heartbeat', callback = heartbeat, flags = {'allow-oom'}}
redis.register_function{function_name = 'sq1_heartbeat_held', callback = heartbeat_held, flags = {'allow-oom'}}
redis.register_function{function_name = 'sq1_complete', callback = complete, flags = {'allow-oom'}}
redis.register_function{function_name = 'sq1_complete_n', callback = complete_n, flags = {'allow-oom'}}
redis.register_function{function_name = 'sq1_retry', callback = retry, flags = {'allow-oom'}}
redis.register_function{function_name = 'sq1_release', callback = release, flags = {'allow-oom'}}
redis.register_function{function_name = 'sq1_release_all', callback = release_all, flags = {'allow-oom'}}
redis.register_function('sq1_stall', stall_one)
redis.register_function('sq1_recover', recover)
redis.register_function('sq1_reap', reap)
redis.register_function('sq1_dead_requeue', dead_requeue)
redis.register_function('sq1_hash_cas', hash_cas)
