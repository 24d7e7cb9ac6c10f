#!/usr/bin/env bash
# Benchmark: `acp-registry verify` of real npm agents, in one invocation of this script:
#   1. -j 1 (one agent at a time), 2. -j 4, 3. as 4 shards (`--shard K/4`, -j 1 each) run side
#   by side as four processes, as the four jobs of a GitHub Actions matrix would run.
# Every verify process has its own private npm cache, so every run downloads its packages.
# Prints the wall time of each run (for the shards, each shard's and the slowest, which is
# what a matrix waits for), agents passed, and, summed over the agents, the seconds spent
# downloading (npx install into the run's cache) and starting (launch to the initialize
# answer); the load average before and after each run, since the machine may be shared.
# Needs the network (registry.npmjs.org).
# Usage: bench/verify.sh [BINARY]
#   REGISTRY (default: registry, the bundled registry) and TYPE (default: npx) choose the
#   agents: the pinned npx entries of the bundled registry. SHARDS (default 4).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/acp-registry}
registry=${REGISTRY:-registry}
kind=${TYPE:-npx}
shards=${SHARDS:-4}
[ -x "$bin" ] || cargo build --quiet --bin acp-registry
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) cores; $("$bin" --version); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "agents: $("$bin" verify --registry "$registry" --type "$kind" --list-shards 1 --format json)"
echo "split:"
"$bin" verify --registry "$registry" --type "$kind" --list-shards "$shards" | sed 's/^/  /'
verify() { # NAME ARGS...: one verify run, its report in $out/NAME.json, its wall time in $out/NAME.wall
  local name=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$bin" verify --registry "$registry" --type "$kind" --no-cache --timeout 120 --format json "$@" \
    > "$out/$name.json" 2> "$out/$name.err" || true
  end=$(date +%s.%N)
  echo "$start $end" > "$out/$name.wall"
}
summary() { # LABEL NAME...: one line for the runs NAME... taken together
  python3 - "$out" "$@" <<'PY'
import json, sys
out, label, names = sys.argv[1], sys.argv[2], sys.argv[3:]
agents, walls = [], []
for name in names:
    agents += json.load(open(f"{out}/{name}.json"))["agents"]
    start, end = map(float, open(f"{out}/{name}.wall").read().split())
    walls.append((name, end - start))
fetch = sum(a["fetch_seconds"] or 0 for a in agents)
launch = sum(a["start_seconds"] or 0 for a in agents)
passed = sum(a["status"] == "passed" for a in agents)
slowest = max(w for _, w in walls)
share = 100 * fetch / (fetch + launch) if fetch + launch else 0
each = "" if len(walls) == 1 else " (" + ", ".join(f"{n} {w:.1f} s" for n, w in walls) + ")"
print(f"{label}: {slowest:.1f} s wall{each}; {passed}/{len(agents)} passed; "
      f"download {fetch:.1f} s, start {launch:.1f} s (download {share:.0f} %)")
for a in agents:
    why = f"  {(a['reason'] or '')[:90]}" if a["status"] != "passed" else ""
    print(f"  {a['id']:20} {a['status']:10} download {a['fetch_seconds'] or 0:5.1f} s  start {a['start_seconds'] or 0:5.1f} s{why}")
PY
}
for jobs in 1 4; do
  before=$(load)
  verify "j$jobs" -j "$jobs"
  summary "-j $jobs" "j$jobs"
  echo "  load average before: $before; after: $(load)"
done
before=$(load)
names=()
for k in $(seq 1 "$shards"); do
  verify "shard-$k-of-$shards" --shard "$k/$shards" -j 1 &
  names+=("shard-$k-of-$shards")
done
wait
summary "$shards shards side by side (slowest shard)" "${names[@]}"
echo "  load average before: $before; after: $(load)"
