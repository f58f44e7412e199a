"""`mcpgym new NAME`: the Python environment it writes passes its own test, run by pytest
as its author would, and is clean under the package's ruff rules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO, binary


def test_a_new_python_environment_passes_its_own_test(tmp_path: Path) -> None:
    folder = tmp_path / "coin-sum"
    made = subprocess.run(
        [binary(), "new", "coin-sum", "--dir", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["coin_sum.py", "test_coin_sum.py"]
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_coin_sum.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "MCPGYM_BINARY": binary()},
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "1 passed" in tested.stdout, tested.stdout
    ruff = Path(sys.executable).with_name("ruff")
    config = str(REPO / "python" / "pyproject.toml")
    for check in (["check"], ["format", "--check"]):
        linted = subprocess.run(
            [str(ruff), *check, "--config", config, str(folder)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert linted.returncode == 0, linted.stdout + linted.stderr
