-- change: KEYS[1] = breaker hash; ARGV = host, from_epoch, 'trip'|'reopen', base_ms, cap_ms.
-- Opens the record if it is still at from_epoch (an absent record is epoch 0); otherwise
-- someone moved first and the record is returned as it is, for the host to adopt.
local k = KEYS[1]
local now = now_ms()
local epoch = tonumber(redis.call('HGET', k, 'epoch') or '0')
if epoch ~= tonumber(ARGV[2]) then
  return reply(k, now)
end
local reopens = 0
if ARGV[3] == 'reopen' then
  reopens = tonumber(redis.call('HGET', k, 'reopens') or '0') + 1
end
local open_for = math.min(tonumber(ARGV[4]) * 2 ^ math.min(reopens, 31), tonumber(ARGV[5]))
redis.call('HSET', k, 'epoch', fmt(epoch + 1), 'state', 'open', 'until', fmt(now + open_for),
  'open_for', fmt(open_for), 'reopens', fmt(reopens), 'streak', '0', 'ok', '', 'by', ARGV[1])
return reply(k, now)
