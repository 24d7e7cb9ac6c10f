#!/usr/bin/env bash
# Benchmark: `acp-registry build` (validate + every output file, atomic write) on a synthetic
# registry (default 10,000 entries), release build, with and without the site.
# Usage: [BENCH_DIR=/dev/shm] bench/build.sh [ENTRIES] [RUNS]  (BENCH_DIR: where the registry and
# dist/ live; default $TMPDIR or /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
entries=${1:-10000}
runs=${2:-5}
cargo build --release --quiet --bin acp-registry --example gen_registry
work=$(mktemp -d -p "${BENCH_DIR:-${TMPDIR:-/tmp}}")
trap 'rm -rf "$work"' EXIT
target/release/examples/gen_registry "$work/registry" "$entries"
for mode in --no-site ""; do
  echo "build ${mode:-(with site)}:"
  for i in $(seq "$runs"); do
    /usr/bin/time -o "$work/time" -f "  run $i: %e s wall, %M KiB max RSS" \
      target/release/acp-registry build --registry "$work/registry" --out "$work/dist" $mode 2>"$work/err" \
      || { cat "$work/err"; exit 1; }
    cat "$work/time"
  done
  grep -E "^  (registry.json|site/)" "$work/err" || true
done
