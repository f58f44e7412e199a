"""Running the mcpgym binary: finding it, and serving HTTP from a child process."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from mcpgym.client import AsyncClient, Client, McpgymError

__all__ = ["Server", "binary_path"]

_READY_PREFIX = "mcpgym: listening on "
# Lines of the child's stderr kept to explain a failure.
_STDERR_TAIL = 200


def _bundled() -> Path:
    return Path(__file__).resolve().parent / "_bin" / "mcpgym"


def _is_own_script(path: Path) -> bool:
    """Whether `path` is this package's `mcpgym` console script rather than the binary."""
    try:
        with path.open("rb") as file:
            head = file.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and b"mcpgym._cli" in head


def binary_path() -> str:
    """The mcpgym binary to run.

    In order: `$MCPGYM_BINARY` when set, the binary bundled in this package's wheel
    (`mcpgym/_bin/mcpgym`), then an `mcpgym` on `PATH` that is not this package's own console
    script. Raises `McpgymError` saying how to get one when none is found.
    """
    explicit = os.environ.get("MCPGYM_BINARY")
    if explicit:
        if not os.access(explicit, os.X_OK) or not Path(explicit).is_file():
            raise McpgymError(
                f"MCPGYM_BINARY={explicit} is not an executable file; point it at a built "
                f"binary (e.g. target/release/mcpgym after `cargo build --release`) or unset it"
            )
        return explicit
    bundled = _bundled()
    if os.access(bundled, os.X_OK):
        return str(bundled)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(directory or ".") / "mcpgym"
        if candidate.is_file() and os.access(candidate, os.X_OK) and not _is_own_script(candidate):
            return str(candidate)
    raise McpgymError(
        "no mcpgym binary found: install the platform wheel (`pip install mcpgym` on Linux "
        "x86-64), or build one from the repository (`cargo build --release`, then set "
        "MCPGYM_BINARY=target/release/mcpgym or `cargo install --path servers/mcpgym`)"
    )


class Server:
    """An mcpgym HTTP server in a child process, on a free loopback port.

    `Server("wordle")` runs `mcpgym wordle --http 127.0.0.1:0`; `Server("serve", "--max-turns",
    "40")` hosts every environment with that flag. `url` is where it listens. Stop it with
    `stop()` or by leaving a `with` block.

    The server's stderr is kept (its last lines, `stderr()`): a server that fails to start
    raises `McpgymError` carrying them. One that exits before it is stopped says so with them
    in `check()`, in the "cannot reach" errors of its `client()`s, and when an error leaves
    its `with` block (that error becomes the cause of one saying the server exited).
    """

    url: str
    """`http://127.0.0.1:PORT`, as the server announced it."""
    token: str | None
    """The bearer token every request must carry, when one was given."""

    def __init__(
        self,
        *args: str,
        binary: str | None = None,
        token: str | None = None,
        env: Mapping[str, str] | None = None,
        startup_timeout: float = 300.0,
    ) -> None:
        """Starts the binary (`binary`, else `binary_path()`) with `args`, adding `--http
        127.0.0.1:0` unless `--http` is among them, with `token` required of every request and
        `env` added to the environment; waits up to `startup_timeout` seconds for it to listen."""
        if not args:
            raise ValueError('name a command, e.g. Server("wordle") or Server("serve")')
        command = [binary or binary_path(), *args]
        if not any(arg == "--http" or arg.startswith("--http=") for arg in args):
            command += ["--http", "127.0.0.1:0"]
        child_env = dict(os.environ)
        # Environments written in Python run on this interpreter, which has this package.
        child_env.setdefault("MCPGYM_PYTHON", sys.executable)
        child_env.update(env or {})
        if token is not None:
            # Through the environment, so the token does not show in the process list.
            child_env["MCPGYM_TOKEN"] = token
        self.token = token
        self.command = command
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        self._ready = threading.Event()
        self._url: str | None = None
        self._stopping = False
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=child_env,
            text=True,
            errors="replace",
        )
        # The reader drains stderr for the child's whole life, so a chatty server never blocks
        # on a full pipe.
        self._reader = threading.Thread(target=self._drain, name="mcpgym-stderr", daemon=True)
        self._reader.start()
        if not self._ready.wait(startup_timeout) or self._url is None:
            self._stopping = True
            self.stop()
            raise McpgymError(
                f"`{' '.join(command)}` did not start listening "
                f"(exit code {self._process.returncode}); its stderr ended with:\n" + self.stderr()
            )
        self.url = self._url

    def _drain(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        for raw in stream:
            line = raw.rstrip("\n")
            self._stderr.append(line)
            if self._url is None and line.startswith(_READY_PREFIX):
                self._url = line[len(_READY_PREFIX) :].strip()
                self._ready.set()
        # The child closed stderr (it exited): wake a waiting constructor.
        self._ready.set()

    def stderr(self) -> str:
        """The last lines the server wrote to stderr."""
        return "\n".join(self._stderr)

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._process.pid

    def running(self) -> bool:
        """Whether the child is still running."""
        return self._process.poll() is None

    def client(self, timeout: float = 300.0) -> Client:
        """A synchronous client for this server (its "cannot reach" errors say so when the
        server has exited, with its stderr)."""
        client = Client(self.url, token=self.token, timeout=timeout)
        client._diagnose = self._diagnose
        return client

    def async_client(self, timeout: float = 300.0) -> AsyncClient:
        """An asynchronous client for this server (see `client`)."""
        client = AsyncClient(self.url, token=self.token, timeout=timeout)
        client._diagnose = self._diagnose
        return client

    def _exited_error(self) -> McpgymError | None:
        """The error saying the server exited by itself, if it did."""
        code = self._process.poll()
        if code is None or self._stopping:
            return None
        self._reader.join(timeout=5)
        return McpgymError(
            f"the mcpgym server `{' '.join(self.command)}` exited early (exit code {code}); "
            "its stderr ended with:\n" + self.stderr()
        )

    def check(self) -> None:
        """Raises `McpgymError` with the server's stderr if it has exited by itself."""
        error = self._exited_error()
        if error is not None:
            raise error

    def _diagnose(self) -> str:
        """What a client of this server adds to "cannot reach": the exit and stderr, if the
        server has exited by itself."""
        error = self._exited_error()
        return f"; {error}" if error is not None else ""

    def stop(self, timeout: float = 30.0) -> None:
        """Asks the server to shut down (SIGTERM), killing it after `timeout` seconds."""
        self._stopping = True
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._reader.join(timeout=5)

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        early = self._exited_error() if isinstance(exc, Exception) else None
        self.stop()
        if early is not None:
            # What went wrong in the block (often "cannot reach") came from this exit.
            raise early from exc

    def __del__(self) -> None:
        # A server left running outlives nothing: it would hold its port and episodes.
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            process.kill()
