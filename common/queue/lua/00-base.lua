#!lua name=sandq_v1
-- The sandq_v1 library: the server side of the sandq queue, a Redis 7
-- Functions library in seven files (common/queue/lua/*.lua, one concern
-- each), concatenated in the order of their names and embedded into
-- sq_redis at build time (common/embed.cmake), and loaded with FUNCTION
-- LOAD REPLACE on every connection and again whenever a call finds it
-- missing (a Redis restart without persistence, FUNCTION FLUSH). Every
-- multi-key step is one function, so it is atomic.
--
-- KEYS[1] is always sq:{Q}:tasks (a sharded queue's shard k:
-- sq:{Q#k}:tasks); every other key of the queue is derived from it and
-- shares its hash tag, so each call stays in one cluster slot.
-- Times are the server's (TIME), so worker clocks do not matter.
-- The key layout is documented in docs/operations.md.
-- This file, part 1 of 7: the key prefix, time, the lists, the stats.
-- Each file opens with what it exports (its top-level locals, which the
-- files after it use: the library is one chunk) and what it uses from the
-- files before it.
-- Exports: prefix, now_ms, list_key, stat.

-- KEYS[1] minus "tasks". In a cluster, while the queue's slot migrates,
-- some of its keys are here and some on the other node: a function that
-- met a moved key after its first writes would be torn (no rollback), and
-- one run on the importing node would write fresh keys over ones not yet
-- moved. Touching two keys that never exist fails at once on either node
-- while the slot moves ("non local key", before any write), and the client
-- waits and retries (queue_route.c); anywhere else it costs one EXISTS.
local function prefix(k)
  local P = string.sub(k, 1, -6)
  redis.call('EXISTS', P .. 'slot-probe:a', P .. 'slot-probe:b')
  return P
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- priority letter -> list key: h(igh), n(ormal), l(ow)
local function list_key(P, prio)
  if prio == 'h' then return P .. 'tasks:high' end
  if prio == 'l' then return P .. 'tasks:low' end
  return P .. 'tasks'
end

local function stat(P, name, n) redis.call('HINCRBY', P .. 'stats', name, n or 1) end
