"""The GEM adapter through gem-llm 0.1.0 (pinned): registered with `gem.register`, made with
`gem.make`, 8 copies run concurrently by GEM's own `AsyncVectorEnv` (in NEXT_STEP autoreset
mode, so a finished env starts its next episode only when stepped again)."""

from __future__ import annotations

import gc
import subprocess
import sys
from functools import partial

import gem
from gem.vector.async_vector_env import AsyncVectorEnv
from gem.vector.vector_env import AutoresetMode
from helpers import metric
from test_adapters_support import ROLLOUTS, SEEDS, Player, Recorded, check_rollouts, recorded

from mcpgym import Server
from mcpgym.adapters.gem import McpgymGemEnv, close_all, register

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


def live(server: Server) -> float:
    """Episodes the server holds open now."""
    return metric(server.url, "mcpgym_episodes_live")


def test_autoreset_episodes_are_closed_by_close_all_and_by_collection(
    wordle_server: Server,
) -> None:
    # SAME_STEP autoreset starts the next episode in the step that ends one; GEM's vector env
    # has no close(), so those episodes must not wait for the idle reaper.
    register("mcpgym:wordle-autoreset", base_url=wordle_server.url, env="wordle")
    ids_ = ["mcpgym:wordle-autoreset"] * 2
    envs = AsyncVectorEnv(
        env_ids=ids_,
        env_fns=[partial(gem.make, env_id) for env_id in ids_],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    envs.reset(seed=[1, 2])
    assert live(wordle_server) == 2
    # A turn with no tool call ends the episode: closed at once, and autoreset starts another.
    _obs, _rewards, terminated, _truncated, _infos = envs.step(["I give up.", "I give up."])
    assert list(terminated) == [True, True]
    assert live(wordle_server) == 2
    close_all(envs)
    assert live(wordle_server) == 0

    # A vector env nobody closes: its episodes close when it is collected.
    envs = AsyncVectorEnv(
        env_ids=ids_,
        env_fns=[partial(gem.make, env_id) for env_id in ids_],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    envs.reset(seed=[3, 4])
    assert live(wordle_server) == 2
    envs.thread_pool_executer.shutdown()
    del envs
    gc.collect()
    assert live(wordle_server) == 0


def test_a_turn_without_a_tool_call_closes_its_episode(wordle_server: Server) -> None:
    env = McpgymGemEnv(wordle_server.url, "wordle", seed=5)
    env.reset()
    assert live(wordle_server) == 1
    _obs, _reward, terminated, _truncated, _info = env.step("The answer is crane.")
    assert terminated
    assert live(wordle_server) == 0
    env.close()


def test_importing_the_adapter_keeps_http_requests_out_of_the_log(wordle_server: Server) -> None:
    # `import gem` sets the root logger to INFO; httpx logs every request at INFO. In a fresh
    # interpreter, so that nothing else has configured logging.
    script = (
        "import sys, logging\n"
        "import mcpgym.adapters.gem\n"
        "from mcpgym import Client\n"
        "assert logging.getLogger().level == logging.INFO  # gem's basicConfig\n"
        "with Client(sys.argv[1]) as client:\n"
        "    client.tools()\n"
        "logging.getLogger('mine').info('still logged')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, wordle_server.url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "HTTP Request" not in done.stderr
    assert "still logged" in done.stderr
