"""The `mcpgym` console script: runs the mcpgym binary with the same arguments."""

from __future__ import annotations

import os
import sys

from mcpgym.client import McpgymError
from mcpgym.server import binary_path


def main() -> None:
    """Replaces this process with the binary, so signals, stdio and the exit code are its own."""
    try:
        binary = binary_path()
    except McpgymError as error:
        print(f"mcpgym: {error}", file=sys.stderr)
        raise SystemExit(127) from None
    # Environments written in Python (`mcpgym serve --python`) run on this interpreter, which
    # has this package.
    os.environ.setdefault("MCPGYM_PYTHON", sys.executable)
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
