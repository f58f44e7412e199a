"""What the adapter tests share: a Wordle server that records trajectories, a text policy, and
the check that 8 rollouts were 8 whole episodes paying the trainer what the server paid.
Also tests the text tool-call parser every text adapter uses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import WordleSolver, feedback_from_text, metric

from mcpgym import Server
from mcpgym.adapters import ToolCall, ToolCallError, parse_tool_calls

ROLLOUTS = 8
SEEDS = [100 + i for i in range(ROLLOUTS)]


@dataclass
class Recorded:
    """A Wordle server whose episodes write their trajectories to `directory`."""

    server: Server
    directory: Path

    def started(self) -> float:
        """`mcpgym_episodes_started_total{env="wordle"}`."""
        return metric(self.server.url, "mcpgym_episodes_started_total", env="wordle")

    def episode(self, episode_id: str) -> list[dict[str, object]]:
        """The server's step records of one episode, one per tool call (the file's header and
        end records left out)."""
        path = self.directory / f"{episode_id}.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return [record for record in records if record.get("record") == "step"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """One `mcpgym wordle --http` server for a module, recording trajectories."""
    directory = tmp_path_factory.mktemp("trajectories")
    with Server("wordle", "--trajectory-dir", str(directory)) as server:
        yield Recorded(server, directory)


class Player:
    """A Wordle policy that reads the board from the adapters' text observations."""

    def __init__(self) -> None:
        self.solver = WordleSolver()
        self.last: str | None = None
        self.calls = 0

    def guess(self, observation: str | None = None) -> str:
        """The next guess, after reading the last one's feedback from `observation`."""
        if self.last is not None and observation is not None:
            self.solver.observe(self.last, feedback_from_text(observation, self.last))
        self.last = self.solver.next_guess()
        self.calls += 1
        return self.last

    def action(self, observation: str | None = None) -> str:
        """The next guess as a Hermes tool call."""
        word = self.guess(observation)
        return f'<tool_call>\n{{"name": "guess", "arguments": {{"word": "{word}"}}}}\n</tool_call>'


def check_rollouts(recorded: Recorded, before: float, trainer: dict[str, float]) -> None:
    """8 rollouts were 8 new episodes, each played to its end, each paying the trainer (the
    `trainer` map: episode id -> reward the trainer got) exactly what the server recorded."""
    assert recorded.started() - before == ROLLOUTS
    assert len(trainer) == ROLLOUTS, trainer
    wins = 0
    for episode_id, got in trainer.items():
        records = recorded.episode(episode_id)
        guesses = [r for r in records if r["tool"] == "guess" and not r["is_error"]]
        assert records[-1]["done"] is True, f"{episode_id} was not played to its end"
        assert 1 <= len(guesses) <= 6
        paid = sum(float(r["reward"]) for r in records)  # type: ignore[arg-type]
        assert got == pytest.approx(paid), episode_id
        wins += paid > 0
    # Rewards that are all zero would prove nothing about where they go.
    assert wins > 0


def test_hermes_and_gem_tool_calls_parse() -> None:
    text = 'think <tool_call>\n{"name": "guess", "arguments": {"word": "crane"}}\n</tool_call>'
    assert parse_tool_calls(text) == [ToolCall("guess", {"word": "crane"})]
    stringly = '<tool_call>{"name": "guess", "arguments": "{\\"word\\": \\"slate\\"}"}</tool_call>'
    assert parse_tool_calls(stringly) == [ToolCall("guess", {"word": "slate"})]
    gem = "<tool_call><tool_name>history</tool_name><arguments>{}</arguments></tool_call>"
    assert parse_tool_calls(gem) == [ToolCall("history", {})]
    two = text + '<tool_call>{"name": "history", "arguments": {}}</tool_call>'
    assert [c.name for c in parse_tool_calls(two)] == ["guess", "history"]
    assert parse_tool_calls("The answer is 42.") == []
    with pytest.raises(ToolCallError):
        parse_tool_calls("<tool_call>{not json}</tool_call>")
    with pytest.raises(ToolCallError):
        parse_tool_calls('<tool_call>{"name": "guess"')
