"""An RL-Factory environment: one mcpgym episode per batch row, rewards from the episodes.

RL-Factory (a verl fork, not on PyPI) calls `env.step(responses, tokenizer)` once per turn with
the decoded responses of the rows still running, in batch order, and drops a row once its
`done` is true. Its MCP tools go through Qwen-Agent's `MCPManager`, one session per server for
the whole process, so every row would play one shared episode and no reward would come back.
`McpgymEnv` plays each row's own episode instead:

    # envs/__init__.py of your RL-Factory checkout
    from mcpgym.adapters.rl_factory import McpgymEnv
    TOOL_ENV_REGISTRY["mcpgym"] = McpgymEnv

    # config: actor_rollout_ref.env.name=mcpgym, plus
    #   actor_rollout_ref.env.mcpgym: {base_url: http://127.0.0.1:8000, env: wordle}

The first `step` of a batch starts one episode per row (call `start_batch(rows)` first to give
rows their own `task`/`seed`); the rows' tool calls (`<tool_call>{"name", "arguments"}</tool_call>`,
Qwen 3 style) run concurrently, each in its row's episode. A response with no tool call, or an
`<answer>`, ends the row. `get_step_reward` gives each row's last step reward (process rewards),
and `_compute_score_with_rules` each row's return. It follows RL-Factory's documented `Env`
interface (`envs/base.py`) and is tested against that interface only.

Images (desktop screenshots, Jupyter plots): RL-Factory's text `Env` has no image path; its
multimodal env (`envs/mmbase.py`, `MMEnv`) returns from `step(responses, tokenizer, image_data)`
eight lists, `(next_obs, dones, valid_action, is_tool, new_image, raw_prompt,
multi_modal_data, valid_tool)`, with one PIL image per row in `new_image` (None for a row
whose tool showed none) and `valid_tool` 1 for those rows. With `images: true` in the config,
`step` answers that shape, the row's last image in `new_image`; `multi_modal_data` is left
None for RL-Factory's own processor step (`MMEnv._mm_process`) to fill from `new_image`.
`last_images()` gives every image of each row's last turn in either mode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mcpgym.adapters._textenv import START_KEYS, Outcome, TextRollout
from mcpgym.adapters._toolcall import decode_image

__all__ = ["McpgymEnv"]

_ANSWER = re.compile(r"<answer>.*?</answer>", re.DOTALL)


def _get(config: Any, key: str, default: Any = None) -> Any:
    getter = getattr(config, "get", None)
    return getter(key, default) if getter is not None else default


class McpgymEnv:
    """RL-Factory's `Env` interface over mcpgym episodes, one per batch row."""

    def __init__(self, config: Any, centralized_actor: Any = None) -> None:
        """Reads `base_url`, `env`, `token`, `timeout` and episode defaults (`task`, `seed`,
        `split`, `options`) from `config.mcpgym` (or from `config` itself)."""
        section = _get(config, "mcpgym") or config
        base_url = _get(section, "base_url")
        if not base_url:
            raise ValueError("the mcpgym RL-Factory env needs config.mcpgym.base_url")
        self.base_url = str(base_url)
        self.env = _get(section, "env")
        self.token = _get(section, "token")
        self.timeout = float(_get(section, "timeout", 300.0))
        self.defaults = {k: _get(section, k) for k in START_KEYS}
        self.max_prompt_length = int(_get(config, "max_prompt_length", 2048))
        self.use_verify_tool = False
        self.use_process_reward = bool(_get(config, "use_process_reward", False))
        self.tool_manager = None
        self.images = bool(_get(section, "images", False))
        self._last_images: list[list[tuple[str, str]]] = []
        self.rows: list[TextRollout] = []
        """Every row of the current batch, in batch order."""
        self._active: list[int] = []
        self._last_rewards: list[float] = []

    def _rollout(self, row: Mapping[str, Any]) -> TextRollout:
        defaults = dict(self.defaults)
        defaults.update({k: row[k] for k in START_KEYS if row.get(k) is not None})
        rollout = TextRollout(
            self.base_url, self.env, token=self.token, timeout=self.timeout, defaults=defaults
        )
        rollout.start()
        return rollout

    def start_batch(self, rows: Sequence[Mapping[str, Any]]) -> list[str]:
        """Starts one episode per row (each row may carry `task`, `seed`, ...), closing the last
        batch's; returns each episode's prompt."""
        self.close()
        with ThreadPoolExecutor(max_workers=max(1, min(len(rows), 32))) as pool:
            self.rows = list(pool.map(self._rollout, rows))
        self._active = list(range(len(self.rows)))
        return [r.episode.prompt() if r.episode else "" for r in self.rows]

    def tools_prompt(self) -> str:
        """The tools and the tool-call format, for the system prompt."""
        rollout = TextRollout(self.base_url, self.env, token=self.token, timeout=self.timeout)
        try:
            return rollout.system_prompt()
        finally:
            rollout.shutdown()

    def _act(self, index: int, response: str) -> Outcome:
        rollout = self.rows[index]
        if _ANSWER.search(response):
            return rollout.act("")  # an answer ends the row, like a turn with no tool call
        return rollout.act(response)

    def step(
        self, responses: Sequence[str], tokenizer: Any = None, image_data: Any = None
    ) -> tuple[list[Any], ...]:
        """One turn of the rows still running: `(next_obs, dones, valid_action, is_tool)`, or
        with `images: true` MMEnv's eight lists (see the module docstring)."""
        if len(responses) != len(self._active):
            # A new batch (the last one finished, or was cut at the turn limit).
            self.start_batch([{} for _ in responses])
        rows = list(self._active)
        with ThreadPoolExecutor(max_workers=max(1, min(len(rows), 32))) as pool:
            outcomes = list(pool.map(self._act, rows, responses))
        next_obs: list[str] = []
        dones: list[bool] = []
        valid: list[int] = []
        is_tool: list[int] = []
        for outcome in outcomes:
            calls = int(outcome.info.get("tool_calls", 0))
            next_obs.append("" if outcome.done else self._render(outcome.observation, tokenizer))
            dones.append(outcome.done)
            valid.append(1 if outcome.info.get("valid") else 0)
            is_tool.append(1 if calls > 0 else 0)
        self._last_rewards = [o.reward for o in outcomes]
        self._last_images = [o.images for o in outcomes]
        self._active = [i for i, done in zip(rows, dones, strict=True) if not done]
        if not self.images:
            return next_obs, dones, valid, is_tool
        new_image = [
            decode_image(o.images[-1][0]) if o.images and not o.done else None for o in outcomes
        ]
        valid_tool = [0 if image is None else 1 for image in new_image]
        multi_modal_data: list[Any] = [None] * len(outcomes)
        return (
            next_obs,
            dones,
            valid,
            is_tool,
            new_image,
            list(next_obs),
            multi_modal_data,
            valid_tool,
        )

    def last_images(self) -> list[list[Any]]:
        """The images (PIL) each row stepped in the last `step` showed, in that call's order."""
        return [[decode_image(data) for data, _mime in row] for row in self._last_images]

    def _render(self, text: str, tokenizer: Any) -> str:
        """A tool turn in the model's chat template (Qwen 3: `<tool_response>` in a user turn)."""
        if tokenizer is None:
            return text
        base = [{"role": "system", "content": "base"}, {"role": "user", "content": "base"}]
        prefix = tokenizer.apply_chat_template(base, tokenize=False, add_generation_prompt=False)
        full = tokenizer.apply_chat_template(
            [*base, {"role": "tool", "content": text}], tokenize=False, add_generation_prompt=True
        )
        return str(full).replace(str(prefix), "", 1)

    def get_step_reward(self, responses: Sequence[str], format_score: float = 0.1) -> list[float]:
        """Each row's reward from the last `step` (process rewards)."""
        return list(self._last_rewards[: len(responses)])

    def returns(self) -> list[float]:
        """Each row's episode return, in batch order."""
        return [r.return_ for r in self.rows]

    def _compute_score_with_rules(
        self, data: Any, tokenizer: Any = None, if_val: bool = False
    ) -> list[list[float]]:
        """Each row's return as its score (`[[return], ...]`, RL-Factory's shape)."""
        returns = self.returns()
        return [[returns[i] if i < len(returns) else 0.0] for i in range(len(data))]

    def compute_score(
        self,
        reward_rollout_wg: Any,
        reward_tokenizer: Any,
        tokenizer: Any,
        data: Any,
        if_val: bool = False,
        use_process_reward: bool = False,
    ) -> list[list[float]]:
        """The rows' returns (a reward model is not used: the episodes pay the reward)."""
        return self._compute_score_with_rules(data, tokenizer, if_val)

    def close(self) -> None:
        """Closes every row's episode."""
        for rollout in self.rows:
            rollout.shutdown()
        self.rows = []
        self._active = []
