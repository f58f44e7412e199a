"""What the Python tests share: the binary, metrics, and a Wordle player that wins most games."""

from __future__ import annotations

import contextlib
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from mcpgym import AsyncEpisode, Episode, Server, Step, binary_path

REPO = Path(__file__).resolve().parents[2]
"""The repository root."""

# Six allowed guesses; played in order they end any game (a loss at worst).
WORDLE_GUESSES = ("crane", "slate", "pious", "dough", "nymph", "blitz")

_WORDLE_DATA = REPO / "servers" / "wordle" / "data"
_FEEDBACK_NAMES = {"🟩": "green", "🟨": "yellow", "⬛": "gray"}


def binary() -> str:
    """The mcpgym binary the tests run (`MCPGYM_BINARY`, set by conftest to the debug build)."""
    return binary_path()


def metric(url: str, name: str, token: str | None = None, **labels: str) -> float:
    """The value of metric `name` with exactly `labels` in the server's `/metrics`, or 0.0 when
    it has not been reported yet."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    text = httpx.get(f"{url.rstrip('/')}/metrics", headers=headers, timeout=60).text
    wanted = dict(labels)
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = re.fullmatch(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)", line.strip())
        if match is None or match.group(1) != name:
            continue
        found = dict(
            re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', match.group(2) or "")
        )
        if found == wanted:
            return float(match.group(3))
    return 0.0


def started(server: Server, env: str) -> float:
    """`mcpgym_episodes_started_total{env=…}` on `server`."""
    return metric(server.url, "mcpgym_episodes_started_total", server.token, env=env)


def episode_status(server: Server, episode_id: str) -> dict[str, Any]:
    """`GET /episodes/{id}` on `server`, which must answer 200."""
    response = httpx.get(f"{server.url}/episodes/{episode_id}", timeout=60)
    assert response.status_code == 200, response.text
    status: dict[str, Any] = response.json()
    return status


def wait_gone(server: Server, episode_id: str) -> None:
    """Waits (generously) until `server` has closed the episode: `GET /episodes/{id}` is 404."""
    deadline = time.monotonic() + 30
    while httpx.get(f"{server.url}/episodes/{episode_id}", timeout=60).status_code != 404:
        assert time.monotonic() < deadline, f"episode {episode_id} still open"
        time.sleep(0.05)


def wordle_feedback(answer: str, guess: str) -> list[str]:
    """Wordle's feedback: greens first, then yellows from the answer's remaining letters."""
    result = ["gray"] * 5
    remaining: list[str] = []
    for i, (a, g) in enumerate(zip(answer, guess, strict=True)):
        if a == g:
            result[i] = "green"
        else:
            remaining.append(a)
    for i, g in enumerate(guess):
        if result[i] != "green" and g in remaining:
            result[i] = "yellow"
            remaining.remove(g)
    return result


def feedback_from_text(text: str, guess: str) -> list[str] | None:
    """The feedback for `guess` read from a board line like `CRANE ⬛⬛🟨🟩⬛`."""
    for line in reversed(text.splitlines()):
        if line.startswith(guess.upper() + " "):
            squares = [_FEEDBACK_NAMES[ch] for ch in line if ch in _FEEDBACK_NAMES]
            if len(squares) == 5:
                return squares
    return None


class WordleSolver:
    """Guesses the first answer consistent with every feedback so far (wins most games in six)."""

    def __init__(self, candidates: Iterable[str] | None = None) -> None:
        """Starts from `candidates`, by default the game's answer list."""
        if candidates is None:
            answers = _WORDLE_DATA / "answers.txt"
            candidates = answers.read_text().split() if answers.is_file() else WORDLE_GUESSES
        self.candidates = list(candidates)
        self.guesses: list[str] = []

    def next_guess(self) -> str:
        """The next word to play."""
        if not self.guesses:
            return WORDLE_GUESSES[0]
        for word in self.candidates:
            if word not in self.guesses:
                return word
        # Nothing consistent is left (a custom word list): fall back to the fixed guesses.
        return WORDLE_GUESSES[min(len(self.guesses), len(WORDLE_GUESSES) - 1)]

    def observe(self, guess: str, feedback: Sequence[str] | None) -> None:
        """Narrows the candidates with `guess`'s feedback (colour names)."""
        self.guesses.append(guess)
        if feedback is None:
            return
        self.candidates = [
            word for word in self.candidates if wordle_feedback(word, guess) == list(feedback)
        ]

    def observe_step(self, guess: str, step: Step) -> None:
        """Narrows the candidates with a step's structured feedback, or its board text."""
        structured: Any = step.structured
        feedback = structured.get("feedback") if isinstance(structured, dict) else None
        self.observe(guess, feedback or feedback_from_text(step.text, guess))


