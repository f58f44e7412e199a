"""The Qwen-Agent tests' setup: the checkout's debug binary, first on PATH (the manifests start
`mcpgym` by name)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

if not os.environ.get("MCPGYM_BINARY") and (REPO / "target" / "debug" / "mcpgym").is_file():
    os.environ["MCPGYM_BINARY"] = str(REPO / "target" / "debug" / "mcpgym")
if os.environ.get("MCPGYM_BINARY"):
    binary_dir = str(Path(os.environ["MCPGYM_BINARY"]).resolve().parent)
    os.environ["PATH"] = binary_dir + os.pathsep + os.environ.get("PATH", "")
