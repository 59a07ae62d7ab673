#!/usr/bin/env bash
# Runs every case of the catalogue (fixtures/catalogue/, built into the binary) against one
# system under test, one case after another, and prints two Markdown tables
# (scripts/catalogue-table.py): case × verdict with the reason of every row that did not pass
# (or the run's own reason), then every row of every case. Not part of .ci/run: a real
# gateway's start-up costs minutes under load. The same tables for a scorecard's column:
# `scripts/catalogue-table.py OUT/cells/*/TARGET/r1`.
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

dirs=()
status=0
for c in $cases; do
  dir="$out/$c"
  echo "[$c] running against $target" >&2
  set +e
  "$bin" run --scenario "builtin:$c" --target "$target" --speed "$speed" \
    --report-dir "$dir" --no-progress >"$out/$c.log" 2>&1
  code=$?
  set -e
  if ! ls "$dir"/*/report.json >/dev/null 2>&1 && grep -q 'not applicable: ' "$out/$c.log"; then
    echo "[$c] not applicable to this target" >&2
  elif ! ls "$dir"/*/report.json >/dev/null 2>&1; then
    reason=$(grep -m1 -E '^error' "$out/$c.log" | cut -c1-200 || true)
    echo "[$c] no report (exit $code): ${reason:-see $out/$c.log}" >&2
    status=3
  fi
  dirs+=("$dir")
done
# The tables: case × verdict with every failed row's reason, then every row.
python3 "$root/scripts/catalogue-table.py" "${dirs[@]}"
echo
echo "target: $target · runs: $out"
exit $status
