#!/usr/bin/env bash
# Benchmark: `validate --online` over URLS archive URLs (default 2,000) on HOSTS local hosts
# (default 20, 127.0.0.1 to 127.0.0.HOSTS), each answering after DELAY ms (default 50), with
# the default limits and then one request at a time, in the same run. Prints both wall
# times, their ratio, the most requests one host served at once, and peak memory.
# Target: at least 30x faster than one by one, the per-host limit respected, under 100 MB.
# Usage: bench/online.sh [URLS] [HOSTS] [DELAY_MS]   (PROFILE=dev for a debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
cargo build --profile "$profile" --quiet --example online_bench
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
/usr/bin/time -f "process: %e s wall, %M KiB max RSS, exit %x" \
  "${CARGO_TARGET_DIR:-target}/$dir/examples/online_bench" \
  --urls "${1:-2000}" --hosts "${2:-20}" --delay-ms "${3:-50}"
