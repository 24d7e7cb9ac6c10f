#!/usr/bin/env bash
# Installs what tests/site/browser.rs needs: Debian's chromium (/usr/bin/chromium) and the
# npm packages pinned in package-lock.json (playwright-core drives the browser, axe-core
# checks accessibility). Idempotent: does nothing that is already done. Runs as root on a
# fresh Debian machine (uses sudo otherwise).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
updated=""
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$updated" ]; then
    $sudo apt-get update -q
    updated=1
  fi
  $sudo apt-get install -y -q "$@"
}

if [ ! -x /usr/bin/chromium ]; then
  apt_install chromium
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm
fi
# playwright-core needs Node.js 20 or later.
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "tests/browser/install.sh: Node.js $(node --version) is too old; playwright-core needs 20 or later" >&2
  exit 1
fi

cd "$here"
# `npm ci` only when node_modules does not match the lock file.
stamp="node_modules/.installed-lock.json"
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  npm ci --no-audit --no-fund
  cp package-lock.json "$stamp"
fi
echo "browser test dependencies ready: $(/usr/bin/chromium --version 2>/dev/null | tail -n 1), node $(node --version)"
