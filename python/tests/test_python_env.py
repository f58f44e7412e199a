"""An environment written in Python (examples/python/hilo.py), served by `mcpgym serve
--python`, played through the real client libraries: this package's client, OpenEnv's
`GenericEnvClient` and ors-sdk's `AsyncORS`, eight rollouts at once each; and the tool
schemas `mcpgym.env` reads from a class.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import pytest
from helpers import REPO, episode_status, started
from openenv import GenericEnvClient

from mcpgym import Client, Server
from mcpgym.env import Environment, Outcome, check_arguments, tool, tools_of

SPEC = f"{REPO}/examples/python/hilo.py:HiLo"
ROLLOUTS = 8


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with Server("serve", "--python", SPEC) as server:
        yield server


class Bisection:
    """Hi-Lo's winning play: the next guess, and the range each answer leaves."""

    def __init__(self, high: int) -> None:
        self.low, self.high = 1, high

    def guess(self) -> int:
        return (self.low + self.high) // 2

    def won(self, number: int, text: str, done: bool) -> bool:
        """Whether `text` (the answer to `number`) is the win; narrows the range if not."""
        if text.startswith("Correct"):
            assert done, text
            return True
        assert not done, text
        if text.startswith("higher"):
            self.low = number + 1
        else:
            self.high = number - 1
        return False


def bisect(high: int, guess: Any) -> list[Any]:
    """Plays Hi-Lo to its win through `guess(number) -> (text, done, answer)`: every answer."""
    play, answers = Bisection(high), []
    while True:
        number = play.guess()
        text, done, answer = guess(number)
        answers.append(answer)
        if play.won(number, text, done):
            return answers


async def abisect(high: int, guess: Any) -> list[Any]:
    """`bisect` with an async `guess`."""
    play, answers = Bisection(high), []
    while True:
        number = play.guess()
        text, done, answer = await guess(number)
        answers.append(answer)
        if play.won(number, text, done):
            return answers


def test_the_python_client_plays_it(server: Server) -> None:
    before = started(server, "hilo-py")
    with Client(server.url) as client:
        episodes = client.start_many(ROLLOUTS, "hilo-py", seeds=range(ROLLOUTS), task="1-to-100")
        for episode in episodes:
            with episode:

                def guess(n: int, episode: Any = episode) -> tuple[str, bool, Any]:
                    step = episode.call("guess", number=n)
                    return step.text, step.done, step

                steps = bisect(100, guess)
                status = episode_status(server, episode.id)
                assert status["reward_components"]["win"] == 1.0
                assert "number" in status
                assert sum(step.reward for step in steps) == pytest.approx(status["return"])
    assert started(server, "hilo-py") - before == ROLLOUTS


def test_openenv_clients_play_it_at_once(server: Server) -> None:
    async def rollout(seed: int) -> tuple[str, float]:
        async with GenericEnvClient(base_url=f"{server.url}/hilo-py") as env:
            result = await env.reset(seed=seed, task="1-to-1000")
            episode = result.metadata["episode_id"]
            assert "between 1 and 1000" in result.observation["prompt"]

            async def guess(n: int) -> tuple[str, bool, Any]:
                step = await env.step(
                    {"type": "call_tool", "tool_name": "guess", "arguments": {"number": n}}
                )
                text = step.observation["result"]["content"][0]["text"]
                return text, bool(step.done), step

            steps = await abisect(1000, guess)
            return episode, sum(step.reward or 0.0 for step in steps)

    async def batch() -> list[tuple[str, float]]:
        return await asyncio.gather(*(rollout(seed) for seed in range(ROLLOUTS)))

    results = asyncio.run(batch())
    assert len({episode for episode, _ in results}) == ROLLOUTS
    for _, paid in results:
        assert paid >= 1.0


