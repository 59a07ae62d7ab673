-- probe_ok: KEYS[1] = breaker hash; ARGV = host, epoch, successes, distinct.
-- Counts a probe success of `host` in `epoch` while half-open (open and past its open-until);
-- closes (a new epoch) once `successes` in a row came from at least `distinct` hosts.
local k = KEYS[1]
local now = now_ms()
local v = redis.call('HMGET', k, 'epoch', 'state', 'until', 'streak', 'ok')
if not v[1] or tonumber(v[1]) ~= tonumber(ARGV[2]) or v[2] ~= 'open' or now < tonumber(v[3]) then
  return reply(k, now)
end
local streak = tonumber(v[4] or '0') + 1
local ok = v[5] or ''
local n, seen = 0, false
for id in string.gmatch(ok, '[^,]+') do
  n = n + 1
  if id == ARGV[1] then seen = true end
end
if not seen then
  n = n + 1
  if ok == '' then ok = ARGV[1] else ok = ok .. ',' .. ARGV[1] end
end
if streak >= tonumber(ARGV[3]) and n >= tonumber(ARGV[4]) then
  set_closed(k, tonumber(v[1]) + 1, ARGV[1])
else
  redis.call('HSET', k, 'streak', fmt(streak), 'ok', ok)
end
return reply(k, now)
