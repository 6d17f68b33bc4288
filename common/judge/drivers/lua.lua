-- lua.lua: the record writer for Lua's judge (calls.h), placed before the
-- code. luaunit's assertEquals compares numbers with == (1 == 1.0), strings
-- by bytes and tables deeply, so: integers and integral floats below 2^53
-- in decimal, other floats in their shortest round-trip %g, strings as JSON
-- (bytes as they are), a table 1..n (or empty) as [..], any other as
-- {K:V,..} sorted by K's text, nil as null, functions and the like as
-- !type. Metatables are not consulted.
local __sq_out, __sq_text = io.stdout, nil

local function __sq_number(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  if x ~= x then return "NaN" end
  if x == math.huge then return "Infinity" end
  if x == -math.huge then return "-Infinity" end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format("%d", math.tointeger(x)) end
  for p = 1, 17 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end

local function __sq_string(s)
  return '"' .. string.gsub(s, '[\0-\31"\\]', function(c)
    if c == '"' or c == "\\" then return "\\" .. c end
    return string.format("\\u%04x", string.byte(c))
  end) .. '"'
end

__sq_text = function(v, depth)
  local t = type(v)
  if v == nil then return "null" end
  if t == "boolean" then return tostring(v) end
  if t == "number" then return __sq_number(v) end
  if t == "string" then return __sq_string(v) end
  if t ~= "table" then return "!" .. t end
  if depth > 100 then return "!deep" end
  local n, seq = 0, true
  for k in next, v do
    n = n + 1
    if math.type(k) ~= "integer" or k < 1 then seq = false end
  end
  if seq then
    for k in next, v do
      if k > n then seq = false break end
    end
  end
  local parts = {}
  if seq then
    for k = 1, n do parts[k] = __sq_text(rawget(v, k), depth + 1) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  for k, x in next, v do
    parts[#parts + 1] = { __sq_text(k, depth + 1), __sq_text(x, depth + 1) }
  end
  table.sort(parts, function(a, b) return a[1] < b[1] end)
  for k = 1, #parts do parts[k] = parts[k][1] .. ":" .. parts[k][2] end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- __sq_emit(i, v) writes result i, v's text, as one record, flushed.
local function __sq_emit(i, v)
  __sq_out:write("\30sandq-call " .. string.format("%d", i) .. " " .. __sq_text(v, 0) .. "\n")
  __sq_out:flush()
end
