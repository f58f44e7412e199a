"""Wheel build hook: bundles the mcpgym binary, stripped, as `mcpgym/_bin/mcpgym`.

The binary comes from `MCPGYM_BINARY` when set, else from the checkout's release build
(`../target/release/mcpgym`) when present. With one, the wheel is a platform wheel
(`py3-none-linux_x86_64` on x86-64 Linux): the binary does not depend on the Python version, but
it does on the glibc and the system libraries (libgbm, libwayland-client, libxcb) of the machine
it was built on, which puts it outside the manylinux policy until `auditwheel repair` grafts
them. With none (an sdist build, an editable install), the wheel is pure Python and finds a
binary at run time (`mcpgym.binary_path`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _invocation_path(value: str) -> Path:
    """`value` as a path, a relative one resolved against the directory `pip` was run from.

    pip runs the build backend in the package's own directory (or a copy of it), not where it
    was invoked; the invoking shell's `PWD`, which the build's process inherits, still names
    that directory. Without `PWD` (or when it does not hold the file), the current directory.
    """
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    invoked = os.environ.get("PWD")
    if invoked and Path(invoked).is_absolute() and (Path(invoked) / path).is_file():
        return Path(invoked) / path
    return Path.cwd() / path


class BundleBinary(BuildHookInterface):  # type: ignore[type-arg]
    """Puts a stripped copy of the binary into platform wheels."""

    PLUGIN_NAME = "custom"

    def _source(self) -> Path | None:
        explicit = os.environ.get("MCPGYM_BINARY")
        if explicit:
            path = _invocation_path(explicit)
            if not path.is_file():
                raise FileNotFoundError(
                    f"MCPGYM_BINARY={explicit} is not a file (looked for {path}); build the "
                    "binary first (cargo build --release) or unset MCPGYM_BINARY for a "
                    "pure-Python wheel"
                )
            return path
        release = Path(self.root).parent / "target" / "release" / "mcpgym"
        return release if release.is_file() else None

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Strips the binary into a scratch directory and adds it to the wheel."""
        # An editable install runs from the source tree and finds the binary at run time.
        if self.target_name != "wheel" or version == "editable":
            return
        source = self._source()
        if source is None:
            self.app.display_info("mcpgym: no binary to bundle; building a pure-Python wheel")
            return
        self._scratch = tempfile.mkdtemp(prefix="mcpgym-wheel-")
        stripped = Path(self._scratch) / "mcpgym"
        # Debug info is most of the file (370 MB in a debug build); symbols stay so that a
        # panic's backtrace still names functions.
        objcopy = shutil.which("objcopy")
        if objcopy is None:
            raise FileNotFoundError(
                "objcopy (binutils) is needed to strip the bundled binary; install binutils"
            )
        subprocess.run([objcopy, "--strip-debug", str(source), str(stripped)], check=True)
        stripped.chmod(0o755)
        self.app.display_info(
            f"mcpgym: bundling {source} ({stripped.stat().st_size // 2**20} MiB stripped)"
        )
        build_data["force_include"][str(stripped)] = "mcpgym/_bin/mcpgym"
        build_data["pure_python"] = False
        platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        build_data["tag"] = f"py3-none-{platform}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        """Removes the scratch copy."""
        scratch = getattr(self, "_scratch", None)
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
