#!/usr/bin/env bash
# The install step of action.yml: put acp-registry for the runner's platform on PATH, from a
# release whose archive matches its line in the release's SHA256SUMS, or built from the
# action's own source. Inputs arrive as environment variables, never pasted into the script:
#
#   INPUT_VERSION       empty: v<the version of $ACTION_PATH/Cargo.toml>, the release built
#                       from the same source as the action; `latest`; a tag such as `v0.1.0`;
#                       or `source` (cargo install --locked from $ACTION_PATH)
#   INPUT_REPOSITORY    owner/name whose GitHub releases hold the archives
#   INPUT_DOWNLOAD_URL  base URL of the assets instead (a mirror, or file:// for tests)
#   ACTION_PATH         the action's folder; RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP,
#                       GITHUB_PATH and GITHUB_OUTPUT come from the runner
set -euo pipefail

error() {
  echo "::error::$*"
  exit 1
}

# target: the release target of the runner's platform; the same list as release.yml's matrix.
set_target() {
  case "$RUNNER_OS/$RUNNER_ARCH" in
    Linux/X64) target=x86_64-unknown-linux-musl ;;
    Linux/ARM64) target=aarch64-unknown-linux-musl ;;
    macOS/X64) target=x86_64-apple-darwin ;;
    macOS/ARM64) target=aarch64-apple-darwin ;;
    Windows/X64) target=x86_64-pc-windows-msvc ;;
    Windows/ARM64) target=aarch64-pc-windows-msvc ;;
    *) error "acp-registry has no release for $RUNNER_OS/$RUNNER_ARCH; use version: source" ;;
  esac
}

# tag: the version input; empty is the release of the action's own Cargo.toml.
set_tag() {
  tag="$INPUT_VERSION"
  if [ -z "$tag" ]; then
    tag="$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$ACTION_PATH/Cargo.toml" | head -n 1)"
    [ -n "$tag" ] || error "$ACTION_PATH/Cargo.toml names no version; set the version input"
    tag="v$tag"
  fi
  [[ "$tag" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] \
    || error "version: $tag is not a release tag (v0.1.0), latest or source"
}

# The download-url input, when set, must be an https:// or file:// URL: said here, naming the
# input, rather than in curl's words.
check_download_url() {
  [ -n "$INPUT_DOWNLOAD_URL" ] || return 0
  local lower
  lower="$(printf '%s' "$INPUT_DOWNLOAD_URL" | tr '[:upper:]' '[:lower:]')"
  case "$lower" in
    https://?*|file://?*) ;;
    *) error "download-url: $INPUT_DOWNLOAD_URL is not an https:// or file:// URL (the only schemes the action downloads from); give the https URL of a folder holding the release assets (a mirror), or file:///path of a local folder" ;;
  esac
}

# Where the release assets of tag $1 are.
assets_url() {
  if [ -n "$INPUT_DOWNLOAD_URL" ]; then
    echo "${INPUT_DOWNLOAD_URL%/}"
  elif [ "$1" = latest ]; then
    echo "https://github.com/$INPUT_REPOSITORY/releases/latest/download"
  else
    echo "https://github.com/$INPUT_REPOSITORY/releases/download/$1"
  fi
}

# Download $1 to $2 over https (or file://), saying what to do when the release is missing.
fetch() {
  local status=0 code
  code="$(curl --fail --silent --show-error --location --retry 3 --proto '=https,file' \
    --proto-redir '=https' --write-out '%{http_code}' --output "$2" "$1")" || status=$?
  [ "$status" -eq 0 ] && return
  if [ "$code" = 404 ] || [[ "$1" = file://* ]]; then
    error "no release asset at $1 (acp-registry $tag has no release for $target there?);" \
      "use version: latest for the newest release, or version: source to build this action's source"
  fi
  error "could not download $1 (curl exit $status, HTTP ${code:-none})"
}

sha256_of() {
  if command -v sha256sum > /dev/null; then
    sha256sum "$1" | awk '{ print $1 }'
  else
    shasum -a 256 "$1" | awk '{ print $1 }'
  fi
}

# Download the archive of $target, check it against SHA256SUMS, unpack acp-registry to $dir/bin.
install_release() {
  local asset="acp-registry-$target.tar.gz" base expected actual unpacked
  if [ "$RUNNER_OS" = Windows ]; then asset="acp-registry-$target.zip"; fi
  base="$(assets_url "$tag")"
  fetch "$base/SHA256SUMS" "$dir/SHA256SUMS"
  fetch "$base/$asset" "$dir/$asset"
  expected="$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1 }' "$dir/SHA256SUMS")"
  if [ -z "$expected" ]; then
    error "SHA256SUMS of acp-registry $tag ($base) lists no $asset: refusing to install it"
  fi
  if [ "$(printf '%s\n' "$expected" | sort -u | wc -l)" -ne 1 ]; then
    error "SHA256SUMS of acp-registry $tag lists $asset with different digests: refusing to install it"
  fi
  actual="$(sha256_of "$dir/$asset")"
  if [ "$expected" != "$actual" ]; then
    error "$asset has sha256 $actual, SHA256SUMS says $expected: refusing to install it"
  fi
  unpacked="$(mktemp -d "$dir/unpacked.XXXXXX")"
  case "$asset" in
    *.zip) unzip -q "$dir/$asset" -d "$unpacked" ;;
    *) tar -xzf "$dir/$asset" -C "$unpacked" ;;
  esac
  # The layout of scripts/package.sh (and of Cargo.toml's binstall bin-dir).
  local found="$unpacked/acp-registry-$target/$exe"
  [ -f "$found" ] || error "$asset holds no acp-registry-$target/$exe"
  mv -f "$found" "$dir/bin/$exe"
  chmod +x "$dir/bin/$exe"
  rm -rf "$unpacked"
}

check_download_url
set_target
set_tag
exe=acp-registry
if [ "$RUNNER_OS" = Windows ]; then exe=acp-registry.exe; fi
dir="$RUNNER_TEMP/acp-registry-$tag-$target"
mkdir -p "$dir/bin"
if [ "$tag" = source ]; then
  cargo install --locked --quiet --root "$dir" --path "$ACTION_PATH" --bin acp-registry
else
  install_release
fi
"$dir/bin/$exe" --version
echo "$dir/bin" >> "$GITHUB_PATH"
echo "path=$dir/bin/$exe" >> "$GITHUB_OUTPUT"
