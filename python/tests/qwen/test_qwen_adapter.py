"""The Qwen-Agent adapter through Qwen-Agent 0.0.34's own agent loop (`FnCallAgent.run`), with a
scripted model in place of an LLM: 8 agents at once, each bound to its own episode."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from qwen_agent.agents import FnCallAgent
from qwen_agent.llm.base import BaseChatModel
from qwen_agent.llm.schema import ContentItem, FunctionCall, Message

from mcpgym import Server
from mcpgym.adapters.qwen_agent import EpisodeRun, start_episode

ROLLOUTS = 8
SEEDS = [100 + i for i in range(ROLLOUTS)]
GUESSES = ("crane", "slate", "pious", "dough", "nymph", "blitz", "fjord", "gawky")


def started(url: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=60).text
    match = re.search(r'^mcpgym_episodes_started_total\{env="wordle"\} (\S+)$', text, re.M)
    return float(match.group(1)) if match else 0.0


class ScriptedModel(BaseChatModel):  # type: ignore[misc]
    """Calls `guess` with fixed words until the run's episode is over, then stops."""

    def __init__(self, run: EpisodeRun) -> None:
        super().__init__({"model": "scripted"})
        self.run = run
        self.calls = 0
        self.seen: list[str] = []

    def _reply(self, messages: list[Message]) -> list[Message]:
        if messages and messages[-1].role == "function":
            self.seen.append(str(messages[-1].content))
        if self.run.done:
            return [Message(role="assistant", content="Done.")]
        word = GUESSES[self.calls]
        self.calls += 1
        call = FunctionCall(name="guess", arguments=json.dumps({"word": word}))
        return [
            Message(role="assistant", content="", function_call=call, extra={"function_id": "1"})
        ]

    def _chat_with_functions(
        self, messages: list[Message], functions: list[dict[str, Any]], stream: bool, **_: Any
    ) -> Any:
        assert {f["name"] for f in functions} == {"guess", "history"}
        reply = self._reply(messages)
        return iter([reply]) if stream else reply

    def _chat_stream(self, messages: list[Message], **_: Any) -> Iterator[list[Message]]:
        return iter([self._reply(messages)])

    def _chat_no_stream(self, messages: list[Message], **_: Any) -> list[Message]:
        return self._reply(messages)


def test_each_agent_run_plays_its_own_episode(tmp_path: Path) -> None:
    with Server("wordle", "--trajectory-dir", str(tmp_path)) as server:
        before = started(server.url)

        def rollout(seed: int) -> tuple[str, float, int, list[str]]:
            with start_episode(server.url, "wordle", seed=seed) as run:
                model = ScriptedModel(run)
                agent = FnCallAgent(function_list=run.tools, llm=model)
                for _ in agent.run(messages=[{"role": "user", "content": run.prompt}]):
                    pass
                assert run.done, "the game was played to its end"
                return run.episode.id, run.return_, model.calls, model.seen

        with ThreadPoolExecutor(max_workers=ROLLOUTS) as pool:
            results = list(pool.map(rollout, SEEDS))
        assert started(server.url) - before == ROLLOUTS
    assert len({episode for episode, *_ in results}) == ROLLOUTS
    for episode, reward, calls, seen in results:
        lines = (tmp_path / f"{episode}.jsonl").read_text().splitlines()
        records = [r for r in map(json.loads, lines) if r["record"] == "step"]
        assert [r["arguments"]["word"] for r in records] == list(GUESSES[:calls])
        assert records[-1]["done"] is True and calls <= 6
        assert reward == sum(r["reward"] for r in records)
        # Each agent saw its own board, growing by one guess per call.
        assert seen[-1].count("\n") >= calls - 1 and GUESSES[calls - 1].upper() in seen[-1]


def test_screenshots_come_back_as_image_content_items() -> None:
    with Server("serve") as server, start_episode(server.url, "desktop") as run:
        tools = {tool.name: tool for tool in run.tools}
        result = tools["screenshot"].call("{}")
        assert isinstance(result, list)
        images = [item for item in result if isinstance(item, ContentItem) and item.image]
        assert images and images[0].image.startswith("data:image/")
        assert any(item.text for item in result)


def test_agent_runs_through_dropped_connections_play_each_step_once(tmp_path: Path) -> None:
    # The package's tests' proxy (python/tests/helpers.py), cutting connections at random
    # except episode starts.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from helpers import CuttingProxy, is_start

    with Server("wordle", "--trajectory-dir", str(tmp_path)) as server:
        proxy = CuttingProxy(server.url, seed=11, cut=0.12, spare=is_start)

        def rollout(seed: int) -> tuple[str, float, int]:
            with start_episode(proxy.url, "wordle", seed=seed, timeout=30) as run:
                model = ScriptedModel(run)
                agent = FnCallAgent(function_list=run.tools, llm=model)
                for _ in agent.run(messages=[{"role": "user", "content": run.prompt}]):
                    pass
                assert run.done
                return run.episode.id, run.return_, len(run.steps)

        with ThreadPoolExecutor(max_workers=ROLLOUTS) as pool:
            results = list(pool.map(rollout, SEEDS))
        proxy.close()
        assert proxy.cuts >= 10, f"only {proxy.cuts} connections were cut"
    for episode, reward, steps in results:
        lines = (tmp_path / f"{episode}.jsonl").read_text().splitlines()
        records = [r for r in map(json.loads, lines) if r["record"] == "step"]
        assert [r["turn"] for r in records] == list(range(1, steps + 1))
        assert [r["arguments"]["word"] for r in records] == list(GUESSES[:steps])
        assert reward == sum(r["reward"] for r in records)
