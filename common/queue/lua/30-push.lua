-- 30-push.lua: the producer's side: push, push_once, push_ids (a push run
-- again adds only what its batch lacks), push_mark (whether the batch's
-- push completed), seq_floor, enqueue, batch_get to read a batch back, and
-- cancel (the sandq_v1 library, part 4 of 7).
-- Exports: want_unsharded, push, push_once, push_ids, batch_has, push_mark,
-- seq_floor, enqueue, batch_get, cancel.
-- Uses (00-base.lua): prefix, now_ms, list_key, stat; (10-checks.lua):
-- corrupt, shown, checked, want_type, want_int, want_int_fields, want_lists,
-- want_batch, want_stats, batch_fields; (20-settle.lua): batch_finished,
-- check_finished, forget.

-- A sharded queue's home tag {Q} holds no tasks: its workers claim from
-- the shards' tags {Q#k} only. The queue's shard count is recorded in
-- sq:{Q}:shards (queue_shard.c); a push into {Q} of a queue with more than
-- one (a client that does not know the queue is sharded) is refused, as it
-- would wait where no worker looks.
local function want_unsharded(P)
  if string.find(P, '#', 1, true) then return end -- a shard's own tag
  local k = P .. 'shards'
  want_type(k, 'string')
  local v = redis.call('GET', k)
  local n = tonumber(v)
  if v and (not n or n < 1 or n ~= math.floor(n)) then corrupt(k, 'value ' .. shown(v) .. ' is not a shard count') end
  if n and n > 1 then
    error({err = 'SHARDED ' .. n .. ': queue ' .. string.sub(P, 5, -3) .. ' has ' .. n .. ' shards: push into a ' ..
                 "shard's key, " .. string.sub(P, 1, -3) .. '#k}:tasks with k in 0..' .. (n - 1) ..
                 ' (docs/formats.md, "Enqueueing from any language")'})
  end
end

