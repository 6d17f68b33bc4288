-- 50-upkeep.lua: the fleet's upkeep: recover, reap, dead_requeue, and
-- hash_cas for the provider rollout (the sandq_v1 library, part 6 of 7).
-- Exports: recover, reap, dead_record, dead_requeue, hash_cas.
-- Uses (00-base.lua): prefix, now_ms, list_key; (10-checks.lua): want_type,
-- want_int_field, want_lists, want_batch, want_promote; (20-settle.lua):
-- want_stall, stall, promote.

-- recover: ARGV worker, max_stalls, retention_s. A worker id starting up:
-- whatever an earlier run of it held stalled there. Returns {requeued, dead}.
local function recover(keys, args)
  local P = prefix(keys[1])
  local w, max_stalls, ret = args[1], tonumber(args[2]), tonumber(args[3])
  local r, d = 0, 0
  want_type(P .. 'processing:' .. w, 'list')
  local toks = redis.call('LRANGE', P .. 'processing:' .. w, 0, -1)
  for _, tok in ipairs(toks) do want_stall(P, tok) end
  for _, tok in ipairs(toks) do
    local s = stall(P, tok, max_stalls, 'worker restarted', ret)
    if s == 1 then r = r + 1 elseif s == 2 then d = d + 1 end
  end
  redis.call('DEL', P .. 'processing:' .. w)
  return {r, d}
end

-- reap: ARGV worker, lock_ms, max_stalls, limit, retention_s,
-- dead_retention_s (0: keep dead letters). One reaper per lock_ms across
-- the fleet (SET NX PX); requeues expired leases, trims indexes past
-- retention and drops up to limit dead-letter entries past theirs.
-- Returns {ran 0/1, requeued, dead}.
local function reap(keys, args)
  local P = prefix(keys[1])
  local w, lock_ms, max_stalls, limit, ret = args[1], tonumber(args[2]), tonumber(args[3]),
                                             tonumber(args[4]), tonumber(args[5])
  local dead_ret = tonumber(args[6]) or 0
  want_type(P .. 'reaper', 'string') -- else SET NX fails for ever and nothing is reaped
  if not redis.call('SET', P .. 'reaper', w, 'NX', 'PX', lock_ms) then return {0, 0, 0} end
  local now = now_ms()
  local r, d = 0, 0
  want_type(P .. 'leases', 'zset')
  local due = want_promote(P, now)
  want_type(P .. 'batches', 'zset')
  want_type(P .. 'workers', 'zset')
  want_type(P .. 'dead', 'hash')
  want_type(P .. 'dead:index', 'zset')
  local expired = redis.call('ZRANGEBYSCORE', P .. 'leases', '-inf', now, 'LIMIT', 0, limit)
  for _, tok in ipairs(expired) do want_stall(P, tok) end
  for _, tok in ipairs(expired) do
    local s = stall(P, tok, max_stalls, 'lease expired', ret)
    if s == 1 then r = r + 1 elseif s == 2 then d = d + 1 end
  end
  promote(P, due)
  redis.call('ZREMRANGEBYSCORE', P .. 'batches', '-inf', now - ret * 1000)
  redis.call('ZREMRANGEBYSCORE', P .. 'workers', '-inf', now - ret * 1000)
  if dead_ret > 0 then
    local old = redis.call('ZRANGEBYSCORE', P .. 'dead:index', '-inf', now - dead_ret * 1000, 'LIMIT', 0, limit)
    for _, id in ipairs(old) do
      redis.call('HDEL', P .. 'dead', id)
      redis.call('ZREM', P .. 'dead:index', id)
    end
  end
  return {1, r, d}
end

-- A dead-letter record as dead_requeue needs it, or nil and why not.
local function dead_record(raw)
  local ok, rec = pcall(cjson.decode, raw)
  if not ok or type(rec) ~= 'table' then return nil, 'not a JSON object' end
  if type(rec.payload) ~= 'string' or rec.payload == '' then return nil, 'no payload' end
  if rec.batch ~= nil and type(rec.batch) ~= 'string' then return nil, 'batch is not a string' end
  if rec.priority ~= 'h' and rec.priority ~= 'l' then rec.priority = 'n' end
  return rec
end

-- dead_requeue: ARGV id ("" for all), retention_s. Puts dead-letter entries
-- back on their list with fresh counters. An entry that cannot be requeued
-- (not JSON, no payload) is kept and named. Returns {requeued, then
-- id, why for each entry kept}.
local function dead_requeue(keys, args)
  local P = prefix(keys[1])
  want_type(P .. 'dead', 'hash')
  want_type(P .. 'dead:index', 'zset')
  want_lists(P)
  local ids = {args[1]}
  if args[1] == '' then ids = redis.call('HKEYS', P .. 'dead') end
  local todo, out = {}, {0}
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', P .. 'dead', id)
    if raw then
      local rec, why = dead_record(raw)
      if rec then
        if rec.batch and redis.call('EXISTS', P .. 'batch:' .. rec.batch) == 1 then
          want_batch(P, rec.batch)
        else
          rec.batch = nil -- its batch expired: nothing to count back
        end
        todo[#todo + 1] = {id, rec}
      else
        out[#out + 1] = id
        out[#out + 1] = why
      end
    end
  end
  for _, e in ipairs(todo) do
    local id, rec = e[1], e[2]
    redis.call('HDEL', P .. 'dead', id)
    redis.call('ZREM', P .. 'dead:index', id)
    if rec.batch then
      local bk = P .. 'batch:' .. rec.batch
      if (tonumber(redis.call('HGET', bk, 'dead')) or 0) > 0 then redis.call('HINCRBY', bk, 'dead', -1) end
      redis.call('HDEL', bk, 'finished_at_ms') -- a task back on the queue: not finished
      redis.call('HSET', bk, 'finished', '0')
    end
    redis.call('RPUSH', list_key(P, rec.priority), rec.payload)
  end
  out[1] = #todo
  return out
end

-- hash_cas: ARGV hash name (a key under the queue's prefix), expected
-- version ('*': any), lock name ('' none), lock owner, then field, value
-- pairs. Writes the fields and bumps the hash's 'version' field only if the
-- version is still the expected one and (with a lock) the lock is still the
-- owner's, so an operator's abort is never overwritten by a controller that
-- decided on older state. Returns the new version, -1 (version moved) or -2
-- (lock lost). Used by the provider rollout (common/fleet/rollout_ctl.c).
local function hash_cas(keys, args)
  local P = prefix(keys[1])
  local k, want, lock, owner = P .. args[1], args[2], args[3], args[4]
  want_int_field(k, 'version')
  if lock ~= '' then want_type(P .. lock, 'string') end
  if want ~= '*' and (redis.call('HGET', k, 'version') or '0') ~= want then return -1 end
  if lock ~= '' and redis.call('GET', P .. lock) ~= owner then return -2 end
  for i = 5, #args, 2 do redis.call('HSET', k, args[i], args[i + 1]) end
  return redis.call('HINCRBY', k, 'version', 1)
end
