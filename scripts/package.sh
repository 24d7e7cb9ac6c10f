#!/usr/bin/env bash
# Release archives of one target, into one release folder (run it once per target into the
# same folder):
#
#   acp-registry-<target>.tar.gz (.zip for Windows): acp-registry-<target>/ holding both
#     executables (what `cargo install` gives), LICENSE and README.md; the layout the
#     `[package.metadata.binstall]` of Cargo.toml names.
#   acp-collab-<target>.tar.gz (.zip): exactly what `acp-registry pack` makes, the archive of
#     the agent-collaboration-protocol entry, whose agent.json in --registry it records.
#   <archive>.sha256 beside each (sha256sum format), and SHA256SUMS: every .sha256 of the folder.
#
# Archives are deterministic (sorted names, owner 0, mtime SOURCE_DATE_EPOCH or 0, gzip -n)
# and must fit their size budget; each archive's size is printed. release.yml and
# tests/registry/integrations.rs both run this script.
#
# A release is made by shell scripts around the built binaries, not by the tool: this one needs
# only bash, GNU tar, gzip, python3 (for zip) and sha256sum, so it runs on a runner and on a
# fresh Linux machine. The `acp-registry` archive's layout is the `bin-dir` both packages'
# `[package.metadata.binstall]` name, so the action, a manual download and `cargo binstall`
# read one archive. The budgets are raised (--max-*-bytes) only for debug builds in tests.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/package.sh --target TRIPLE --version X.Y.Z --bin-dir DIR --registry DIR
                          --tool PATH --out DIR [--license FILE] [--readme FILE]
                          [--max-collab-bytes N] [--max-registry-bytes N]
       scripts/package.sh -h | --help

Builds the release archives of one target into a release folder (run once per target into
the same folder): acp-registry-TRIPLE.tar.gz (.zip for Windows targets) with both
executables, LICENSE and README.md; acp-collab-TRIPLE.tar.gz (.zip), the archive
`acp-registry pack` makes for the agent-collaboration-protocol entry (recorded in its
agent.json under --registry); a .sha256 file beside each archive and SHA256SUMS listing
them. Each archive's size is printed and checked against its budget.

  --target    the Rust target triple the binaries were built for, e.g. x86_64-unknown-linux-gnu
  --version   the release version, X.Y.Z (a leading v is dropped)
  --bin-dir   folder holding the built acp-registry[.exe] and acp-collab[.exe] of TRIPLE
  --registry  registry folder: `pack` edits agent-collaboration-protocol/agent.json in it
  --tool      an acp-registry that runs on this machine, to run `pack` with
  --out       the release folder the archives, .sha256 files and SHA256SUMS go to
  --license, --readme   the files put in the acp-registry archive [default: the repository's]
  --max-collab-bytes, --max-registry-bytes   size budgets in bytes [default: 3000000 and
              10000000]; raise them only for debug builds

Environment:
  SOURCE_DATE_EPOCH              the mtime of every archive entry (default 0)
  ACP_PACKAGE_MAX_COLLAB_BYTES   the acp-collab archive's budget when the flag is not given
  ACP_PACKAGE_MAX_REGISTRY_BYTES the acp-registry archive's budget when the flag is not given

Needs bash, GNU tar, gzip, python3 (for zip) and sha256sum. Exit status: 0 archives written,
2 a usage error or a failed step (the message says which).
EOF
}

fail() {
  echo "package.sh: $*" >&2
  exit 2
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
entry=agent-collaboration-protocol
target="" version="" bin_dir="" registry="" tool="" out=""
license="$root/LICENSE"
readme="$root/README.md"
max_collab="${ACP_PACKAGE_MAX_COLLAB_BYTES:-3000000}"
max_registry="${ACP_PACKAGE_MAX_REGISTRY_BYTES:-10000000}"
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --target | --version | --bin-dir | --registry | --tool | --out | --license | --readme | \
      --max-collab-bytes | --max-registry-bytes) ;;
    *) fail "unknown option $1; see scripts/package.sh --help" ;;
  esac
  [ $# -ge 2 ] || fail "$1 needs a value; see scripts/package.sh --help"
  case "$1" in
    --target) target="$2" ;;
    --version) version="${2#v}" ;;
    --bin-dir) bin_dir="$2" ;;
    --registry) registry="$2" ;;
    --tool) tool="$2" ;;
    --out) out="$2" ;;
    --license) license="$2" ;;
    --readme) readme="$2" ;;
    --max-collab-bytes) max_collab="$2" ;;
    --max-registry-bytes) max_registry="$2" ;;
  esac
  shift 2
