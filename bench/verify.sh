#!/usr/bin/env bash
# Benchmark: `acp-registry verify` of the pinned real npm agents in tests/fixtures/real-agents
# (Claude Code ACP, OpenCode, Gemini CLI), once with -j 1 and once with -j 4 in one
# invocation of this script. Each run has its own private npm cache, so both download the
# packages. Prints the wall time of each run and, summed over the agents, the seconds spent
# downloading (npx install into the run's cache) and starting (launch to the initialize
# answer), with the download share. Needs the network (registry.npmjs.org).
# Usage: bench/verify.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/acp-registry}
[ -x "$bin" ] || cargo build --quiet --bin acp-registry
for jobs in 1 4; do
  start=$(date +%s.%N)
  "$bin" verify --registry tests/fixtures/real-agents --agent claude-code-acp,opencode,gemini \
    -j "$jobs" --timeout 120 --format json > "/tmp/acp-verify-bench-$jobs.json" || true
  end=$(date +%s.%N)
  python3 - "$jobs" "$start" "$end" "/tmp/acp-verify-bench-$jobs.json" <<'PY'
import json, sys
jobs, start, end, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
agents = json.load(open(path))["agents"]
fetch = sum(a["fetch_seconds"] or 0 for a in agents)
launch = sum(a["start_seconds"] or 0 for a in agents)
passed = sum(a["status"] == "passed" for a in agents)
print(f"-j {jobs}: {end - start:.1f} s wall, {passed}/{len(agents)} passed; "
      f"download {fetch:.1f} s, start {launch:.1f} s (download {100 * fetch / (fetch + launch):.0f} %)")
for a in agents:
    print(f"  {a['id']:16} download {a['fetch_seconds'] or 0:5.1f} s  start {a['start_seconds'] or 0:5.1f} s")
PY
done
