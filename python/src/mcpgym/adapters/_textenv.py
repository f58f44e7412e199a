"""One episode played through the model's raw text: the core of the SkyRL, GEM and RL-Factory
adapters (each wraps it in its framework's shape)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpgym.adapters._toolcall import ToolCallError, parse_tool_calls, tools_prompt
from mcpgym.client import Client, Episode

START_KEYS = ("task", "seed", "split", "options")


@dataclass
class Outcome:
    """What one model turn did to the episode."""

    observation: str
    """The tools' answers (or what was wrong with the call), for the model's next turn."""
    reward: float
    """The turn's reward: the sum of its steps' rewards."""
    done: bool
    """Whether the episode is over (or the model made no tool call)."""
    truncated: bool = False
    """Whether it ended at the server's turn limit."""
    images: list[tuple[str, str]] = field(default_factory=list)
    """The steps' images as (base64, mime type)."""
    info: dict[str, Any] = field(default_factory=dict)
    """The episode id, its return, the steps' reward components, whether the call was valid."""


class TextRollout:
    """One mcpgym episode at a time, driven by the model's text."""

    def __init__(
        self,
        base_url: str,
        env: str | None = None,
        token: str | None = None,
        timeout: float = 300.0,
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        """Talks to the server at `base_url`; `defaults` (`task`, `seed`, `split`, `options`)
        apply to every episode unless `start` overrides them."""
        self.client = Client(base_url, token=token, timeout=timeout)
        self.env = env
        self.defaults = {k: v for k, v in (defaults or {}).items() if v is not None}
        self.episode: Episode | None = None
        self.return_ = 0.0
        self.done = False
        self._tools: list[dict[str, Any]] | None = None

    def tools(self) -> list[dict[str, Any]]:
        """The environment's MCP tools (read once)."""
        if self._tools is None:
            self._tools = self.client.tools(self.env)
        return self._tools

    def system_prompt(self) -> str:
        """The tools and the tool-call format, for a system message."""
        return tools_prompt(self.tools())

    def start(self, **overrides: Any) -> Episode:
        """Closes the current episode and starts a new one."""
        self.close()
        args = dict(self.defaults)
        args.update({k: overrides[k] for k in START_KEYS if overrides.get(k) is not None})
        self.episode = self.client.start(self.env, **args)
        self.return_ = 0.0
        self.done = False
        return self.episode

    def act(self, action: str) -> Outcome:
        """Runs every tool call in `action`. No tool call ends the episode (the model has
        answered); an unreadable one costs nothing and says how to fix it."""
        if self.episode is None:
            raise RuntimeError("start an episode before acting")
        info: dict[str, Any] = {"episode": self.episode.id}
        if self.done:
            info.update({"return": self.return_, "valid": False})
            return Outcome("The episode is over.", 0.0, True, info=info)
        try:
            calls = parse_tool_calls(action)
        except ToolCallError as error:
            info.update({"return": self.return_, "valid": False})
            return Outcome(f"Error: {error}", 0.0, False, info=info)
        if not calls:
            # The model answered: the episode is over for the trainer, so it is closed now
            # rather than left to the server's idle reaper.
            self.done = True
            self.episode.close()
            info.update({"return": self.return_, "valid": True, "tool_calls": 0})
            return Outcome("", 0.0, True, info=info)
        texts: list[str] = []
        images: list[tuple[str, str]] = []
        reward = 0.0
        components: dict[str, float] = {}
        truncated = False
        for call in calls:
            step = self.episode.call(call.name, call.arguments)
            reward += step.reward
            self.return_ = step.return_
            for key, value in step.reward_components.items():
                components[key] = components.get(key, 0.0) + value
            texts.append(step.text or "(no text output)")
            images += step.images
            truncated = truncated or step.truncated
            if step.done:
                self.done = True
                # Over: free the server's resources now, not when the trainer gets round to it.
                self.episode.close()
                break
        info.update(
            {
                "return": self.return_,
                "valid": True,
                "tool_calls": len(calls),
                "reward_components": components,
            }
        )
        return Outcome("\n".join(texts), reward, self.done, truncated, images, info)

    def close(self) -> None:
        """Closes the current episode, if any."""
        if self.episode is not None:
            self.episode.close()
            self.episode = None

    def shutdown(self) -> None:
        """Closes the episode and the connection."""
        self.close()
        self.client.close()
