#!/usr/bin/env bash
# Benchmark: how long the workspace's own crates take to compile, before and after a change,
# interleaved in one run so both see the same machine. The dependencies are built once per
# side first (untimed; both sides use the same Cargo.lock), then each round cleans only the
# four workspace packages and times, for each side in turn:
#   build  `cargo build --workspace` (the libraries and both binaries, debug profile)
#   tests  `cargo test --workspace --no-run` right after it (every test binary; what CI adds)
# Wall clock, plus the `Executable` lines of the test build and the size of the side's target.
#
# Usage: bench/compile.sh BEFORE_REV [ROUNDS]
#   BEFORE_REV  the git revision to compare with (checked out in a temporary worktree)
#   ROUNDS      timed rounds, default 2
# Environment: BENCH_DIR (scratch space for the worktree and the two target folders, default
# $TMPDIR or /tmp); SEED_TARGET (a target folder whose dependencies are already built, copied
# to both sides first to save the two untimed dependency builds), or SEED_BEFORE and SEED_AFTER
# (one per side, e.g. each revision's own target folder). The current checkout (its working
# tree) is the "after" side. IN_PLACE=1 skips the worktree, the copies and the warm-up: BEFORE_REV
# is then a checkout (a folder) of the before revision, and each side uses its own target/,
# whose dependencies must already be built (copies made with `cp -r` lose the time stamps cargo
# compares, so they rebuild everything once).
set -euo pipefail
cd "$(dirname "$0")/.."
before_rev=${1:?usage: bench/compile.sh BEFORE_REV [ROUNDS]}
rounds=${2:-2}
work=$(mktemp -d -p "${BENCH_DIR:-${TMPDIR:-/tmp}}")
after=$PWD
before=$work/before
cleanup() {
  [ -n "${IN_PLACE:-}" ] || git -C "$after" worktree remove --force "$before" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
if [ -n "${IN_PLACE:-}" ]; then
  before=$(cd "$before_rev" && pwd)
else
  git worktree add --quiet --detach "$before" "$before_rev"
fi

ours=(-p acp-registry -p acp-registry-core -p acp-collab -p acp-test-kit)

# Seconds one command takes (wall clock); its output goes to $work/last.log.
timed() {
  local start end
  start=$(date +%s.%N)
  "$@" >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; echo "failed: $*" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

target_of() { if [ -n "${IN_PLACE:-}" ]; then echo "$1/target"; else echo "$work/target-$2"; fi; }

for side in before after; do
  [ -n "${IN_PLACE:-}" ] && break
  dir=$([ "$side" = before ] && echo "$before" || echo "$after")
  seed=$([ "$side" = before ] && echo "${SEED_BEFORE:-${SEED_TARGET:-}}" \
    || echo "${SEED_AFTER:-${SEED_TARGET:-}}")
  if [ -n "$seed" ]; then cp -a "$seed" "$work/target-$side"; fi
  (cd "$dir" && CARGO_TARGET_DIR=$work/target-$side cargo test --workspace --no-run --locked -q) \
    >/dev/null 2>&1
done

printf '| round | side | build (s) | tests (s) | test executables | target (MB) |\n|---|---|---:|---:|---:|---:|\n'
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    dir=$([ "$side" = before ] && echo "$before" || echo "$after")
    CARGO_TARGET_DIR=$(target_of "$dir" "$side")
    export CARGO_TARGET_DIR
    (cd "$dir" && cargo clean --quiet "${ours[@]}")
    build=$(cd "$dir" && timed cargo build --workspace --locked)
    tests=$(cd "$dir" && timed cargo test --workspace --no-run --locked)
    executables=$(grep -c 'Executable' "$work/last.log" || true)
    size=$(du -sm "$CARGO_TARGET_DIR" | cut -f1)
    printf '| %s | %s | %.1f | %.1f | %s | %s |\n' "$round" "$side" "$build" "$tests" \
      "$executables" "$size"
  done
done
