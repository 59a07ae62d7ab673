#!/usr/bin/env bash
# Screenshots a run directory's report.html (or a matrix's scorecard.html) in headless Chromium,
# the way the picture's test does: `scripts/screenshot-report.sh DIR OUT.png [WIDTH,HEIGHT]`
# (default 1400,1800).
# Used for the images under docs/img/; needs Debian's `chromium`.
set -euo pipefail
dir=${1:?usage: screenshot-report.sh RUN_DIR OUT.png [WIDTH,HEIGHT]}
out=${2:?usage: screenshot-report.sh RUN_DIR OUT.png [WIDTH,HEIGHT]}
size=${3:-1400,1800}
html="$(cd "$dir" && pwd)/report.html"
[ -f "$html" ] || html="$(cd "$dir" && pwd)/scorecard.html"
[ -f "$html" ] || { echo "no report.html or scorecard.html in $dir" >&2; exit 2; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
  --user-data-dir="$profile" --screenshot="$out" --window-size="$size" "file://$html" 2>/dev/null
echo "$out"
