#!/usr/bin/env bash
# Benchmark: peak memory of `update` (and `validate --online`) against amplified answers: a
# local server (python3's http.server on 127.0.0.1) answers npm, PyPI and the GitHub API with
# documents of MIB MiB (default 30, under the 32 MiB document cap) made of tiny JSON values
# (`[0,0,0,…]` inside one version, one release file, one release asset), and with a small
# normal answer as the same-run reference. Prints one Markdown table: exit code, wall time and
# peak RSS (/usr/bin/time) of each run (VERBOSE=1 prints each run's output). Uses the
# test-only loopback switch.
# Usage: bench/update.sh [MIB]            (PROFILE=dev for a debug build)
#        BIN=/path/to/acp-registry bench/update.sh   (measure another build, e.g. an older one)
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-30}
profile=${PROFILE:-release}
if [ -z "${BIN:-}" ]; then
  cargo build --profile "$profile" --quiet --bin acp-registry
  BIN="${CARGO_TARGET_DIR:-$PWD/target}/$([ "$profile" = dev ] && echo debug || echo "$profile")/acp-registry"
fi
work=$(mktemp -d -p "${BENCH_DIR:-${TMPDIR:-/tmp}}")
server=
trap '[ -n "$server" ] && kill "$server"; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="https://127.0.0.1:$port"
WORK=$work BASE=$base MIB=$mib python3 - <<'PY'
import json, os
W, B, MIB = os.environ["WORK"], os.environ["BASE"], int(os.environ["MIB"])
zeros = "[" + ",".join(["0"] * (MIB * 1024 * 1024 // 2 - 64)) + "]"
def write(path, text):
    os.makedirs(os.path.dirname(f"{W}/www/{path}"), exist_ok=True)
    open(f"{W}/www/{path}", "w").write(text)
write("npm/small", json.dumps({"name": "small", "dist-tags": {"latest": "1.1.0"},
                               "versions": {"1.0.0": {}, "1.1.0": {}}}))
write("npm/amp", '{"name":"amp","dist-tags":{"latest":"1.1.0"},"versions":{"1.0.0":{},'
                 '"1.1.0":{"x":' + zeros + '}}}')
write("pypi-api/pypi/amp/json", '{"info":{"version":"1.1.0"},"releases":{"1.0.0":[{"yanked":false}],'
                                '"1.1.0":[{"yanked":false,"x":' + zeros + '}]}}')
asset = f"{B}/example/agent/releases/download/v1.1.0/agent-1.1.0-linux.tar.gz"
write("api/repos/example/agent/releases",
      '[{"tag_name":"v1.1.0","draft":false,"prerelease":false,"assets":[{"name":"agent-1.1.0-linux.tar.gz",'
      f'"browser_download_url":"{asset}","digest":"sha256:{"ab" * 32}","x":' + zeros + '}]}]')
reg = f"{W}/registry"
os.makedirs(reg)
open(f"{reg}/acp-registry.jsonc", "w").write(json.dumps({
    "severity": {"platform-coverage": "off"},
    "online": {"npm_registry": f"{B}/npm", "pypi": f"{B}/pypi-api", "github_api": f"{B}/api"}}))
icon = ('<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">'
        '<circle cx="8" cy="8" r="6" fill="currentColor"/></svg>\n')
archive = f"{B}/example/agent/releases/download/v1.0.0/agent-1.0.0-linux.tar.gz"
entries = {
    "small": {"npx": {"package": "small@1.0.0"}},
    "npm-amp": {"npx": {"package": "amp@1.0.0"}},
    "pypi-amp": {"uvx": {"package": "amp==1.0.0"}},
    "github-amp": {"binary": {"linux-x86_64": {"archive": archive, "cmd": "./agent", "sha256": "0" * 64}}},
}
for id, dist in entries.items():
    os.makedirs(f"{reg}/{id}")
    open(f"{reg}/{id}/icon.svg", "w").write(icon)
    open(f"{reg}/{id}/agent.json", "w").write(json.dumps({
        "id": id, "name": "Example Agent", "version": "1.0.0",
        "description": "A coding agent that reads, edits and runs code in a project.",
        "repository": "https://github.com/example/agent", "authors": ["Example Inc."],
        "license": "MIT", "license_url": "https://github.com/example/agent/blob/main/LICENSE",
        "distribution": dist}, indent=2) + "\n")
PY
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/www" >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null && break
  sleep 0.1
done
measure() {
  /usr/bin/time -f "%e %M %x" -o "$work/time" env ACP_REGISTRY_TEST_ALLOW_LOOPBACK=1 "$@" \
    >"$work/out" 2>&1 || true
  read -r wall kib code < <(tail -n 1 "$work/time")
  [ -n "${VERBOSE:-}" ] && cat "$work/out" >&2
  printf '%s | %s s | %d MB' "$code" "$wall" "$((kib / 1024))"
}
echo "| command | answer | exit | wall | peak RSS |"
echo "|---|---|---|---|---|"
echo "| \`update --agent small\` (reference) | npm, 2 versions, $(wc -c <"$work/www/npm/small") bytes | $(measure "$BIN" update --registry "$work/registry" --agent small) |"
for id in npm-amp pypi-amp github-amp; do
  echo "| \`update --agent $id\` | ${id%-amp}, $mib MiB of \`[0,0,…]\` | $(measure "$BIN" update --registry "$work/registry" --agent "$id") |"
done
echo "| \`validate --online --no-cache\` (npm and PyPI pins) | both amplified answers | $(measure "$BIN" validate --registry "$work/registry" --online --no-cache) |"
