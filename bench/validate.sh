#!/usr/bin/env bash
# Benchmark: `acp-registry validate` on a synthetic registry (default 10,000 entries), release
# build. Prints wall time and peak memory of each of RUNS runs (first run warms the page cache).
# Usage: bench/validate.sh [ENTRIES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
entries=${1:-10000}
runs=${2:-5}
cargo build --release --quiet --bin acp-registry --example gen_registry
work=$(mktemp -d -p "${BENCH_DIR:-${TMPDIR:-/tmp}}")
trap 'rm -rf "$work"' EXIT
target/release/examples/gen_registry "$work/registry" "$entries"
for i in $(seq "$runs"); do
  /usr/bin/time -f "run $i: %e s wall, %M KiB max RSS, exit %x" \
    target/release/acp-registry validate --registry "$work/registry" --format json >"$work/out.json" || true
done
python3 - "$work/out.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
print("summary:", doc["summary"])
PY
