#!/usr/bin/env bash
# Runs every fixture scenario at the speed CI runs it (tests/run_scenarios.rs's CI_SPEEDS; smoke at
# 1) with a release build and prints, per scenario and policy, the verdict and each expectation's
# kind, subject, expected text and status. Two trees' outputs diffed line by line show whether a
# change kept every verdict and expectation table (observed times vary run to run and are left out).
#   scripts/fixture-verdicts.sh > before.txt; …change…; scripts/fixture-verdicts.sh > after.txt
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
speeds=$(sed -n 's/^    ("\([a-z0-9-]*\)", \([0-9.]*\)),$/\1 \2/p' tests/run_scenarios.rs)
run() { # name speed
  local dir="$out/$1" scenario="$1"
  # A scenario with [prometheus] runs at speed 1 only: at another speed, as the tests do
  # (tests/support/run.rs `strip_prometheus`), a copy beside it without its detection path.
  if [ "$2" != 1 ] && grep -q '^\[prometheus\]' "fixtures/scenarios/$1.toml"; then
    scenario="fixtures/scenarios/.$1-no-prometheus.toml"
    awk '/^\[/ { skip = ($0 == "[prometheus]" || $0 == "[[expect.alert]]" || $0 == "[[expect.dashboard]]") } !skip' \
      "fixtures/scenarios/$1.toml" >"$scenario"
  fi
  set +e
  ./target/release/rehearse --scenario "$scenario" --speed "$2" --report-dir "$dir" >/dev/null 2>&1
  local rc=$?
  set -e
  [ "$scenario" = "$1" ] || rm -f "$scenario"
  local json
  json=$(find "$dir" -name report.json | head -1)
  python3 - "$1" "$rc" "$json" <<'PY'
import json, re, sys
name, rc, path = sys.argv[1], sys.argv[2], sys.argv[3]
r = json.load(open(path))
print(f"{name}: exit {rc}, verdict {r['verdict']}")
for p in r["policies"]:
    print(f"  {p['policy']}: {p['status']}")
    for e in p["expectations"]:
        subject = e.get("dep") or e.get("series") or ""
        # An `after =` transition's absolute time is the previous one's observed time plus the
        # gap: keep only the gap, which is the expectation.
        expected = re.sub(r"at [0-9.]+s \(", "(", e["expected"])
        print(f"    {e['kind']:<13} {subject:<28} {expected:<52} {e['status']}")
PY
}
run smoke 1
while read -r name speed; do run "$name" "$speed"; done <<<"$speeds"
