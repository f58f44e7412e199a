"""The Qwen-Agent and RL-Factory manifests loaded by Qwen-Agent 0.0.34's own MCPManager (which
RL-Factory's stdio mode uses), each stdio server started as the manifest says; and what
manifests/qwen-agent/README.md says the stock client does: one game per agent object."""

from __future__ import annotations

import ast
import contextlib
import json
from pathlib import Path

import pytest
from qwen_agent.agents import FnCallAgent
from qwen_agent.tools.mcp_manager import MCPManager

from mcpgym import Server

REPO = Path(__file__).resolve().parents[3]
EXPECTED = {
    "wordle": {"guess", "history"},
    "jupyter": {
        "get_task",
        "add_and_execute_code_cell",
        "edit_and_execute_current_cell",
        "execute_shell_command",
        "get_notebook_state",
        "final_answer",
    },
}


def _configs() -> list[tuple[str, dict[str, object]]]:
    qwen = json.loads((REPO / "manifests/qwen-agent/mcpgym_tools.json").read_text())
    pydata = ast.literal_eval((REPO / "manifests/rl-factory/mcpgym.pydata").read_text())
    return [("qwen-agent", qwen)] + [(f"rl-factory[{i}]", c) for i, c in enumerate(pydata)]


@pytest.mark.parametrize(("name", "config"), _configs(), ids=[n for n, _ in _configs()])
def test_manifest_lists_every_tool_once(name: str, config: dict[str, object]) -> None:
    tools = MCPManager().initConfig(config)
    names = [tool.name for tool in tools]
    assert len(names) == len(set(names)), f"{name} lists a tool twice: {sorted(names)}"
    servers = config["mcpServers"]
    assert isinstance(servers, dict)
    for server in servers:
        listed = {n.split("-", 1)[1] for n in names if n.startswith(f"{server}-")}
        assert listed == EXPECTED[server], (name, server)
    assert len(names) == sum(len(EXPECTED[s]) for s in servers)


# Never called: the agents' tools are called directly, as the agent loop would.
UNUSED_LLM = {
    "model": "unused",
    "model_type": "oai",
    "model_server": "http://127.0.0.1:9/v1",
    "api_key": "unused",
}
OVER = "The game is over; start a new episode."


def _guess(agent: FnCallAgent, word: str) -> str:
    result = agent.function_map["wordle-guess"].call(json.dumps({"word": word}))
    assert isinstance(result, str)
    return result


def _history(agent: FnCallAgent) -> str:
    result = agent.function_map["wordle-history"].call("{}")
    assert isinstance(result, str)
    return result


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_the_stock_client_gives_one_game_per_agent_object(transport: str) -> None:
    manifest = json.loads((REPO / "manifests/qwen-agent/mcpgym_tools.json").read_text())
    with contextlib.ExitStack() as stack:
        entry = manifest["mcpServers"]["wordle"]
        if transport == "streamable-http":
            server = stack.enter_context(Server("wordle"))
            entry = {"type": "streamable-http", "url": f"{server.url}/wordle/mcp"}
        config = {"mcpServers": {"wordle": entry}}
        first = FnCallAgent(function_list=[config], llm=UNUSED_LLM)
        second = FnCallAgent(function_list=[config], llm=UNUSED_LLM)
        assert sorted(first.function_map) == ["wordle-guess", "wordle-history"]
        # The first agent's calls all play one game, to its end.
        answer = ""
        played = []
        for word in ["crane", "slate", "pious", "dough", "nymph", "blitz", "fjord"]:
            answer = _guess(first, word)
            if answer == OVER:
                break
            played.append(word)
        assert 1 <= len(played) <= 6 and answer == OVER, played
        assert _history(first) == OVER
        # The second agent, built from the same dict, plays a game of its own, untouched.
        assert _history(second) == "No guesses yet. 6 guesses left."
        guessed = _guess(second, "crane")
        assert guessed.startswith("CRANE "), guessed
        # Only the text comes back: no reward.
        assert "reward" not in guessed.lower()
        # A new game needs a new agent object.
        third = FnCallAgent(function_list=[config], llm=UNUSED_LLM)
        assert _history(third) == "No guesses yet. 6 guesses left."
