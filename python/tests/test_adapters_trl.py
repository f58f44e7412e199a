"""The TRL adapter against TRL's `environment_factory` contract (trl 1.16.0,
`GRPOTrainer._generate`): tools are the class's public functions, their schemas come from
transformers' `get_json_schema`, `reset(**row)` starts each rollout, `get_reward()` is the
reward. TRL itself pulls CUDA torch, so the trainer loop is its documented contract; the schema
builder is the real transformers (pinned, installed without torch)."""

from __future__ import annotations

import inspect
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from helpers import metric
from test_adapters_support import SEEDS, Player, Recorded, check_rollouts, recorded
from transformers.utils import get_json_schema

from mcpgym import Server
from mcpgym.adapters.trl import environment_factory

__all__ = ["recorded"]


def tool_methods(cls: type) -> dict[str, Any]:
    """What GRPOTrainer takes as tools: public functions of the class but reset/get_reward."""
    return {
        name: fn
        for name, fn in inspect.getmembers(cls, predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


def test_every_env_has_typed_documented_tools() -> None:
    with Server("serve") as serve:
        for env in ("wordle", "jupyter", "desktop"):
            cls = environment_factory(serve.url, env)
            with serve.client() as client:
                names = {t["name"] for t in client.tools(env)}
            methods = tool_methods(cls)
            assert set(methods) == names
            for name, fn in methods.items():
                schema = get_json_schema(fn)["function"]
                assert schema["name"] == name
                assert schema["description"]
                for prop in schema["parameters"]["properties"].values():
                    assert isinstance(prop["type"], str), (env, name, prop)


def test_wordle_rollouts_each_play_their_own_episode(recorded: Recorded) -> None:
    Wordle = environment_factory(recorded.server.url, "wordle")
    # TRL builds instances with no arguments and pools them.
    pool = [Wordle() for _ in SEEDS]
    before = recorded.started()

    def rollout(index: int) -> tuple[str, float]:
        environment = pool[index]
        prompt = environment.reset(prompt=[{"role": "user", "content": "play"}], seed=SEEDS[index])
        assert prompt and "Wordle" in prompt
        tools = {fn.__name__: fn for fn in (getattr(environment, n) for n in tool_methods(Wordle))}
        player = Player()
        observation = None
        while environment._step is None or not environment._step.done:
            assert player.calls < 12
            observation = tools["guess"](word=player.guess(observation))
        assert environment._episode is not None
        return environment._episode.id, environment.get_reward()

    with ThreadPoolExecutor(max_workers=len(SEEDS)) as pool_threads:
        results = list(pool_threads.map(rollout, range(len(SEEDS))))
    # TRL's reward function for an environment with get_reward.
    rewards = [environment.get_reward() for environment in pool]
    assert rewards == [reward for _, reward in results]
    check_rollouts(recorded, before, dict(results))

    # A pooled instance is reset for the next batch: a new episode, the old one closed.
    started = metric(recorded.server.url, "mcpgym_episodes_started_total", env="wordle")
    first = pool[0]._episode
    pool[0].reset(seed=1)
    assert pool[0]._episode is not None and pool[0]._episode.id != (first.id if first else None)
    assert recorded.started() == started + 1
    assert pool[0].get_reward() == 0.0
