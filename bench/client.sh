#!/usr/bin/env bash
# Benchmark: the client commands (`acp-registry install`/`run`) beside acpr, the official runner
# (0.4.0 from the Rust package registry, pinned, installed by this script), on a registry of the
# scriptable test agent (tests/agents/acp_agent.py packed as a .tar.gz) served by a local HTTP
# server. Measured from spawning the command to the agent's `initialize` answer on stdout:
#   - direct: executing the unpacked agent itself (the reference, measured in the same run);
#   - warm run: the agent already installed; ours with `--registry FILE`, and with
#     `--registry URL` and a fresh cached registry (the path an editor's setting takes: the
#     server's log must show no request);
#   - cold: an empty cache each time (download, unpack, start).
# Prints min / median / max of each and the warm overhead over direct execution (target: under
# 20 ms, and not slower than acpr cold or warm). The load average is printed before and after.
# Usage: bench/client.sh [RUNS]   (default 20 warm runs, 8 cold runs)
# Needs python3; acpr needs the Rust package registry the first time (skipped without it).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
cold_runs=$(( runs < 8 ? runs : 8 ))
bin=${CARGO_TARGET_DIR:-target}/release/acp-registry
cargo build --quiet --release --bin acp-registry
acpr_root=target/bench-tools/acpr-0.4.0
acpr=$acpr_root/bin/acpr
if [ ! -x "$acpr" ]; then
  cargo install --quiet acpr --version 0.4.0 --locked --root "$acpr_root" \
    || echo "acpr 0.4.0 could not be installed (is the Rust package registry reachable?): skipped" >&2
