"""The Qwen-Agent and RL-Factory manifests loaded by Qwen-Agent 0.0.34's own MCPManager (which
RL-Factory's stdio mode uses), each stdio server started as the manifest says."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from qwen_agent.tools.mcp_manager import MCPManager

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
