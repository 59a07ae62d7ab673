#!/usr/bin/env bash
# Capacity: the highest uniform replay rate one host sustains through the embedded engine and the
# mock upstream (the `rehearse run` harness, via examples/capacity_probe.rs) with schedule lag
# p99 <= 2 ms, no overflow and every request ok; side by side with `oha -q` at the same rate
# against a `rehearse upstream` on the same route. Not run in CI.
#
# For each RATE: a scenario of SECONDS of uniform traffic (one healthy dep, no faults) runs
# through the harness at speed 1; then oha sends RATE x SECONDS requests at RATE req/s to the standalone
# upstream. oha reports no send lag, so its row says whether it reached the rate (>= 99 % of it,
# all 2xx) and its latency (with --latency-correction: measured from the intended send time, as
# ours is).
#
#   scripts/bench-capacity.sh [SECONDS] [RATES]   defaults: 10 "200 500 1000 2000 3000"
# Environment: KIND=tool (POST /tools/calculator, default) or chat (non-streaming 16-token chat
# completion); OHA=/path/to/oha (default: `oha` on PATH; required); SKIP_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
RATES=${2:-"200 500 1000 2000 3000"}
KIND=${KIND:-tool}
OHA=${OHA:-$(command -v oha || true)}
[ -n "$OHA" ] && [ -x "$OHA" ] || { echo "oha not found: set OHA=/path/to/oha (cargo install oha --locked)" >&2; exit 2; }
TARGET=${CARGO_TARGET_DIR:-target}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bin rehearse --example capacity_probe
REHEARSE=$TARGET/release/rehearse
PROBE=$TARGET/release/examples/capacity_probe
LIMIT=$((SECS * 3 + 30)) # hard bound on each run, in seconds
case "$KIND" in
  tool) ROUTE=/tools/calculator; BODY='{"q":"acme"}' ;;
  chat) ROUTE=/v1/chat/completions
        BODY='{"model":"openai-codex/gpt-5.2","stream":false,"max_tokens":16,"messages":[{"role":"user","content":"hi"}]}' ;;
  *) echo "KIND must be tool or chat" >&2; exit 2 ;;
esac

TMP=$(mktemp -d)
UP=""
cleanup() { [ -z "$UP" ] || kill "$UP" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

"$REHEARSE" upstream --listen 127.0.0.1:0 >"$TMP/up.out" 2>"$TMP/up.err" &
UP=$!
for _ in $(seq 100); do [ -s "$TMP/up.out" ] && break; sleep 0.05; done
URL=$(head -n1 "$TMP/up.out"); URL=${URL#listening on }
[ -n "$URL" ] || { echo "the upstream did not start" >&2; cat "$TMP/up.err" >&2; exit 3; }

echo "host: $(nproc) CPUs, $(uname -sr); kind $KIND; $SECS s per run; start load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| rate | ours: ok / sent | overflow | lag p50 / p99 / max ms | latency p99 ms | ours sustains | oha: ok / sent | oha req/s | oha latency p99 ms | oha sustains | load (1 min) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for rate in $RATES; do
  d=$TMP/r$rate
  mkdir -p "$d"
  python3 - "$rate" "$SECS" "$KIND" "$d" <<'PY'
import sys
rate, secs, kind, d = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
with open(f"{d}/traffic.jsonl", "w") as f:
    for i in range(int(rate * secs)):
        at = round(i * 1000 / rate)
        if kind == "tool":
            f.write('{"at_ms":%d,"kind":"tool","tool":"calculator","body":{"q":"acme"},"idempotent":true}\n' % at)
        else:
            f.write('{"at_ms":%d,"kind":"llm","model":"openai-codex/gpt-5.2","stream":false,"max_tokens":16}\n' % at)
with open(f"{d}/capacity.toml", "w") as f:
    f.write(f'''name = "capacity-{int(rate)}"
description = "uniform {int(rate)} req/s of {kind} calls for {int(secs)} s, no faults"
duration = "{int(secs) + 2}s"
traffic = "traffic.jsonl"
scrape_interval = "250ms"
seed = 1
policies = ["retry-gate"]
workers = 4
''')
PY
  # Its last stdout line is the summary (plain progress lines come before it).
  ours=$(timeout "$LIMIT" "$PROBE" --scenario "$d/capacity.toml" --dir "$d/run" 2>"$d/probe.err" \
    | tee "$d/probe.out" | grep '^{"' | tail -n1 || true)
  [ -n "$ours" ] || { echo "capacity_probe failed at $rate:" >&2; tail -5 "$d/probe.err" >&2; ours='{}'; }
  sleep 1
  timeout "$LIMIT" "$OHA" --no-tui --output-format json --latency-correction -q "$rate" -n "$((rate * SECS))" \
    -m POST -d "$BODY" -H 'content-type: application/json' -H 'authorization: Bearer bench-token' \
    "$URL$ROUTE" >"$d/oha.json" 2>"$d/oha.err" || true
  load=$(cut -d' ' -f1 /proc/loadavg)
  python3 - "$rate" "$SECS" "$ours" "$d/oha.json" "$load" <<'PY'
import json, sys
rate, secs, load = float(sys.argv[1]), float(sys.argv[2]), sys.argv[5]
o = json.loads(sys.argv[3])
try:
    h = json.load(open(sys.argv[4]))
except (OSError, ValueError):
    h = {}
total = int(rate * secs)
if o:
    errors = sum(o.get("errors", {}).values())
    ours_ok = (o["lag_p99_ms"] <= 2.0 and o["overflow"] == 0 and o["ok"] == total and errors == 0
               and not o.get("failed"))
    ours = (f'{o["ok"]} / {o["sent"]} | {o["overflow"]} | {o["lag_p50_ms"]:.3f} / {o["lag_p99_ms"]:.3f} / '
            f'{o["lag_max_ms"]:.3f} | {o["latency_p99_ms"]:.3f} | {"yes" if ours_ok else "**no**"}')
else:
    ours = "— | — | — | — | **failed**"
if h:
    codes = h.get("statusCodeDistribution", {})
    ok = sum(v for k, v in codes.items() if k.startswith("2"))
    sent = sum(codes.values()) + sum(h.get("errorDistribution", {}).values())
    rps = h["summary"]["requestsPerSec"]
    p99 = (h.get("latencyPercentiles", {}).get("p99") or 0) * 1000
    oha_ok = ok == sent and rps >= 0.99 * rate
    theirs = f'{ok} / {sent} | {rps:.0f} | {p99:.3f} | {"yes" if oha_ok else "**no**"}'
else:
    theirs = "— | — | — | **failed**"
print(f"| {int(rate)} | {ours} | {theirs} | {load} |")
PY
done
echo
echo "end load $(cut -d' ' -f1-3 /proc/loadavg); oha $("$OHA" --version 2>/dev/null | head -n1)"
