"""The RL-Factory adapter against RL-Factory's documented `Env` interface (envs/base.py and
envs/utils/tool_utils.py: `step(responses)` once per turn for the rows still running, in batch
order, a row dropped once done; scores per row). RL-Factory is not on PyPI (a GPU-only verl
fork), so the generation loop here is that contract, not its code."""

from __future__ import annotations

from test_adapters_support import ROLLOUTS, SEEDS, Player, Recorded, check_rollouts, recorded

from mcpgym.adapters.rl_factory import McpgymEnv

__all__ = ["recorded"]


def test_wordle_batch_rows_each_play_their_own_episode(recorded: Recorded) -> None:
    env = McpgymEnv({"mcpgym": {"base_url": recorded.server.url, "env": "wordle"}})
    before = recorded.started()
    prompts = env.start_batch([{"seed": seed} for seed in SEEDS])
    assert len(prompts) == ROLLOUTS and all("Wordle" in p for p in prompts)
    players = [Player() for _ in SEEDS]
    last: list[str | None] = [None] * ROLLOUTS
    running = list(range(ROLLOUTS))
    turns = 0
    while running:
        turns += 1
        assert turns <= 12
        responses = [players[i].action(last[i]) for i in running]
        next_obs, dones, valid, is_tool = env.step(responses)
        assert valid == [1] * len(running) and is_tool == [1] * len(running)
        step_rewards = env.get_step_reward(responses)
        assert len(step_rewards) == len(running)
        for i, obs in zip(running, next_obs, strict=True):
            last[i] = obs
        running = [i for i, done in zip(running, dones, strict=True) if not done]
    scores = env._compute_score_with_rules(list(range(ROLLOUTS)))
    ids = [rollout.episode.id for rollout in env.rows if rollout.episode]
    check_rollouts(recorded, before, {i: s[0] for i, s in zip(ids, scores, strict=True)})
    env.close()
