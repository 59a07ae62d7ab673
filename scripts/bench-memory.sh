#!/usr/bin/env bash
# Memory and open fds of a long ×1 rehearsal (not run in CI).
#
# Builds release, makes a temp copy of fixtures/scenarios/weekly.toml with `duration = MINUTES`
# and the weekday traffic (fixtures/traffic/weekday-10rps.jsonl, 5 min at ~10 RPS) repeated with
# shifted `at_ms` (and a per-copy suffix on every idempotency key, so copies are distinct calls)
# into a temp traffic file, runs `rehearse run --scenario THAT` at speed 1, and every INTERVAL
# seconds samples VmRSS from /proc/PID/status and the count of /proc/PID/fd into a CSV. Prints a
# summary: RSS and fds at 1, 5, 10, 20 and 30 min (those within the run), the least-squares
# slope of RSS after the first minute (and after the fifth, once weekly's faults are over) in
# KB/min, max RSS, max fds, the 1-minute load average at
# start and end, the run's exit code and the size of scrapes.prom.gz. Linux only (/proc).
#
#   scripts/bench-memory.sh [MINUTES]          (default 30)
#   OUT=/tmp/mem.csv scripts/bench-memory.sh   (CSV path; default: a temp file, printed)
#   INTERVAL=10 scripts/bench-memory.sh        (seconds between samples; default 10)
#   KEEP=1 scripts/bench-memory.sh             (keep the temp dir with the run directory)
#   REPEAT_FAULTS=1 scripts/bench-memory.sh    (repeat weekly's faults and expected transitions
#                                               in every 5-minute copy, so the breakers trip and
#                                               recover all run long; default: first copy only)
set -euo pipefail
MINUTES=${1:-30}
INTERVAL=${INTERVAL:-10}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ ! -d /proc/self/fd ]; then
  echo "bench-memory.sh needs Linux /proc" >&2
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

python3 - "$ROOT" "$TMP" "$MINUTES" "${REPEAT_FAULTS:-0}" <<'PY'
import json, re, sys
root, tmp, minutes, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
period_ms = 300_000
src = [json.loads(l) for l in open(f"{root}/fixtures/traffic/weekday-10rps.jsonl") if l.strip()]
with open(f"{tmp}/traffic.jsonl", "w") as out:
    for rep in range(-(-minutes * 60_000 // period_ms)):
        for r in src:
            r = dict(r)
            r["at_ms"] += rep * period_ms
            if r["at_ms"] >= minutes * 60_000:
                break
            if rep and "idempotency_key" in r:
                r["idempotency_key"] += f"-r{rep}"
            out.write(json.dumps(r, separators=(",", ":")) + "\n")
text = open(f"{root}/fixtures/scenarios/weekly.toml").read()
text, n1 = re.subn(r'(?m)^duration = ".*"$', f'duration = "{minutes * 60}s"', text, count=1)
text, n2 = re.subn(r'(?m)^traffic = ".*"$', f'traffic = "{tmp}/traffic.jsonl"', text, count=1)
text, n3 = re.subn(r'(?m)^name = ".*"$', f'name = "weekly-{minutes}min"', text, count=1)
assert n1 == n2 == n3 == 1, "weekly.toml no longer has name/duration/traffic lines"
if repeat:
    # Every [[fault]] and [[expect.transition]] block again per 5-minute copy, its `from`,
    # `until` and `at` shifted by the copy's offset (relative `after` times need no shift).
    blocks = re.split(r"(?m)^(?=\[)", text)
    def shifted(block, s):
        return re.sub(r'(?m)^(from|until|at) = "(\d+)s"$',
                      lambda m: f'{m[1]} = "{int(m[2]) + s}s"', block)
    copies = [b for b in blocks if b.startswith(("[[fault]]", "[[expect.transition]]"))]
    for rep in range(1, -(-minutes * 60_000 // period_ms)):
        text += "\n" + "".join(shifted(b, rep * period_ms // 1000) for b in copies)
open(f"{tmp}/scenario.toml", "w").write(text)
PY
echo "scenario $TMP/scenario.toml: $(wc -l <"$TMP/traffic.jsonl") requests over $MINUTES min" >&2

load() { cut -d' ' -f1 /proc/loadavg; }
LOAD0=$(load)
"$BIN" run --scenario "$TMP/scenario.toml" --speed 1 --report-dir "$TMP/reports" --no-progress \
  >"$TMP/run.out" 2>"$TMP/run.err" &
PID=$!
START=$(date +%s.%N)
echo "t_s,rss_kb,fds" >"$OUT"
while kill -0 "$PID" 2>/dev/null; do
  RSS=$(awk '/^VmRSS:/ {print $2}' "/proc/$PID/status" 2>/dev/null || true)
  FDS=$(find "/proc/$PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l || true)
  NOW=$(date +%s.%N)
  [ -n "$RSS" ] && awk -v a="$NOW" -v b="$START" -v r="$RSS" -v f="$FDS" 'BEGIN {printf "%.1f,%s,%s\n", a - b, r, f}' >>"$OUT"
  sleep "$INTERVAL"
done
set +e
wait "$PID"
RC=$?
set -e
LOAD1=$(load)
PROM=$(find "$TMP/reports" -name "scrapes.prom*" -exec du -k {} + 2>/dev/null | awk '{s += $1} END {print s + 0}')
echo "csv: $OUT"
echo "run exit code: $RC ($(tail -1 "$TMP/run.out" 2>/dev/null))"
[ "$RC" -le 1 ] || tail -5 "$TMP/run.err" >&2
echo "load average (1 min): $LOAD0 at start, $LOAD1 at end"
echo "scrapes.prom.gz: ${PROM} KB"
python3 - "$OUT" <<'PY'
import csv, sys
rows = [(float(r["t_s"]), int(r["rss_kb"]), int(r["fds"])) for r in csv.DictReader(open(sys.argv[1]))]
if not rows:
    sys.exit("no samples")
def at(minute):
    t = minute * 60
    best = min(rows, key=lambda r: abs(r[0] - t))
    return best if abs(best[0] - t) <= 15 else None
print("minute  t_s     rss_MB  fds")
for m in (0, 1, 5, 10, 20, 30):
    r = rows[0] if m == 0 else at(m)
    if r:
        print(f"{m:>6}  {r[0]:>6.0f}  {r[1] / 1024:>6.1f}  {r[2]:>3}")
for after in (1, 5):
    late = [r for r in rows if r[0] >= after * 60]
    if len(late) >= 2:
        n = len(late)
        mt = sum(r[0] for r in late) / n
        mr = sum(r[1] for r in late) / n
        den = sum((r[0] - mt) ** 2 for r in late)
        slope = sum((r[0] - mt) * (r[1] - mr) for r in late) / den * 60 if den else 0.0
        print(f"slope after {after} min: {slope:.1f} KB/min ({n} samples)")
print(f"max rss: {max(r[1] for r in rows) / 1024:.1f} MB; max fds: {max(r[2] for r in rows)}; samples: {len(rows)}")
PY
