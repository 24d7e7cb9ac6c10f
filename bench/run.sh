#!/usr/bin/env bash
# Every benchmark behind one command: builds the release binaries and examples, generates the
# inputs, times each command RUNS times next to its reference measured in the same run, and
# rewrites every table of BENCHMARKS.md between its `<!-- bench:NAME -->` and
# `<!-- /bench:NAME -->` markers.
#
# Usage: bench/run.sh            # RUNS=5, scaling at 1,000 / 10,000 / 100,000
#        RUNS=3 SIZES="1000 10000" bench/run.sh
#        BENCH_ONLINE_URLS=400 bench/run.sh   # a shorter one-by-one reference
# Environment: RUNS, SIZES, BENCH_DIR (scratch space; tmpfs for the least noise),
# BENCH_ONLINE_URLS (default 2000), BENCH_SITE_AGENTS (default 10000), BENCHMARKS (the file to rewrite, default BENCHMARKS.md),
# VERIFY_RUNS (runs of each `verify -j N`, default 2; 0 skips it: it needs registry.npmjs.org).
set -euo pipefail
cd "$(dirname "$0")/.."
export RUNS=${RUNS:-5}
export SIZES=${SIZES:-"1000 10000 100000"}
export BENCH_ONLINE_URLS=${BENCH_ONLINE_URLS:-2000}
export BENCHMARKS=${BENCHMARKS:-BENCHMARKS.md}
export BENCH_SITE_AGENTS=${BENCH_SITE_AGENTS:-10000}
export VERIFY_RUNS=${VERIFY_RUNS:-2}
# PROFILE=dev only to try the script quickly: its numbers are not the ones to publish.
profile=${PROFILE:-release}
export PROFILE=$profile
export TARGET="${CARGO_TARGET_DIR:-$PWD/target}/$([ "$profile" = dev ] && echo debug || echo "$profile")"
cargo build --profile "$profile" --quiet --bin acp-registry --bin acp-collab \
  --example gen_registry --example gen_collab --example online_bench --example site_bench
work=$(mktemp -d -p "${BENCH_DIR:-${TMPDIR:-/tmp}}")
trap 'rm -rf "$work"' EXIT
export WORK=$work
exec python3 - <<'PY'
import json, os, re, statistics, subprocess, datetime

T, W, RUNS = os.environ["TARGET"], os.environ["WORK"], int(os.environ["RUNS"])
SIZES = [int(s) for s in os.environ["SIZES"].split()]

