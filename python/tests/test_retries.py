"""Exactly-once steps under a network that drops connections: a proxy between the client and
a real server cuts connections at random points (before a request reaches the server, or
after the server answered and before the answer reaches the client), and every step is still
played once, in order, with the answer the server gave."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import CuttingProxy

from mcpgym import Client, Server

CALLS = 1000
WORDS = ["crane", "slate", "pious", "blimp", "dough"]


@pytest.fixture
def proxy(wordle_server: Server) -> Iterator[CuttingProxy]:
    cutting = CuttingProxy(wordle_server.url, seed=20261202)
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


def test_an_answer_that_comes_after_the_timeout_is_never_taken_for_the_next_one(
    wordle_server: Server,
) -> None:
    # The answer to the first guess is held back past the client's timeout: the client gives
    # up on that connection and sends the call again (same key), and the late answer, still
    # travelling on the dropped connection, must not become the answer to a later call.
    slow = CuttingProxy(
        wordle_server.url,
        seed=1,
        cut=0.0,
        stall=lambda line: line.startswith(b"POST /episodes/") and line.endswith(b"/call HTTP/1.1"),
        stall_s=1.5,
    )
    direct = wordle_server.client()
    through = Client(slow.url, timeout=0.5)
    episode = direct.start(seed=4)
    played = type(episode)._from_json(
        through, {"id": episode.id, "env": episode.env, "task": episode.task, "seed": 0}
    )
    first = played.call("guess", word="crane")
    second = played.call("guess", word="slate")
    third = played.call("history")
    assert slow.stalls >= 1
    assert (first.turn, second.turn, third.turn) == (1, 2, 3)
    assert "CRANE" in first.text and "SLATE" not in first.text
    assert "SLATE" in second.text
    recorded = episode.trajectory()
    assert [r["turn"] for r in recorded] == [1, 2, 3]
    assert [r["observation"] for r in recorded] == [first.text, second.text, third.text]
    episode.close()
    slow.close()
    through.close()
    direct.close()
