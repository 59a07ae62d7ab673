-- seed: KEYS[1] = breaker hash; ARGV = host, 'open'|'closed', remaining_ms, open_for_ms, reopens.
-- A Redis that lost its data meets hosts that kept theirs: the first host's state becomes the
-- record (epoch 1); every later seed gets that record back.
local k = KEYS[1]
local now = now_ms()
if redis.call('EXISTS', k) == 0 then
  if ARGV[2] == 'open' then
    redis.call('HSET', k, 'epoch', '1', 'state', 'open', 'until', fmt(now + tonumber(ARGV[3])),
      'open_for', ARGV[4], 'reopens', ARGV[5], 'streak', '0', 'ok', '', 'by', ARGV[1])
  else
    set_closed(k, 1, ARGV[1])
  end
end
return reply(k, now)
