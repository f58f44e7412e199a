"""A Gymnasium-style environment over mcpgym episodes.

`McpgymEnv` follows Gymnasium's API (`reset` → `(observation, info)`, `step` → `(observation,
reward, terminated, truncated, info)`) without depending on it: when `gymnasium` is importable the
class subclasses `gymnasium.Env`, otherwise it is a plain class with the same methods. Each
`reset` starts a new episode on the server and closes the previous one.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar

from mcpgym.client import Client, Episode

__all__ = ["McpgymEnv"]


def _base() -> type:
    try:
        import gymnasium
    except ImportError:
        return object
    base: type = gymnasium.Env
    return base


if TYPE_CHECKING:
    _Base = object
else:
    _Base = _base()


class McpgymEnv(_Base):
    """One mcpgym environment, Gymnasium-style.

    Actions are tool calls, `{"tool": "guess", "arguments": {"word": "crane"}}`. Observations
    are dicts: after `reset`, `{"text": prompt}`; after `step`, `{"text", "content"}` plus
    `"structured"` when the tool returns structure. The reward is the step's reward;
    `terminated` is a natural end, `truncated` an end at the turn limit.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(
        self,
        base_url_or_client: str | Client,
        env: str = "wordle",
        *,
        task: str | None = None,
        split: str | None = None,
        options: Mapping[str, Any] | None = None,
        token: str | None = None,
    ) -> None:
        """Plays `env` on the server at a URL (with `token` when it needs one) or through a
        `Client`; `task`, `split` and `options` apply to every episode `reset` starts."""
        if isinstance(base_url_or_client, Client):
            self.client = base_url_or_client
            self._owns_client = False
        else:
            self.client = Client(base_url_or_client, token=token)
            self._owns_client = True
        self.env_name = env
        self.task = task
        self.split = split
        self.options = dict(options or {})
        self.episode: Episode | None = None

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Closes the current episode and starts a new one (with `seed`, and `options` over the
        constructor's). Returns `({"text": prompt}, {"episode", "task", "prompt"})`."""
        self._close_episode()
        merged = {**self.options, **(options or {})}
        self.episode = self.client.start(
            self.env_name,
            task=self.task,
            seed=seed,
            split=self.split,
            options=merged or None,
        )
        prompt = self.episode.prompt()
        info = {"episode": self.episode.id, "task": self.episode.task, "prompt": prompt}
        return {"text": prompt}, info

    def step(
        self, action: Mapping[str, Any]
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Calls `action["tool"]` with `action["arguments"]`. Returns `(observation, reward,
        terminated, truncated, info)`, with `info` holding `episode`, `turn`,
        `reward_components`, `return` and `is_error`."""
        if self.episode is None:
            raise RuntimeError("call reset() before step(): no episode is running")
        if not isinstance(action, Mapping) or not isinstance(action.get("tool"), str):
            raise ValueError(
                'an action is a tool call like {"tool": "guess", "arguments": {"word": "crane"}}; '
                f"got {action!r}"
            )
        arguments = action.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise ValueError(f"an action's arguments are a dict; got {arguments!r}")
        step = self.episode.call(action["tool"], arguments)
        observation: dict[str, Any] = {"text": step.text, "content": step.content}
        if step.structured is not None:
            observation["structured"] = step.structured
        info = {
            "episode": step.episode,
            "turn": step.turn,
            "reward_components": step.reward_components,
            "return": step.return_,
            "is_error": step.is_error,
        }
        terminated = step.done and not step.truncated
        return observation, step.reward, terminated, step.truncated, info

    def _close_episode(self) -> None:
        if self.episode is not None:
            episode, self.episode = self.episode, None
            episode.close()

    def close(self) -> None:
        """Closes the current episode, and the client when this environment made it."""
        try:
            self._close_episode()
        finally:
            if self._owns_client:
                self.client.close()

    def __enter__(self) -> McpgymEnv:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
