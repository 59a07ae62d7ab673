#!/usr/bin/env bash
# Send-time precision of `rehearse replay` vs `oha -q` (not run in CI).
#
# One loopback receiver (examples/replay_receiver.rs) timestamps every arrival. In the same run,
# `rehearse replay` sends a uniform 10 RPS and a uniform 1000 RPS traffic file, and `oha -q`
# sends at the same rates, each to its own route so the arrivals can be told apart. For each
# sender, arrival i's offset from its schedule is o_i = t_i − i/rate; the deviation is
# |o_i − median(o)| (aligned on the median rather than the first arrival, so one slow first
# connection does not shift every other request); the script prints p50/p99/max, plus the
# 1-minute load average, since on a shared machine that dominates the figures.
#
#   scripts/bench-replay.sh [SECONDS]     (default 10 s per run; needs python3, oha optional)
#   PROFILE=debug scripts/bench-replay.sh  (use dev-profile binaries; default release)
#   OHA=/path/to/oha scripts/bench-replay.sh  (oha binary to use; default: `oha` on PATH)
set -euo pipefail
SECS=${1:-10}
LIMIT=$((SECS * 3 + 30)) # hard bound on each sender's run, in seconds
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
PROFILE=${PROFILE:-release}
OHA=${OHA:-$(command -v oha || true)}
if [ -n "$OHA" ] && [ ! -x "$OHA" ]; then
  echo "OHA=$OHA is not an executable file" >&2
  exit 2
fi
if [ "$PROFILE" = release ]; then
  cargo build --release --bin rehearse --example replay_receiver >&2
else
  cargo build --bin rehearse --example replay_receiver >&2
fi
BIN=$CARGO_TARGET_DIR/$([ "$PROFILE" = release ] && echo release || echo debug)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

uniform() { # RATE ROUTE_TOOL > file
  python3 - "$1" "$SECS" "$2" <<'PY'
import sys
rate, secs, tool = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
for i in range(int(rate * secs)):
    print('{"at_ms":%d,"kind":"tool","tool":"%s","body":{},"idempotent":true}' % (round(i * 1000 / rate), tool))
PY
}
uniform 10 ours10 >"$TMP/u10.jsonl"
uniform 1000 ours1000 >"$TMP/u1000.jsonl"

"$BIN/examples/replay_receiver" --listen 127.0.0.1:0 --threads 1 --out "$TMP/arrivals.txt" >"$TMP/recv.out" &
RECV=$!
for _ in $(seq 100); do [ -s "$TMP/recv.out" ] && break; sleep 0.1; done
URL=$(head -1 "$TMP/recv.out"); URL=${URL#listening on }
echo "receiver $URL; $SECS s per run" >&2

for rate in 10 1000; do
  echo "== rehearse replay at $rate RPS" >&2
  timeout "$LIMIT" "$BIN/rehearse" replay --traffic "$TMP/u$rate.jsonl" --target "$URL" >&2
  sleep 1
  if [ -n "$OHA" ]; then
    echo "== oha -q $rate ($OHA)" >&2
    timeout "$LIMIT" "$OHA" --no-tui -q "$rate" -n "$((rate * SECS))" -m POST -d '{}' \
      -H 'content-type: application/json' "$URL/tools/oha$rate" >/dev/null
  else
    echo "== oha not found (set OHA=/path/to/oha or put it on PATH; cargo install oha --locked): skipped" >&2
  fi
  sleep 1
done
kill -TERM "$RECV"; wait "$RECV"
echo "load average (1 min) at the end: $(cut -d' ' -f1 /proc/loadavg); CPUs: $(nproc)"

python3 - "$TMP/arrivals.txt" <<'PY'
import sys, collections
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    ns, _method, path = line.split()
    by[path].append(int(ns))
def pct(v, q):
    v = sorted(v); return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]
print("| sender | rate | requests | deviation p50 ms | p99 ms | max ms |")
print("|---|---|---|---|---|---|")
for sender in ("ours", "oha"):
    for rate in (10, 1000):
        t = sorted(by.get(f"/tools/{sender}{rate}", []))
        if not t:
            continue
        off = [x - i * 1e9 / rate for i, x in enumerate(t)]
        mid = sorted(off)[len(off) // 2]
        dev = [abs(o - mid) / 1e6 for o in off]
        name = "rehearse replay" if sender == "ours" else "oha -q"
        print(f"| {name} | {rate} | {len(t)} | {pct(dev, .5):.3f} | {pct(dev, .99):.3f} | {max(dev):.3f} |")
PY
