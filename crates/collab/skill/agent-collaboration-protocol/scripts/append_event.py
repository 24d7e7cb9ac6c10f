#!/usr/bin/env python3
"""append_event: runs `acp-collab append` with the same flags, output and exit codes."""

import os
import sys

# No __pycache__ inside the skill folder.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _acp_collab import run  # noqa: E402

run("append_event")
