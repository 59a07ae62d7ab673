#!/usr/bin/env bash
# Memory and schedule lag of every fleet host over a long ×1 fleet rehearsal (not run in CI).
#
# Builds release, makes a temp copy of fixtures/scenarios/fleet-probe-storm.toml with
# `duration = MINUTES` min, one coordination (COORD, default `redis`) and its 40 s of traffic
# (fixtures/traffic/fleet-crm.jsonl) repeated with shifted `at_ms` (the reset storm only in the
# first copy), runs it at speed 1, and every INTERVAL seconds samples VmRSS of the harness and of
# each `__fleet-host` process (by pid, named by its spec file) into a CSV. Prints per process: RSS
# at 1, 5 and 10 min, the least-squares slope after the first minute in KB/min, max RSS; then
# every host's replay lag p99 from report.json, the verdict and the load average.
# Linux only (/proc).
#
#   scripts/bench-fleet-memory.sh [MINUTES]        (default 10)
#   COORD=none scripts/bench-fleet-memory.sh       (the uncoordinated fleet instead)
#   INTERVAL=5 OUT=/tmp/fleet-mem.csv KEEP=1 scripts/bench-fleet-memory.sh
set -euo pipefail
MINUTES=${1:-10}
INTERVAL=${INTERVAL:-10}
COORD=${COORD:-redis}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ ! -d /proc/self/fd ]; then
  echo "bench-fleet-memory.sh needs Linux /proc" >&2
  exit 2
fi
cargo build --release --bin rehearse >&2
BIN=$CARGO_TARGET_DIR/release/rehearse
TMP=$(mktemp -d)
if [ "${KEEP:-0}" = 1 ]; then
  echo "temp dir kept: $TMP" >&2
else
  trap 'rm -rf "$TMP"' EXIT
fi
OUT=${OUT:-$TMP/memory.csv}

python3 - "$ROOT" "$TMP" "$MINUTES" "$COORD" <<'PY'
import json, re, sys
root, tmp, minutes, coord = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
period_ms = 40_000
src = [json.loads(l) for l in open(f"{root}/fixtures/traffic/fleet-crm.jsonl") if l.strip()]
with open(f"{tmp}/traffic.jsonl", "w") as out:
    for rep in range(-(-minutes * 60_000 // period_ms)):
        for r in src:
            r = dict(r)
            r["at_ms"] += rep * period_ms
            if r["at_ms"] >= minutes * 60_000:
                break
            out.write(json.dumps(r, separators=(",", ":")) + "\n")
text = open(f"{root}/fixtures/scenarios/fleet-probe-storm.toml").read()
subs = [
    (r'(?m)^duration = ".*"$', f'duration = "{minutes * 60}s"'),
    (r'(?m)^traffic = ".*"$', f'traffic = "{tmp}/traffic.jsonl"'),
    (r'(?m)^name = ".*"$', f'name = "fleet-{minutes}min-{coord}"'),
    (r'(?m)^coordination = .*$', f'coordination = ["{coord}"]'),
]
for pat, rep in subs:
    text, n = re.subn(pat, rep, text, count=1)
    assert n == 1, f"fleet-probe-storm.toml no longer matches {pat}"
# Expectations about the other coordination would name a policy this run lacks.
blocks = re.split(r"(?m)^(?=\[)", text)
keep = [b for b in blocks if not (b.startswith("[[expect") and re.search(r'(?m)^policy = "', b)
                                  and not re.search(rf'(?m)^policy = "{coord}"', b))]
open(f"{tmp}/scenario.toml", "w").write("".join(keep))
PY
echo "scenario $TMP/scenario.toml: $(wc -l <"$TMP/traffic.jsonl") requests over $MINUTES min, coordination $COORD" >&2

load() { cut -d' ' -f1 /proc/loadavg; }
LOAD0=$(load)
"$BIN" run --scenario "$TMP/scenario.toml" --speed 1 --report-dir "$TMP/reports" --no-progress \
  >"$TMP/run.out" 2>"$TMP/run.err" &
PID=$!
START=$(date +%s.%N)
echo "t_s,process,rss_kb" >"$OUT"
sample() { # $1 = pid, $2 = name
  local rss
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || true)
  [ -n "$rss" ] && echo "$T,$2,$rss" >>"$OUT"
  return 0
}
while kill -0 "$PID" 2>/dev/null; do
  T=$(awk -v a="$(date +%s.%N)" -v b="$START" 'BEGIN {printf "%.1f", a - b}')
  sample "$PID" harness
  for H in $(pgrep -f -- "__fleet-host" || true); do
    SPEC=$(tr '\0' '\n' <"/proc/$H/cmdline" 2>/dev/null | grep -A1 -- '^--spec$' | tail -1 || true)
    sample "$H" "$(basename "$(dirname "$SPEC")")/$(basename "$SPEC" .json)"
  done
  sleep "$INTERVAL"
done
set +e
wait "$PID"
RC=$?
set -e
echo "csv: $OUT"
echo "run exit code: $RC ($(tail -1 "$TMP/run.out" 2>/dev/null))"
[ "$RC" -le 1 ] || tail -5 "$TMP/run.err" >&2
echo "load average (1 min): $LOAD0 at start, $(load) at end"
python3 - "$OUT" "$TMP/reports" <<'PY'
import csv, glob, json, sys
from collections import defaultdict
series = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    series[r["process"]].append((float(r["t_s"]), int(r["rss_kb"])))
def at(rows, minute):
    t = minute * 60
    best = min(rows, key=lambda r: abs(r[0] - t))
    return f"{best[1] / 1024:6.1f}" if abs(best[0] - t) <= 15 else "     -"
def slope(rows):
    late = [r for r in rows if r[0] >= 60]
    if len(late) < 2:
        return float("nan")
    n = len(late); mt = sum(r[0] for r in late) / n; mr = sum(r[1] for r in late) / n
    den = sum((r[0] - mt) ** 2 for r in late)
    return sum((r[0] - mt) * (r[1] - mr) for r in late) / den * 60 if den else 0.0
print("process                          rss@1m  rss@5m rss@10m  slope>1m KB/min  max MB  samples")
for name in sorted(series):
    rows = series[name]
    print(f"{name:<32} {at(rows, 1)}  {at(rows, 5)}  {at(rows, 10)}  {slope(rows):15.1f}  {max(r[1] for r in rows) / 1024:6.1f}  {len(rows):7}")
for path in glob.glob(f"{sys.argv[2]}/**/report.json", recursive=True):
    rep = json.load(open(path))
    print(f"verdict: {rep.get('verdict')}  ({path})")
    def walk(o):
        if isinstance(o, dict):
            if "lag_p99_ms" in o and "id" in o:
                yield o
            for v in o.values():
                yield from walk(v)
        elif isinstance(o, list):
            for v in o:
                yield from walk(v)
    hosts = list(walk(rep))
    for h in hosts:
        print(f"  host {h['id']}: lag p99 {h['lag_p99_ms']} ms, sent {h['sent']}, failed {h['failed']}")
    if hosts:
        print(f"  max host lag p99: {max(h['lag_p99_ms'] for h in hosts)} ms over {len(hosts)} hosts")
PY
