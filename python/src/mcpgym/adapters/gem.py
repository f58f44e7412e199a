"""A GEM environment (`gem.Env`): one mcpgym episode per `reset`.

    from mcpgym.adapters.gem import register
    register("mcpgym:wordle", base_url="http://127.0.0.1:8000", env="wordle")
    envs = gem.make_vec(["mcpgym:wordle"] * 8, async_mode=True)

`reset(seed)` starts a new episode (closing the last one) and returns the tools, the tool-call
format and the episode's prompt as the observation. `step(action)` reads the model's tool calls
(GEM's `<tool_call><tool_name>...</tool_name><arguments>{...}</arguments></tool_call>` or Hermes /
Qwen `<tool_call>{"name", "arguments"}</tool_call>`), calls them in the episode and returns
`(observation, step reward, terminated, truncated, info)`; a turn with no tool call terminates.
The step rewards add up to the episode's return (`info["return"]`). Unlike GEM's own `MCPTool`,
which opens an MCP session per call and never reads a reward, every call here plays the same
episode and pays its reward.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gem import register as _register
from gem.core import Env

from mcpgym.adapters._textenv import TextRollout

__all__ = ["McpgymGemEnv", "register"]


class McpgymGemEnv(Env):  # type: ignore[misc]
    """An mcpgym environment as a GEM text environment."""

    def __init__(
        self,
        base_url: str,
        env: str | None = None,
        *,
        token: str | None = None,
        timeout: float = 300.0,
        task: str | None = None,
        seed: int | None = None,
        split: str | None = None,
        options: Mapping[str, Any] | None = None,
        instructions: bool = True,
    ) -> None:
        """Connects to `base_url`; `task`, `split`, `options` apply to every episode, `seed`
        to the first (GEM's `make_vec` gives each env its own). `instructions=False` leaves the
        tools and the tool-call format out of the first observation."""
        super().__init__()
        defaults = {"task": task, "split": split, "options": options}
        self.rollout = TextRollout(base_url, env, token=token, timeout=timeout, defaults=defaults)
        self.seed = seed
        self.instructions = instructions

    def reset(self, seed: int | None = None, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        """Starts a new episode (with `seed`, else the constructor's seed once); returns its
        first observation and info."""
        if seed is None:
            seed, self.seed = self.seed, None
        episode = self.rollout.start(seed=seed, **kwargs)
        prompt = episode.prompt()
        if self.instructions:
            prompt = f"{self.rollout.system_prompt()}\n\n{prompt}"
        return prompt, {"episode": episode.id, "task": episode.task, "seed": episode.seed}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Runs the model's tool calls in the episode."""
        outcome = self.rollout.act(action)
        terminated = outcome.done and not outcome.truncated
        return outcome.observation, outcome.reward, terminated, outcome.truncated, outcome.info

    def sample_random_action(self) -> str:
        """A call of the environment's first tool with no arguments."""
        name = self.rollout.tools()[0]["name"]
        return f'<tool_call>{{"name": "{name}", "arguments": {{}}}}</tool_call>'

    def close(self) -> None:
        """Closes the episode and the connection."""
        self.rollout.shutdown()


def register(env_id: str, base_url: str, env: str | None = None, **kwargs: Any) -> None:
    """Registers an mcpgym environment with GEM as `env_id` (e.g. "mcpgym:wordle");
    `kwargs` go to `McpgymGemEnv`."""
    _register(env_id, f"{__name__}:McpgymGemEnv", base_url=base_url, env=env, **kwargs)
