#!/usr/bin/env bash
# Benchmark: `acp-collab validate` on a completed collaboration with 10,000
# events (release build), and the cost per event. Usage:
#   bench/collab_validate.sh [events] [runs]
# e.g. `bench/collab_validate.sh 100000 10` for the growth check.
# With `perf` installed it also prints the CPU time (user + system, what a loaded machine
# distorts least) of `validate` and of two references on the same log: decoding every line
# into a `serde_json::Value` (`gen_collab --decode`) and `cat`.
set -euo pipefail

events="${1:-10000}"
runs="${2:-30}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

cargo build --release --quiet --bin acp-collab --example gen_collab
target="${CARGO_TARGET_DIR:-$root/target}/release"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
folder="$("$target/examples/gen_collab" "$work/run" "$events")"
echo "folder: $folder ($(wc -l < "$folder/events.jsonl") events, $(du -k "$folder/events.jsonl" | cut -f1) KiB log)"

# One warm-up run, which must pass.
"$target/acp-collab" validate --folder "$folder"

times=()
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  "$target/acp-collab" validate --folder "$folder" > /dev/null
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
done

sorted=($(printf '%s\n' "${times[@]}" | sort -n))
sum=0
for t in "${sorted[@]}"; do sum=$((sum + t)); done
ms() { printf '%d.%03d' $(( $1 / 1000 )) $(( $1 % 1000 )); }
echo "runs: $runs"
echo "min:    $(ms "${sorted[0]}") ms"
echo "median: $(ms "${sorted[$(( runs / 2 ))]}") ms"
echo "mean:   $(ms $(( sum / runs ))) ms"
echo "max:    $(ms "${sorted[$(( runs - 1 ))]}") ms"
median="${sorted[$(( runs / 2 ))]}"
echo "per event (median): $(( median * 1000 / events )) ns"

if command -v perf > /dev/null; then
  cpu() { perf stat -e task-clock -r "$runs" "$@" 2>&1 > /dev/null | awk '/task-clock/ {print $1}'; }
  ms_validate=$(cpu "$target/acp-collab" validate --folder "$folder")
  echo "cpu validate:         $ms_validate ms ($(awk -v t="$ms_validate" -v n="$events" 'BEGIN {printf "%.2f", t * 1000 / n}') µs per event)"
  echo "cpu decode reference: $(cpu "$target/examples/gen_collab" --decode "$folder/events.jsonl") ms"
  echo "cpu cat reference:    $(cpu cat "$folder/events.jsonl") ms"
fi
