"""Qwen-Agent tools bound to one mcpgym episode per agent run.

Qwen-Agent's own MCP client (`MCPManager`) is a process-wide singleton with one session per
server, so every agent in a process plays the same episode. Here each run gets its own:

    from qwen_agent.agents import Assistant
    from mcpgym.adapters.qwen_agent import start_episode

    with start_episode("http://127.0.0.1:8000", "wordle", seed=7) as run:
        agent = Assistant(llm=..., function_list=run.tools)
        for _ in agent.run(messages=[{"role": "user", "content": run.prompt}]):
            pass
        reward = run.return_

Each tool is a Qwen-Agent `BaseTool` named after the MCP tool (no server prefix) and returns
the text, plus images as `ContentItem(image="data:<mime>;base64,...")` when the call shows any
(for example desktop screenshots).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qwen_agent.llm.schema import ContentItem
from qwen_agent.tools.base import BaseTool

from mcpgym._closing import Closing
from mcpgym.adapters._toolcall import function_parameters
from mcpgym.client import Client, Episode, Step

__all__ = ["EpisodeRun", "McpgymTool", "start_episode"]


class McpgymTool(BaseTool):  # type: ignore[misc]
    """One MCP tool of an mcpgym environment, calling it in one episode."""

    run: EpisodeRun

    def call(self, params: str | dict[str, Any], **kwargs: Any) -> str | list[ContentItem]:
        """Calls the tool in the run's episode; text, or text and images as content items."""
        arguments = self._verify_json_format_args(params)
        step = self.run._call(self.name, arguments)
        text = step.text or "(no text output)"
        if not step.images:
            return text
        items = [ContentItem(text=text)]
        items += [ContentItem(image=f"data:{mime};base64,{data}") for data, mime in step.images]
        return items


class EpisodeRun(Closing):
    """One agent run: its episode, its tools, and what the episode paid."""

    def __init__(self, client: Client, episode: Episode, tools: list[dict[str, Any]]) -> None:
        """Binds a tool instance per MCP tool to `episode`."""
        self.client = client
        self.episode = episode
        self.return_ = 0.0
        """The episode's return: the sum of its step rewards so far."""
        self.done = False
        self.steps: list[Step] = []
        """Every step of this run, in order."""
        self.prompt = episode.prompt()
        """What the agent is asked (the environment's instructions and the task)."""
        self.tools: list[BaseTool] = [self._tool(t) for t in tools]
        """The tools to give the agent (`function_list=run.tools`)."""

    def _tool(self, tool: Mapping[str, Any]) -> BaseTool:
        cls = type(
            f"McpgymTool_{tool['name']}",
            (McpgymTool,),
            {
                "name": str(tool["name"]),
                "description": str(tool.get("description") or tool["name"]),
                "parameters": function_parameters(tool.get("inputSchema")),
                "run": self,
            },
        )
        instance: BaseTool = cls()
        return instance

    def _call(self, tool: str, arguments: Mapping[str, Any]) -> Step:
        step = self.episode.call(tool, dict(arguments))
        self.steps.append(step)
        self.return_ = step.return_
        self.done = self.done or step.done
        return step

    @property
    def rewards(self) -> list[float]:
        """The step rewards, in order."""
        return [s.reward for s in self.steps]

    def close(self) -> None:
        """Closes the episode and the connection."""
        self.episode.close()
        self.client.close()


def start_episode(
    base_url: str,
    env: str | None = None,
    *,
    token: str | None = None,
    timeout: float = 300.0,
    task: str | None = None,
    seed: int | None = None,
    split: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> EpisodeRun:
    """Starts an episode of `env` and returns its run: the tools for one Qwen-Agent agent."""
    client = Client(base_url, token=token, timeout=timeout)
    try:
        tools = client.tools(env)
        episode = client.start(env, task=task, seed=seed, split=split, options=options)
    except BaseException:
        client.close()
        raise
    return EpisodeRun(client, episode, tools)
