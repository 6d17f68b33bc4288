-- 40-claims.lua: a worker's claims, from taking a task to settling it:
-- claim, claim_undo, heartbeat, complete, retry, release, stall,
-- release_all (the sandq_v1 library, part 5 of 7).

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
  local due = want_promote(P, now)
  want_claims(P, w)
  local suspects, alone = checked(P .. 'stalls', 'hash', 'HLEN', P .. 'stalls') > 0, false
  want_int(P .. 'seq')
  want_type(P .. 'workers', 'zset')
  want_type(P .. 'lastclaim:' .. w, 'string')
  -- ARGV[5] '1': each claim is {token, payload, "<retries> <first claim ms>"} (issue 12)
  local step, retried = 2, false
  if args[5] == '1' then
    step, retried = 3, checked(P .. 'attempts', 'hash', 'HLEN', P .. 'attempts') > 0
    if retried then want_type(P .. 'first', 'hash') end
  end
  promote(P, due)
  local out = {}
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
  -- The checks (10-checks.lua) of every key written below, then the
  -- writes; the reads the checks need are themselves checked (checked).
  -- This runs once per task, so it reads each key once: 18 calls where
  -- a TYPE before each read made 28 (docs/benchmarks.md).
  local owner = checked(P .. 'owners', 'hash', 'HGET', P .. 'owners', tok)
  want_stats(P, 'duplicate', 'fenced')
  if not owner or string.sub(owner, 2) ~= w then
    if checked(rk, 'hash', 'HGET', rk, id) == doc then -- our own result, sent again after a lost reply
      stat(P, 'duplicate')
      return 0
    end
    stat(P, 'fenced')
    return -1
  end
  local payload = checked(P .. 'claims', 'hash', 'HGET', P .. 'claims', tok)
  want_type(P .. 'leases', 'zset')
  want_type(P .. 'processing:' .. w, 'list')
  local had = checked(rk, 'hash', 'HEXISTS', rk, id) == 1
  local v = want_int_fields(bk, batch_fields(status))
  local sha = nil -- the payload's, when it has counters or history to forget
  if payload and (checked(P .. 'stalls', 'hash', 'HLEN', P .. 'stalls') +
                  checked(P .. 'attempts', 'hash', 'HLEN', P .. 'attempts')) > 0 then
    want_type(P .. 'first', 'hash')
    sha = redis.sha1hex(payload)
  end
  local counted = had and 4 or 2 -- this result counts as a duplicate, or as done
  v[counted] = (tonumber(v[counted]) or 0) + 1 -- the counts as they will be
  local c, now_finished = batch_counts(v)
  if now_finished then want_type(P .. 'done:' .. batch, 'list') end
  unclaim(P, tok, w)
  if sha then forget(P, sha) end
  if had then
    stat(P, 'duplicate')
    redis.call('HINCRBY', bk, 'duplicate', 1)
  else
    redis.call('HSET', rk, id, doc)
    redis.call('EXPIRE', rk, ret)
    redis.call('HSET', bk, 'done', string.format('%d', c[2]), 'status:' .. status,
               string.format('%d', (tonumber(v[7]) or 0) + 1))
  end
  redis.call('EXPIRE', bk, ret)
  if now_finished then finished(P, batch, ret, c) end
  return had and 0 or 1
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
