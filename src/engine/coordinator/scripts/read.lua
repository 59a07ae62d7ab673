-- read: KEYS[1] = breaker hash. The record, or nil.
return reply(KEYS[1], now_ms())
