"""Exactly-once steps under a network that drops connections: a proxy between the client and
a real server cuts connections at random points (before a request reaches the server, or
after the server answered and before the answer reaches the client), and every step is still
played once, in order, with the answer the server gave."""

from __future__ import annotations

import contextlib
import random
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from mcpgym import Client, Server

CALLS = 1000
WORDS = ["crane", "slate", "pious", "blimp", "dough"]


class CuttingProxy:
    """A TCP proxy that cuts a connection at a random point of its traffic: each chunk it
    would relay, either way, ends the connection instead with probability `CUT`."""

    CUT = 0.04

    def __init__(self, upstream: tuple[str, int], seed: int) -> None:
        self.upstream = upstream
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.cuts = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.upstream)
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(
                    target=self._relay, args=(source, target, client, upstream), daemon=True
                ).start()

    def _relay(
        self,
        source: socket.socket,
        target: socket.socket,
        client: socket.socket,
        upstream: socket.socket,
    ) -> None:
        try:
            while data := source.recv(65536):
                with self.lock:
                    cut = self.random.random() < self.CUT
                    self.cuts += cut
                if cut:
                    break
                target.sendall(data)
        except OSError:
            pass
        for end in (client, upstream):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def proxy(wordle_server: Server) -> Iterator[CuttingProxy]:
    address = urlsplit(wordle_server.url)
    assert address.hostname is not None and address.port is not None
    cutting = CuttingProxy((address.hostname, address.port), seed=20261202)
    yield cutting
    cutting.close()


def test_a_thousand_calls_through_dropped_connections_play_each_step_once(
    wordle_server: Server, proxy: CuttingProxy
) -> None:
    direct = wordle_server.client()
    through = Client(f"http://127.0.0.1:{proxy.port}", timeout=30.0)
    calls = 0
    while calls < CALLS:
        episode = direct.start()
        # The same episode, played through the proxy.
        played = type(episode)._from_json(
            through, {"id": episode.id, "env": episode.env, "task": episode.task, "seed": 0}
        )
        answers = []
        for word in WORDS:
            step = played.call("guess", word=word)
            calls += 1
            answers.append(step)
            if step.done:
                break
        # Each answer is the next turn, and the server recorded exactly those turns with the
        # same observations: nothing played twice, nothing lost, nothing out of order.
        assert [step.turn for step in answers] == list(range(1, len(answers) + 1))
        recorded = episode.trajectory()
        assert [record["turn"] for record in recorded] == [step.turn for step in answers]
        for record, step in zip(recorded, answers, strict=True):
            assert record["observation"] == step.text
        episode.close()
    assert proxy.cuts >= 100, f"only {proxy.cuts} connections were cut"
    through.close()
    direct.close()
