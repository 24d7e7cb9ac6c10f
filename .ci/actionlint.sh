#!/usr/bin/env bash
# Lint every workflow with actionlint (and shellcheck for `run:` scripts), installing both when
# missing: shellcheck from Debian, actionlint from PyPI into a virtualenv under target/.
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
