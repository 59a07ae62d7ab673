#!/usr/bin/env bash
# Runs every case of the catalogue (fixtures/catalogue/, built into the binary) against one
# system under test, one case after another, and prints a Markdown table: case × verdict × one
# line of reason (from each run's report.json: the first failed row's detail, or the run's own
# reason). Not part of .ci/run: a real gateway's start-up costs minutes under load.
#
#   scripts/catalogue.sh TARGET_FILE [OUT_DIR]
#     TARGET_FILE  a target file (fixtures/targets/openclaw.toml, http.toml, embedded.toml)
#     OUT_DIR      where the run directories go (default: reports/catalogue-UTC_STAMP)
#
# Environment: REHEARSE (default: target/release/rehearse, else target/debug/rehearse, else
# `rehearse` on PATH); SPEED (default 1; the embedded engine takes more, a gateway only 1);
# CASES (default: every case, space-separated names).
# Exit: 0 when every case ran (whatever its verdict), 2 on bad usage, 3 when a run could not
# write a report.
set -euo pipefail

usage() { echo "usage: $0 TARGET_FILE [OUT_DIR]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
target=$1
[ -f "$target" ] || { echo "$0: $target: no such file" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-reports/catalogue-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

bin=${REHEARSE:-}
if [ -z "$bin" ]; then
  for b in "$root/target/release/rehearse" "$root/target/debug/rehearse"; do
    [ -x "$b" ] && { bin=$b; break; }
  done
fi
bin=${bin:-rehearse}
speed=${SPEED:-1}
cases=${CASES:-$(ls "$root"/fixtures/catalogue/*.toml | xargs -n1 basename | sed 's/\.toml$//')}

command -v python3 >/dev/null || { echo "$0: python3 is needed to read report.json" >&2; exit 2; }

rows=()
status=0
for c in $cases; do
  dir="$out/$c"
  echo "[$c] running against $target" >&2
  set +e
  "$bin" run --scenario "builtin:$c" --target "$target" --speed "$speed" \
    --report-dir "$dir" --no-progress >"$out/$c.log" 2>&1
  code=$?
  set -e
  json=$(ls -d "$dir"/*/report.json 2>/dev/null | tail -n 1 || true)
  if [ -z "$json" ]; then
    reason=$(grep -m1 -E '^error' "$out/$c.log" | tr '|' '/' | cut -c1-200 || true)
    rows+=("| $c | no report (exit $code) | ${reason:-see $out/$c.log} |")
    status=3
    continue
  fi
  rows+=("$(python3 - "$json" "$c" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
verdict = r.get("verdict", "?")
reason = r.get("reason") or ""
if not reason:
    failed = [e for p in r.get("policies", []) for e in p.get("expectations", [])
              if e.get("status") not in ("pass", "no_baseline")]
    if failed:
        reason = failed[0].get("detail", "")
        if len(failed) > 1:
            reason += " (+%d more)" % (len(failed) - 1)
    else:
        n = sum(len(p.get("expectations", [])) for p in r.get("policies", []))
        reason = "%d of %d rows pass" % (n, n)
reason = " ".join(reason.split()).replace("|", "/")
if len(reason) > 300:
    reason = reason[:297] + "..."
print("| %s | %s | %s |" % (sys.argv[2], verdict, reason))
EOF
)")
done

echo "| case | verdict | reason |"
echo "|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "target: $target · runs: $out"
exit $status