fi
work=$(mktemp -d)
server_pid=
cleanup() { [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# The archive: the test agent as `test-agent/agent`, in a .tar.gz.
mkdir -p "$work/pack/test-agent" "$work/www"
cp tests/agents/acp_agent.py "$work/pack/test-agent/agent"
chmod 755 "$work/pack/test-agent/agent"
tar -C "$work/pack" -czf "$work/www/test-agent.tar.gz" test-agent
sha=$(sha256sum "$work/www/test-agent.tar.gz" | cut -d' ' -f1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
platform=$(python3 -c '
import platform, sys
os_ = {"linux": "linux", "darwin": "darwin"}[sys.platform if sys.platform != "linux2" else "linux"]
arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}[platform.machine().lower()]
print(f"{os_}-{arch}")')
registry() { # SCHEME: a registry.json listing the test agent at SCHEME://127.0.0.1:PORT
  cat <<EOF
{"version": "1.0.0", "agents": [{"id": "test-agent", "name": "Test agent", "version": "1.0.0",
  "description": "The scriptable test agent", "authors": ["bench"], "license": "Apache-2.0",
  "distribution": {"binary": {"$platform": {"archive": "$1://127.0.0.1:$port/test-agent.tar.gz",
  "cmd": "./test-agent/agent", "sha256": "$sha"}}}}]}
EOF
}
# Ours asks https (a loopback URL is fetched over http under the test-only switch); acpr is
# given http, which it fetches as is.
registry https > "$work/ours.json"
cp "$work/ours.json" "$work/www/registry.json"
registry http > "$work/acpr.json"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/www" \
  > "$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 50); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
  sleep 0.1
done
export ACP_REGISTRY_TEST_ALLOW_LOOPBACK=1

echo "machine: $(nproc) cores; $("$bin" --version); $([ -x "$acpr" ] && echo "acpr 0.4.0"); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" install test-agent --registry "$work/ours.json" --cache-dir "$work/ours-warm" > /dev/null
direct=$(find "$work/ours-warm/agents/test-agent" -path '*/test-agent/agent' -type f | head -1)
[ -x "$direct" ] || { echo "the installed agent was not found under $work/ours-warm" >&2; exit 1; }
# A fresh cached copy of the URL registry: fetched once here, then read from the cache.
"$bin" which test-agent --registry "http://127.0.0.1:$port/registry.json" --cache-dir "$work/ours-warm" > /dev/null
before_requests=$(grep -c 'GET /registry.json' "$work/server.log" || true)
if [ -x "$acpr" ]; then
  # acpr keeps running after its agent exits on a closed stdin: ended after its download.
  timeout 10 "$acpr" --registry "$work/acpr.json" --cache-dir "$work/acpr-warm" test-agent < /dev/null > /dev/null 2>&1 || true
fi

python3 - "$runs" "$cold_runs" "$work" "$bin" "$acpr" "$direct" "$port" <<'PY'
import json, os, shutil, statistics, subprocess, sys, time
runs, cold_runs, work, bin_, acpr, direct, port = sys.argv[1:8]
runs, cold_runs = int(runs), int(cold_runs)
INIT = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": 1, "clientCapabilities": {}}}) + "\n").encode()

def once(argv):
    """Seconds from spawn to the initialize answer."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    child.stdin.write(INIT)
    child.stdin.flush()
    while True:
        line = child.stdout.readline()
        if not line:
            raise SystemExit(f"no initialize answer from {argv}")
        try:
            if json.loads(line).get("id") == 1:
                break
        except ValueError:
            pass
    elapsed = time.perf_counter() - start
    child.kill()
    child.wait()
    return elapsed

def series(argv_of, n, fresh=None):
    times = []
    for i in range(n):
        if fresh:
            shutil.rmtree(fresh, ignore_errors=True)
        times.append(once(argv_of(i)) * 1000)
    return times

def show(label, times):
    print(f"| {label} | {len(times)} | {min(times):.1f} / {statistics.median(times):.1f} / {max(times):.1f} ms |")
    return statistics.median(times)

ours_file = f"{work}/ours.json"
url = f"http://127.0.0.1:{port}/registry.json"
print("| what | runs | min / median / max to the initialize answer |")
print("|---|---|---|")
m_direct = show("direct execution of the agent (reference)", series(lambda i: [direct], runs))
m_ours = show("`acp-registry run`, warm, `--registry FILE`",
              series(lambda i: [bin_, "run", "test-agent", "--registry", ours_file, "--cache-dir", f"{work}/ours-warm"], runs))
m_url = show("`acp-registry run`, warm, `--registry URL` (cached copy fresh)",
             series(lambda i: [bin_, "run", "test-agent", "--registry", url, "--cache-dir", f"{work}/ours-warm"], runs))
m_acpr = None
if os.access(acpr, os.X_OK):
    m_acpr = show("acpr 0.4.0, warm, `--registry FILE`",
                  series(lambda i: [acpr, "--registry", f"{work}/acpr.json", "--cache-dir", f"{work}/acpr-warm", "test-agent"], runs))
c_ours = show("`acp-registry run`, cold (download, sha256, unpack, start)",
              series(lambda i: [bin_, "run", "test-agent", "--registry", ours_file, "--cache-dir", f"{work}/ours-cold"], cold_runs, f"{work}/ours-cold"))
c_acpr = None
if os.access(acpr, os.X_OK):
    c_acpr = show("acpr 0.4.0, cold (download, unpack, start)",
                  series(lambda i: [acpr, "--registry", f"{work}/acpr.json", "--cache-dir", f"{work}/acpr-cold", "test-agent"], cold_runs, f"{work}/acpr-cold"))
print()
print(f"warm overhead over direct execution (medians): `--registry FILE` {m_ours - m_direct:+.1f} ms, "
      f"`--registry URL` {m_url - m_direct:+.1f} ms (target: under 20 ms)")
if m_acpr is not None:
    print(f"against acpr (medians): warm {m_ours:.1f} vs {m_acpr:.1f} ms; cold {c_ours:.1f} vs {c_acpr:.1f} ms")
PY
after_requests=$(grep -c 'GET /registry.json' "$work/server.log" || true)
echo "requests for registry.json during the warm \`--registry URL\` runs: $(( after_requests - before_requests )) (expected 0)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