def test_ors_sdk_plays_it_at_once(server: Server) -> None:
    from ors.client import AsyncORS

    async def rollout(client: Any, index: int) -> float:
        env = client.environment("hilo-py")
        async with env.session(split="train", index=index % 4) as session:
            assert {t.name for t in await session.list_tools()} == {"guess", "rules"}
            high = [16, 100, 1000, 4096][index % 4]

            async def guess(n: int) -> tuple[str, bool, Any]:
                output = await session.call_tool("guess", {"number": n})
                text = "\n".join(b.text for b in output.blocks if b.type == "text")
                return text, bool(output.finished), output

            outputs = await abisect(high, guess)
            status = await asyncio.to_thread(
                episode_status, server, outputs[-1].metadata["episode_id"]
            )
            paid = sum(o.reward or 0.0 for o in outputs)
            assert paid == pytest.approx(status["return"])
            return paid

    async def batch() -> list[float]:
        client = AsyncORS(base_url=server.url)
        paid = await asyncio.gather(*(rollout(client, i) for i in range(ROLLOUTS)))
        for http_client in client.environments._clients.values():
            await http_client.close()
        return paid

    assert all(paid >= 1.0 for paid in asyncio.run(batch()))


# --- what mcpgym.env reads from a class ---------------------------------------------------------


class Shapes(Environment):
    name = "shapes"
    tasks: ClassVar[dict[str, list[str]]] = {"train": ["t"]}

    def reset(self, task: str, seed: int) -> None:
        return None

    @tool
    def draw(
        self,
        kind: Literal["circle", "square"],
        size: Annotated[float, "Side or diameter, in cm."],
        labels: list[str] | None = None,
        filled: bool = False,
    ) -> Outcome:
        """Draws a shape.

        Args:
            kind: Which shape.
        """
        return Outcome("drawn")

    @tool(name="erase-all")
    def erase(self) -> str:
        """Erases everything."""
        return "erased"


def test_schemas_follow_the_signatures() -> None:
    draw, erase = tools_of(Shapes)
    assert draw.name == "draw" and draw.description == "Draws a shape."
    assert draw.schema == {
        "type": "object",
        "properties": {
            "kind": {"enum": ["circle", "square"], "description": "Which shape."},
            "size": {"type": "number", "description": "Side or diameter, in cm."},
            "labels": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
            "filled": {"type": "boolean", "default": False},
        },
        "required": ["kind", "size"],
        "additionalProperties": False,
    }
    assert erase.name == "erase-all" and erase.method == "erase"
    assert check_arguments(draw, {"kind": "circle", "size": 2}) is None
    assert check_arguments(draw, {"kind": "oval", "size": 2}) == (
        "argument 'kind': expected one of 'circle', 'square', got 'oval'"
    )
    assert check_arguments(draw, {"kind": "circle", "size": True}) == (
        "argument 'size': expected a number, got True"
    )
    assert check_arguments(draw, {"size": 1}) == "missing argument 'kind'"
    assert check_arguments(draw, {"kind": "circle", "size": 1, "colour": "red"}) == (
        "unknown argument 'colour' (arguments: kind, size, labels, filled)"
    )
    assert check_arguments(draw, {"kind": "circle", "size": 1, "labels": ["a", 2]}) == (
        "argument 'labels': item 1: expected a string, got 2"
    )


def test_an_undescribable_tool_is_refused_at_once() -> None:
    class Bad(Environment):
        name = "bad"

        @tool
        def go(self, thing: object) -> str:
            return ""

    with pytest.raises(TypeError, match="parameter 'thing': type <class 'object'> has no JSON"):
        tools_of(Bad)


def test_the_readmes_coin_environment_runs_as_written(tmp_path: Path) -> None:
    readme = (REPO / "python" / "README.md").read_text()
    source = re.search(r"```python\n# coin.py\n(.*?)```", readme, re.S)
    assert source, "python/README.md lost its coin.py example"
    (tmp_path / "coin.py").write_text(source.group(1))
    with Server("python", f"{tmp_path}/coin.py:Coin") as server, server.client() as client:
        for seed, side, paid in [(1, "heads", 1.0), (2, "heads", 0.0), (4, "tails", 1.0)]:
            with client.start(seed=seed) as episode:
                assert "A coin was flipped." in episode.prompt()
                step = episode.call("choose", side=side)
                assert (step.reward, step.done) == (paid, True)
            refused = client.start(seed=seed).call("choose", side="edge")
            assert refused.is_error and "expected one of 'heads', 'tails'" in refused.text
