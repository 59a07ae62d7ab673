-- cooldown_put: KEYS[1] = the profile's usageStats hash; ARGV = cool_for_ms, cooldownReason
-- ('' for none), errorCount, failureCounts (JSON). cooldownUntil and lastFailureAt are Redis
-- time; a longer running window is kept; the key expires at cooldownUntil. Returns ms left.
local k = KEYS[1]
local now = now_ms()
local want = now + tonumber(ARGV[1])
local cur = tonumber(redis.call('HGET', k, 'cooldownUntil') or '0')
local untl = math.max(cur, want)
redis.call('HSET', k, 'cooldownUntil', fmt(untl), 'lastFailureAt', fmt(now),
  'errorCount', ARGV[3], 'failureCounts', ARGV[4])
if ARGV[2] ~= '' then
  redis.call('HSET', k, 'cooldownReason', ARGV[2])
end
redis.call('PEXPIREAT', k, fmt(untl))
return fmt(untl - now)
