-- 20-settle.lua: what settling a task touches, shared by the Functions: a
-- batch finishing, a payload's history and counters, dropping a claim, the
-- dead letter, a stall, due retries promoted (the sandq_v1 library, part 3
-- of 7).
-- Exports: batch_finished, batch_counts, finished, check_finished, history,
-- forget, unclaim, drop_claim, owned, dead_letter, want_stall, stall,
-- promote.
-- Uses (00-base.lua): now_ms, list_key, stat; (10-checks.lua): batch_fields,
-- payload_batch, want_type, want_claims, want_lists, want_stats,
-- want_dead_letter.

-- A batch is finished when every task has a result, sits in the dead
-- letter, or was a copy of an id whose result was already stored
-- (duplicate). The batch hash's 'finished' field (1 or 0) says whether it
-- is: every Function that changes the counts writes it in the same step
-- (check_finished, store_results, push, dead_requeue), and every reader
-- reads it (sq1_batch_get below, the C library, the clients). This is the
-- one place that decides it for a batch hash written before that field
-- existed: finished when it carries the finish stamp (finished_at_ms) for
-- its current total and its counts still add up to that total.
-- v: the batch's fields as HMGET returned them, in batch_fields' order.
local function batch_finished(v)
  if v[7] then return v[7] == '1' end
  local total = tonumber(v[1]) or 0
  return v[5] ~= false and v[5] ~= nil and total > 0 and tonumber(v[6]) == total and
         (tonumber(v[2]) or 0) + (tonumber(v[3]) or 0) + (tonumber(v[4]) or 0) >= total
end

-- The batch's counts from its fields (batch_fields' order, the counts as
-- they are now, the flag as it was before they changed): {total, done,
-- dead, dup}, whether those counts make it finished, and whether that is
-- new (it was not finished before).
local function batch_counts(v)
  local c = {tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0, tonumber(v[4]) or 0}
  local done = c[1] > 0 and c[2] + c[3] + c[4] >= c[1]
  return c, done, done and not batch_finished(v)
end

-- The fields that mark the batch finished at counts c (batch_counts), for
-- HSET; and the batch's event, pushed onto sq:{Q}:done:<B> (BLPOP-able).
local function finished(P, batch, ret, c)
  local now = now_ms()
  local ev = P .. 'done:' .. batch
  redis.call('RPUSH', ev, cjson.encode({batch = batch, total = c[1], done = c[2], dead = c[3],
                                        duplicate = c[4], finished_at_ms = now}))
  redis.call('EXPIRE', ev, ret)
  return {'finished', '1', 'finished_at_ms', now, 'finished_total', c[1]}
end

-- Writes the batch's 'finished' flag for its counts as they are now: each
-- time the batch finishes at a new total (tasks pushed into a finished
-- batch), marks it and pushes one event (finished). Called wherever done,
-- dead, duplicate or total changes.
local function check_finished(P, batch, ret)
  local bk = P .. 'batch:' .. batch
  local v = redis.call('HMGET', bk, unpack(batch_fields()))
  local c, done, anew = batch_counts(v)
  if anew then
    redis.call('HSET', bk, unpack(finished(P, batch, ret, c)))
  elseif v[7] ~= (done and '1' or '0') then
    redis.call('HSET', bk, 'finished', done and '1' or '0')
  end
end

-- Appends one event to a payload's history (kept for the dead letter).
local function history(P, sha, w, event, ret)
  local hk = P .. 'hist:' .. sha
  redis.call('RPUSH', hk, cjson.encode({at_ms = now_ms(), worker = w, event = event}))
  redis.call('LTRIM', hk, -20, -1)
  redis.call('EXPIRE', hk, ret)
end

-- Drops the per-payload counters and history once a task is settled.
local function forget(P, sha)
  redis.call('HDEL', P .. 'stalls', sha)
  redis.call('HDEL', P .. 'attempts', sha)
  redis.call('HDEL', P .. 'first', sha)
  redis.call('DEL', P .. 'hist:' .. sha)
end

-- Removes claim tok (held by w) from every structure (drop_claim without
-- its reads: complete reads the claim first).
local function unclaim(P, tok, w)
  redis.call('HDEL', P .. 'claims', tok)
  redis.call('HDEL', P .. 'owners', tok)
  redis.call('ZREM', P .. 'leases', tok)
  redis.call('LREM', P .. 'processing:' .. w, 1, tok)
