-- Shared by every breaker script (prepended by redis.rs). Times are Redis `TIME` in unix ms;
-- replies give durations left, never absolute times, so hosts never compare their own clocks.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function fmt(n)
  return string.format('%.0f', n)
end

-- The record of breaker hash `k` as {epoch, state, remaining_ms, open_for_ms, reopens, streak,
-- ok_hosts, by}, or false (nil reply) when there is none.
local function reply(k, now)
  local v = redis.call('HMGET', k, 'epoch', 'state', 'until', 'open_for', 'reopens', 'streak', 'ok', 'by')
  if not v[1] then
    return false
  end
  local remaining = 0
  if v[2] == 'open' then
    remaining = math.max(0, tonumber(v[3]) - now)
  end
  return {v[1], v[2], fmt(remaining), v[4] or '0', v[5] or '0', v[6] or '0', v[7] or '', v[8] or ''}
end

local function set_closed(k, epoch, by)
  redis.call('HSET', k, 'epoch', fmt(epoch), 'state', 'closed', 'until', '0', 'open_for', '0',
    'reopens', '0', 'streak', '0', 'ok', '', 'by', by)
end
