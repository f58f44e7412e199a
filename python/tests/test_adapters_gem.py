"""The GEM adapter through gem-llm 0.1.0 (pinned): registered with `gem.register`, made with
`gem.make`, 8 copies run concurrently by GEM's own `AsyncVectorEnv` (in NEXT_STEP autoreset
mode, so a finished env starts its next episode only when stepped again)."""

from __future__ import annotations

from functools import partial

import gem
from gem.vector.async_vector_env import AsyncVectorEnv
from gem.vector.vector_env import AutoresetMode
from test_adapters_support import ROLLOUTS, SEEDS, Player, Recorded, check_rollouts, recorded

from mcpgym.adapters.gem import McpgymGemEnv, register

__all__ = ["recorded"]


def test_wordle_rollouts_each_play_their_own_episode(recorded: Recorded) -> None:
    register("mcpgym:wordle-test", base_url=recorded.server.url, env="wordle")
    ids_ = ["mcpgym:wordle-test"] * ROLLOUTS
    envs = AsyncVectorEnv(
        env_ids=ids_,
        env_fns=[partial(gem.make, env_id) for env_id in ids_],
        autoreset_mode=AutoresetMode.NEXT_STEP,
    )
    assert all(isinstance(env, McpgymGemEnv) for env in envs.envs)
    before = recorded.started()
    observations, infos = envs.reset(seed=SEEDS)
    assert all("Wordle" in o and "<tool_call>" in o for o in observations)
    ids = [info["episode"] for info in infos]
    players = [Player() for _ in SEEDS]
    last: dict[int, str | None] = dict.fromkeys(range(ROLLOUTS))
    totals = [0.0] * ROLLOUTS
    active = set(range(ROLLOUTS))
    while active:
        # Only running envs are stepped: GEM resets a finished env on its next step.
        order = sorted(active)
        actions = {i: players[i].action(last[i]) for i in order}
        obs, rewards, terminated, truncated, _infos = envs.step(actions)
        for i, o, r, t, u in zip(order, obs, rewards, terminated, truncated, strict=True):
            totals[i] += float(r)
            last[i] = o
            if t or u:
                active.discard(i)
    check_rollouts(recorded, before, dict(zip(ids, totals, strict=True)))
    for env in envs.envs:
        env.close()


def test_gem_tool_call_format_is_read(recorded: Recorded) -> None:
    env = McpgymGemEnv(recorded.server.url, "wordle", seed=3)
    env.reset()
    call = '<tool_call><tool_name>guess</tool_name><arguments>{"word": "crane"}</arguments>'
    obs, _reward, terminated, truncated, info = env.step(call + "</tool_call>")
    assert "CRANE" in obs and not terminated and not truncated and info["valid"]
    env.close()
