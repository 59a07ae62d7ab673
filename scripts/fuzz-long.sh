#!/usr/bin/env bash
# The long property-test run: every property of tests/props/main.rs with PROPTEST_CASES cases each
# (default 100000; `cargo test` runs 256) in a release build, one property at a time, then the
# control API's socket property (`cargo test` runs 64) with SOCKET_CASES (default a tenth) in the
# dev profile (a release build of the whole integration binary would double the build time). Prints cases, seconds and the verdict
# per property, then a total; exits 1 if any property failed (its minimal failing input is in the
# log). Usage: scripts/fuzz-long.sh [LOG]   (LOG defaults to target/fuzz-long.log)
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${PROPTEST_CASES:-100000}"
socket_cases="${SOCKET_CASES:-$((cases / 10))}"
# The cooldown-store properties write and read a real file per case: a tenth as many cases.
file_cases="${FILE_CASES:-$((cases / 10))}"
log="${1:-target/fuzz-long.log}"
mkdir -p "$(dirname "$log")"
: >"$log"

echo "building the property tests (release)..."
cargo test --release --no-run --test props >>"$log" 2>&1
cargo test --no-run --test integration >>"$log" 2>&1

failed=0
total_start=$(date +%s.%N)
run() { # PROFILE-FLAG BINARY TEST CASES
  local profile="$1" bin="$2" name="$3" n="$4" t0 t1 verdict
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086 # $profile is empty or one flag
  if PROPTEST_CASES="$n" cargo test $profile -q --test "$bin" -- --exact "$name" >>"$log" 2>&1; then
    verdict=ok
  else
    verdict=FAILED
    failed=$((failed + 1))
  fi
  t1=$(date +%s.%N)
  printf '%-75s %8s cases %8.1f s  %s\n' "$bin::$name" "$n" "$(awk "BEGIN{print $t1 - $t0}")" "$verdict"
}

mapfile -t props < <(cargo test --release -q --test props -- --list 2>/dev/null | sed -n 's/: test$//p')
for p in "${props[@]}"; do
  case "$p" in
    store::*) run --release props "$p" "$file_cases" ;;
    *) run --release props "$p" "$cases" ;;
  esac
done
run "" integration upstream_control_fuzz::put_faults_survives_any_body_and_get_round_trips "$socket_cases"

total_end=$(date +%s.%N)
printf 'total: %d properties, %.0f s, %d failed (log: %s)\n' \
  "$((${#props[@]} + 1))" "$(awk "BEGIN{print $total_end - $total_start}")" "$failed" "$log"
[ "$failed" -eq 0 ]