end

-- The same, returning the claim's payload and priority letter.
local function drop_claim(P, tok, w)
  local payload = redis.call('HGET', P .. 'claims', tok)
  local owner = redis.call('HGET', P .. 'owners', tok)
  unclaim(P, tok, w)
  return payload, owner and string.sub(owner, 1, 1) or 'n'
end

-- The claim's owner check: the fencing test of every worker-side write.
local function owned(P, tok, w)
  local owner = redis.call('HGET', P .. 'owners', tok)
  return owner and string.sub(owner, 2) == w
end

local function dead_letter(P, payload, prio, sha, reason, ret)
  local id = redis.call('INCR', P .. 'dead:seq')
  local now = now_ms()
  local hist = {}
  for i, h in ipairs(redis.call('LRANGE', P .. 'hist:' .. sha, 0, -1)) do
    local ok, e = pcall(cjson.decode, h)
    hist[i] = ok and e or {raw = h} -- a damaged entry is kept as it is
  end
  local rec = {id = id, reason = reason, dead_at_ms = now, priority = prio, payload = payload,
               stalls = tonumber(redis.call('HGET', P .. 'stalls', sha)) or 0,
               attempts = tonumber(redis.call('HGET', P .. 'attempts', sha)) or 0}
  if #hist > 0 then rec.history = hist end
  local b = payload_batch(payload)
  if b then
    rec.task_id = cjson.decode(payload).id
    if redis.call('EXISTS', P .. 'batch:' .. b) == 1 then
      rec.batch = b
      redis.call('HINCRBY', P .. 'batch:' .. b, 'dead', 1)
      check_finished(P, b, ret)
    end
  end
  redis.call('HSET', P .. 'dead', id, cjson.encode(rec))
  redis.call('ZADD', P .. 'dead:index', now, id)
  forget(P, sha)
  stat(P, 'dead')
  return id
end

-- What stall(P, tok, ...) touches.
local function want_stall(P, tok)
  want_type(P .. 'owners', 'hash')
  want_type(P .. 'claims', 'hash')
  want_type(P .. 'leases', 'zset')
  local owner = redis.call('HGET', P .. 'owners', tok)
  if not owner then return end
  want_claims(P, string.sub(owner, 2))
  want_lists(P)
  local payload = redis.call('HGET', P .. 'claims', tok)
  if not payload then return end
  want_stats(P, 'stalled')
  want_dead_letter(P, payload, redis.sha1hex(payload))
end

-- A claim whose worker stopped answering: back to the front of its list,
-- or to the dead letter after max_stalls. Returns 1 requeued, 2 dead, 0 gone.
local function stall(P, tok, max_stalls, why, ret)
  local owner = redis.call('HGET', P .. 'owners', tok)
  if not owner then
    redis.call('ZREM', P .. 'leases', tok)
    redis.call('HDEL', P .. 'claims', tok)
    return 0
  end
  local w = string.sub(owner, 2)
  local payload, prio = drop_claim(P, tok, w)
  if not payload then return 0 end
  local sha = redis.sha1hex(payload)
  local n = redis.call('HINCRBY', P .. 'stalls', sha, 1)
  history(P, sha, w, 'stalled: ' .. why, ret)
  stat(P, 'stalled')
  if n >= max_stalls then
    dead_letter(P, payload, prio, sha, 'stalled ' .. n .. ' times (last: ' .. why .. ' on ' .. w .. ')', ret)
    return 2
  end
  redis.call('RPUSH', list_key(P, prio), payload)
  return 1
end

-- Moves due retries from the delayed set onto the claim end of their list.
-- Members are "<token>|<prio letter><payload>" so equal payloads stay apart.
-- due: what want_promote checked and returned.
local function promote(P, due)
  for _, m in ipairs(due) do
    redis.call('ZREM', P .. 'delayed', m)
    local bar = string.find(m, '|', 1, true)
    redis.call('RPUSH', list_key(P, string.sub(m, bar + 1, bar + 1)), string.sub(m, bar + 2))
  end
end
