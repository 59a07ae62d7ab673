#!/usr/bin/env bash
# Repeatability (not run in CI): runs one correct fixture scenario COUNT times in a row, one
# process at a time, and prints `N passed, M failed`, with each failed run's exit code and the
# lines naming its mismatches (the run's `FAIL [...]` and stop lines; the stderr tail when the
# harness itself failed). The point is the count: a correct scenario that fails 1 run in 20 is
# a flaky rehearsal, whatever a single green run says.
#
#   scripts/repeat-scenario.sh NAME SPEED COUNT
#   e.g. scripts/repeat-scenario.sh crm-search-503-storm 4 20   (the CI speed of that fixture)
#   PROFILE=release scripts/repeat-scenario.sh ...   (release binary; default: the dev-profile
#                                                     binary the tests run)
#   KEEP=DIR scripts/repeat-scenario.sh ...          (keep every run directory under DIR;
#                                                     by default only failed runs are kept)
#
# Exit 0 when every run passed, 1 when any failed, 2 on bad usage.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 NAME SPEED COUNT" >&2
  exit 2
fi
NAME=$1 SPEED=$2 COUNT=$3
case $COUNT in '' | *[!0-9]*) echo "COUNT must be a whole number, got $COUNT" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
PROFILE=${PROFILE:-debug}
if [ "$PROFILE" = release ]; then
  cargo build --release --bin rehearse >&2
else
  cargo build --bin rehearse >&2
fi
TMP=$(mktemp -d)
OUT=${KEEP:-$TMP/runs}
mkdir -p "$OUT"
failed=0
# Failed runs' directories and logs are kept (the script says where); passing runs are not.
trap 'if [ "$failed" = 0 ]; then rm -rf "$TMP"; fi' EXIT
# A copy, so a rebuild while this runs cannot mix two binaries into one count.
cp "$CARGO_TARGET_DIR/$PROFILE/rehearse" "$TMP/rehearse"
# NAME is a fixture name or a scenario file's path (as for `rehearse run --scenario`).
if [ -f "$NAME" ]; then FILE=$NAME; else FILE=fixtures/scenarios/$NAME.toml; fi
"$TMP/rehearse" validate "$FILE" >&2
# Each run's hard bound: well above duration / speed × policies for every fixture.
LIMIT=${LIMIT:-900}

echo "$NAME ×$SPEED, $COUNT runs ($PROFILE binary); load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)" >&2
passed=0
for i in $(seq "$COUNT"); do
  log=$TMP/run-$i.log
  rc=0
  timeout "$LIMIT" "$TMP/rehearse" run --scenario "$NAME" --speed "$SPEED" --no-progress \
    --report-dir "$OUT/$i" >"$log" 2>"$log.err" || rc=$?
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    echo "run $i: pass" >&2
  else
    failed=$((failed + 1))
    echo "run $i: exit $rc"
    grep -E '^  (FAIL |stopped )' "$log" || true
    if [ "$rc" != 1 ]; then tail -n 5 "$log.err" | sed 's/^/  stderr: /'; fi
    grep -E '^report: ' "$log" | sed 's/^/  /' || true
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)" >&2
echo "$passed passed, $failed failed"
if [ "$failed" != 0 ]; then
  echo "failed runs' logs and report directories: $TMP" >&2
  exit 1
fi
