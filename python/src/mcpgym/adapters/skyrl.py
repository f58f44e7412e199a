"""A SkyRL environment (`skyrl_gym` `BaseTextEnv`): one mcpgym episode per trajectory.

    from mcpgym.adapters.skyrl import register
    register()  # id "mcpgym"

and in the SkyRL config `environment.env_class: mcpgym`, with
`environment.skyrl_gym.mcpgym: {base_url: http://127.0.0.1:8000, env: wordle}`; a dataset row's
`env_extras` may carry `task`, `seed`, `split` and `options`.

`init` starts the episode, puts the tools and the tool-call format in a system message (unless
the prompt has one; `system_prompt: false` turns that off) and, when the prompt is empty, the
episode's own prompt as the user message. `step(action)` reads the model's tool calls (Hermes /
Qwen `<tool_call>{"name", "arguments"}</tool_call>`, or GEM's XML form), calls them and returns
the observation as a user message, the step reward and `done`; a turn with no tool call ends the
trajectory. The step rewards add up to the episode's return.

Images (desktop screenshots, Jupyter plots): skyrl-gym (0.4.0) types an observation as a chat
message with string content and has no image path of its own. With `images: true` in the env
config, an observation that shows images is a message whose content is OpenAI-style parts,
`{"type": "text", "text"}` then one `{"type": "image_url", "image_url": {"url": "data:..."}}`
per image (a base64 `data:` URL), the form vision-language chat templates (Qwen2-VL and
later) and OpenAI-compatible servers such as vLLM read; a generator that renders observations
for a vision-language model passes them on. Without it, observations are text only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skyrl_gym import register as _register
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from mcpgym.adapters._textenv import START_KEYS, Outcome, TextRollout
from mcpgym.adapters._toolcall import data_url

__all__ = ["McpgymTextEnv", "register"]


def _get(config: Any, key: str, default: Any = None) -> Any:
    # SkyRL passes an OmegaConf DictConfig; tests and users may pass a dict.
    if config is None:
        return default
    getter = getattr(config, "get", None)
    return getter(key, default) if getter is not None else default


class McpgymTextEnv(BaseTextEnv):  # type: ignore[misc]
    """An mcpgym environment as a SkyRL text environment.

    `env_config`: `base_url` (required), `env`, `token`, `timeout`, `system_prompt` (default
    true), `images` (default false: see the module docstring), and defaults for `task`, `seed`,
    `split`, `options`. `extras`: the row's
    `env_extras` (`task`, `seed`, ...) and `max_turns`.
    """

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
        """Connects to the server in `env_config`; the episode starts in `init`."""
        super().__init__()
        extras = dict(extras or {})
        base_url = _get(env_config, "base_url")
        if not base_url:
            raise ValueError("the mcpgym SkyRL env needs env_config.base_url")
        defaults = {k: _get(env_config, k) for k in START_KEYS}
        defaults.update({k: extras[k] for k in START_KEYS if extras.get(k) is not None})
        self.rollout = TextRollout(
            str(base_url),
            _get(env_config, "env"),
            token=_get(env_config, "token"),
            timeout=float(_get(env_config, "timeout", 300.0)),
            defaults=defaults,
        )
        self.system_prompt = bool(_get(env_config, "system_prompt", True))
        self.images = bool(_get(env_config, "images", False))
        self.max_turns = int(extras.get("max_turns", 0) or 0)

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Starts the episode; returns the prompt (with the tools in a system message)."""
        episode = self.rollout.start()
        messages = [dict(m) for m in prompt or []]
        if not messages:
            messages = [{"role": "user", "content": episode.prompt()}]
        if self.system_prompt and messages[0].get("role") != "system":
            messages.insert(0, {"role": "system", "content": self.rollout.system_prompt()})
        return messages, {"episode": episode.id, "task": episode.task, "seed": episode.seed}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Runs the model's tool calls; the observation goes back as a user message."""
        self.turns += 1
        outcome = self.rollout.act(action)
        done = outcome.done or (self.max_turns > 0 and self.turns >= self.max_turns)
        observations = [] if done else [{"role": "user", "content": self._content(outcome)}]
        return BaseTextEnvStepOutput(
            observations=observations,
            reward=outcome.reward,
            done=done,
            metadata=outcome.info,
            postprocessed_action=None,
        )

    def _content(self, outcome: Outcome) -> Any:
        """The observation message's content: text, or text and image parts."""
        if not (self.images and outcome.images):
            return outcome.observation
        parts: list[dict[str, Any]] = [{"type": "text", "text": outcome.observation}]
        parts += [
            {"type": "image_url", "image_url": {"url": data_url(data, mime)}}
            for data, mime in outcome.images
        ]
        return parts

    def get_metrics(self) -> dict[str, Any]:
        """The episode's return and turn count."""
        return {"return": self.rollout.return_, "turns": self.turns}

    def close(self) -> None:
        """Closes the episode."""
        self.rollout.shutdown()


def register(id: str = "mcpgym") -> None:
    """Registers `McpgymTextEnv` with skyrl_gym under `id`."""
    _register(id=id, entry_point=f"{__name__}:McpgymTextEnv")