def play_wordle(episode: Episode, max_calls: int = 12) -> list[Step]:
    """Plays `episode` with `WordleSolver` until it is done; returns every step."""
    solver = WordleSolver()
    steps: list[Step] = []
    while not (steps and steps[-1].done):
        assert len(steps) < max_calls, f"the game did not end after {max_calls} calls"
        guess = solver.next_guess()
        step = episode.call("guess", word=guess)
        solver.observe_step(guess, step)
        steps.append(step)
    return steps


async def play_wordle_async(episode: AsyncEpisode, max_calls: int = 12) -> list[Step]:
    """`play_wordle` for an `AsyncEpisode`."""
    solver = WordleSolver()
    steps: list[Step] = []
    while not (steps and steps[-1].done):
        assert len(steps) < max_calls, f"the game did not end after {max_calls} calls"
        guess = solver.next_guess()
        step = await episode.call("guess", word=guess)
        solver.observe_step(guess, step)
        steps.append(step)
    return steps


class CuttingProxy:
    """A TCP proxy that cuts connections at random points of their traffic: each chunk it would
    relay, either way, ends the connection instead with probability `cut` (before a request
    reaches the server, or after the server answered and before the answer reaches the client).

    `spare(request_line)` names requests whose traffic is never cut (say, episode starts, which
    no client may send twice); `stall(request_line)` names requests whose answer is held back
    `stall_s` seconds, once each, as a slow network would (for receive timeouts)."""

    def __init__(
        self,
        upstream: tuple[str, int] | str,
        seed: int,
        cut: float = 0.04,
        spare: Callable[[bytes], bool] | None = None,
        stall: Callable[[bytes], bool] | None = None,
        stall_s: float = 0.0,
    ) -> None:
        if isinstance(upstream, str):
            address = urlsplit(upstream)
            assert address.hostname is not None and address.port is not None
            upstream = (address.hostname, address.port)
        self.upstream = upstream
        self.random = random.Random(seed)
        self.cut = cut
        self.spare = spare
        self.stall = stall
        self.stall_s = stall_s
        self.lock = threading.Lock()
        self.cuts = 0
        self.stalls = 0
        self._stalled: set[bytes] = set()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream)
            except OSError:  # the server is gone (a test is ending)
                client.close()
                continue
            # The request line now being answered on this connection (HTTP/1.1: one at a time).
            state = {"request": b""}
            for source, target, outgoing in ((client, upstream, True), (upstream, client, False)):
                threading.Thread(
                    target=self._relay,
                    args=(source, target, client, upstream, outgoing, state),
                    daemon=True,
                ).start()

    def _relay(
        self,
        source: socket.socket,
        target: socket.socket,
        client: socket.socket,
        upstream: socket.socket,
        outgoing: bool,
        state: dict[str, bytes],
    ) -> None:
        try:
            while data := source.recv(65536):
                if outgoing and re.match(rb"[A-Z]+ /", data):
                    state["request"] = data.split(b"\r\n", 1)[0]
                request = state["request"]
                spared = self.spare is not None and self.spare(request)
                with self.lock:
                    cut = not spared and self.random.random() < self.cut
                    self.cuts += cut
                    stall = (
                        not outgoing
                        and self.stall is not None
                        and request not in self._stalled
                        and self.stall(request)
                    )
                    if stall:
                        self._stalled.add(request)
                        self.stalls += 1
                if cut:
                    break
                if stall:
                    time.sleep(self.stall_s)
                target.sendall(data)
        except OSError:
            pass
        for end in (client, upstream):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        """Stops accepting connections."""
        self.listener.close()


def is_start(request_line: bytes) -> bool:
    """Whether an HTTP request line starts an episode (`POST /episodes`), which is not
    idempotent: a proxy spares those."""
    return request_line.startswith(b"POST /episodes ")