def timed(cmd):
    """Wall seconds and peak RSS (MB) of one shell command, by /usr/bin/time."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M", "sh", "-c", cmd],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, rss = out.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss) / 1024

def series(cmd, before=""):
    """RUNS timed runs (after one warm-up run): min, median, max wall and max RSS."""
    if before: subprocess.run(before, shell=True, check=True)
    timed(cmd)
    runs = []
    for _ in range(RUNS):
        if before: subprocess.run(before, shell=True, check=True)
        runs.append(timed(cmd))
    walls = [w for w, _ in runs]
    return min(walls), statistics.median(walls), max(walls), max(r for _, r in runs)

def fmt(s):
    lo, med, hi, rss = s
    return f"{lo:.2f} / {med:.2f} / {hi:.2f} s | {rss:.0f} MB"

read_floor = "find {r} -type f -print0 | xargs -0 cat > /dev/null"
tables, scaling = {}, []
header = "| command | entries | min / median / max | peak RSS | reference | min / median / max | peak RSS |\n|---|---|---|---|---|---|---|\n"
for name in ("validate", "build"): tables[name] = header
for n in SIZES:
    reg, out = f"{W}/reg-{n}", f"{W}/dist-{n}"
    subprocess.run([f"{T}/examples/gen_registry", reg, str(n)], check=True, stdout=subprocess.DEVNULL)
    ref = series(read_floor.format(r=reg))
    v = series(f"{T}/acp-registry validate --registry {reg} --format json")
    tables["validate"] += f"| `validate` | {n:,} | {fmt(v)} | read every input | {fmt(ref)} |\n"
    for mode, flag in (("--no-site", "--no-site"), ("with site", "")):
        cmd = f"{T}/acp-registry build --registry {reg} --out {out} {flag}"
        b = series(cmd, before=f"rm -rf {out}")
        # The I/O floor: read every input, then write the same output tree once more.
        floor = series(read_floor.format(r=reg) + f" && cp -r {out} {out}.copy",
                       before=f"rm -rf {out}.copy")
        tables["build"] += f"| `build {mode}` | {n:,} | {fmt(b)} | read inputs + write outputs | {fmt(floor)} |\n"
        if flag == "": scaling.append(("`build` (with site)", n, b))
    scaling.append(("`validate`", n, v))
    subprocess.run(f"rm -rf {reg} {out} {out}.copy", shell=True, check=True)

tables["collab"] = header.replace("entries", "events")
for n in SIZES:
    folder = subprocess.run([f"{T}/examples/gen_collab", f"{W}/collab-{n}", str(n)],
                            check=True, capture_output=True, text=True).stdout.strip()
    c = series(f"{T}/acp-collab validate --folder {folder}")
    ref = series(f"cat {folder}/events.jsonl > /dev/null")
    tables["collab"] += f"| `acp-collab validate` | {n:,} | {fmt(c)} | read the log | {fmt(ref)} |\n"
    scaling.append(("`acp-collab validate`", n, c))

tables["scaling"] = "| command | size | median | per entry | peak RSS |\n|---|---|---|---|---|\n"
for name, n, s in sorted(scaling, key=lambda r: (r[0], r[1])):
    tables["scaling"] += f"| {name} | {n:,} | {s[1]:.2f} s | {s[1] / n * 1e6:.0f} µs | {s[3]:.0f} MB |\n"

site = subprocess.run([f"{T}/examples/site_bench", "--agents", os.environ["BENCH_SITE_AGENTS"], "--runs", str(RUNS),
                       "--out", f"{W}/site"], check=True, capture_output=True, text=True).stdout
tables["site"] = "```\n" + site.strip() + "\n```\n"

urls = int(os.environ["BENCH_ONLINE_URLS"])
online = subprocess.run([f"{T}/examples/online_bench", "--urls", str(urls), "--hosts", "20",
                         "--delay-ms", "50"], check=True, capture_output=True, text=True).stdout
tables["online"] = "```\n" + online.strip() + "\n```\n"

# Peak memory of `update` and `validate --online` against amplified answers (bench/update.sh).
tables["update"] = subprocess.run(["bench/update.sh", "30"], check=True, capture_output=True,
                                  text=True, env={**os.environ, "BIN": f"{T}/acp-registry"}).stdout

def verify_run(jobs):
    """One `verify -j jobs` of the pinned real npm agents (each run its own npm cache)."""
    out = f"{W}/verify-{jobs}.json"
    wall, rss = timed(f"{T}/acp-registry verify --registry tests/fixtures/real-agents "
                      f"--agent claude-code-acp,opencode,gemini -j {jobs} --timeout 120 "
                      f"--format json > {out}")
    agents = json.load(open(out))["agents"]
    passed = sum(a["status"] == "passed" for a in agents)
    return wall, rss, passed, len(agents)

verify_runs = int(os.environ["VERIFY_RUNS"])
if verify_runs > 0:
    tables["verify"] = ("| command | runs | min / median / max | peak RSS | agents passed |\n"
                        "|---|---|---|---|---|\n")
    for jobs in (1, 2, 4):
        runs = [verify_run(jobs) for _ in range(verify_runs)]
        walls = sorted(r[0] for r in runs)
        ref = " (reference)" if jobs == 1 else ""
        tables["verify"] += (f"| `verify -j {jobs}`{ref} | {verify_runs} | {walls[0]:.1f} / "
                             f"{statistics.median(walls):.1f} / {walls[-1]:.1f} s | "
                             f"{max(r[1] for r in runs):.0f} MB | "
                             f"{min(r[2] for r in runs)}/{runs[0][3]} |\n")

machine = f"{os.cpu_count()} cores, {os.environ['PROFILE']} build, {datetime.date.today()}, RUNS={RUNS}"
text = open(os.environ["BENCHMARKS"]).read()
for name, table in tables.items():
    block = f"<!-- bench:{name} -->\n_{machine}_\n\n{table}<!-- /bench:{name} -->"
    text, count = re.subn(rf"<!-- bench:{name} -->.*?<!-- /bench:{name} -->", lambda _: block,
                          text, flags=re.S)
    if count != 1: raise SystemExit(f"{os.environ['BENCHMARKS']}: no markers for {name}")
open(os.environ["BENCHMARKS"], "w").write(text)
print(f"rewrote {len(tables)} tables of {os.environ['BENCHMARKS']}")
PY
