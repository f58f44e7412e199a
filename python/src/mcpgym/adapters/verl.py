"""A verl tool: one mcpgym episode per trajectory, the step reward in `tool_rewards`.

In a verl tool config (`actor_rollout_ref.rollout.multi_turn.tool_config_path`), one entry per
tool of the environment (`manifests/verl/` has them ready, and `tool_config()` writes one):

    tools:
      - class_name: mcpgym.adapters.verl.McpgymTool
        config: {type: native, base_url: "http://127.0.0.1:8000", env: wordle}
        tool_schema: {type: function, function: {name: guess, ...}}

verl 0.9 runs `create`, `execute` and `release` around every single call, so the episode cannot
live in the tool instance: the first call of a trajectory starts it and keeps its id in
`agent_data.extra_fields["mcpgym"][env]` (keyed by the trajectory's `request_id`; verl versions
that pass no `agent_data` key it by instance id and close it in `release`). Every tool of the
environment in that trajectory then plays the same episode. The dataset row's
`tools_kwargs[<tool>]["create_kwargs"]` may carry `task`, `seed`, `split` and `options`.

`execute` answers `(ToolResponse(text, image=[PIL images]), step reward, metrics)`: verl appends
the reward to `agent_data.tool_rewards` (in the batch as `tool_rewards`), so their sum is the
episode's return, also kept in `extra_fields["mcpgym"][env]["return"]`.

The episode is closed when it ends (the step that reports `done`). A trajectory that stops
before that (the model stopped calling tools, or hit the turn limit) leaves it open: call
`close_trajectory(agent_data)` from your agent loop or reward function, or let the server's
idle reaper close it (`--idle-ttl`, 900 s).

verl itself needs torch and ray to import; when it cannot be imported this module still works
(same five methods, a small `ToolResponse` of its own), so the tool can be built and tested
without a GPU stack.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcpgym.adapters._toolcall import decode_image, openai_function
from mcpgym.client import AsyncClient, AsyncEpisode, Client, Step

__all__ = [
    "McpgymTool",
    "ToolResponse",
    "close_trajectory",
    "tool_config",
    "tool_schema",
]

EXTRA_KEY = "mcpgym"
"""The key of `agent_data.extra_fields` holding `{env: {"episode", "return", "done"}}`."""

_START_KEYS = ("task", "seed", "split", "options")
_OVER = "The episode is over: no more tool calls are needed."


def _verl_base() -> tuple[type[Any], type[Any]]:
    """verl's `BaseTool` and `ToolResponse` when verl imports, else stand-ins."""
    try:
        from verl.tools.base_tool import BaseTool
        from verl.tools.schemas import ToolResponse as VerlToolResponse
    except Exception:  # verl is missing, or cannot import without torch and ray
        return object, _ToolResponse
    return BaseTool, VerlToolResponse


@dataclass
class _ToolResponse:
    """verl's `ToolResponse` shape, used when verl is not importable."""

    text: str | None = None
    image: list[Any] | None = None
    video: list[Any] | None = None


_Base, ToolResponse = _verl_base()


