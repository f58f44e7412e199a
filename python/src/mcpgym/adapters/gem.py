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

Images (desktop screenshots, Jupyter plots): with `images=True` every observation is a dict
`{"problem": text, "images": [PIL images]}`, the shape of GEM's own vision environment
(`gem.envs.math_visual_env.MathVisualEnv`), so a vision-language policy sees the screen;
otherwise observations are text and images are left out.

Episodes are closed when they end (the step that ends the game, or a turn with no tool call),
by `close()`, and, since GEM's vector envs have no `close()` and their autoreset starts a new
episode as soon as one ends, also when the env object is garbage-collected or the interpreter
exits; `close_all(vector_env)` closes every env of a vector env at once.

`import gem` configures the root logger at INFO (`logging.basicConfig`), which would log every
HTTP request this adapter makes; importing this module sets the `httpx` and `httpcore` loggers
to WARNING unless a level was already set on them, and touches no other logger.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Mapping
from typing import Any

from gem import register as _register
from gem.core import Env

from mcpgym.adapters._textenv import Outcome, TextRollout
from mcpgym.adapters._toolcall import decode_image

__all__ = ["McpgymGemEnv", "close_all", "register"]

# GEM's basicConfig(level=INFO) would print a line per request; keep the HTTP client's loggers
# at WARNING unless the user chose a level for them.
for _name in ("httpx", "httpcore"):
    _logger = logging.getLogger(_name)
    if _logger.level == logging.NOTSET:
        _logger.setLevel(logging.WARNING)


def _shutdown(rollout: TextRollout) -> None:
    # Runs from a finalizer (garbage collection, interpreter exit): never raises.
    with contextlib.suppress(Exception):
        rollout.shutdown()


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
        images: bool = False,
    ) -> None:
        """Connects to `base_url`; `task`, `split`, `options` apply to every episode, `seed`
        to the first (GEM's `make_vec` gives each env its own). `instructions=False` leaves the
        tools and the tool-call format out of the first observation; `images=True` makes
        observations `{"problem": text, "images": [PIL images]}`."""
        super().__init__()
        defaults = {"task": task, "split": split, "options": options}
        self.rollout = TextRollout(base_url, env, token=token, timeout=timeout, defaults=defaults)
        self.seed = seed
        self.instructions = instructions
        self.images = images
        # Closes the episode when this env is collected or the interpreter exits.
        self._finalizer = weakref.finalize(self, _shutdown, self.rollout)

    def _observation(self, text: str, outcome: Outcome | None = None) -> Any:
        if not self.images:
            return text
        pictures = [decode_image(data) for data, _mime in (outcome.images if outcome else [])]
        return {"problem": text, "images": pictures}

    def reset(self, seed: int | None = None, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Starts a new episode (with `seed`, else the constructor's seed once); returns its
        first observation and info."""
        if seed is None:
            seed, self.seed = self.seed, None
        episode = self.rollout.start(seed=seed, **kwargs)
        prompt = episode.prompt()
        if self.instructions:
            prompt = f"{self.rollout.system_prompt()}\n\n{prompt}"
        info = {"episode": episode.id, "task": episode.task, "seed": episode.seed}
        return self._observation(prompt), info

    def step(self, action: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Runs the model's tool calls in the episode."""
        outcome = self.rollout.act(action)
        terminated = outcome.done and not outcome.truncated
        observation = self._observation(outcome.observation, outcome)
        return observation, outcome.reward, terminated, outcome.truncated, outcome.info

    def sample_random_action(self) -> str:
        """A call of the environment's first tool with no arguments."""
        name = self.rollout.tools()[0]["name"]
        return f'<tool_call>{{"name": "{name}", "arguments": {{}}}}</tool_call>'

    def close(self) -> None:
        """Closes the episode and the connection."""
        self._finalizer.detach()
        self.rollout.shutdown()


def close_all(vector_env: Any) -> None:
    """Closes every env of a GEM vector env (`gem.make_vec`), which has no `close()` of its own:
    the episodes its autoreset started are closed on the server."""
    for env in getattr(vector_env, "envs", []):
        close = getattr(env, "close", None)
        if close is not None:
            close()


def register(env_id: str, base_url: str, env: str | None = None, **kwargs: Any) -> None:
    """Registers an mcpgym environment with GEM as `env_id` (e.g. "mcpgym:wordle");
    `kwargs` go to `McpgymGemEnv`."""
    _register(env_id, f"{__name__}:McpgymGemEnv", base_url=base_url, env=env, **kwargs)
