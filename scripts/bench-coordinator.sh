#!/usr/bin/env bash
# Redis commands per half-open spell (docs/bench/coordinator.md): HOSTS simulated hosts, RPS
# requests per second over the whole fleet, followers polling every FOLLOW_MS (fleet hosts: 25),
# each following PROFILES auth profiles' fleet cooldowns. Needs
# redis-server and redis-cli on PATH (Debian: apt-get install redis-server; macOS: brew install redis).
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=${1:-12}
rps=${2:-10}
follow=${3:-25}
profiles=${4:-0}
command -v redis-server >/dev/null || { echo "redis-server is not on PATH" >&2; exit 2; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
cargo bench --features bench --bench coordinator_spell -- "$hosts" "$rps" "$follow" "$profiles"
