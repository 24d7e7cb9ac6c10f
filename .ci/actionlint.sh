#!/usr/bin/env bash
# Lint every workflow with actionlint (and shellcheck for `run:` scripts), installing both when
# missing: shellcheck from Debian, actionlint from PyPI into a virtualenv under target/. The
# workflow `acp-registry init` writes for a registry repository is linted too, in both layouts
# (`registry/` and entries at the root), from the binary built here.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
if ! command -v shellcheck > /dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q shellcheck
fi
venv="target/ci-tools/actionlint"
if [ ! -x "$venv/bin/actionlint" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes \
    -r .ci/actionlint-requirements.txt
fi
# ci.yml uses tag-pinned actions on the node20 runtime, which this actionlint flags as
# deprecated; that is a note about GitHub's runtime, not a mistake in a workflow.
"$venv/bin/actionlint" -ignore 'runtime "node20" is deprecated' .github/workflows/*.yml
echo "actionlint: $(ls .github/workflows/*.yml | wc -l) workflows clean"
cargo build --quiet --bin acp-registry
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for registry in registry .; do
  repo="$scratch/registry-${registry/./root}"
  target/debug/acp-registry init "$repo" --registry "$registry" > /dev/null
  (cd "$repo" && "$OLDPWD/$venv/bin/actionlint" .github/workflows/registry.yml)
done
echo "actionlint: the workflow acp-registry init writes is clean (--registry registry and .)"
