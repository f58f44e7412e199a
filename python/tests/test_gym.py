"""The Gymnasium-style wrapper against a real server."""

from __future__ import annotations

import pytest
from helpers import WordleSolver, metric

from mcpgym import Client, McpgymError, Server
from mcpgym.gym import McpgymEnv


def test_plays_a_game_to_terminated_and_rewards_sum_to_the_return(wordle_server: Server) -> None:
    with McpgymEnv(wordle_server.url, "wordle", options={"reward": "shaped"}) as env:
        observation, info = env.reset(seed=11)
        assert observation == {"text": info["prompt"]}
        assert "Wordle" in info["prompt"]
        assert env.episode is not None and info["episode"] == env.episode.id
        assert info["task"] == env.episode.task

        solver = WordleSolver()
        rewards: list[float] = []
        terminated = truncated = False
        while not (terminated or truncated):
            assert len(rewards) < 6
            guess = solver.next_guess()
            observation, reward, terminated, truncated, info = env.step(
                {"tool": "guess", "arguments": {"word": guess}}
            )
            solver.observe(guess, observation["structured"]["feedback"])
            rewards.append(reward)
            assert info["turn"] == len(rewards)
            assert info["is_error"] is False
            assert observation["text"].splitlines()[-2].startswith(guess.upper())
            assert observation["content"][0]["type"] == "text"
            assert info["return"] == pytest.approx(sum(rewards))
        assert terminated and not truncated
        assert observation["structured"]["done"] is True
        status = env.episode.status()
        assert status["done"] is True
        assert status["return"] == pytest.approx(sum(rewards))
        assert sum(info["reward_components"].values()) == pytest.approx(rewards[-1])


def test_turn_limit_truncates() -> None:
    with (
        Server("wordle", "--max-turns", "2") as server,
        Client(server.url) as client,
        McpgymEnv(client, "wordle") as env,
    ):
        env.reset(seed=4)
        history = {"tool": "history", "arguments": {}}
        assert env.step(history)[2:4] == (False, False)
        _, reward, terminated, truncated, _ = env.step(history)
        assert (terminated, truncated) == (False, True)
        assert reward == 0


def test_reset_closes_the_previous_episode(wordle_server: Server) -> None:
    env = McpgymEnv(wordle_server.url)
    _, first = env.reset(seed=1)
    _, second = env.reset(seed=2)
    assert first["episode"] != second["episode"]
    assert metric(wordle_server.url, "mcpgym_episodes_started_total", env="wordle") == 2
    with Client(wordle_server.url) as client:
        statuses = client._http.get(f"/episodes/{first['episode']}")
        assert statuses.status_code == 404
        assert client._http.get(f"/episodes/{second['episode']}").status_code == 200
        env.close()
        assert client._http.get(f"/episodes/{second['episode']}").status_code == 404
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"tool": "history"})


def test_bad_actions_are_refused(wordle_server: Server) -> None:
    with McpgymEnv(wordle_server.url) as env:
        env.reset()
        with pytest.raises(ValueError, match="tool call"):
            env.step("crane")  # type: ignore[arg-type]
        with pytest.raises(McpgymError, match="unknown tool"):
            env.step({"tool": "nope"})


def test_is_a_gymnasium_env_exactly_when_gymnasium_imports() -> None:
    try:
        import gymnasium
    except ImportError:
        assert McpgymEnv.__mro__[1:] == (object,)
    else:
        assert issubclass(McpgymEnv, gymnasium.Env)


def test_the_example_environment_needs_no_registration_of_its_own() -> None:
    """Hi-Lo, registered once in the binary, plays through the wrapper like the others."""
    with Server("hilo") as server, McpgymEnv(server.url, "hilo") as env:
        _, info = env.reset(seed=5)
        assert "Hi-Lo" in info["prompt"]
        low, high = 1, 0
        terminated = False
        while not terminated:
            rules = env.step({"tool": "rules", "arguments": {}})[0]["structured"]
            low, high = rules["low"], rules["high"]
            observation, _, terminated, truncated, info = env.step(
                {"tool": "guess", "arguments": {"number": (low + high) // 2}}
            )
            assert not truncated
        assert observation["structured"]["hint"] == "correct"
        assert info["reward_components"]["win"] == 1.0
        assert env.episode is not None and env.episode.status()["number"] == (low + high) // 2
