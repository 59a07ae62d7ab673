#!/usr/bin/env bash
# Healthy-route throughput of `rehearse upstream` against a bare hyper hello server
# (examples/hello_server.rs), both release builds on loopback, measured with wrk.
# Usage: scripts/bench-upstream.sh [DURATION] [CONNECTIONS]   (defaults: 5s 16)
# SKIP_BUILD=1 uses the existing release binaries. Prints a Markdown table and the ratio (goal >= 0.8). Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${1:-5s}"
CONNS="${2:-16}"
WRK="${WRK:-wrk}"
TARGET="${CARGO_TARGET_DIR:-target}"
command -v "$WRK" >/dev/null || { echo "wrk not found (set WRK=...)" >&2; exit 2; }

[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bin rehearse --example hello_server
REHEARSE="$TARGET/release/rehearse"
HELLO="$TARGET/release/examples/hello_server"

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

# start NAME CMD...: runs a server, waits for its `listening on http://ADDR` line, sets $ADDR.
start() {
    local name="$1"; shift
    "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    PIDS+=("$!")
    for _ in $(seq 1 100); do
        if [ -s "$WORK/$name.out" ]; then
            ADDR="$(head -n1 "$WORK/$name.out" | sed 's#^listening on http://##')"
            return 0
        fi
        sleep 0.05
    done
    echo "$name did not start" >&2; cat "$WORK/$name.err" >&2; exit 3
}

cat >"$WORK/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body   = '{"q":"acme"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer bench-token"
LUA
cat >"$WORK/chat.lua" <<'LUA'
wrk.method = "POST"
wrk.body   = '{"model":"openai/gpt","stream":false,"max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer bench-token"
LUA

# rps URL SCRIPT: requests/s reported by wrk.
rps() {
    "$WRK" -t1 -c"$CONNS" -d"$DURATION" -s "$2" "$1" | tee -a "$WORK/wrk.log" \
        | awk '/^Requests\/sec:/ {print $2}'
}

start hello "$HELLO" 127.0.0.1:0
HELLO_ADDR="$ADDR"
start upstream "$REHEARSE" upstream --listen 127.0.0.1:0
UP_ADDR="$ADDR"

# Warm both up, then measure alternately (hello, upstream, hello, upstream) and keep the best of
# two for each, so a noisy neighbour on a shared box hurts neither side more than the other.
"$WRK" -t1 -c"$CONNS" -d1s -s "$WORK/post.lua" "http://$HELLO_ADDR/" >/dev/null
"$WRK" -t1 -c"$CONNS" -d1s -s "$WORK/post.lua" "http://$UP_ADDR/tools/calculator" >/dev/null
best() { printf '%s\n%s\n' "$1" "$2" | sort -g | tail -n1; }
h1="$(rps "http://$HELLO_ADDR/" "$WORK/post.lua")"
t1="$(rps "http://$UP_ADDR/tools/calculator" "$WORK/post.lua")"
c1="$(rps "http://$UP_ADDR/v1/chat/completions" "$WORK/chat.lua")"
h2="$(rps "http://$HELLO_ADDR/" "$WORK/post.lua")"
t2="$(rps "http://$UP_ADDR/tools/calculator" "$WORK/post.lua")"
c2="$(rps "http://$UP_ADDR/v1/chat/completions" "$WORK/chat.lua")"
H="$(best "$h1" "$h2")"; T="$(best "$t1" "$t2")"; C="$(best "$c1" "$c2")"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "| server / route | requests/s (best of 2) | ratio to hello |"
echo "|---|---|---|"
echo "| hello_server (bare hyper) | $H | 1.00 |"
echo "| rehearse upstream POST /tools/calculator | $T | $(ratio "$T" "$H") |"
echo "| rehearse upstream POST /v1/chat/completions (16 tokens, JSON) | $C | $(ratio "$C" "$H") |"
echo
echo "runs: hello $h1 $h2 · tools $t1 $t2 · chat $c1 $c2 (wrk -t1 -c$CONNS -d$DURATION, $(nproc) CPUs)"
