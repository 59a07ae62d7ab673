#!/usr/bin/env bash
# The full scorecard (issue 40): every catalogue case × {embedded, OpenClaw 2026.9.6, 2026.9.2,
# LiteLLM, Portkey}, K = 3 — fixtures/matrix/field.toml. Hours of wall time on 2 cores (a real
# OpenClaw start-up alone is 300–930 s on a loaded machine): not part of .ci/run.
#
#   scripts/scorecard.sh [OUT_DIR]
#     OUT_DIR   where scorecard.json/md/html and every run go (default: reports/matrix-UTC_STAMP-field)
#
# Needs: OpenClaw 2026.9.6 and 2026.9.2 (`rehearse gateway install openclaw` and
# `rehearse gateway install openclaw 2026.9.2`), LiteLLM and Portkey (`rehearse gateway install
# litellm`, `… portkey`), and fixtures/targets/litellm.toml and portkey.toml.
# Environment: REHEARSE (default: target/release/rehearse, else target/debug/rehearse, else
# `rehearse` on PATH); JOBS (default 2: most runs at once; timing-judged runs run alone; the
# field's 81 min were measured at 3); STARTS (default: rehearse's, the number of CPUs: most
# gateway start-ups at once, docs/matrix.md); MATRIX (default fixtures/matrix/field.toml).
# Exit: rehearse matrix's (0 every cell as expected, 1 not, 2 bad input, 3 stopped).
set -euo pipefail

[ $# -le 1 ] || { echo "usage: $0 [OUT_DIR]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${REHEARSE:-}
if [ -z "$bin" ]; then
  for b in "$root/target/release/rehearse" "$root/target/debug/rehearse"; do
    [ -x "$b" ] && { bin=$b; break; }
  done
fi
bin=${bin:-rehearse}
matrix=${MATRIX:-$root/fixtures/matrix/field.toml}
args=(matrix "$matrix" --jobs "${JOBS:-2}")
[ -n "${STARTS:-}" ] && args+=(--starts "$STARTS")
[ $# -eq 1 ] && args+=(--out "$1")
start=$(date +%s)
set +e
"$bin" "${args[@]}"
code=$?
set -e
echo "wall time: $(( $(date +%s) - start )) s" >&2
exit $code
