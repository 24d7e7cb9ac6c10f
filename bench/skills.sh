#!/usr/bin/env bash
# Benchmark: `acp-registry build` (site included: the skills indexes, archives, marketplace and
# pages are site files) on a registry of N stand-alone skills beside the same build on a
# registry of N agents (examples/gen_registry.rs), the reference, in the same run and
# interleaved (agents, skills, agents, …) so both see the same machine. Each skill is a
# SKILL.md with a link to references/guide.md (2 KiB) and scripts/run.sh; each is published as
# a 0.2.0 archive, 0.1.0 files (which its marketplace plugin is) and a page. Prints min /
# median / max of each and the time per entry (target: a skill costs no more than an agent).
# Release build.
# Usage: [BENCH_DIR=DIR] bench/skills.sh [N] [RUNS]   (default 1000 entries, 5 runs after one
#   warm-up of each; BENCH_DIR: where the registries and outputs live, default $TMPDIR or /tmp,
#   e.g. /dev/shm for tmpfs)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
runs=${2:-5}
cargo build --release --quiet --bin acp-registry --example gen_registry
bin=${CARGO_TARGET_DIR:-$PWD/target}/release
work=$(mktemp -d -p "${BENCH_DIR:-${TMPDIR:-/tmp}}")
trap 'rm -rf "$work"' EXIT
"$bin/examples/gen_registry" "$work/agents" "$n" >/dev/null 2>&1
python3 - "$work/skills" "$n" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(root)
open(os.path.join(root, "acp-registry.jsonc"), "w").write("{}\n")
guide = "".join(f"Step {i}: check the input, then the output.\n" for i in range(48))
for i in range(n):
    name = f"skill-{i:05d}"
    d = os.path.join(root, "skills", name)
    os.makedirs(os.path.join(d, "references"))
    os.makedirs(os.path.join(d, "scripts"))
    open(os.path.join(d, "SKILL.md"), "w").write(
        f"---\nname: {name}\ndescription: Synthetic skill {i} for the build benchmark. Use it "
        f"when a benchmark needs skill number {i}.\nlicense: Apache-2.0\n---\n\n# Skill {i}\n\n"
        "Read [the guide](references/guide.md), then run `scripts/run.sh`.\n")
    open(os.path.join(d, "references", "guide.md"), "w").write(guide)
    script = os.path.join(d, "scripts", "run.sh")
    open(script, "w").write(f"#!/bin/sh\necho skill {i}\n")
    os.chmod(script, 0o755)
PY
"$bin/acp-registry" validate --registry "$work/skills" >/dev/null 2>&1 \
  || { "$bin/acp-registry" validate --registry "$work/skills" | tail -5; exit 1; }

timed() {
  sync
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
build() { "$bin/acp-registry" build --registry "$work/$1" --out "$work/out-$1-$2"; }

echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $n entries, $runs runs"
build agents warm >/dev/null 2>&1 && build skills warm >/dev/null 2>&1
echo "skills output: $(find "$work/out-skills-warm" -type f | wc -l) files in $(find "$work/out-skills-warm" -type d | wc -l) folders"
echo "agents output: $(find "$work/out-agents-warm" -type f | wc -l) files in $(find "$work/out-agents-warm" -type d | wc -l) folders"
results=$work/results
for i in $(seq "$runs"); do
  echo "agents $(timed build agents "$i")" >>"$results"
  echo "skills $(timed build skills "$i")" >>"$results"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$n" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    name, seconds = line.split()
    times.setdefault(name, []).append(float(seconds))
n = int(sys.argv[2])
for name in ("agents", "skills"):
    t = sorted(times[name])
    med = statistics.median(t)
    print(f"{name:7} min {t[0]:.3f} s  median {med:.3f} s  max {t[-1]:.3f} s  "
          f"per entry {med / n * 1000:.2f} ms")
ratio = statistics.median(times["skills"]) / statistics.median(times["agents"])
print(f"skills / agents (median): {ratio:.2f}")
PY
