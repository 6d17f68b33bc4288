#!lua name=sandq_v1
-- queue.lua: the server side of the sandq queue, a Redis 7 Functions
-- library embedded into sq_redis at build time (common/embed.cmake) and
-- loaded with FUNCTION LOAD REPLACE on every connection and again whenever
-- a call finds it missing (a Redis restart without persistence, FUNCTION
-- FLUSH). Every multi-key step is one function, so it is atomic.
--
-- KEYS[1] is always sq:{Q}:tasks; every other key of the queue is derived
-- from it and shares the hash tag {Q}, so a queue lives in one cluster slot.
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

-- A batch is finished when every task has a result or sits in the dead
-- letter; the first time, push one event onto sq:{Q}:done:<B> (BLPOP-able).
local function check_finished(P, batch, ret)
  local bk = P .. 'batch:' .. batch
  local v = redis.call('HMGET', bk, 'total', 'done', 'dead', 'finished_at_ms')
  local total, done, dead = tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0
  if total > 0 and not v[4] and done + dead >= total then
    local now = now_ms()
    redis.call('HSET', bk, 'finished_at_ms', now)
    local ev = P .. 'done:' .. batch
    redis.call('RPUSH', ev, cjson.encode({batch = batch, total = total, done = done, dead = dead,
                                          finished_at_ms = now}))
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
  for i, h in ipairs(redis.call('LRANGE', P .. 'hist:' .. sha, 0, -1)) do hist[i] = cjson.decode(h) end
  local rec = {id = id, reason = reason, dead_at_ms = now, priority = prio, payload = payload,
               stalls = tonumber(redis.call('HGET', P .. 'stalls', sha)) or 0,
               attempts = tonumber(redis.call('HGET', P .. 'attempts', sha)) or 0}
  if #hist > 0 then rec.history = hist end
  local ok, t = pcall(cjson.decode, payload)
  if ok and type(t) == 'table' and type(t.id) == 'string' then
    rec.task_id = t.id
    local b = type(t.batch) == 'string' and t.batch or 'default'
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
  local seen = redis.call('GET', mark)
  if seen then
    local p, d = string.match(seen, '^(%d+) (%d+)$')
    return {tonumber(p), tonumber(d)}
  end
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
  local cur = tonumber(redis.call('GET', P .. 'seq')) or 0
  if cur < want then
    redis.call('SET', P .. 'seq', want)
    cur = want
  end
  return cur
end

-- claim: ARGV worker, lease_ms, max[, claim id]. Takes up to max tasks,
-- high before normal before low, each under a new fencing token with a
-- lease; with a claim id, remembers the tokens under it (lastclaim:<worker>)
-- for claim_undo. A task
-- that stalled before (its worker died holding it) is claimed alone, so a
-- poison pill takes no innocent task of the same claim down with it.
-- Returns {token, payload, ...}.
local function claim(keys, args)
  local P = prefix(keys[1])
  local w, lease, max = args[1], tonumber(args[2]), tonumber(args[3])
  local now = now_ms()
  promote(P, now)
  local out = {}
  local suspects, alone = redis.call('HLEN', P .. 'stalls') > 0, false
  for _, prio in ipairs({'h', 'n', 'l'}) do
    local lk = list_key(P, prio)
    while #out < 2 * max and not alone do
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
    end
  end
  if #out > 0 then
    redis.call('ZADD', P .. 'workers', now, w)
    if args[4] and args[4] ~= '' then
      local rec = {args[4]}
      for i = 1, #out, 2 do rec[#rec + 1] = out[i] end
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
  local toks = redis.call('LRANGE', P .. 'processing:' .. w, 0, -1)
  for _, tok in ipairs(toks) do redis.call('ZADD', P .. 'leases', 'XX', now + lease, tok) end
  redis.call('ZADD', P .. 'workers', now, w)
  return #toks
end

