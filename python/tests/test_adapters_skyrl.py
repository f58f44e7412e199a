"""The SkyRL adapter through skyrl-gym 0.4.0 (pinned): registered and made with
`skyrl_gym.make` the way SkyRL's generator does, driven with `init` / `step` / `close`."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import skyrl_gym
from omegaconf import OmegaConf
from skyrl_gym.envs.base_text_env import BaseTextEnv
from test_adapters_support import SEEDS, Player, Recorded, check_rollouts, recorded

from mcpgym.adapters.skyrl import register

__all__ = ["recorded"]


def test_wordle_rollouts_each_play_their_own_episode(recorded: Recorded) -> None:
    register("mcpgym-test")
    env_config = OmegaConf.create({"base_url": recorded.server.url, "env": "wordle"})
    before = recorded.started()

    def rollout(seed: int) -> tuple[str, float]:
        env = skyrl_gym.make(
            "mcpgym-test", env_config=env_config, extras={"seed": seed, "max_turns": 10}
        )
        assert isinstance(env, BaseTextEnv)
        messages, info = env.init([])
        assert messages[0]["role"] == "system" and "guess" in messages[0]["content"]
        assert "Wordle" in messages[-1]["content"]
        player = Player()
        observation = None
        total = 0.0
        while True:
            out = env.step(player.action(observation))
            total += out["reward"]
            if out["done"]:
                break
            observation = out["observations"][0]["content"]
        assert out["metadata"]["return"] == env.get_metrics()["return"]
        env.close()
        return info["episode"], total

    with ThreadPoolExecutor(max_workers=len(SEEDS)) as pool:
        results = dict(pool.map(rollout, SEEDS))
    check_rollouts(recorded, before, results)


def test_a_turn_without_a_tool_call_ends_the_trajectory(recorded: Recorded) -> None:
    register("mcpgym-test-2")
    env = skyrl_gym.make(
        "mcpgym-test-2", env_config={"base_url": recorded.server.url}, extras={"seed": 1}
    )
    env.init([{"role": "user", "content": "Play Wordle."}])
    bad = env.step("<tool_call>{oops}</tool_call>")
    assert not bad["done"] and "Error" in bad["observations"][0]["content"]
    out = env.step("I give up.")
    assert out["done"] and out["reward"] == 0.0
    env.close()
