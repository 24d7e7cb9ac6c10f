#!/usr/bin/env bash
# Benchmark: `acp-registry build --no-site` (validate, plan, every output file written into a
# staging folder, made durable, swapped in) against its I/O floor, `bench/io_floor.sh` (read
# every input, create as many files of the same sizes, one sync), interleaved in one run:
# floor, validate, build, [before,] floor, … so that all see the same machine. `validate` (the
# same registry, checked and reported, nothing written) is the CPU work the floor leaves out,
# so the build is also compared with the floor plus `validate`. Release build.
#
# Usage: [BENCH_DIR=DIR] [BEFORE=BINARY] bench/build.sh [ENTRIES] [RUNS]
#   ENTRIES    synthetic entries (examples/gen_registry.rs), default 10000
#   RUNS       timed runs of each, default 7 (after one untimed warm-up of each)
#   BENCH_DIR  where the registry and the outputs live (default $TMPDIR or /tmp); for tmpfs, as
#              root: mount -t tmpfs -o size=2g tmpfs /mnt/bench && BENCH_DIR=/mnt/bench …
#   BEFORE     another acp-registry binary to time in the same rounds (e.g. main's)
#
# Every run writes a fresh folder, and none is removed before the end: on ext4 without a
# journal (this VM's disk) files created right after as many were deleted take much longer
# (the inode allocator skips inodes deleted in the last minute), which would time the previous
# run's clean-up rather than this one. Each run starts after a `sync`, so none flushes the
# previous one's data.
set -euo pipefail
cd "$(dirname "$0")/.."
entries=${1:-10000}
runs=${2:-7}
cargo build --release --quiet --bin acp-registry --example gen_registry
bin=${CARGO_TARGET_DIR:-$PWD/target}/release
work=$(mktemp -d -p "${BENCH_DIR:-${TMPDIR:-/tmp}}")
trap 'rm -rf "$work"' EXIT
"$bin/examples/gen_registry" "$work/registry" "$entries" >/dev/null 2>&1
"$bin/acp-registry" build --registry "$work/registry" --out "$work/reference" --no-site 2>/dev/null

# Seconds taken by one command (wall clock), after a sync.
timed() {
  sync
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
floor() { bench/io_floor.sh "$work/registry" "$work/reference" "$1"; }
build() { "$2" build --registry "$work/registry" --out "$1" --no-site; }
validate() { "$bin/acp-registry" validate --registry "$work/registry" --format json; }

echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(df -T "$work" | awk 'NR == 2 {print $2}') at $work, $entries entries, $runs runs"
floor "$work/warm-floor" && build "$work/warm-build" "$bin/acp-registry" 2>/dev/null
[ -n "${BEFORE:-}" ] && build "$work/warm-before" "$BEFORE" 2>/dev/null
results=$work/results
for i in $(seq "$runs"); do
  echo "floor $(timed floor "$work/floor-$i")" >>"$results"
  echo "validate $(timed validate)" >>"$results"
  echo "build $(timed build "$work/build-$i" "$bin/acp-registry")" >>"$results"
  [ -n "${BEFORE:-}" ] && echo "before $(timed build "$work/before-$i" "$BEFORE")" >>"$results"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    name, seconds = line.split()
    times.setdefault(name, []).append(float(seconds))
floor = statistics.median(times["floor"])
print("| run | min / median / max | median / floor median |")
print("|---|---|---|")
for name, label in (("floor", "I/O floor (bench/io_floor.sh)"), ("validate", "`validate`"),
                    ("build", "`build --no-site`"), ("before", "`build --no-site` before")):
    if name in times:
        t = times[name]
        print(f"| {label} | {min(t):.2f} / {statistics.median(t):.2f} / {max(t):.2f} s "
              f"| {statistics.median(t) / floor:.2f} |")
def run_by_run(name, reference):
    return " ".join(f"{b / r:.2f}" for r, b in zip(reference, times[name]))
both = [f + v for f, v in zip(times["floor"], times["validate"])]
print(f"build / floor, run by run: {run_by_run('build', times['floor'])}")
print(f"build / (floor + validate), run by run: {run_by_run('build', both)}; "
      f"medians: {statistics.median(times['build']) / statistics.median(both):.2f}")
PY
