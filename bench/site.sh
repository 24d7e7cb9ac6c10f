#!/usr/bin/env bash
# Benchmark: render the catalogue site (`site::render`) for a synthetic registry (default
# 10,000 agents, each with a README, an icon and install snippets), release build. Prints the
# wall time of each of RUNS renders, a min/median/max summary, the time to write the files,
# and the wall time and peak memory of the whole process. Target: render under 2 s.
# Usage: bench/site.sh [AGENTS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
agents=${1:-10000}
runs=${2:-5}
cargo build --release --quiet --example site_bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/time -f "process: %e s wall, %M KiB max RSS, exit %x" \
  target/release/examples/site_bench --agents "$agents" --runs "$runs" --out "$work/site"
echo "site size on disk: $(du -sh "$work/site" | cut -f1), $(find "$work/site" -type f | wc -l) files"