-- push: ARGV batch, max_len (0: no cap), retention_s, then triples
-- (priority letter, idempotency key or "", payload); with stride 4,
-- quadruples (priority letter, idempotency key or "", task id, payload):
-- a task id already in the batch's id set sq:{Q}:ids:<B> (every id a
-- stride-4 push put into it, kept as long as the batch) is skipped, so a
-- push run again into its batch adds only the tasks it lacks. All or
-- nothing under the cap (counting only the tasks that would be pushed).
-- Returns {pushed, duplicates} ({pushed, duplicates, already} with stride
-- 4) or the error "QUEUEFULL <len> <max>".
local function push(keys, args, stride)
  stride = stride or 3
  local P = prefix(keys[1])
  local batch, max_len, ret = args[1], tonumber(args[2]), tonumber(args[3])
  local n = (#args - 3) / stride
  local ik = P .. 'ids:' .. batch
  want_unsharded(P)
  want_lists(P)
  want_batch(P, batch)
  want_type(P .. 'batches', 'zset')
  want_stats(P, 'deduplicated')
  local known, seen = {}, {}
  if stride == 4 and n > 0 then
    want_type(ik, 'set')
    local ids = {}
    for i = 0, n - 1 do ids[i + 1] = args[6 + 4 * i] end -- '' (no id) is never a member
    for i = 1, n, 4096 do
      local part = redis.call('SMISMEMBER', ik, unpack(ids, i, math.min(i + 4095, n)))
      for j = 1, #part do known[i + j - 1] = part[j] == 1 end
    end
  end
  if max_len > 0 then
    local want = 0
    for i = 1, n do if not known[i] then want = want + 1 end end
    local len = redis.call('LLEN', P .. 'tasks') + redis.call('LLEN', P .. 'tasks:high') +
                redis.call('LLEN', P .. 'tasks:low')
    if want > 0 and len + want > max_len then return redis.error_reply('QUEUEFULL ' .. len .. ' ' .. max_len) end
  end
  local pushed, dups, already, added = 0, 0, 0, {}
  for i = 0, n - 1 do
    local at = 4 + stride * i
    local prio, idem, payload = args[at], args[at + 1], args[at + stride - 1]
    local id = stride == 4 and args[at + 2] ~= '' and args[at + 2] or nil
    -- an idempotency key seen before skips first (as it always did), then
    -- an id the batch already holds
    if idem ~= '' and redis.call('EXISTS', P .. 'idem:' .. idem) == 1 then
      dups = dups + 1
    elseif id and (known[i + 1] or seen[id]) then
      already = already + 1
    else
      if idem ~= '' then redis.call('SET', P .. 'idem:' .. idem, batch, 'EX', ret) end
      redis.call('LPUSH', list_key(P, prio), payload)
      pushed = pushed + 1
      if id then
        seen[id] = true
        added[#added + 1] = id
      end
    end
  end
  for i = 1, #added, 4096 do redis.call('SADD', ik, unpack(added, i, math.min(i + 4095, #added))) end
  if #added > 0 then redis.call('EXPIRE', ik, ret) end
  if pushed > 0 then
    local bk = P .. 'batch:' .. batch
    redis.call('HINCRBY', bk, 'total', pushed)
    redis.call('HSETNX', bk, 'created_at_ms', now_ms()) -- the batch's first push (sandq-producer batches)
    redis.call('HDEL', bk, 'finished_at_ms') -- more tasks: not finished (check_finished decides again)
    redis.call('HSET', bk, 'finished', '0')
    redis.call('EXPIRE', bk, ret)
    redis.call('ZADD', P .. 'batches', now_ms(), batch)
    check_finished(P, batch, ret) -- results that came before their total (a raw LPUSH) count
  end
  if dups > 0 then stat(P, 'deduplicated', dups) end
  if stride == 4 then return {pushed, dups, already} end
  return {pushed, dups}
end

-- The chunk-id mark of push_once and push_ids: a push whose reply was
-- lost, or whose write was not acknowledged by the replicas (WAIT), is
-- sent again under the same chunk id: if it landed, it is not pushed twice
-- (the mark lives as long as the batch). args: chunk id, then push's
-- arguments. Returns push's reply.
local function push_marked(keys, args, stride)
  local P = prefix(keys[1])
  local mark = P .. 'pushed:' .. args[1]
  want_type(mark, 'string')
  local seen = redis.call('GET', mark)
  if seen then
    local p, d, a = string.match(seen, '^(%d+) (%d+) ?(%d*)$')
    if not p then corrupt(mark, 'value ' .. shown(seen) .. ' is not "<pushed> <duplicates>"') end
    if stride == 4 then return {tonumber(p), tonumber(d), tonumber(a) or 0} end
    return {tonumber(p), tonumber(d)}
  end
  -- push checks its keys and raises before writing (CORRUPT, QUEUEFULL):
  -- then no mark is set either, and a second send tries again.
  local rest = {}
  for i = 2, #args do rest[i - 1] = args[i] end
  local res = push(keys, rest, stride)
  if type(res) == 'table' and res.err then return res end
  redis.call('SET', mark, table.concat(res, ' '), 'EX', tonumber(rest[3]))
  return res
end

-- push_once: ARGV chunk id, then push's arguments (triples).
local function push_once(keys, args) return push_marked(keys, args, 3) end

-- push_ids: ARGV chunk id, then push's arguments with quadruples (the task
-- id third): sandq-producer push. Returns {pushed, duplicates, already}.
local function push_ids(keys, args) return push_marked(keys, args, 4) end

-- batch_has: ARGV batch, then task ids. Which of them the batch's id set
-- holds on this shard, 1 or 0 each (a sharded push asks every shard before
-- it pushes: an id run again may have gone to another shard). Writes
-- nothing (registered no-writes).
local function batch_has(keys, args)
  local P = prefix(keys[1])
  local ik = P .. 'ids:' .. args[1]
  local out = {}
  for i = 2, #args, 4096 do
    local part = checked(ik, 'set', 'SMISMEMBER', ik, unpack(args, i, math.min(i + 4095, #args)))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end

-- push_mark: ARGV batch, push id, 'begin' | 'alive' | 'end' | 'drop',
-- lease_ms, retention_s. Records in the batch hash whether its push
-- completed: begin writes push_open (the push's id) and push_lease_ms
-- (server time plus lease_ms), alive renews the lease, end clears both and
-- stamps pushed_at_ms, drop (the push put nothing into the batch) clears
-- them only, so a batch of nothing leaves no key; alive, end and drop act
-- only while push_open is this push's (a push begun later took the batch
-- over). batch_get reads them back as
-- 'pushing' (lease alive), 'incomplete' (the pusher went away) or
-- 'complete'. Returns 1 when it acted, else 0.
local function push_mark(keys, args)
  local P = prefix(keys[1])
  local b, id, what, lease, ret = args[1], args[2], args[3], tonumber(args[4]), tonumber(args[5])
  local bk = P .. 'batch:' .. b
  want_int_fields(bk, {'push_lease_ms', 'pushed_at_ms'})
  local now = now_ms()
  if what == 'begin' then
    redis.call('HSET', bk, 'push_open', id, 'push_lease_ms', now + lease)
  elseif redis.call('HGET', bk, 'push_open') ~= id then
    return 0
  elseif what == 'alive' then
    redis.call('HSET', bk, 'push_lease_ms', now + lease)
  else
    redis.call('HDEL', bk, 'push_open', 'push_lease_ms')
    if what == 'drop' then return 1 end
    redis.call('HSET', bk, 'pushed_at_ms', now)
  end
  redis.call('EXPIRE', bk, ret)
  return 1
end

-- seq_floor: ARGV token. Raises the token counter to at least token: a
-- client that reconnected (maybe to a promoted replica that never saw its
-- last claims) makes sure those tokens are never handed out again, so a
-- claim lost in the failover stays fenced. Returns the counter.
local function seq_floor(keys, args)
  local P = prefix(keys[1])
  local want = tonumber(args[1])
  want_int(P .. 'seq')
  local cur = tonumber(redis.call('GET', P .. 'seq')) or 0
  if cur < want then
    redis.call('SET', P .. 'seq', want)
    cur = want
  end
  return cur
end

-- enqueue: the enqueue for any language (docs/formats.md, "Enqueueing"):
-- ARGV batch, retention_s, max_len (0: no cap), then one task JSON per
-- argument. Each task must be a JSON object with a string id and the same
-- batch (absent means "default"); its priority ("high", "normal", "low")
-- and idempotency_key are read from it. Anything else refuses the whole
-- call, nothing pushed: "BADTASK <n>: <why>" (n counts from 1). Then it is
-- push: the tasks are counted into the batch in the same step, so the
-- batch's total is there before a worker can claim one. Pushing into an
-- existing batch grows it. Returns {pushed, duplicates}.
-- Its BADTASK refusals write nothing; push starts with prefix(), so the
-- cluster's slot-migration guard runs before its first write too. On a
-- sharded queue (config shards: N) KEYS[1] names one shard,
-- sq:{Q#k}:tasks with k in 0..N-1 (docs/formats.md, "Enqueueing").
local function enqueue(keys, args)
  local batch, ret, max_len = args[1], tonumber(args[2]), tonumber(args[3])
  if not batch or not string.match(batch, '^[A-Za-z0-9._:-]+$') or #batch > 128 then
    return redis.error_reply('BADTASK 0: batch must be 1-128 characters of A-Z a-z 0-9 . _ : -')
  end
  if not ret or ret < 1 or ret ~= math.floor(ret) then
    return redis.error_reply('BADTASK 0: retention_s must be a whole number of seconds >= 1')
  end
  if not max_len or max_len < 0 or max_len ~= math.floor(max_len) then
    return redis.error_reply('BADTASK 0: max_len must be a whole number >= 0 (0: no cap)')
  end
  if #args < 4 then return redis.error_reply('BADTASK 0: no task given') end
  local prios = {high = 'h', normal = 'n', low = 'l'}
  local pargs = {batch, max_len, ret}
  for i = 4, #args do
    local n = i - 3
    local ok, t = pcall(cjson.decode, args[i])
    if not ok or type(t) ~= 'table' then return redis.error_reply('BADTASK ' .. n .. ': not a JSON object') end
    if type(t.id) ~= 'string' or t.id == '' then
      return redis.error_reply('BADTASK ' .. n .. ': id must be a non-empty string')
    end
    local tb = t.batch == nil and 'default' or t.batch
    if tb ~= batch then
      return redis.error_reply('BADTASK ' .. n .. ': its batch is ' .. (type(tb) == 'string' and "'" .. tb .. "'" or
                               'not a string') .. ', not ' .. batch .. ' (set "batch" in the task)')
    end
    local prio = t.priority == nil and 'n' or prios[t.priority]
    if not prio then return redis.error_reply('BADTASK ' .. n .. ': priority must be high, normal or low') end
    local idem = t.idempotency_key == nil and '' or t.idempotency_key
    if type(idem) ~= 'string' then
      return redis.error_reply('BADTASK ' .. n .. ': idempotency_key must be a string')
    end
    pargs[#pargs + 1] = prio
    pargs[#pargs + 1] = idem
    pargs[#pargs + 1] = args[i]
  end
  return push(keys, pargs)
end

-- batch_get: ARGV batch. The batch hash sq:{Q}:batch:<B> as HGETALL gives
-- it (push_mark's push_open and push_lease_ms read as one 'push' field:
-- pushing, incomplete or complete), with its 'finished' field always
-- there, '1' or '0' (batch_finished:
-- for a hash written before that field existed, the old rule), so every
-- reader (the C library, the clients) reads the one decision. Writes
-- nothing (registered no-writes). A sharded queue has one hash per shard:
-- KEYS[1] names the shard, and the batch is finished when every part with
-- tasks is (docs/operations.md, "Sharded queues").
local function batch_get(keys, args)
  local P = prefix(keys[1])
  local bk = P .. 'batch:' .. args[1]
  local all = checked(bk, 'hash', 'HGETALL', bk)
  local fin = batch_finished(redis.call('HMGET', bk, unpack(batch_fields())))
  local out, open, lease, pushed = {}, nil, 0, false
  for i = 1, #all, 2 do
    local f = all[i]
    if f == 'push_open' then
      open = all[i + 1]
    elseif f == 'push_lease_ms' then
      lease = tonumber(all[i + 1]) or 0
    elseif f ~= 'finished' then
      pushed = pushed or f == 'pushed_at_ms'
      out[#out + 1] = f
      out[#out + 1] = all[i + 1]
    end
  end
  out[#out + 1] = 'finished'
  out[#out + 1] = fin and '1' or '0'
  -- push_mark's record, as one word (absent: pushed without one)
  if open then
    out[#out + 1] = 'push'
    out[#out + 1] = lease > now_ms() and 'pushing' or 'incomplete'
  elseif pushed then
    out[#out + 1] = 'push'
    out[#out + 1] = 'complete'
  end
  return out
end

-- The id of task payload p when it belongs to batch b (absent batch:
-- 'default'), else nil. A payload that is not a JSON object belongs to none.
local function id_in_batch(p, b)
  -- most payloads, without decoding them (a task of 'default' may not name it)
  if b ~= 'default' and not string.find(p, b, 1, true) then return nil end
  local ok, t = pcall(cjson.decode, p)
  if not ok or type(t) ~= 'table' or type(t.id) ~= 'string' then return nil end
  if (t.batch == nil and 'default' or t.batch) ~= b then return nil end
  return t.id
end

-- A BSON document of string fields (name, value, ...) and a 'finished_at'
-- datetime (ms): the result the server files itself for a cancelled task.
local function bson_doc(kv, at_ms)
  local parts = {}
  for i = 1, #kv, 2 do
    local v = kv[i + 1]
    parts[#parts + 1] = '\2' .. kv[i] .. '\0' .. struct.pack('<i4', #v + 1) .. v .. '\0'
  end
  parts[#parts + 1] = '\9finished_at\0' .. struct.pack('<i8', at_ms)
  local body = table.concat(parts)
  return struct.pack('<i4', #body + 5) .. body .. '\0'
end

-- Removes every payload of batch b from list lk (the rest keep their
-- order); returns them.
local function take_batch_list(lk, b)
  local keep, out = {}, {}
  for _, p in ipairs(redis.call('LRANGE', lk, 0, -1)) do
    if id_in_batch(p, b) then out[#out + 1] = p else keep[#keep + 1] = p end
  end
  if #out > 0 then
    redis.call('DEL', lk)
    for i = 1, #keep, 4096 do redis.call('RPUSH', lk, unpack(keep, i, math.min(i + 4095, #keep))) end
  end
  return out
end

-- cancel: ARGV batch, retention_s, reason. Ends every waiting task of the
-- batch on this shard in one step: each is taken off its list (every
-- priority) or out of the delayed set, and gets a result with status
-- 'cancelled' (its id's first result, else it counts as a duplicate), so
-- a worker claiming at the same moment either got the task before (it runs
-- and settles as usual) or never sees it: each task ends exactly once.
-- Claims running for the batch are left to finish; with ARGV[4] 'kill'
-- they are to be stopped: kill_seq is set to the shard's last fencing
-- token, and a worker stops its claims of the batch holding a token up to
-- it (tasks pushed into the batch later are claimed under larger ones).
-- Marks the batch cancelled (cancelled_at_ms). Returns {cancelled,
-- duplicates, running}.
local function cancel(keys, args)
  local P = prefix(keys[1])
  local b, ret, reason, kill = args[1], tonumber(args[2]), args[3], args[4] == 'kill'
  local bk, rk = P .. 'batch:' .. b, P .. 'results:' .. b
  want_lists(P)
  want_type(P .. 'delayed', 'zset')
  want_type(rk, 'hash')
  want_batch(P, b, 'cancelled')
  for _, h in ipairs({'claims', 'stalls', 'attempts', 'first'}) do want_type(P .. h, 'hash') end
  local gone = {}
  for _, prio in ipairs({'h', 'n', 'l'}) do
    for _, p in ipairs(take_batch_list(list_key(P, prio), b)) do gone[#gone + 1] = p end
  end
  for _, m in ipairs(redis.call('ZRANGE', P .. 'delayed', 0, -1)) do
    local bar = string.find(m, '|', 1, true)
    local p = bar and string.sub(m, bar + 2)
    if p and id_in_batch(p, b) then
      redis.call('ZREM', P .. 'delayed', m)
      gone[#gone + 1] = p
    end
  end
  local running = 0
  local claims = redis.call('HGETALL', P .. 'claims')
  for i = 2, #claims, 2 do
    if id_in_batch(claims[i], b) then running = running + 1 end
  end
  if kill and running > 0 then
    redis.call('HSET', bk, 'kill_seq', redis.call('GET', P .. 'seq') or '0')
    redis.call('EXPIRE', bk, ret)
  end
  if #gone == 0 and redis.call('EXISTS', bk) == 0 then return {0, 0, running} end
  local now = now_ms()
  local store, seen, dups = {}, {}, 0
  for _, p in ipairs(gone) do
    local id = id_in_batch(p, b)
    if seen[id] or redis.call('HEXISTS', rk, id) == 1 then
      dups = dups + 1
    else
      seen[id] = true
      store[#store + 1] = id
      store[#store + 1] = bson_doc({'_id', id, 'batch', b, 'status', 'cancelled', 'reason', reason,
                                    'worker', 'sandq-producer cancel'}, now)
    end
    forget(P, redis.sha1hex(p))
  end
  for i = 1, #store, 4096 do redis.call('HSET', rk, unpack(store, i, math.min(i + 4095, #store))) end
  if #store > 0 then
    redis.call('EXPIRE', rk, ret)
    redis.call('HINCRBY', bk, 'done', #store / 2)
    redis.call('HINCRBY', bk, 'status:cancelled', #store / 2)
  end
  if dups > 0 then redis.call('HINCRBY', bk, 'duplicate', dups) end
  redis.call('HSETNX', bk, 'cancelled_at_ms', now)
  redis.call('EXPIRE', bk, ret)
  check_finished(P, b, ret)
  return {#store / 2, dups, running}
end
