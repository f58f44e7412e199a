"""The sync and async clients against a real server: batches, rewards, errors, closing."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers import WORDLE_GUESSES, metric, play_wordle, play_wordle_async

from mcpgym import AsyncClient, Client, Episode, McpgymError, Server, Step

STARTED = "mcpgym_episodes_started_total"
SHAPED = {"reward": "shaped"}


def check_played(steps: list[Step], status: dict[str, object], trajectory: list[dict]) -> None:
    """One finished game: rewards add up to the return, one trajectory record per call."""
    assert steps[-1].done
    assert not any(step.done for step in steps[:-1])
    assert [step.turn for step in steps] == list(range(1, len(steps) + 1))
    total = sum(step.reward for step in steps)
    assert status["done"] is True
    assert status["return"] == pytest.approx(total)
    assert steps[-1].return_ == pytest.approx(total)
    for step in steps:
        assert sum(step.reward_components.values()) == pytest.approx(step.reward)
    assert [record["turn"] for record in trajectory] == [step.turn for step in steps]
    assert [record["reward"] for record in trajectory] == pytest.approx(
        [step.reward for step in steps]
    )


def test_sync_batch_of_eight_plays_to_the_end(wordle_server: Server) -> None:
    with Client(wordle_server.url) as client:
        before = metric(wordle_server.url, STARTED, env="wordle")
        episodes = client.start_many(8, seeds=range(8), options=SHAPED)
        assert metric(wordle_server.url, STARTED, env="wordle") - before == 8
        assert len({episode.id for episode in episodes}) == 8
        assert [episode.seed for episode in episodes] == list(range(8))

        with ThreadPoolExecutor(8) as pool:
            games = list(pool.map(play_wordle, episodes))
        solved = 0
        for episode, steps in zip(episodes, games, strict=True):
            status = episode.status()
            check_played(steps, status, episode.trajectory())
            # Shaped rewards pay on every valid guess, so a sum of zeros cannot pass.
            assert status["return"] != 0
            if steps[-1].reward_components.get("win") == 1.0:
                solved += 1
                assert status["answer"] == steps[-1].structured["guess"]
        assert solved > 0, "the solver should win at least one of eight games"
        for episode in episodes:
            episode.close()
        assert metric(wordle_server.url, STARTED, env="wordle") - before == 8


async def test_async_batch_of_eight_plays_to_the_end(wordle_server: Server) -> None:
    async with AsyncClient(wordle_server.url) as client:
        before = metric(wordle_server.url, STARTED, env="wordle")
        episodes = await client.start_many(8, "wordle", seeds=range(100, 108), options=SHAPED)
        assert metric(wordle_server.url, STARTED, env="wordle") - before == 8
        assert len({episode.id for episode in episodes}) == 8

        games = await asyncio.gather(*(play_wordle_async(episode) for episode in episodes))
        for episode, steps in zip(episodes, games, strict=True):
            check_played(steps, await episode.status(), await episode.trajectory())
        await asyncio.gather(*(episode.close() for episode in episodes))
        for episode in episodes:
            with pytest.raises(McpgymError) as error:
                await episode.status()
            assert error.value.status == 404


def test_same_seed_same_task_and_sparse_reward_pays_only_at_the_end(wordle_server: Server) -> None:
    with Client(wordle_server.url) as client:
        first, second = client.start(seed=7), client.start(seed=7)
        assert first.id != second.id
        assert first.task == second.task
        steps = play_wordle(first)
        assert all(step.reward == 0 for step in steps[:-1])
        assert first.status()["return"] == pytest.approx(steps[-1].reward)
        prompt = first.prompt()
        assert "Wordle" in prompt


def test_step_reads_blocks_and_invalid_guess_is_an_error_step(wordle_server: Server) -> None:
    with Client(wordle_server.url) as client, client.start(seed=3, options=SHAPED) as episode:
        step = episode.call("guess", {"word": WORDLE_GUESSES[0]})
        assert step.episode == episode.id
        assert step.text.splitlines()[0].startswith("CRANE ")
        assert step.text.endswith("5 guesses left.")
        assert step.images == []
        assert step.structured["guess"] == "crane"
        refused = episode.call("guess", word="zzzzz")
        assert refused.is_error
        assert "not in the word list" in refused.text
        assert refused.reward_components == {"invalid": pytest.approx(-0.02)}
        assert refused.return_ == pytest.approx(step.reward - 0.02)
        history = episode.call("history")
        assert history.turn == 3
        assert len(episode.trajectory()) == 3


def test_bad_input_raises_the_servers_sentence(wordle_server: Server) -> None:
    with Client(wordle_server.url) as client:
        with pytest.raises(McpgymError) as error:
            client.start("chess")
        assert error.value.status == 400
        assert str(error.value) == 'unknown environment "chess"; this server hosts: wordle'

        with pytest.raises(McpgymError) as error:
            client.start(seed="seven")  # type: ignore[arg-type]
        assert error.value.status == 400
        assert str(error.value).startswith("the body is not a valid episode request (")
        assert "seed" in str(error.value)

        with pytest.raises(McpgymError) as error:
            client.start(options={"reward": "dense"})
        assert error.value.status == 400
        assert "invalid Wordle options" in str(error.value)

        with client.start(seed=1) as episode:
            with pytest.raises(McpgymError) as error:
                episode.call("nope")
            assert error.value.status == 400
            assert str(error.value) == 'unknown tool "nope"; wordle offers: guess, history'
            assert episode.trajectory() == []

        with pytest.raises(McpgymError) as error:
            client.tasks(split="validation")
        assert error.value.status == 400

        with pytest.raises(McpgymError) as error:
            Episode(client, "no-such-episode", "wordle", "t", 0, "").status()
        assert error.value.status == 404


def test_close_is_idempotent(wordle_server: Server) -> None:
    with Client(wordle_server.url) as client:
        episode = client.start(seed=5)
        twin = Episode(client, episode.id, episode.env, episode.task, episode.seed, "")
        episode.close()
        episode.close()
        twin.close()  # the server answers 404 now; closing still succeeds
        with pytest.raises(McpgymError) as error:
            episode.call("guess", word="crane")
        assert error.value.status == 404


def test_tasks_and_tools(wordle_server: Server) -> None:
    with Client(wordle_server.url) as client:
        train, test = client.tasks(), client.tasks(split="test")
        assert train and test
        assert not set(train) & set(test)
        episode = client.start(task=test[0])
        assert episode.task == test[0]
        tools = {tool["name"]: tool for tool in client.tools()}
        assert set(tools) == {"guess", "history"}
        assert tools["guess"]["inputSchema"]["required"] == ["word"]
        assert "mcpgym_episodes_started_total" in client.metrics()


def test_token_is_required_and_sent() -> None:
    with Server("wordle", token="s3cret") as server:
        with Client(server.url) as anonymous, pytest.raises(McpgymError) as error:
            anonymous.start()
        assert error.value.status == 401
        with server.client() as client, client.start(seed=2) as episode:
            assert episode.call("guess", word="crane").turn == 1


def test_unreachable_server_and_failed_start() -> None:
    with Client("http://127.0.0.1:9", timeout=10) as client, pytest.raises(McpgymError) as error:
        client.start()
    assert error.value.status is None
    assert "cannot reach the mcpgym server at http://127.0.0.1:9" in str(error.value)

    with pytest.raises(McpgymError) as error:
        Server("wordle", "--no-such-flag")
    assert "did not start listening" in str(error.value)
    assert "--no-such-flag" in str(error.value)


def test_serve_hosts_every_environment_and_delivers_screenshots(serve_server: Server) -> None:
    with serve_server.client() as client:
        with pytest.raises(McpgymError) as error:
            client.start()
        assert str(error.value) == (
            'name the environment with "env"; this server hosts: desktop, hilo, jupyter, wordle'
        )
        assert "final_answer" in {tool["name"] for tool in client.tools("jupyter")}
        with client.start("desktop", seed=1) as desktop:
            shot = desktop.call("screenshot")
            assert not shot.is_error, shot.text
            [(data, mime)] = shot.images
            assert mime == "image/png"
            assert base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n")


def test_levels_choose_the_task_an_episode_is_drawn_from(serve_server: Server) -> None:
    with serve_server.client() as client:
        for seed in (1, 2):
            with client.start("jupyter", seed=seed, levels=["hard"]) as episode:
                number = int(episode.task.rsplit("/", 1)[1])
                assert number % 3 == 2, episode.task
        with pytest.raises(McpgymError) as error:
            client.start("jupyter", levels=["extreme"])
        assert "extreme" in str(error.value)
        with pytest.raises(McpgymError) as error:
            client.start("wordle", levels=["hard"])
        assert "none of its families has levels" in str(error.value)


def test_a_server_that_exits_early_says_so_with_its_stderr() -> None:
    server = Server("wordle")
    client = server.client(timeout=10)
    os.kill(server.pid, signal.SIGKILL)
    server._process.wait(30)
    with pytest.raises(McpgymError) as error:
        server.check()
    assert "exited early (exit code -9)" in str(error.value)
    # The stderr it wrote is in the error.
    assert "mcpgym: listening on" in str(error.value)
    # Its clients' "cannot reach" says why.
    with pytest.raises(McpgymError) as error:
        client.start()
    assert "cannot reach" in str(error.value)
    assert "exited early (exit code -9)" in str(error.value)
    assert "mcpgym: listening on" in str(error.value)
    client.close()
    server.stop()  # a server stopped on purpose after it died: nothing to say

    # Inside a with block: the failure it caused is the cause of an error saying it exited.
    with (
        pytest.raises(McpgymError) as error,
        Server("wordle") as server,
        Client(server.url, timeout=10) as plain,
    ):
        os.kill(server.pid, signal.SIGKILL)
        server._process.wait(30)
        plain.start()
    assert "exited early" in str(error.value)
    assert isinstance(error.value.__cause__, McpgymError)
    assert "cannot reach" in str(error.value.__cause__)
