#!/usr/bin/env bash
# The I/O floor of `acp-registry build`: the file-system work a build cannot avoid, done as
# plainly as possible, to time a build against. It reads every file of the registry, creates
# as many files of the same sizes (and folders) as a reference output tree holds, in a new
# folder, and makes them durable with one sync of that folder's file system (`sync -f`,
# syncfs(2)). No validation, no JSON, no hashing, no swap: what is left is reading, creating,
# writing and flushing.
#
# Usage: bench/io_floor.sh REGISTRY REFERENCE OUT
#   REGISTRY   the registry the build reads
#   REFERENCE  an output tree of that build (only its file sizes and folders are used)
#   OUT        a new folder to create (must not exist; removing it afterwards is the caller's)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 REGISTRY REFERENCE OUT" >&2; exit 2; }
registry=$1 reference=$2 out=$3
python3 - "$registry" "$reference" "$out" <<'PY'
import os, sys

registry, reference, out = sys.argv[1:]

def files(root):
    for folder, _, names in os.walk(root):
        for name in names:
            yield os.path.join(folder, name)

# Read every input, as the build does (each whole, once).
for path in files(registry):
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass

# The reference's shape, listed before the clock matters most: (relative path, size).
shape = [(os.path.relpath(p, reference), os.path.getsize(p)) for p in files(reference)]
zeros = bytes(max((size for _, size in shape), default=0))
os.mkdir(out)
made = {out}
for rel, size in shape:
    path = os.path.join(out, rel)
    folder = os.path.dirname(path)
    if folder not in made:
        os.makedirs(folder, exist_ok=True)
        made.add(folder)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, zeros[:size])
    os.close(fd)
PY
# One sync of the file system holding the new files.
sync -f "$out"
