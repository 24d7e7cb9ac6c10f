#!/usr/bin/env bash
# Benchmark: peak memory and wall time of `acp-registry verify` against hostile test agents
# (tests/agents/acp_agent.py served from a local HTTP server as a raw binary), next to a
# well-behaved agent in the same run as the reference:
#   flood  never answers, prints short non-JSON lines as fast as it can;
#   deaf   sends 10,000 requests and never reads its stdin (the verifier's replies pile up);
#   probe  tries to read the runner's files and every process's command line and environment
#          (what the read allow-list and the private /proc stop), then answers.
# Each run is capped at CAP seconds (a verifier that hangs shows as the cap, marked "killed").
# Usage: bench/verify_flood.sh [BINARY]     (default target/debug/acp-registry)
# Environment: TIMEOUT (verify --timeout, default 6), RUNS (default 3), CAP (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/acp-registry}
[ -x "$bin" ] || cargo build --quiet --bin acp-registry
export BIN=$(realpath "$bin") AGENT=$PWD/tests/agents/acp_agent.py
export TIMEOUT=${TIMEOUT:-6} RUNS=${RUNS:-3} CAP=${CAP:-60}
exec python3 - <<'PY'
import http.server, json, os, shutil, statistics, subprocess, tempfile, threading, time

BIN, AGENT = os.environ["BIN"], os.environ["AGENT"]
TIMEOUT, RUNS, CAP = os.environ["TIMEOUT"], int(os.environ["RUNS"]), int(os.environ["CAP"])
script = open(AGENT, "rb").read()

class Serve(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(script)))
        self.end_headers()
        self.wfile.write(script)
    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Serve)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}/agent"
platforms = ["linux-x86_64", "linux-aarch64", "darwin-aarch64", "darwin-x86_64"]

def registry(mode):
    root = tempfile.mkdtemp()
    os.makedirs(f"{root}/{mode}")
    target = {"archive": url, "cmd": "agent", "args": ["--mode", mode]}
    if mode == "probe":
        home = os.path.expanduser("~")
        probes = [f"{home}/.git-credentials", f"{home}/.npmrc", f"{home}/.ssh", f"{root}/.git",
                  "/etc/shadow"]
        target["env"] = {"SECRET_NAME": "GITHUB_TOKEN", "READ_PROBES": os.pathsep.join(probes)}
    doc = {"id": mode, "name": mode, "version": "1.0.0", "description": "A test agent.",
           "distribution": {"binary": {p: target for p in platforms}}}
    json.dump(doc, open(f"{root}/{mode}/agent.json", "w"))
    return root

def run(mode):
    """Wall seconds, peak RSS in MB (/usr/bin/time), whether the cap killed it, the findings."""
    root = registry(mode)
    env = dict(os.environ, ACP_REGISTRY_TEST_ALLOW_LOOPBACK="1")
    cmd = ["/usr/bin/time", "-f", "%e %M", "timeout", "-s", "KILL", str(CAP), BIN, "verify",
           "--registry", ".", "--no-cache", "--timeout", TIMEOUT, "--format", "json"]
    out = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    shutil.rmtree(root, ignore_errors=True)
    wall, rss = out.stderr.strip().splitlines()[-1].split()[-2:]
    try:
        findings = [f["message"] for f in json.loads(out.stdout)["findings"]]
    except ValueError:
        findings = []
    return float(wall), int(rss) / 1024, out.returncode in (124, 137, -9), findings

print(f"verify --timeout {TIMEOUT}, {RUNS} runs each, capped at {CAP} s: "
      "min / median / max wall, max peak RSS")
for mode in ("well-behaved", "probe", "flood", "deaf"):
    runs = [run(mode) for _ in range(RUNS)]
    walls = sorted(r[0] for r in runs)
    killed = sum(r[2] for r in runs)
    note = f", {killed} killed at the cap" if killed else ""
    print(f"  {mode:13} {walls[0]:5.1f} / {statistics.median(walls):5.1f} / {walls[-1]:5.1f} s"
          f"  {max(r[1] for r in runs):7.0f} MB{note}")
    for message in runs[-1][3][-2:]:
        print(f"      {message[:110]}")
PY
