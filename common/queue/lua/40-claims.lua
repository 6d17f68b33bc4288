-- 40-claims.lua: a worker's claims, from taking a task to settling it:
-- claim, claim_undo, heartbeat, heartbeat_held, complete, retry, release, stall,
-- release_all (the sandq_v1 library, part 5 of 7).
-- Exports: claim, claim_undo, heartbeat, heartbeat_held, complete, complete_n, retry,
-- release, stall_one, release_all.
-- Uses (00-base.lua): prefix, now_ms, list_key, stat; (10-checks.lua):
-- corrupt, shown, checked, want_type, want_int, want_int_fields,
-- want_int_field, want_claims, want_lists, want_stats, want_promote,
-- batch_fields; (20-settle.lua): batch_counts, finished, forget, history,
-- drop_claim, owned, want_stall, stall, promote.

-- Claims the popped payloads ps (priority letters pr) under new fencing
-- tokens, leased until lease_until, each write one call for all of them.
-- Returns {token, payload, ...}; with info, {token, payload, info, ...}
-- (claim's ARGV[5]).
local function take(P, w, lease_until, ps, pr, info, retried)
  local out, n = {}, #ps
  if n == 0 then return out end
  local last = redis.call('INCRBY', P .. 'seq', n)
  local cl, ow, le, pro = {}, {}, {}, {}
  for i = 1, n do
    local tok = last - n + i
    cl[2 * i - 1], cl[2 * i] = tok, ps[i]
    ow[2 * i - 1], ow[2 * i] = tok, pr[i] .. w
    le[2 * i - 1], le[2 * i] = lease_until, tok
    pro[i] = tok
    out[#out + 1] = tok
    out[#out + 1] = ps[i]
    if info then
      local s = ''
      if retried then
        local sha = redis.sha1hex(ps[i])
        local a = redis.call('HGET', P .. 'attempts', sha)
        if a then s = a .. ' ' .. (redis.call('HGET', P .. 'first', sha) or '0') end
      end
      out[#out + 1] = s
    end
  end
  redis.call('HSET', P .. 'claims', unpack(cl))
  redis.call('HSET', P .. 'owners', unpack(ow))
  redis.call('ZADD', P .. 'leases', unpack(le))
  redis.call('RPUSH', P .. 'processing:' .. w, unpack(pro))
  return out
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
  local due = want_promote(P, now)
  want_claims(P, w)
  local suspects, alone = checked(P .. 'stalls', 'hash', 'HLEN', P .. 'stalls') > 0, false
  want_int(P .. 'seq')
  want_type(P .. 'workers', 'zset')
  want_type(P .. 'lastclaim:' .. w, 'string')
  -- ARGV[5] '1': each claim is {token, payload, "<retries> <first claim ms>"}
  local step, retried = 2, false
  if args[5] == '1' then
    step, retried = 3, checked(P .. 'attempts', 'hash', 'HLEN', P .. 'attempts') > 0
    if retried then want_type(P .. 'first', 'hash') end
  end
  promote(P, due)
  -- The payloads to claim, popped (with their priority letters): without
  -- suspects, up to max from each list in one RPOP; with, one at a time.
  local ps, pr = {}, {}
  for _, prio in ipairs({'h', 'n', 'l'}) do
    local lk = list_key(P, prio)
    if not suspects then
      if #ps >= max then break end
      for _, p in ipairs(redis.call('RPOP', lk, max - #ps) or {}) do
        ps[#ps + 1], pr[#pr + 1] = p, prio
      end
    end
    while suspects and #ps < max and not alone do
      local p = redis.call('RPOP', lk)
      if not p then break end
      if redis.call('HEXISTS', P .. 'stalls', redis.sha1hex(p)) == 1 then
        alone = true
        if #ps > 0 then
          redis.call('RPUSH', lk, p) -- back to the front: the next claim takes it alone
          break
        end
      end
      ps[#ps + 1], pr[#pr + 1] = p, prio
    end
  end
  local out = take(P, w, now + lease, ps, pr, step == 3, retried)
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

-- heartbeat: ARGV worker, lease_ms. Extends every lease listed in
-- processing:<worker> (a client that does not say what it holds).
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

-- heartbeat_held: ARGV worker, lease_ms, seen, then the tokens the worker
-- holds in memory; seen is the highest token of this shard it has read in a
-- claim reply. Extends the leases of the held tokens only. A token listed
-- in processing:<worker> that is not held and not above seen is one the
-- worker settled or never received: its acknowledged result was lost (a
-- Redis restart that went back: AOF everysec, an RDB snapshot, a failover),
-- or a claim's reply was lost. It goes back to the front of its list, no
-- stall counted, so it runs again now rather than being renewed for ever.
-- A token above seen is a claim whose reply is on its way: it keeps the
-- lease it was claimed with. Returns {renewed, handed back, held tokens
-- Redis does not know (their results will be refused)}.
local function heartbeat_held(keys, args)
  local P = prefix(keys[1])
  local w, lease, seen = args[1], tonumber(args[2]), tonumber(args[3]) or 0
  local now = now_ms()
  want_claims(P, w)
  want_lists(P)
  want_type(P .. 'workers', 'zset')
  local held = {}
  for i = 4, #args do held[args[i]] = true end
  local renewed, back, listed = 0, 0, {}
  for _, tok in ipairs(redis.call('LRANGE', P .. 'processing:' .. w, 0, -1)) do
    listed[tok] = true
    if held[tok] then
      redis.call('ZADD', P .. 'leases', 'XX', now + lease, tok)
      renewed = renewed + 1
    elseif (tonumber(tok) or 0) <= seen then
      local payload, prio = drop_claim(P, tok, w)
      if payload then
        redis.call('RPUSH', list_key(P, prio), payload)
        back = back + 1
      end
    end
  end
  local unknown = 0
  for i = 4, #args do
    if not listed[args[i]] then unknown = unknown + 1 end
  end
  redis.call('ZADD', P .. 'workers', now, w)
  return {renewed, back, unknown}
end

-- store_results, in three steps: gather (the arguments, grouped by
-- batch), check (every read and check, and what each result does), write.
-- A worker stores several results per round trip (docs/benchmarks.md), so
-- each write is one call for all the results where it can be.

-- Gathers n results (ARGV a from index at: token, batch, id, status, bson
-- each). Returns the results in order ({tok, batch, id, status, doc}),
-- their tokens, and their batches: by name ({rk results key, bk batch key,
-- ids, statuses}) and in order of first appearance.
local function gather_results(P, a, at, n)
  local R, toks, B, order = {}, {}, {}, {}
  for i = 1, n do
    local j = at + 5 * (i - 1)
    local r = {tok = a[j], batch = a[j + 1], id = a[j + 2], status = a[j + 3], doc = a[j + 4]}
    R[i], toks[i] = r, r.tok
    local e = B[r.batch]
    if not e then
      e = {rk = P .. 'results:' .. r.batch, bk = P .. 'batch:' .. r.batch, ids = {}, seen = {}, status = {}}
      B[r.batch], order[#order + 1] = e, r.batch
    end
    e.ids[#e.ids + 1] = r.id
    if not e.seen[r.status] then e.seen[r.status], e.status[#e.status + 1] = true, r.status end
  end
  return R, toks, B, order
end

-- Batch e's fields (batch_fields, then each status counted here), read and
-- checked once: e.names in order, e.f by name.
local function batch_state(e)
  if e.f then return end
  local fields = batch_fields()
  for _, s in ipairs(e.status) do fields[#fields + 1] = 'status:' .. s end
  local v = want_int_fields(e.bk, fields)
  e.f, e.names, e.changed, e.pend, e.store, e.fins = {}, fields, {}, {}, {}, {}
  for k, f in ipairs(fields) do e.f[f] = v[k] end
end

-- Checks every key the write step touches (10-checks.lua) and decides each
-- result as n calls of complete one after the other would: fenced (not the
-- claim's owner), a duplicate (its id has a result), or stored; counts the
-- batches' fields after it in e.f (e.changed: the ones that moved) and
-- notes each batch that finishes (e.fins). Returns {codes, acked results,
-- duplicates, fenced}.
local function check_results(P, w, R, toks, B, order)
  local owners = checked(P .. 'owners', 'hash', 'HMGET', P .. 'owners', unpack(toks))
  want_stats(P, 'duplicate', 'fenced')
  local used, any = {}, false
  for i, r in ipairs(R) do -- a token twice: its first result acknowledges the claim
    r.mine = owners[i] and string.sub(owners[i], 2) == w and not used[r.tok]
    if r.mine then used[r.tok], any = true, true end
  end
  local claims = {}
  if any then
    claims = checked(P .. 'claims', 'hash', 'HMGET', P .. 'claims', unpack(toks))
    want_type(P .. 'leases', 'zset')
    want_type(P .. 'processing:' .. w, 'list')
  end
  for _, b in ipairs(order) do
    local e = B[b]
    local docs = checked(e.rk, 'hash', 'HMGET', e.rk, unpack(e.ids))
    e.have = {}
    for i, id in ipairs(e.ids) do e.have[id] = docs[i] end
  end
  local out = {codes = {}, acked = {}, dup = 0, fenced = 0}
  local hl -- how many payloads have counters to forget (stalls, attempts)
  for i, r in ipairs(R) do
    local e = B[r.batch]
    local had = (e.pend and e.pend[r.id]) or e.have[r.id] -- stored before, or by an earlier result here
    if not r.mine then
      if had == r.doc then -- our own result, sent again after a lost reply
        out.dup, out.codes[i] = out.dup + 1, 0
      else
        out.fenced, out.codes[i] = out.fenced + 1, -1
      end
    else
      batch_state(e)
      if claims[i] then -- the payload's counters and history, to forget when it has any
        if hl == nil then
          hl = checked(P .. 'stalls', 'hash', 'HLEN', P .. 'stalls') +
               checked(P .. 'attempts', 'hash', 'HLEN', P .. 'attempts')
          if hl > 0 then want_type(P .. 'first', 'hash') end
        end
        if hl > 0 then r.sha = redis.sha1hex(claims[i]) end
      end
      local f = e.f
      local counted = had and 'duplicate' or 'done' -- this result counts as a duplicate, or as done
      f[counted] = (tonumber(f[counted]) or 0) + 1
      e.changed[counted] = true
      if had then
        out.dup, out.codes[i] = out.dup + 1, 0
      else
        local sk = 'status:' .. r.status
        f[sk] = (tonumber(f[sk]) or 0) + 1
        e.changed[sk] = true
        e.pend[r.id] = r.doc
        e.store[#e.store + 1] = r.id
        e.store[#e.store + 1] = r.doc
        out.codes[i] = 1
      end
      local c, done, anew = batch_counts({f.total, f.done, f.dead, f.duplicate, f.finished_at_ms, f.finished_total,
                                          f.finished})
      if anew then
        want_type(P .. 'done:' .. r.batch, 'list')
        e.fins[#e.fins + 1] = c
        f.finished_at_ms, f.finished_total = true, c[1]
      end
      local flag = done and '1' or '0'
      if f.finished ~= flag then f.finished, e.changed.finished = flag, true end
      out.acked[#out.acked + 1] = r
    end
  end
  return out
end

-- Writes what check_results decided, kept ret seconds: the claims
-- acknowledged, the results stored, the counters, each finish.
local function write_results(P, w, ret, B, order, out)
  if #out.acked > 0 then
    local ts = {}
    for k, r in ipairs(out.acked) do ts[k] = r.tok end
    redis.call('HDEL', P .. 'claims', unpack(ts))
    redis.call('HDEL', P .. 'owners', unpack(ts))
    redis.call('ZREM', P .. 'leases', unpack(ts))
    for _, t in ipairs(ts) do redis.call('LREM', P .. 'processing:' .. w, 1, t) end
    for _, r in ipairs(out.acked) do
      if r.sha then forget(P, r.sha) end
    end
  end
  if out.dup > 0 then stat(P, 'duplicate', out.dup) end
  if out.fenced > 0 then stat(P, 'fenced', out.fenced) end
  for _, b in ipairs(order) do
    local e = B[b]
    if e.store and #e.store > 0 then
      redis.call('HSET', e.rk, unpack(e.store))
      redis.call('EXPIRE', e.rk, ret)
    end
    if e.changed and next(e.changed) then
      local hs = {}
      for _, f in ipairs(e.names) do
        if e.changed[f] and f ~= 'finished' then
          hs[#hs + 1] = f
          hs[#hs + 1] = string.format('%d', e.f[f])
        end
      end
      hs[#hs + 1] = 'finished'
      hs[#hs + 1] = e.f.finished
      for _, c in ipairs(e.fins) do
        local fs = finished(P, b, ret, c)
        for k = 1, #fs do hs[#hs + 1] = fs[k] end
      end
      redis.call('HSET', e.bk, unpack(hs))
      redis.call('EXPIRE', e.bk, ret)
    end
  end
end

-- Stores n results of worker w (ARGV a from index at: token, batch, id,
-- status, bson each), kept ret seconds, as n calls of complete one after
-- the other would, in one step: every read and check first, then the
-- writes. A result is stored (the first one per id wins) and its claim
-- acknowledged; a claim whose id already has a result (a duplicate id in
-- the batch) is counted in the batch's 'duplicate', so the batch still
-- finishes. Returns a code per result: 1 stored, 0 a result existed, -1
-- fenced (refused).
local function store_results(P, w, ret, a, at, n)
  local R, toks, B, order = gather_results(P, a, at, n)
  local out = check_results(P, w, R, toks, B, order)
  write_results(P, w, ret, B, order, out)
  return out.codes
end

-- complete: ARGV worker, token, batch, id, status, bson, retention_s: one
-- result (store_results). Returns its code.
local function complete(keys, args)
  local P = prefix(keys[1])
  return store_results(P, args[1], tonumber(args[7]), {args[2], args[3], args[4], args[5], args[6]}, 1, 1)[1]
end

-- complete_n: ARGV worker, retention_s, then token, batch, id, status,
-- bson for each result: several results in one call (store_results).
-- Returns their codes, in order.
local function complete_n(keys, args)
  local P = prefix(keys[1])
  local n = (#args - 2) / 5
  if n < 1 or n ~= math.floor(n) then
    return redis.error_reply('ERR sq1_complete_n: ARGV is worker, retention_s, then token, batch, id, status, bson per result')
  end
  return store_results(P, args[1], tonumber(args[2]), args, 3, n)
end

-- retry: ARGV worker, token, reason, max_attempts, delay_ms (-1: backoff),
-- base_ms, max_ms, jitter in [0,1), retention_s[, first_claimed_at_ms[,
-- '1']]. Returns {1, attempts, delay_ms} scheduled, {0, attempts, 0} no
-- attempts left (the claim is kept: store a final result), or -1 fenced.
-- With '1' (ARGV[11]) the task is deferred: it waits delay_ms and no
-- attempt is charged (its provider is unavailable: nothing of the task
-- failed); its attempts field is kept (0 at least), so its next claim still
-- carries its first attempt's claim time. Counted in stats 'deferred'.
local function retry(keys, args)
  local P = prefix(keys[1])
  local w, tok, reason = args[1], args[2], args[3]
  local max_attempts, delay = tonumber(args[4]), tonumber(args[5])
  local base, cap, jitter, ret = tonumber(args[6]), tonumber(args[7]), tonumber(args[8]), tonumber(args[9])
  local defer = args[11] == '1'
  want_claims(P, w)
  want_stats(P, 'fenced', 'retried', 'deferred')
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
  local n = redis.call('HINCRBY', P .. 'attempts', sha, defer and 0 or 1)
  -- when the first attempt was claimed (ARGV[10], wall ms): a result's time across attempts
  if args[10] and args[10] ~= '' then redis.call('HSETNX', P .. 'first', sha, args[10]) end
  if n >= max_attempts and not defer then return {0, n, 0} end
  if delay < 0 then
    delay = math.min(cap, base * 2 ^ (n - 1))
    delay = math.floor(delay / 2 + delay / 2 * jitter) -- "equal jitter"
  end
  local payload, prio = drop_claim(P, tok, w)
  redis.call('ZADD', P .. 'delayed', now_ms() + delay, tok .. '|' .. prio .. payload)
  if defer then
    history(P, sha, w, 'deferred ' .. delay .. ' ms, no attempt charged: ' .. reason, ret)
    stat(P, 'deferred')
  else
    history(P, sha, w, 'retry ' .. n .. ' in ' .. delay .. ' ms: ' .. reason, ret)
    stat(P, 'retried')
  end
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
