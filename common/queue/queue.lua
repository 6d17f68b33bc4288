#!lua name=sandq_v1
-- queue.lua: the server side of the sandq queue, a Redis 7 Functions
-- library embedded into sq_redis at build time (common/embed.cmake) and
-- loaded with FUNCTION LOAD REPLACE on every connection and again whenever
-- a call finds it missing (a Redis restart without persistence, FUNCTION
-- FLUSH). Every multi-key step is one function, so it is atomic.
--
-- KEYS[1] is always sq:{Q}:tasks (a sharded queue's shard k:
-- sq:{Q#k}:tasks); every other key of the queue is derived from it and
-- shares its hash tag, so each call stays in one cluster slot.
-- Times are the server's (TIME), so worker clocks do not matter.
-- The key layout is documented in docs/operations.md.

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

-- ---- checks ----------------------------------------------------------
-- Redis Functions do not roll back: a command that fails half-way leaves
-- the writes before it in place (a claim that popped a task and then met a
-- non-integer sq:{Q}:seq destroyed the task). So every Function first
-- checks each key it will write (type, and that the counters it will
-- increment hold integers), and only then writes; a check that fails raises
-- "CORRUPT <key>: <what>" with nothing changed. docs/operations.md, "Damaged
-- keys", says how to repair.

local function corrupt(k, what)
  error({err = 'CORRUPT ' .. k .. ': ' .. what .. '; nothing was changed (docs/operations.md, "Damaged keys")'})
end

-- A stored value for an error message: short, control bytes as '?'.
local function shown(v)
  local s = string.gsub(string.sub(tostring(v), 1, 40), '[%c\128-\255]', '?')
  return "'" .. s .. "'"
end

local function want_type(k, t)
  local got = redis.call('TYPE', k).ok
  if got ~= 'none' and got ~= t then corrupt(k, 'is a ' .. got .. ', not a ' .. t) end
end

-- Counters stay far below 2^53 (Lua numbers) and 2^63 (HINCRBY).
local function is_int(v) return #v <= 15 and string.match(v, '^-?%d+$') ~= nil end

-- A string key that INCR counts.
local function want_int(k)
  want_type(k, 'string')
  local v = redis.call('GET', k)
  if v and not is_int(v) then corrupt(k, 'value ' .. shown(v) .. ' is not an integer') end
end

-- Hash fields that HINCRBY counts (or that are read as numbers): one
-- round of TYPE and HMGET however many.
local function want_int_fields(k, fields)
  want_type(k, 'hash')
  local v = redis.call('HMGET', k, unpack(fields))
  for i, f in ipairs(fields) do
    if v[i] and not is_int(v[i]) then
      corrupt(k, 'field ' .. shown(f) .. ' = ' .. shown(v[i]) .. ' is not an integer')
    end
  end
end

local function want_int_field(k, f) want_int_fields(k, {f}) end

local function want_lists(P)
  for _, p in ipairs({'h', 'n', 'l'}) do want_type(list_key(P, p), 'list') end
end

-- What drop_claim and owned touch (a requeue adds want_lists).
local function want_claims(P, w)
  want_type(P .. 'claims', 'hash')
  want_type(P .. 'owners', 'hash')
  want_type(P .. 'leases', 'zset')
  want_type(P .. 'processing:' .. w, 'list')
end

local function want_stats(P, ...) want_int_fields(P .. 'stats', {...}) end

-- What check_finished reads and writes for batch b (and status, when given,
-- the status:<name> counter complete increments).
local function want_batch(P, b, status)
  local f = {'total', 'done', 'dead', 'duplicate', 'finished_at_ms', 'finished_total'}
  if status then f[#f + 1] = 'status:' .. status end
  want_int_fields(P .. 'batch:' .. b, f)
  want_type(P .. 'done:' .. b, 'list')
end

-- A payload's batch as dead_letter counts it, or nil.
local function payload_batch(payload)
  local ok, t = pcall(cjson.decode, payload)
  if ok and type(t) == 'table' and type(t.id) == 'string' then
    return type(t.batch) == 'string' and t.batch or 'default'
  end
  return nil
end

-- What dead_letter touches for payload (hashed sha).
local function want_dead_letter(P, payload, sha)
  want_int(P .. 'dead:seq')
  want_type(P .. 'dead', 'hash')
  want_type(P .. 'dead:index', 'zset')
  want_type(P .. 'hist:' .. sha, 'list')
  want_int_field(P .. 'stalls', sha)
  want_int_field(P .. 'attempts', sha)
  local b = payload_batch(payload)
  if b and redis.call('EXISTS', P .. 'batch:' .. b) == 1 then want_batch(P, b) end
  want_stats(P, 'dead')
end

-- Due members of the delayed set must read "<token>|<prio letter><payload>".
local function want_promote(P, now)
  want_type(P .. 'delayed', 'zset')
  want_lists(P)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', P .. 'delayed', '-inf', now, 'LIMIT', 0, 256)) do
    local bar = string.find(m, '|', 1, true)
    if not bar or bar + 1 > #m then
      corrupt(P .. 'delayed', 'member ' .. shown(m) .. ' is not <token>|<priority letter><payload> (ZREM it)')
    end
  end
end

-- A batch is finished when every task has a result, sits in the dead
-- letter, or was a copy of an id whose result was already stored
-- (duplicate); each time that happens at a new total (tasks pushed into a
-- finished batch), push one event onto sq:{Q}:done:<B> (BLPOP-able).
-- Called wherever done, dead, duplicate or total changes.
local function check_finished(P, batch, ret)
  local bk = P .. 'batch:' .. batch
  local v = redis.call('HMGET', bk, 'total', 'done', 'dead', 'duplicate', 'finished_at_ms', 'finished_total')
  local total, done, dead, dup = tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0, tonumber(v[4]) or 0
  if total > 0 and done + dead + dup >= total and not (v[5] and tonumber(v[6]) == total) then
    local now = now_ms()
    redis.call('HSET', bk, 'finished_at_ms', now, 'finished_total', total)
    local ev = P .. 'done:' .. batch
    redis.call('RPUSH', ev, cjson.encode({batch = batch, total = total, done = done, dead = dead,
                                          duplicate = dup, finished_at_ms = now}))
    redis.call('EXPIRE', ev, ret)
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

-- Removes claim tok (held by w) from every structure. Returns its payload
-- and priority letter.
local function drop_claim(P, tok, w)
  local payload = redis.call('HGET', P .. 'claims', tok)
  local owner = redis.call('HGET', P .. 'owners', tok)
  redis.call('HDEL', P .. 'claims', tok)
  redis.call('HDEL', P .. 'owners', tok)
  redis.call('ZREM', P .. 'leases', tok)
  redis.call('LREM', P .. 'processing:' .. w, 1, tok)
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
local function promote(P, now)
  local due = redis.call('ZRANGEBYSCORE', P .. 'delayed', '-inf', now, 'LIMIT', 0, 256)
  for _, m in ipairs(due) do
    redis.call('ZREM', P .. 'delayed', m)
    local bar = string.find(m, '|', 1, true)
    redis.call('RPUSH', list_key(P, string.sub(m, bar + 1, bar + 1)), string.sub(m, bar + 2))
  end
end

-- push: ARGV batch, max_len (0: no cap), retention_s, then triples
-- (priority letter, idempotency key or "", payload). All or nothing under
-- the cap. Returns {pushed, duplicates} or the error "QUEUEFULL <len> <max>".
local function push(keys, args)
  local P = prefix(keys[1])
  local batch, max_len, ret = args[1], tonumber(args[2]), tonumber(args[3])
  local n = (#args - 3) / 3
  want_lists(P)
  want_batch(P, batch)
  want_type(P .. 'batches', 'zset')
  want_stats(P, 'deduplicated')
  if max_len > 0 then
    local len = redis.call('LLEN', P .. 'tasks') + redis.call('LLEN', P .. 'tasks:high') +
                redis.call('LLEN', P .. 'tasks:low')
    if len + n > max_len then return redis.error_reply('QUEUEFULL ' .. len .. ' ' .. max_len) end
  end
  local pushed, dups = 0, 0
  for i = 0, n - 1 do
    local prio, idem, payload = args[4 + 3 * i], args[5 + 3 * i], args[6 + 3 * i]
    if idem == '' or redis.call('SET', P .. 'idem:' .. idem, batch, 'NX', 'EX', ret) then
      redis.call('LPUSH', list_key(P, prio), payload)
      pushed = pushed + 1
    else
      dups = dups + 1
    end
  end
  if pushed > 0 then
    local bk = P .. 'batch:' .. batch
    redis.call('HINCRBY', bk, 'total', pushed)
    redis.call('HDEL', bk, 'finished_at_ms')
    redis.call('EXPIRE', bk, ret)
    redis.call('ZADD', P .. 'batches', now_ms(), batch)
    check_finished(P, batch, ret) -- results that came before their total (a raw LPUSH) count
  end
  if dups > 0 then stat(P, 'deduplicated', dups) end
  return {pushed, dups}
end

-- push_once: ARGV chunk id, then push's arguments. A push whose reply was
-- lost, or whose write was not acknowledged by the replicas (WAIT), is
-- sent again under the same chunk id: if it landed, it is not pushed twice
-- (the mark lives as long as the batch). Returns push's reply.
local function push_once(keys, args)
  local P = prefix(keys[1])
  local mark = P .. 'pushed:' .. args[1]
  want_type(mark, 'string')
  local seen = redis.call('GET', mark)
  if seen then
    local p, d = string.match(seen, '^(%d+) (%d+)$')
    if not p then corrupt(mark, 'value ' .. shown(seen) .. ' is not "<pushed> <duplicates>"') end
    return {tonumber(p), tonumber(d)}
  end
  -- push checks its keys and raises before writing (CORRUPT, QUEUEFULL):
  -- then no mark is set either, and a second send tries again.
  local rest = {}
  for i = 2, #args do rest[i - 1] = args[i] end
  local res = push(keys, rest)
  if type(res) == 'table' and res.err then return res end
  redis.call('SET', mark, res[1] .. ' ' .. res[2], 'EX', tonumber(rest[3]))
  return res
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

-- claim: ARGV worker, lease_ms, max[, claim id[, '1']]. Takes up to max tasks,
-- high before normal before low, each under a new fencing token with a
-- lease; with a claim id, remembers the tokens under it (lastclaim:<worker>)
-- for claim_undo. A task
-- that stalled before (its worker died holding it) is claimed alone, so a
-- poison pill takes no innocent task of the same claim down with it.
-- Returns {token, payload, ...}; with '1', {token, payload, info, ...} where
-- info is "<retries so far> <first attempt's claim, wall ms>", or "" for a
-- task never retried.
local function claim(keys, args)
  local P = prefix(keys[1])
  local w, lease, max = args[1], tonumber(args[2]), tonumber(args[3])
  local now = now_ms()
  want_promote(P, now)
  want_claims(P, w)
  want_type(P .. 'stalls', 'hash')
  want_int(P .. 'seq')
  want_type(P .. 'workers', 'zset')
  want_type(P .. 'lastclaim:' .. w, 'string')
  promote(P, now)
  local out = {}
  -- ARGV[5] '1': each claim is {token, payload, "<retries> <first claim ms>"} (issue 12)
  local step, retried = 2, false
  if args[5] == '1' then step, retried = 3, redis.call('HLEN', P .. 'attempts') > 0 end
  local suspects, alone = redis.call('HLEN', P .. 'stalls') > 0, false
  for _, prio in ipairs({'h', 'n', 'l'}) do
    local lk = list_key(P, prio)
    while #out < step * max and not alone do
      local p = redis.call('RPOP', lk)
      if not p then break end
      if suspects and redis.call('HEXISTS', P .. 'stalls', redis.sha1hex(p)) == 1 then
        alone = true
        if #out > 0 then
          redis.call('RPUSH', lk, p) -- back to the front: the next claim takes it alone
          break
        end
      end
      local tok = redis.call('INCR', P .. 'seq')
      redis.call('HSET', P .. 'claims', tok, p)
      redis.call('HSET', P .. 'owners', tok, prio .. w)
      redis.call('ZADD', P .. 'leases', now + lease, tok)
      redis.call('RPUSH', P .. 'processing:' .. w, tok)
      out[#out + 1] = tok
      out[#out + 1] = p
      if step == 3 then
        local info = ''
        if retried then
          local sha = redis.sha1hex(p)
          local n = redis.call('HGET', P .. 'attempts', sha)
          if n then info = n .. ' ' .. (redis.call('HGET', P .. 'first', sha) or '0') end
        end
        out[#out + 1] = info
      end
    end
  end
  if #out > 0 then
    redis.call('ZADD', P .. 'workers', now, w)
    if args[4] and args[4] ~= '' then
      local rec = {args[4]}
      for i = 1, #out, step do rec[#rec + 1] = out[i] end
      redis.call('SET', P .. 'lastclaim:' .. w, table.concat(rec, ' '), 'EX', 3600)
    end
  end
  return out
end

-- claim_undo: ARGV worker, claim id. A claim whose reply never reached the
-- worker (the connection broke after Redis ran it) left tasks the worker
-- holds without knowing, its heartbeat keeping their leases alive: if the
-- worker's last claim has this id, its tasks still owned go back to the
-- front of their lists, no stall counted. Returns how many.
local function claim_undo(keys, args)
  local P = prefix(keys[1])
  local w, id = args[1], args[2]
  local k = P .. 'lastclaim:' .. w
  want_type(k, 'string')
  want_claims(P, w)
  want_lists(P)
  local rec = redis.call('GET', k)
  if not rec then return 0 end
  local toks = {}
  for word in string.gmatch(rec, '%S+') do toks[#toks + 1] = word end
  if toks[1] ~= id then return 0 end
  local n = 0
  for i = #toks, 2, -1 do -- last claimed first, so the first claimed ends at the front
    if owned(P, toks[i], w) then
      local payload, prio = drop_claim(P, toks[i], w)
      if payload then
        redis.call('RPUSH', list_key(P, prio), payload)
        n = n + 1
      end
    end
  end
  redis.call('DEL', k)
  return n
end

-- heartbeat: ARGV worker, lease_ms. Extends every lease the worker holds.
local function heartbeat(keys, args)
  local P = prefix(keys[1])
  local w, lease = args[1], tonumber(args[2])
  local now = now_ms()
  want_type(P .. 'processing:' .. w, 'list')
  want_type(P .. 'leases', 'zset')
  want_type(P .. 'workers', 'zset')
  local toks = redis.call('LRANGE', P .. 'processing:' .. w, 0, -1)
  for _, tok in ipairs(toks) do redis.call('ZADD', P .. 'leases', 'XX', now + lease, tok) end
  redis.call('ZADD', P .. 'workers', now, w)
  return #toks
end

-- complete: ARGV worker, token, batch, id, status, bson, retention_s.
-- Stores the result (first one per id wins) and acknowledges the claim in
-- one step. A claim whose id already has a result (a duplicate id in the
-- batch) is counted in the batch's 'duplicate', so the batch still
-- finishes. Returns 1 stored, 0 a result existed, -1 fenced (refused).
local function complete(keys, args)
  local P = prefix(keys[1])
  local w, tok, batch, id, status, doc, ret = args[1], args[2], args[3], args[4], args[5], args[6],
                                              tonumber(args[7])
  local rk, bk = P .. 'results:' .. batch, P .. 'batch:' .. batch
  want_claims(P, w)
  want_type(rk, 'hash')
  want_batch(P, batch, status)
  want_type(P .. 'stalls', 'hash')
  want_type(P .. 'attempts', 'hash')
  want_stats(P, 'duplicate', 'fenced')
  if not owned(P, tok, w) then
    if redis.call('HGET', rk, id) == doc then -- our own result, sent again after a lost reply
      stat(P, 'duplicate')
      return 0
    end
    stat(P, 'fenced')
    return -1
  end
  local payload = drop_claim(P, tok, w)
  if payload and (redis.call('HLEN', P .. 'stalls') > 0 or redis.call('HLEN', P .. 'attempts') > 0) then
    forget(P, redis.sha1hex(payload))
  end
  if redis.call('HSETNX', rk, id, doc) == 0 then
    stat(P, 'duplicate')
    redis.call('HINCRBY', bk, 'duplicate', 1)
    redis.call('EXPIRE', bk, ret)
    check_finished(P, batch, ret)
    return 0
  end
  redis.call('EXPIRE', rk, ret)
  redis.call('HINCRBY', bk, 'done', 1)
  redis.call('HINCRBY', bk, 'status:' .. status, 1)
  redis.call('EXPIRE', bk, ret)
  check_finished(P, batch, ret)
  return 1
end

-- retry: ARGV worker, token, reason, max_attempts, delay_ms (-1: backoff),
-- base_ms, max_ms, jitter in [0,1), retention_s[, first_claimed_at_ms]. Returns {1, attempts,
-- delay_ms} scheduled, {0, attempts, 0} no attempts left (the claim is
-- kept: store a final result), or -1 fenced.
local function retry(keys, args)
  local P = prefix(keys[1])
  local w, tok, reason = args[1], args[2], args[3]
  local max_attempts, delay = tonumber(args[4]), tonumber(args[5])
  local base, cap, jitter, ret = tonumber(args[6]), tonumber(args[7]), tonumber(args[8]), tonumber(args[9])
  want_claims(P, w)
  want_stats(P, 'fenced', 'retried')
  if not owned(P, tok, w) then
    stat(P, 'fenced')
    return -1
  end
  local held = redis.call('HGET', P .. 'claims', tok)
  if not held then corrupt(P .. 'claims', 'claim ' .. shown(tok) .. ' has an owner but no payload') end
  local sha = redis.sha1hex(held)
  want_int_field(P .. 'attempts', sha)
  want_type(P .. 'delayed', 'zset')
  want_type(P .. 'hist:' .. sha, 'list')
  local n = redis.call('HINCRBY', P .. 'attempts', sha, 1)
  -- when the first attempt was claimed (ARGV[10], wall ms): a result's time across attempts
  if args[10] and args[10] ~= '' then redis.call('HSETNX', P .. 'first', sha, args[10]) end
  if n >= max_attempts then return {0, n, 0} end
  if delay < 0 then
    delay = math.min(cap, base * 2 ^ (n - 1))
    delay = math.floor(delay / 2 + delay / 2 * jitter) -- "equal jitter"
  end
  local payload, prio = drop_claim(P, tok, w)
  redis.call('ZADD', P .. 'delayed', now_ms() + delay, tok .. '|' .. prio .. payload)
  history(P, sha, w, 'retry ' .. n .. ' in ' .. delay .. ' ms: ' .. reason, ret)
  stat(P, 'retried')
  return {1, n, delay}
end

-- release: ARGV worker, token. Hands a claim back untouched (graceful
-- shutdown): front of its list, no stall counted. Returns 1, or -1 fenced.
local function release(keys, args)
  local P = prefix(keys[1])
  local w, tok = args[1], args[2]
  want_claims(P, w)
  want_lists(P)
  if not owned(P, tok, w) then return -1 end
  if not redis.call('HGET', P .. 'claims', tok) then
    corrupt(P .. 'claims', 'claim ' .. shown(tok) .. ' has an owner but no payload')
  end
  local payload, prio = drop_claim(P, tok, w)
  redis.call('RPUSH', list_key(P, prio), payload)
  return 1
end

-- stall: ARGV worker, token, max_stalls, retention_s, why. Hands a claim
-- back as a stall (its worker could not run it for a reason that may be the
-- task's, such as a jail failure): front of its list, or the dead letter
-- after max_stalls. Returns 1 requeued, 2 dead, or -1 fenced.
local function stall_one(keys, args)
  local P = prefix(keys[1])
  local w, tok = args[1], args[2]
  if not owned(P, tok, w) then return -1 end
  want_stall(P, tok)
  return stall(P, tok, tonumber(args[3]), args[5], tonumber(args[4]))
end

-- release_all: ARGV worker. Hands back every claim the worker holds (a
-- shutdown whose grace period ran out). Returns how many.
local function release_all(keys, args)
  local P = prefix(keys[1])
  local w = args[1]
  want_claims(P, w)
  want_lists(P)
  local toks = redis.call('LRANGE', P .. 'processing:' .. w, 0, -1)
  for _, tok in ipairs(toks) do
    local payload, prio = drop_claim(P, tok, w)
    if payload then redis.call('RPUSH', list_key(P, prio), payload) end
  end
  return #toks
end

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
  want_promote(P, now)
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
  promote(P, now)
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
      redis.call('HDEL', bk, 'finished_at_ms')
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

redis.register_function('sq1_push', push)
redis.register_function('sq1_push_once', push_once)
redis.register_function('sq1_seq_floor', seq_floor)
redis.register_function('sq1_enqueue', enqueue)
redis.register_function('sq1_claim', claim)
redis.register_function('sq1_claim_undo', claim_undo)
redis.register_function('sq1_heartbeat', heartbeat)
redis.register_function('sq1_complete', complete)
redis.register_function('sq1_retry', retry)
redis.register_function('sq1_release', release)
redis.register_function('sq1_release_all', release_all)
redis.register_function('sq1_stall', stall_one)
redis.register_function('sq1_recover', recover)
redis.register_function('sq1_reap', reap)
redis.register_function('sq1_dead_requeue', dead_requeue)
redis.register_function('sq1_hash_cas', hash_cas)
