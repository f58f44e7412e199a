"""Every adapter through a network that drops connections: a proxy between the framework and
the server cuts connections at random points of their traffic (sparing only episode starts,
which are not idempotent), and each rollout still plays exactly the steps the trainer saw,
once each, in order, paid what the server paid. Driven through each framework's own library
the way `test_adapters_<framework>.py` does, with 8 rollouts at once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import gem
import pytest
import skyrl_gym
from gem.vector.async_vector_env import AsyncVectorEnv
from gem.vector.vector_env import AutoresetMode
from helpers import CuttingProxy, is_start
from omegaconf import OmegaConf
from test_adapters_support import ROLLOUTS, SEEDS, Player, Recorded, check_rollouts, recorded
from test_adapters_verl import AgentData, call_tool, load_tools

from mcpgym.adapters.gem import McpgymGemEnv
from mcpgym.adapters.gem import register as register_gem
from mcpgym.adapters.rl_factory import McpgymEnv
from mcpgym.adapters.skyrl import register as register_skyrl
from mcpgym.adapters.trl import environment_factory

__all__ = ["recorded"]

# Higher than test_retries.py's: a rollout is a few dozen requests, and every adapter should
# see many cuts.
CUT = 0.12


@pytest.fixture
def proxy(recorded: Recorded) -> Iterator[CuttingProxy]:
    cutting = CuttingProxy(recorded.server.url, seed=7, cut=CUT, spare=is_start)
    yield cutting
    cutting.close()


def check_exactly_once(
    recorded: Recorded, proxy: CuttingProxy, before: float, seen: dict[str, tuple[int, float]]
) -> None:
    """`seen`: episode id -> (steps the trainer saw, reward it got). Each episode recorded
    exactly that many steps, turn 1 to N, and paid that reward; the proxy cut connections."""
    check_rollouts(recorded, before, {k: reward for k, (_, reward) in seen.items()})
    for episode_id, (steps, _) in seen.items():
        turns = [record["turn"] for record in recorded.episode(episode_id)]
        assert turns == list(range(1, steps + 1)), (episode_id, steps, turns)
    assert proxy.cuts >= 10, f"only {proxy.cuts} connections were cut"


def test_skyrl_through_dropped_connections(recorded: Recorded, proxy: CuttingProxy) -> None:
    register_skyrl("mcpgym-cut")
    env_config = OmegaConf.create({"base_url": proxy.url, "env": "wordle", "timeout": 30})
    before = recorded.started()

    def rollout(seed: int) -> tuple[str, tuple[int, float]]:
        env = skyrl_gym.make("mcpgym-cut", env_config=env_config, extras={"seed": seed})
        _messages, info = env.init([])
        player = Player()
        observation = None
        total = 0.0
        while True:
            out = env.step(player.action(observation))
            total += out["reward"]
            if out["done"]:
                break
            observation = out["observations"][0]["content"]
        env.close()
        return info["episode"], (player.calls, total)

    with ThreadPoolExecutor(max_workers=ROLLOUTS) as pool:
        seen = dict(pool.map(rollout, SEEDS))
    check_exactly_once(recorded, proxy, before, seen)


def test_gem_through_dropped_connections(recorded: Recorded, proxy: CuttingProxy) -> None:
    register_gem("mcpgym:wordle-cut", base_url=proxy.url, env="wordle", timeout=30.0)
    ids_ = ["mcpgym:wordle-cut"] * ROLLOUTS
    envs = AsyncVectorEnv(
        env_ids=ids_,
        env_fns=[partial(gem.make, env_id) for env_id in ids_],
        autoreset_mode=AutoresetMode.NEXT_STEP,
    )
    before = recorded.started()
    _observations, infos = envs.reset(seed=SEEDS)
    ids = [info["episode"] for info in infos]
    players = [Player() for _ in SEEDS]
    last: dict[int, str | None] = dict.fromkeys(range(ROLLOUTS))
    totals = [0.0] * ROLLOUTS
    active = set(range(ROLLOUTS))
    while active:
        order = sorted(active)
        obs, rewards, terminated, truncated, _ = envs.step(
            {i: players[i].action(last[i]) for i in order}
        )
        for i, o, r, t, u in zip(order, obs, rewards, terminated, truncated, strict=True):
            totals[i] += float(r)
            last[i] = o
            if t or u:
                active.discard(i)
    seen = {ids[i]: (players[i].calls, totals[i]) for i in range(ROLLOUTS)}
    check_exactly_once(recorded, proxy, before, seen)
    for env in envs.envs:
        assert isinstance(env, McpgymGemEnv)
        env.close()


def test_rl_factory_through_dropped_connections(recorded: Recorded, proxy: CuttingProxy) -> None:
    env = McpgymEnv({"mcpgym": {"base_url": proxy.url, "env": "wordle", "timeout": 30}})
    before = recorded.started()
    env.start_batch([{"seed": seed} for seed in SEEDS])
    players = [Player() for _ in SEEDS]
    last: list[str | None] = [None] * ROLLOUTS
    running = list(range(ROLLOUTS))
    while running:
        responses = [players[i].action(last[i]) for i in running]
        next_obs, dones, _valid, _is_tool = env.step(responses)
        for i, obs in zip(running, next_obs, strict=True):
            last[i] = obs
        running = [i for i, done in zip(running, dones, strict=True) if not done]
    scores = env._compute_score_with_rules(list(range(ROLLOUTS)))
    seen = {
        rollout.episode.id: (players[i].calls, scores[i][0])
        for i, rollout in enumerate(env.rows)
        if rollout.episode
    }
    check_exactly_once(recorded, proxy, before, seen)
    env.close()


def test_trl_through_dropped_connections(recorded: Recorded, proxy: CuttingProxy) -> None:
    Wordle = environment_factory(proxy.url, "wordle", timeout=30.0)
    pool = [Wordle() for _ in SEEDS]
    before = recorded.started()

    def rollout(index: int) -> tuple[str, tuple[int, float]]:
        environment = pool[index]
        environment.reset(seed=SEEDS[index])
        player = Player()
        observation = None
        while environment._step is None or not environment._step.done:
            observation = environment.guess(word=player.guess(observation))  # type: ignore[attr-defined]
        assert environment._episode is not None
        return environment._episode.id, (player.calls, environment.get_reward())

    with ThreadPoolExecutor(max_workers=ROLLOUTS) as threads:
        seen = dict(threads.map(rollout, range(ROLLOUTS)))
    check_exactly_once(recorded, proxy, before, seen)


def test_verl_through_dropped_connections(recorded: Recorded, proxy: CuttingProxy) -> None:
    from test_adapters_verl import MANIFESTS

    tools = load_tools(MANIFESTS / "mcpgym_wordle.yaml", proxy.url)
    for tool in tools.values():
        tool.timeout = 30.0
    before = recorded.started()

    async def rollout(seed: int) -> tuple[str, tuple[int, float]]:
        data = AgentData({"guess": {"create_kwargs": {"seed": seed}}})
        player = Player()
        observation = None
        while not data.extra_fields.get("mcpgym", {}).get("wordle", {}).get("done"):
            response = await call_tool(tools, data, "guess", {"word": player.guess(observation)})
            observation = response.text
        record = data.extra_fields["mcpgym"]["wordle"]
        return record["episode"], (player.calls, sum(data.tool_rewards))

    async def main() -> dict[str, tuple[int, float]]:
        return dict(await asyncio.gather(*(rollout(seed) for seed in SEEDS)))

    seen = asyncio.run(main())
    check_exactly_once(recorded, proxy, before, seen)
