#!/usr/bin/env bash
# Soak: run a scenario (default `weekly`, speed 1: what the LaunchAgent runs) back to back for
# DURATION seconds (default 3600), sampling the running `rehearse` process every INTERVAL seconds
# (default 10): RSS (VmRSS), open file descriptors, threads, the report directory's size, and the
# machine's 1-minute load average.
# Writes OUT/soak.csv and OUT/soak.svg (one panel per figure, run boundaries marked) and prints a
# summary (first/last/max per figure, RSS slope after the first minute of each run). Goal: flat.
#
#   scripts/soak.sh [DURATION] [OUT]          e.g. scripts/soak.sh 120 /tmp/soak  (a smoke)
# Environment: SCENARIO (weekly), SPEED (1), INTERVAL (10), BIN (built with --release if unset).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-3600}"
out="${2:-target/soak}"
scenario="${SCENARIO:-weekly}"
speed="${SPEED:-1}"
interval="${INTERVAL:-10}"
mkdir -p "$out/reports"
out="$(cd "$out" && pwd)"
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
  BIN="$PWD/target/release/rehearse"
fi
[ -r /proc/self/status ] || { echo "soak.sh samples /proc: Linux only" >&2; exit 2; }

csv="$out/soak.csv"
echo "t_s,run,pid,rss_kb,fds,threads,report_kb,load1" >"$csv"
start=$(date +%s)
run=0
status=0
while [ $(($(date +%s) - start)) -lt "$duration" ]; do
  run=$((run + 1))
  "$BIN" run --no-progress --scenario "$scenario" --speed "$speed" --report-dir "$out/reports" \
    >"$out/run-$run.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    now=$(($(date +%s) - start))
    if [ -r "/proc/$pid/status" ]; then
      rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
      threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
      fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
      report=$(du -sk "$out/reports" 2>/dev/null | cut -f1)
      load=$(cut -d' ' -f1 /proc/loadavg) # the machine's 1-minute load: what else was running
      [ -n "$rss" ] && echo "$now,$run,$pid,$rss,$fds,$threads,$report,$load" >>"$csv"
    fi
    if [ "$now" -ge "$duration" ]; then
      kill -TERM "$pid" 2>/dev/null || true # the last run is cut at DURATION (reported incomplete)
    fi
    sleep "$interval" & wait $! || true
  done
  wait "$pid" || status=$?
  echo "run $run exited $status ($(tail -n1 "$out/run-$run.log"))"
  status=0
done

python3 - "$csv" "$out/soak.svg" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
if not rows:
    sys.exit("no samples")
figs = [("rss_kb", "RSS (KB)"), ("fds", "open fds"), ("threads", "threads"), ("report_kb", "report dir (KB)")]
if "load1" in rows[0]:
    figs.append(("load1", "machine load (1 min)"))
t = [float(r["t_s"]) for r in rows]
W, H, PAD = 760, 150, 50
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H * len(figs) + 30}" font-family="sans-serif" font-size="11">']
tmax = max(t) or 1
starts = {}
for r in rows:
    starts.setdefault(r["run"], float(r["t_s"]))
for i, (key, label) in enumerate(figs):
    y0 = 20 + i * H
    v = [float(r[key]) for r in rows]
    vmax = max(v) or 1
    x = lambda s: PAD + (W - 2 * PAD) * s / tmax
    y = lambda val: y0 + H - 30 - (H - 50) * val / vmax
    svg.append(f'<text x="{PAD}" y="{y0 + 8}">{label}: first {v[0]:.0f}, last {v[-1]:.0f}, max {vmax:.0f}</text>')
    svg.append(f'<line x1="{PAD}" y1="{y(0)}" x2="{W - PAD}" y2="{y(0)}" stroke="#999"/>')
    for s in starts.values():
        svg.append(f'<line x1="{x(s):.1f}" y1="{y0 + 12}" x2="{x(s):.1f}" y2="{y(0)}" stroke="#ddd"/>')
    pts = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in zip(t, v))
    svg.append(f'<polyline fill="none" stroke="#2a6" stroke-width="1.5" points="{pts}"/>')
    svg.append(f'<text x="{W - PAD}" y="{y(0) + 14}" text-anchor="end">{tmax:.0f} s</text>')
svg.append("</svg>")
open(sys.argv[2], "w").write("\n".join(svg) + "\n")
print(f"samples: {len(rows)} over {tmax:.0f} s, runs: {len(starts)}")
for key, label in figs:
    v = [float(r[key]) for r in rows]
    print(f"{label:20} first {v[0]:10.1f}  last {v[-1]:10.1f}  max {max(v):10.1f}")
# RSS slope within each run, after its first minute (KB per minute), by least squares.
for run, s0 in starts.items():
    pts = [(float(r["t_s"]), float(r["rss_kb"])) for r in rows if r["run"] == run and float(r["t_s"]) - s0 >= 60]
    if len(pts) >= 3:
        n = len(pts); mx = sum(p[0] for p in pts) / n; my = sum(p[1] for p in pts) / n
        den = sum((p[0] - mx) ** 2 for p in pts) or 1
        slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / den * 60
        print(f"run {run}: RSS slope after the first minute {slope:+.1f} KB/min ({n} samples)")
# Per-run peaks: flat from run to run is the goal (a run's own climb ends with the run).
for run in starts:
    rr = [r for r in rows if r["run"] == run]
    print(f"run {run}: peak RSS {max(int(r['rss_kb']) for r in rr)} KB, max fds {max(int(r['fds']) for r in rr)}, "
          f"max threads {max(int(r['threads']) for r in rr)}")
print(f"csv: {sys.argv[1]}\nplot: {sys.argv[2]}")
PY
