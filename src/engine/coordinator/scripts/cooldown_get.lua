-- cooldown_get: KEYS[1] = the profile's usageStats hash. {ms_left, field, value, ...}, or nil.
local k = KEYS[1]
local now = now_ms()
local all = redis.call('HGETALL', k)
if #all == 0 then
  return false
end
local untl = tonumber(redis.call('HGET', k, 'cooldownUntil') or '0')
if untl <= now then
  return false
end
table.insert(all, 1, fmt(untl - now))
return all
