#!/usr/bin/env bash
# The action's moving major tag for the release tag $1 (`v0` for 0.x, `vN` for N >= 1), given
# the repository's tag names on stdin; prints nothing when a higher release of that major exists,
# so publishing a fix for an older line never moves the tag back. release.yml moves the tag it
# prints to the release's commit.
set -euo pipefail
release="${1:?usage: major-tag.sh vX.Y.Z < tag-names}"
[[ "$release" =~ ^v([0-9]+)\.[0-9]+\.[0-9]+$ ]] || { echo "major-tag.sh: $release is not vX.Y.Z" >&2; exit 2; }
major="v${BASH_REMATCH[1]}"
highest="$( (grep -E "^$major\.[0-9]+\.[0-9]+$" || true; echo "$release") | sort -V | tail -n 1)"
if [ "$highest" = "$release" ]; then
  echo "$major"
fi