def tool_schema(tool: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP tool from `GET /tools` as the dict verl's `OpenAIFunctionToolSchema` validates."""
    return openai_function(tool)


def tool_config(
    base_url: str,
    env: str,
    token: str | None = None,
    tools: Sequence[str] | None = None,
) -> dict[str, Any]:
    """A verl tool config (`{"tools": [...]}`, dump it as YAML) for every tool of `env` on the
    server at `base_url` (or only those named in `tools`)."""
    with Client(base_url, token=token) as client:
        listed = client.tools(env)
    config: dict[str, Any] = {"type": "native", "base_url": base_url, "env": env}
    if token:
        config["token"] = token
    return {
        "tools": [
            {
                "class_name": f"{__name__}.McpgymTool",
                "config": dict(config),
                "tool_schema": tool_schema(tool),
            }
            for tool in listed
            if tools is None or tool["name"] in tools
        ]
    }


@dataclass
class _Live:
    lock: asyncio.Lock
    episode: AsyncEpisode | None = None


class McpgymTool(_Base):  # type: ignore[misc,valid-type]
    """One tool of an mcpgym environment, as a verl `BaseTool`.

    `config`: `base_url` (required), `env` (required unless the server hosts one environment),
    `token`, `timeout` (seconds), and defaults for `task`, `seed`, `split`, `options`.
    `tool_schema`: verl's schema of this tool; when None, `config["tool"]` names the tool and its
    schema is read from the server.
    """

    # Live episodes of this process, by (base_url, env, trajectory key). Class-wide: every tool
    # of an environment plays the trajectory's one episode.
    _live: dict[tuple[str, str, str], _Live] = {}  # noqa: RUF012
    _clients: dict[tuple[str, str | None, int], AsyncClient] = {}  # noqa: RUF012

    def __init__(self, config: Mapping[str, Any], tool_schema: Any = None) -> None:
        """Binds to the server in `config`; see the class docstring."""
        self.config = dict(config)
        if "base_url" not in self.config:
            raise ValueError(
                "the mcpgym verl tool needs config.base_url, e.g. http://127.0.0.1:8000"
            )
        self.base_url = str(self.config["base_url"]).rstrip("/")
        self.env = str(self.config.get("env") or "")
        self.token: str | None = self.config.get("token") or None
        self.timeout = float(self.config.get("timeout", 300.0))
        if tool_schema is None:
            tool_schema = self._schema_from_server(str(self.config.get("tool", "")))
        if _Base is object:
            self.tool_schema = tool_schema
            self.name = _schema_name(tool_schema)
        else:
            super().__init__(self.config, tool_schema)
        self._pending: dict[str, dict[str, Any]] = {}

    def _schema_from_server(self, name: str) -> Any:
        if not name:
            raise ValueError("give the tool a tool_schema, or name it in config.tool")
        with Client(self.base_url, token=self.token, timeout=self.timeout) as client:
            tools = client.tools(self.env or None)
        for tool in tools:
            if tool["name"] == name:
                schema = tool_schema(tool)
                return _validated(schema)
        names = ", ".join(t["name"] for t in tools)
        raise ValueError(f"environment {self.env!r} has no tool {name!r}; it has: {names}")

    def get_openai_tool_schema(self) -> Any:
        """This tool's schema, as verl reads it."""
        return self.tool_schema

    def _client(self) -> AsyncClient:
        # An httpx client belongs to one event loop; verl may run several.
        key = (self.base_url, self.token, id(asyncio.get_running_loop()))
        client = McpgymTool._clients.get(key)
        if client is None:
            client = AsyncClient(self.base_url, token=self.token, timeout=self.timeout)
            McpgymTool._clients[key] = client
        return client

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, Any]:
        """Registers a call (verl 0.9) or a trajectory (older verl); the episode starts on the
        first `execute`. `create_kwargs` may carry `task`, `seed`, `split`, `options`."""
        create_kwargs = kwargs.get("create_kwargs", kwargs)
        instance = instance_id or uuid.uuid4().hex
        self._pending[instance] = dict(create_kwargs or {})
        return instance, ToolResponse()

    def _start_args(self, instance_id: str) -> dict[str, Any]:
        args = {k: self.config[k] for k in _START_KEYS if self.config.get(k) is not None}
        given = self._pending.get(instance_id, {})
        args.update({k: given[k] for k in _START_KEYS if given.get(k) is not None})
        return args

    async def _episode(
        self, instance_id: str, agent_data: Any
    ) -> tuple[AsyncEpisode, dict[str, Any]]:
        trajectory = str(agent_data.request_id) if agent_data is not None else instance_id
        key = (self.base_url, self.env, trajectory)
        record: dict[str, Any] = {}
        if agent_data is not None:
            record = agent_data.extra_fields.setdefault(EXTRA_KEY, {}).setdefault(self.env, {})
        live = McpgymTool._live.setdefault(key, _Live(lock=asyncio.Lock()))
        # Two tools of one turn may race to start it: the first one in starts it.
        async with live.lock:
            if live.episode is None:
                try:
                    args = self._start_args(instance_id)
                    live.episode = await self._client().start(self.env or None, **args)
                except BaseException:
                    McpgymTool._live.pop(key, None)
                    raise
                record.update({"episode": live.episode.id, "return": 0.0, "done": False})
        return live.episode, record

    async def execute(
        self, instance_id: str, parameters: Mapping[str, Any], **kwargs: Any
    ) -> tuple[Any, float, dict[str, Any]]:
        """Calls the tool in the trajectory's episode; returns the observation (text, and
        screenshots as PIL images), the step reward and metrics."""
        agent_data = kwargs.get("agent_data")
        if agent_data is not None:
            done = agent_data.extra_fields.get(EXTRA_KEY, {}).get(self.env, {}).get("done")
            if done:
                # The trajectory's episode is over and closed: never start a second one.
                return ToolResponse(text=_OVER), 0.0, {}
        episode, record = await self._episode(instance_id, agent_data)
        step = await episode.call(self.name, dict(parameters or {}))
        record.update({"return": step.return_, "done": step.done})
        if step.done:
            self._forget(instance_id, agent_data)
            await episode.close()
        return _response(step), step.reward, _metrics(step)

    def _forget(self, instance_id: str, agent_data: Any) -> None:
        trajectory = str(agent_data.request_id) if agent_data is not None else instance_id
        McpgymTool._live.pop((self.base_url, self.env, trajectory), None)

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """The episode's return so far (0.0 before its first call)."""
        live = McpgymTool._live.get((self.base_url, self.env, instance_id))
        if live is None or live.episode is None:
            return 0.0
        return float((await live.episode.status()).get("return", 0.0))

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Forgets the call. An episode keyed by this instance (verl without `agent_data`) is
        closed here; one keyed by the trajectory outlives the call."""
        self._pending.pop(instance_id, None)
        live = McpgymTool._live.pop((self.base_url, self.env, instance_id), None)
        if live is not None and live.episode is not None:
            await live.episode.close()


def _schema_name(schema: Any) -> str:
    if isinstance(schema, Mapping):
        return str(schema["function"]["name"])
    return str(schema.function.name)


def _validated(schema: dict[str, Any]) -> Any:
    """`schema` as verl's `OpenAIFunctionToolSchema` when verl imports, else as it is."""
    try:
        from verl.tools.schemas import OpenAIFunctionToolSchema
    except Exception:
        return schema
    return OpenAIFunctionToolSchema.model_validate(schema)


def _response(step: Step) -> Any:
    images = [decode_image(data) for data, _mime in step.images]
    text = step.text or ("(no text output)" if not images else "")
    if images:
        return ToolResponse(text=text, image=images)
    return ToolResponse(text=text)


def _metrics(step: Step) -> dict[str, Any]:
    metrics: dict[str, Any] = {
        "turn": step.turn,
        "return": step.return_,
        "done": step.done,
        "truncated": step.truncated,
        "is_error": step.is_error,
    }
    metrics.update({f"reward/{name}": value for name, value in step.reward_components.items()})
    return metrics


async def close_trajectory(agent_data: Any, base_url: str | None = None) -> None:
    """Closes the episodes a trajectory left open (`agent_data` is verl's `AgentData`, or its
    `request_id`); call it when a trajectory ends before its episodes do."""
    trajectory = str(getattr(agent_data, "request_id", agent_data))
    for key in [k for k in McpgymTool._live if k[2] == trajectory]:
        if base_url is not None and key[0] != base_url.rstrip("/"):
            continue
        live = McpgymTool._live.pop(key)
        if live.episode is not None:
            await live.episode.close()
