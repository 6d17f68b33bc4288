-- 10-checks.lua: the checks every Function makes before its first write
-- (the sandq_v1 library, part 2 of 7).
-- Exports: corrupt, shown, want_type, checked, is_int, want_int,
-- want_int_fields, want_int_field, want_lists, want_claims, want_stats,
-- batch_fields, want_batch, payload_batch, want_dead_letter, want_promote.
-- Uses (00-base.lua): list_key.

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

-- A read of key k, which must be a t, that is its own type check: a read
-- fails on a key of another type before changing anything (and every
-- Function reads before its first write), and that failure is raised as
-- want_type's CORRUPT. One call instead of a TYPE and the read (each
-- redis.call costs about a microsecond of the server's time in itself).
local function checked(k, t, ...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'WRONGTYPE', 1, true) then want_type(k, t) end
    error(r)
  end
  return r
end

-- Counters stay far below 2^53 (Lua numbers) and 2^63 (HINCRBY).
local function is_int(v) return #v <= 15 and string.match(v, '^-?%d+$') ~= nil end

-- A string key that INCR counts.
local function want_int(k)
  local v = checked(k, 'string', 'GET', k)
  if v and not is_int(v) then corrupt(k, 'value ' .. shown(v) .. ' is not an integer') end
end

-- Hash fields that HINCRBY counts (or that are read as numbers): one HMGET
-- however many. Returns their values (false where absent).
local function want_int_fields(k, fields)
  local v = checked(k, 'hash', 'HMGET', k, unpack(fields))
  for i, f in ipairs(fields) do
    if v[i] and not is_int(v[i]) then
      corrupt(k, 'field ' .. shown(f) .. ' = ' .. shown(v[i]) .. ' is not an integer')
    end
  end
  return v
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

-- The batch fields check_finished reads, in the order batch_counts
-- (20-settle.lua) takes them; with status, the status:<name> counter
-- complete increments after them. 'finished' (0 or 1) is the batch's
-- finished flag (20-settle.lua, batch_finished).
local function batch_fields(status)
  local f = {'total', 'done', 'dead', 'duplicate', 'finished_at_ms', 'finished_total', 'finished'}
  if status then f[#f + 1] = 'status:' .. status end
  return f
end

-- What check_finished reads and writes for batch b (and status, when given,
-- the status:<name> counter complete increments).
local function want_batch(P, b, status)
  want_int_fields(P .. 'batch:' .. b, batch_fields(status))
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
-- Returns them, for promote.
local function want_promote(P, now)
  want_lists(P)
  local due = checked(P .. 'delayed', 'zset', 'ZRANGEBYSCORE', P .. 'delayed', '-inf', now, 'LIMIT', 0, 256)
  for _, m in ipairs(due) do
    local bar = string.find(m, '|', 1, true)
    if not bar or bar + 1 > #m then
      corrupt(P .. 'delayed', 'member ' .. shown(m) .. ' is not <token>|<priority letter><payload> (ZREM it)')
    end
  end
  return due
end
