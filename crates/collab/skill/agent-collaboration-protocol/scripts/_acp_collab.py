"""Runs one acp-collab command for the launchers beside this file.

The launchers keep the published script names and flags, so an agent that runs
`python3 <skill>/scripts/init_collaboration.py --folder ...` gets the same files,
messages and exit codes from the acp-collab engine. The engine is looked up in
this order: the binary `acp-collab skill install` recorded in acp-collab-path.txt,
the binary bundled next to the skill folder in the release archive, the
ACP_COLLAB environment variable, then PATH.
"""

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXE = "acp-collab.exe" if os.name == "nt" else "acp-collab"
POINTER = os.path.join(HERE, "acp-collab-path.txt")


def _recorded():
    try:
        with open(POINTER, encoding="utf-8") as f:
            path = f.read().strip()
    except OSError:
        return None
    return path if path and os.path.isfile(path) else None


def find_binary():
    """The acp-collab executable to run, or None."""
    bundled = os.path.join(os.path.dirname(os.path.dirname(HERE)), EXE)
    for candidate in (_recorded(), bundled if os.path.isfile(bundled) else None):
        if candidate:
            return candidate
    return os.environ.get("ACP_COLLAB") or shutil.which("acp-collab")


def run(command):
    """Replaces this process with `acp-collab <command> <arguments>`."""
    binary = find_binary()
    if not binary:
        sys.stderr.write(
            "error: acp-collab not found next to the skill, in ACP_COLLAB or on PATH; "
            "install it (acp-collab skill install) or set ACP_COLLAB=/path/to/acp-collab\n"
        )
        sys.exit(2)
    # acp-collab prints follow-up commands in this launcher form when it sees this.
    env = dict(os.environ, ACP_COLLAB_SCRIPTS=HERE)
    args = [binary, command] + sys.argv[1:]
    sys.stdout.flush()
    try:
        if os.name == "nt":
            sys.exit(subprocess.call(args, env=env))
        os.execve(binary, args, env)
    except OSError as e:
        sys.stderr.write("error: cannot run %s: %s; set ACP_COLLAB to the acp-collab binary\n" % (binary, e))
        sys.exit(2)