done
for name in target version bin_dir registry tool out; do
  [ -n "${!name}" ] || { usage >&2; fail "--${name//_/-} is required"; }
done
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version $version is not X.Y.Z"
[[ "$max_collab$max_registry" =~ ^[0-9]+$ ]] || fail "size budgets must be byte counts"

exe="" format=tar.gz
case "$target" in
  *-windows-*) exe=.exe format=zip ;;
esac
for bin in acp-registry acp-collab; do
  [ -f "$bin_dir/$bin$exe" ] || fail "$bin_dir/$bin$exe: no such file (build $target first)"
done
for file in "$license" "$readme" "$tool"; do
  [ -f "$file" ] || fail "$file: no such file"
done
epoch="${SOURCE_DATE_EPOCH:-0}"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A deterministic archive of the folder $1's children, in $2.
archive() {
  case "$2" in
    *.zip)
      # Zip stores local times from 1980 on; SOURCE_DATE_EPOCH is read as UTC.
      python3 - "$1" "$2" "$epoch" <<'EOF'
import os, sys, time, zipfile
src, dest, epoch = sys.argv[1], sys.argv[2], max(int(sys.argv[3]), 315532800)
stamp = time.gmtime(epoch)[:6]
paths = []
for dirpath, dirs, files in os.walk(src):
    for name in dirs + files:
        paths.append(os.path.relpath(os.path.join(dirpath, name), src))
with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
    for rel in sorted(paths):
        full = os.path.join(src, rel)
        folder = os.path.isdir(full)
        info = zipfile.ZipInfo(rel.replace(os.sep, "/") + ("/" if folder else ""), stamp)
        info.create_system = 3
        mode = 0o755 if folder or os.access(full, os.X_OK) else 0o644
        info.external_attr = ((0o040000 if folder else 0o100000) | mode) << 16
        if folder:
            z.writestr(info, b"")
        else:
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(full, "rb") as f:
                z.writestr(info, f.read(), compresslevel=9)
EOF
      ;;
    *)
      (cd "$1" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort > "$work/names")
      tar --create --format=ustar --no-recursion --owner=0 --group=0 --numeric-owner \
        --mtime="@$epoch" --directory="$1" --files-from="$work/names" \
        | gzip -9 -n > "$2"
      ;;
  esac
}

# Writes <file>.sha256 and enforces the budget $2 on the archive $1 (in $out).
record() {
  local file="$1" budget="$2" size
  size="$(wc -c < "$out/$file" | tr -d ' ')"
  echo "$file: $size bytes (budget $budget)"
  if [ "$size" -gt "$budget" ]; then
    rm -f "$out/$file"
    fail "$file is $size bytes, over its budget of $budget bytes"
  fi
  (cd "$out" && sha256sum "$file" > "$file.sha256")
}

# acp-registry-<target>: both executables, as `cargo install` installs them.
stem="acp-registry-$target"
mkdir -p "$work/registry/$stem"
for bin in acp-registry acp-collab; do
  install -m 0755 "$bin_dir/$bin$exe" "$work/registry/$stem/$bin$exe"
done
install -m 0644 "$license" "$work/registry/$stem/LICENSE"
install -m 0644 "$readme" "$work/registry/$stem/README.md"
chmod 0755 "$work/registry/$stem"
archive "$work/registry" "$out/$stem.$format"
record "$stem.$format" "$max_registry"

# acp-collab-<target>: the registry entry's archive, as `pack` writes and records it.
"$tool" pack "$entry" --registry "$registry" --target "$target" \
  --binary "$bin_dir/acp-collab$exe" --version "$version" --license "$license" \
  --out "$work/pack" > /dev/null
collab="acp-collab-$target.$format"
[ -f "$work/pack/v$version/$collab" ] || fail "pack wrote no $collab"
cp "$work/pack/v$version/$collab" "$out/$collab"
record "$collab" "$max_collab"
cmp -s "$out/$collab.sha256" "$work/pack/v$version/$collab.sha256" \
  || fail "$collab: the checksum pack recorded is not the archive's"

# SHA256SUMS: every .sha256 of the release folder, so runs for other targets add theirs.
(cd "$out" && LC_ALL=C sort -k2 ./*.sha256 > "$work/SHA256SUMS" && mv "$work/SHA256SUMS" SHA256SUMS \
  && sha256sum --check --quiet SHA256SUMS)
