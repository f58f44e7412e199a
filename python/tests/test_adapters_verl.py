"""The verl adapter, loaded from manifests/verl the way verl 0.9.1 loads a tool config, driven
the way its ToolAgentLoop drives a BaseTool (create, execute, release around every call).

verl 0.9.1 cannot be imported without torch and ray (not installable here without a GPU stack),
so its schema classes are loaded from the installed wheel by file path and the agent loop is
the documented contract (`verl/experimental/agent_loop/tool_agent_loop.py::_call_tool`)."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from helpers import REPO
from omegaconf import OmegaConf
from PIL import Image
from test_adapters_support import ROLLOUTS, SEEDS, Player, Recorded, check_rollouts, recorded

from mcpgym import Server
from mcpgym.adapters.verl import EXTRA_KEY, McpgymTool, close_trajectory, tool_schema

__all__ = ["recorded"]

MANIFESTS = REPO / "manifests" / "verl"


def verl_schemas() -> ModuleType:
    """verl's own `verl/tools/schemas.py` (pydantic only), without importing the verl package."""
    spec = importlib.util.find_spec("verl")
    assert spec is not None and spec.submodule_search_locations, "pip install --no-deps verl"
    path = Path(next(iter(spec.submodule_search_locations))) / "tools" / "schemas.py"
    module_spec = importlib.util.spec_from_file_location("verl_tool_schemas", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def load_tools(config_file: Path, url: str) -> dict[str, Any]:
    """verl 0.9.1's `initialize_tools_from_config` for native tools: OmegaConf, the class by
    name, the schema through `OpenAIFunctionToolSchema.model_validate`."""
    schemas = verl_schemas()
    os.environ["MCPGYM_URL"] = url
    try:
        config = OmegaConf.load(config_file)
        tools: dict[str, Any] = {}
        for entry in config.tools:
            assert entry.config.type == "native"
            module_name, class_name = entry.class_name.rsplit(".", 1)
            cls = getattr(importlib.import_module(module_name), class_name)
            schema_dict = OmegaConf.to_container(entry.tool_schema, resolve=True)
            schema = schemas.OpenAIFunctionToolSchema.model_validate(schema_dict)
            tool = cls(
                config=OmegaConf.to_container(entry.config, resolve=True), tool_schema=schema
            )
            tools[tool.name] = tool
        return tools
    finally:
        del os.environ["MCPGYM_URL"]


class AgentData:
    """The part of verl's AgentData a tool sees."""

    def __init__(self, tools_kwargs: dict[str, Any] | None = None) -> None:
        self.request_id = uuid.uuid4().hex
        self.tools_kwargs = tools_kwargs or {}
        self.extra_fields: dict[str, Any] = {}
        self.tool_rewards: list[float] = []


async def call_tool(tools: dict[str, Any], data: AgentData, name: str, args: dict[str, Any]) -> Any:
    """ToolAgentLoop._call_tool (verl 0.9.1) for a BaseTool."""
    tool = tools[name]
    kwargs = data.tools_kwargs.get(name, {})
    instance_id = None
    try:
        instance_id, _ = await tool.create(create_kwargs=kwargs.get("create_kwargs", {}))
        response, reward, _metrics = await tool.execute(instance_id, args, agent_data=data)
    finally:
        if instance_id:
            await tool.release(instance_id)
    if reward is not None:
        data.tool_rewards.append(reward)
    return response


def test_wordle_rollouts_each_play_their_own_episode(recorded: Recorded) -> None:
    tools = load_tools(MANIFESTS / "mcpgym_wordle.yaml", recorded.server.url)
    assert set(tools) == {"guess", "history"}
    before = recorded.started()

    async def rollout(seed: int) -> AgentData:
        data = AgentData({"guess": {"create_kwargs": {"seed": seed}}})
        player = Player()
        observation = None
        for _ in range(12):
            response = await call_tool(tools, data, "guess", {"word": player.guess(observation)})
            observation = response.text
            if data.extra_fields[EXTRA_KEY]["wordle"]["done"]:
                break
            # Another tool of the same environment plays the same episode.
            board = await call_tool(tools, data, "history", {})
            assert player.last is not None and player.last.upper() in board.text
        return data

    async def main() -> list[AgentData]:
        return await asyncio.gather(*(rollout(seed) for seed in SEEDS))

    results = asyncio.run(main())
    trainer = {}
    for data in results:
        record = data.extra_fields[EXTRA_KEY]["wordle"]
        assert record["done"] is True
        assert sum(data.tool_rewards) == pytest.approx(record["return"])
        trainer[record["episode"]] = sum(data.tool_rewards)
    check_rollouts(recorded, before, trainer)
    assert len({d.request_id for d in results}) == ROLLOUTS


def test_a_call_after_the_end_starts_no_second_episode(recorded: Recorded) -> None:
    tools = load_tools(MANIFESTS / "mcpgym_wordle.yaml", recorded.server.url)

    async def main() -> tuple[AgentData, str]:
        data = AgentData()
        player = Player()
        observation = None
        while not data.extra_fields.get(EXTRA_KEY, {}).get("wordle", {}).get("done"):
            observation = (
                await call_tool(tools, data, "guess", {"word": player.guess(observation)})
            ).text
        before = recorded.started()
        after = await call_tool(tools, data, "guess", {"word": "crane"})
        assert recorded.started() == before
        return data, after.text

    data, text = asyncio.run(main())
    assert "over" in text
    assert data.tool_rewards[-1] == 0.0


def test_an_unfinished_trajectory_is_closed_on_request(recorded: Recorded) -> None:
    tools = load_tools(MANIFESTS / "mcpgym_wordle.yaml", recorded.server.url)

    async def main() -> tuple[int, int]:
        data = AgentData()
        await call_tool(tools, data, "guess", {"word": "crane"})
        episode_id = data.extra_fields[EXTRA_KEY]["wordle"]["episode"]
        url = f"{recorded.server.url}/episodes/{episode_id}"
        async with httpx.AsyncClient() as http:
            open_status = (await http.get(url)).status_code
            await close_trajectory(data)
            closed_status = (await http.get(url)).status_code
        return open_status, closed_status

    assert asyncio.run(main()) == (200, 404)


@pytest.fixture(scope="module")
def serve() -> Iterator[Server]:
    with Server("serve") as server:
        yield server


def test_jupyter_rollout_through_the_verl_tool(serve: Server) -> None:
    tools = load_tools(MANIFESTS / "mcpgym_jupyter.yaml", serve.url)

    async def main() -> AgentData:
        data = AgentData()
        task = await call_tool(tools, data, "get_task", {})
        assert task.text
        cell = await call_tool(tools, data, "add_and_execute_code_cell", {"code": "print(6 * 7)"})
        assert "42" in cell.text
        state = await call_tool(tools, data, "get_notebook_state", {"include_images": False})
        assert "6 * 7" in state.text
        await call_tool(tools, data, "final_answer", {"answer": "0"})
        return data

    data = asyncio.run(main())
    record = data.extra_fields[EXTRA_KEY]["jupyter"]
    assert record["done"] is True
    assert len(data.tool_rewards) == 4
    assert sum(data.tool_rewards) == pytest.approx(record["return"])


def test_desktop_rollout_delivers_screenshots_as_images(serve: Server) -> None:
    tools = load_tools(MANIFESTS / "mcpgym_desktop.yaml", serve.url)

    async def main() -> tuple[AgentData, Any]:
        data = AgentData()
        shot = await call_tool(tools, data, "screenshot", {})
        await call_tool(tools, data, "terminate", {"status": "failure"})
        return data, shot

    data, shot = asyncio.run(main())
    assert shot.image and all(isinstance(image, Image.Image) for image in shot.image)
    assert shot.image[0].size[0] > 100
    record = data.extra_fields[EXTRA_KEY]["desktop"]
    assert record["done"] is True
    assert sum(data.tool_rewards) == pytest.approx(record["return"])


@pytest.mark.parametrize("env", ["wordle", "jupyter", "desktop"])
def test_manifest_schemas_are_the_servers(serve: Server, env: str) -> None:
    manifest = OmegaConf.to_container(OmegaConf.load(MANIFESTS / f"mcpgym_{env}.yaml"))
    assert isinstance(manifest, dict)
    with serve.client() as client:
        served = [tool_schema(tool) for tool in client.tools(env)]
    assert [entry["tool_schema"] for entry in manifest["tools"]] == served
    # A tool built with no schema reads the same one from the server.
    name = served[0]["function"]["name"]
    fetched = McpgymTool({"base_url": serve.url, "env": env, "tool": name})
    assert fetched.get_openai_tool_schema() == served[0]
