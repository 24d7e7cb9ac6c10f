#!/usr/bin/env bash
# Run fuzz targets the way FUZZING.md records them: every file in fuzz_targets/ is a target
# (so adding one is adding that file plus its `[[bin]]`), at the lowest priority, with the
# checked-in corpus, a memory limit and a per-input timeout. Needs cargo-fuzz (not used by CI).
# Usage: fuzz/run.sh [SECONDS] [TARGET...]   (default 600 s, every target, one after another)
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  echo "== $t ($seconds s)"
  RUSTC_BOOTSTRAP=1 nice -n 19 cargo fuzz run "$t" -s none "corpus/$t" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 2>&1 | grep -E "^(Done|#[0-9]+ *DONE|==[0-9]+== ERROR|SUMMARY)" || true
done
