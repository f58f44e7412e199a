"""Each manifest loaded by the client it is for, against a real server: verl's MCP server
files through fastmcp's own config loader (what verl <= 0.8's MCP client manager uses), verl's
native tool configs and every environment's tool schemas through verl's
`OpenAIFunctionToolSchema` (verl 0.9.1's `verl/tools/schemas.py`, loaded by file path: the verl
package needs torch and ray to import); no client config carrying a variable its client leaves
unexpanded. The Qwen-Agent and RL-Factory manifests are loaded by
Qwen-Agent's MCPManager in tests/qwen (a venv of their own)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from fastmcp import Client as FastMCPClient
from helpers import REPO
from omegaconf import OmegaConf
from test_adapters_verl import verl_schemas

from mcpgym import Server
from mcpgym.adapters.verl import tool_schema

VERL = REPO / "manifests" / "verl"
ENVS = ("wordle", "jupyter", "desktop")


@pytest.fixture(scope="module")
def serve() -> Iterator[Server]:
    with Server("serve") as server:
        yield server


def _local(config: dict[str, Any], url: str) -> dict[str, Any]:
    """The config pointed at the test server instead of 127.0.0.1:8000."""
    text = json.dumps(config).replace("http://127.0.0.1:8000", url)
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@pytest.mark.parametrize("env", ["wordle", "jupyter"])
def test_verl_mcp_server_file_lists_the_selected_tools(serve: Server, env: str) -> None:
    config = json.loads((VERL / f"mcp_{env}.json").read_text())
    assert list(config["mcpServers"]) == [env], (
        "one server per file: fastmcp keeps names as they are"
    )
    for server in config["mcpServers"].values():
        assert "auth_token" not in server  # verl would switch to legacy SSE
    tools_yaml = yaml.safe_load((VERL / f"mcp_{env}_tools.yaml").read_text())
    entry = tools_yaml["tools"][0]
    assert entry["mcp"]["mcp_servers_config_path"] == f"./mcp_{env}.json"
    selected = entry["mcp"]["tool_selected_list"]

    async def listed() -> list[Any]:
        async with FastMCPClient(_local(config, serve.url)) as client:
            return list(await client.list_tools())

    tools = asyncio.run(listed())
    names = [tool.name for tool in tools]
    assert sorted(names) == sorted(selected)
    schemas = verl_schemas()
    for tool in tools:
        # verl <= 0.8's mcp2openai: the inputSchema as the parameters, as it is.
        parameters = dict(tool.inputSchema)
        parameters.setdefault("required", [])
        function = {"name": tool.name, "description": tool.description, "parameters": parameters}
        schemas.OpenAIFunctionToolSchema.model_validate({"type": "function", "function": function})


def _assert_openai_friendly(tool: dict[str, Any]) -> None:
    for name, prop in tool["inputSchema"].get("properties", {}).items():
        where = f"{tool['name']}.{name}"
        assert isinstance(prop.get("type"), str), f"{where}: one type, not {prop.get('type')!r}"
        assert "anyOf" not in prop and "oneOf" not in prop, where
        assert all(isinstance(v, str) for v in prop.get("enum", [])), where


@pytest.mark.parametrize("env", ENVS)
def test_every_tool_schema_is_accepted_by_verl(serve: Server, env: str) -> None:
    schemas = verl_schemas()
    with serve.client() as client:
        tools = client.tools(env)
    assert tools
    for tool in tools:
        _assert_openai_friendly(tool)
        # As the adapter publishes it, and as verl <= 0.8 took it raw from MCP.
        schemas.OpenAIFunctionToolSchema.model_validate(tool_schema(tool))
        raw = {"name": tool["name"], "description": tool["description"]}
        raw["parameters"] = {"required": [], **tool["inputSchema"]}
        schemas.OpenAIFunctionToolSchema.model_validate({"type": "function", "function": raw})


@pytest.mark.parametrize("env", ENVS)
def test_verl_native_tool_config_validates(env: str) -> None:
    schemas = verl_schemas()
    config = yaml.safe_load((VERL / f"mcpgym_{env}.yaml").read_text())
    names = []
    for entry in config["tools"]:
        assert entry["class_name"] == "mcpgym.adapters.verl.McpgymTool"
        assert entry["config"]["type"] == "native" and entry["config"]["env"] == env
        schema = schemas.OpenAIFunctionToolSchema.model_validate(entry["tool_schema"])
        names.append(schema.function.name)
    assert len(names) == len(set(names)) > 0


CLIENT_CONFIGS = (
    "claude-code/.mcp.json",
    "claude-desktop/claude_desktop_config.json",
    "qwen-agent/mcpgym_tools.json",
    "rl-factory/mcpgym.pydata",
    "verl/mcp_wordle.json",
    "verl/mcp_jupyter.json",
)


@pytest.mark.parametrize("path", CLIENT_CONFIGS)
def test_client_configs_carry_no_variables(path: str) -> None:
    """None of these clients but Claude Code expands `${VAR}` (the MCP Inspector, reading a
    Claude Code `.mcp.json`, answers "Invalid URL"): the values are written out."""
    text = (REPO / "manifests" / path).read_text()
    assert re.search(r"\$\{|\$[A-Za-z_]|%[A-Za-z_]+%", text) is None, path


def test_claude_code_http_entries_are_urls_a_client_connects_to(serve: Server) -> None:
    config = json.loads((REPO / "manifests/claude-code/.mcp.json").read_text())
    http = {name: entry for name, entry in config["mcpServers"].items() if entry["type"] == "http"}
    assert sorted(http) == ["desktop-http", "jupyter-http", "wordle-http"]
    for name, entry in http.items():
        url = urlparse(entry["url"])
        assert url.scheme == "http" and url.port and url.path == "/mcp", (name, entry)
    # As the MCP Inspector's --config takes it (fastmcp reads the same shape), on the test
    # server's port; `mcpgym serve` has no /mcp of its own, so the Wordle one.
    entry = {"url": http["wordle-http"]["url"].replace("/mcp", "/wordle/mcp"), "transport": "http"}

    async def listed() -> list[str]:
        async with FastMCPClient(_local({"mcpServers": {"wordle": entry}}, serve.url)) as client:
            return [tool.name for tool in await client.list_tools()]

    assert sorted(asyncio.run(listed())) == ["guess", "history"]


@pytest.mark.parametrize("env", ENVS)
def test_verl_yaml_variable_is_omegaconf_s_which_verl_resolves(
    env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verl loads a tool config with OmegaConf and resolves it: `${oc.env:MCPGYM_URL,…}` is
    the default URL, or MCPGYM_URL when set."""
    path = VERL / f"mcpgym_{env}.yaml"
    monkeypatch.delenv("MCPGYM_URL", raising=False)
    resolved = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    assert isinstance(resolved, dict)
    urls = {entry["config"]["base_url"] for entry in resolved["tools"]}
    assert urls == {"http://127.0.0.1:8000"}
    monkeypatch.setenv("MCPGYM_URL", "http://10.0.0.7:9000")
    resolved = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    assert isinstance(resolved, dict)
    assert {entry["config"]["base_url"] for entry in resolved["tools"]} == {"http://10.0.0.7:9000"}