-- complete: ARGV worker, token, batch, id, status, bson, retention_s.
-- Stores the result (first one per id wins) and acknowledges the claim in
-- one step. Returns 1 stored, 0 a result existed, -1 fenced (refused).
local function complete(keys, args)
  local P = prefix(keys[1])
  local w, tok, batch, id, status, doc, ret = args[1], args[2], args[3], args[4], args[5], args[6],
                                              tonumber(args[7])
  local rk, bk = P .. 'results:' .. batch, P .. 'batch:' .. batch
  -- A results or batch key of another type would fail the writes below
  -- after the claim is dropped (Functions do not roll back): refuse first,
  -- with the claim still held, so the worker retries once it is repaired.
  for _, k in ipairs({rk, bk}) do
    local t = redis.call('TYPE', k)['ok']
    if t ~= 'none' and t ~= 'hash' then
      return redis.error_reply('WRONGTYPE ' .. k .. ' holds a ' .. t .. ', not a hash; the result was not stored')
    end
  end
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
-- base_ms, max_ms, jitter in [0,1), retention_s. Returns {1, attempts,
-- delay_ms} scheduled, {0, attempts, 0} no attempts left (the claim is
-- kept: store a final result), or -1 fenced.
local function retry(keys, args)
  local P = prefix(keys[1])
  local w, tok, reason = args[1], args[2], args[3]
  local max_attempts, delay = tonumber(args[4]), tonumber(args[5])
  local base, cap, jitter, ret = tonumber(args[6]), tonumber(args[7]), tonumber(args[8]), tonumber(args[9])
  if not owned(P, tok, w) then
    stat(P, 'fenced')
    return -1
  end
  local sha = redis.sha1hex(redis.call('HGET', P .. 'claims', tok))
  local n = redis.call('HINCRBY', P .. 'attempts', sha, 1)
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
  if not owned(P, tok, w) then return -1 end
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
  return stall(P, tok, tonumber(args[3]), args[5], tonumber(args[4]))
end

-- release_all: ARGV worker. Hands back every claim the worker holds (a
-- shutdown whose grace period ran out). Returns how many.
local function release_all(keys, args)
  local P = prefix(keys[1])
  local w = args[1]
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
  for _, tok in ipairs(redis.call('LRANGE', P .. 'processing:' .. w, 0, -1)) do
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
  if not redis.call('SET', P .. 'reaper', w, 'NX', 'PX', lock_ms) then return {0, 0, 0} end
  local now = now_ms()
  local r, d = 0, 0
  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', P .. 'leases', '-inf', now, 'LIMIT', 0, limit)) do
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

-- dead_requeue: ARGV id ("" for all), retention_s. Puts dead-letter entries
-- back on their list with fresh counters. Returns how many.
local function dead_requeue(keys, args)
  local P = prefix(keys[1])
  local ids = {args[1]}
  if args[1] == '' then ids = redis.call('HKEYS', P .. 'dead') end
  local n = 0
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', P .. 'dead', id)
    if raw then
      local rec = cjson.decode(raw)
      redis.call('HDEL', P .. 'dead', id)
      redis.call('ZREM', P .. 'dead:index', id)
      if rec.batch then
        redis.call('HINCRBY', P .. 'batch:' .. rec.batch, 'dead', -1)
        redis.call('HDEL', P .. 'batch:' .. rec.batch, 'finished_at_ms')
      end
      redis.call('RPUSH', list_key(P, rec.priority or 'n'), rec.payload)
      n = n + 1
    end
  end
  return n
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
  if want ~= '*' and (redis.call('HGET', k, 'version') or '0') ~= want then return -1 end
  if lock ~= '' and redis.call('GET', P .. lock) ~= owner then return -2 end
  for i = 5, #args, 2 do redis.call('HSET', k, args[i], args[i + 1]) end
  return redis.call('HINCRBY', k, 'version', 1)
end

redis.register_function('sq1_push', push)
redis.register_function('sq1_push_once', push_once)
redis.register_function('sq1_seq_floor', seq_floor)
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
