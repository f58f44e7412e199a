"""The Open Reward Standard door through the real client libraries: ors-sdk 0.1.0 and
openreward 0.1.167, against the real binary (`mcpgym serve`, every environment hosted).

Each rollout is its own ORS session and its own mcpgym episode: the tests check that
`mcpgym_episodes_started_total` rises by exactly the number of rollouts, that every game is
played to its end, and that the rewards the client saw add up to the episode's `return` on the
control plane.
"""

from __future__ import annotations

import asyncio
import base64
import re
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from helpers import WORDLE_GUESSES, episode_status, started

from mcpgym import Server

ROLLOUTS = 8
# Generous "finished at all" bounds, never timing limits.
BATCH_TIMEOUT = 600.0


def _text(blocks: Any) -> str:
    return "\n".join(b.text for b in blocks if getattr(b, "type", "") == "text")


def _check_finished_episode(server: Server, outputs: list[Any]) -> str:
    """The outputs of one finished game: the last one finished it, they name one episode, and
    the rewards seen sum to the episode's return. Returns the episode id."""
    assert outputs, "no tool was called"
    assert outputs[-1].finished, f"the game did not end: {_text(outputs[-1].blocks)}"
    assert not any(o.finished for o in outputs[:-1])
    ids = {o.metadata["episode_id"] for o in outputs}
    assert len(ids) == 1, ids
    episode_id = ids.pop()
    status = episode_status(server, episode_id)
    assert status["done"] is True
    assert status["turn"] == len(outputs)
    seen = sum(o.reward or 0.0 for o in outputs)
    assert seen == pytest.approx(status["return"]), (seen, status)
    assert outputs[-1].metadata["return"] == pytest.approx(status["return"])
    return episode_id


# ---- ors-sdk ---------------------------------------------------------------------------------


def test_ors_sdk_eight_concurrent_wordle_rollouts(serve_server: Server) -> None:
    from ors.client import AsyncORS

    before = started(serve_server, "wordle")

    async def batch() -> list[tuple[str, list[Any]]]:
        client = AsyncORS(base_url=serve_server.url)
        # Checked while every session is still open (closing one closes its episode).
        results = await asyncio.wait_for(
            asyncio.gather(*(_checked_ors_rollout(client, i) for i in range(ROLLOUTS))),
            BATCH_TIMEOUT,
        )
        # AsyncORS has no close(); its HTTP sessions are closed here, inside the loop.
        for http_client in client.environments._clients.values():
            await http_client.close()
        return results

    async def _checked_ors_rollout(client: Any, index: int) -> tuple[str, list[Any]]:
        env = client.environment("wordle")
        outputs: list[Any] = []
        async with env.session(split="train", index=index) as session:
            assert "Wordle" in _text(await session.get_prompt())
            assert {t.name for t in await session.list_tools()} == {"guess", "history"}
            for word in WORDLE_GUESSES:
                output = await session.call_tool("guess", {"word": word})
                outputs.append(output)
                if output.finished:
                    break
            episode_id = await asyncio.to_thread(_check_finished_episode, serve_server, outputs)
        return episode_id, outputs

    results = asyncio.run(batch())
    assert started(serve_server, "wordle") - before == ROLLOUTS
    assert len({episode_id for episode_id, _ in results}) == ROLLOUTS
    # Each session's episode was closed with it.
    for episode_id, _ in results:
        assert httpx.get(f"{serve_server.url}/episodes/{episode_id}").status_code == 404


def test_ors_sdk_lists_tasks_and_refuses_bad_calls(serve_server: Server) -> None:
    from ors.client import ORS, ToolCallError

    with ORS(base_url=serve_server.url) as client:
        env = client.environment("wordle")
        assert env.list_splits() == ["train", "test"]
        assert env.num_tasks("test") == len(env.list_tasks("test"))
        task = env.get_task("train", 3)
        assert task.environment_name == "wordle"
        assert set(task.task_spec) == {"id"}
        assert [t.task_spec for t in env.get_task_range("train", 0, 2)] == [
            env.get_task("train", 0).task_spec,
            env.get_task("train", 1).task_spec,
        ]
        with env.session(task=task) as session:
            # An unknown tool and a bad argument are refused without costing a turn.
            with pytest.raises(ToolCallError, match="is not a valid tool"):
                session.call_tool("gues", {"word": "crane"})
            with pytest.raises(ToolCallError, match="Tool input validation error"):
                session.call_tool("guess", {"word": 5})
            # An illegal move is the model's to read: a successful output marked is_error.
            output = session.call_tool("guess", {"word": "zzzzz"})
            assert output.metadata["is_error"] is True
            assert "not in the word list" in _text(output.blocks)
            outputs = [output]
            for word in WORDLE_GUESSES:
                outputs.append(session.call_tool("guess", {"word": word}))
                if outputs[-1].finished:
                    break
            status = episode_status(serve_server, outputs[-1].metadata["episode_id"])
            assert status["task"] == task.task_spec["id"]
            assert sum(o.reward or 0.0 for o in outputs) == pytest.approx(status["return"])
            with pytest.raises(ToolCallError, match="the episode has finished"):
                session.call_tool("history", {})


def test_ors_sdk_sends_its_key_to_a_server_with_a_token() -> None:
    from ors.client import ORS

    token = "s3cret-ors-key"
    with Server("wordle", token=token) as server:
        # ORS clients carry the key as X-API-Key, which the server takes as its token.
        with (
            ORS(base_url=server.url, api_key=token) as client,
            client.environment("wordle").session(split="train", index=0) as session,
        ):
            output = session.call_tool("guess", {"word": "crane"})
            assert output.metadata["turn"] == 1
        refused = httpx.get(f"{server.url}/list_environments", headers={"X-API-Key": "wrong"})
        assert refused.status_code == 401
        assert "X-API-Key" in refused.json()["error"]


# ---- openreward ------------------------------------------------------------------------------


@pytest.fixture
def openreward(serve_server: Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An `openreward.OpenReward` client of `serve_server`, closed after the test."""
    monkeypatch.setenv("OPENREWARD_SESSION_URL", serve_server.url)
    monkeypatch.setenv("OPENREWARD_DISABLE_UPDATE_CHECK", "1")
    from openreward import OpenReward

    client = OpenReward(base_url=serve_server.url)
    yield client
    client.close()


def test_openreward_eight_concurrent_wordle_rollouts(serve_server: Server, openreward: Any) -> None:
    client = openreward
    before = started(serve_server, "wordle")

    def rollout(index: int) -> str:
        # Half use openreward's bare paths (the environment named by X-Deployment), half a
        # variant (paths under /wordle/).
        variant = "wordle" if index % 2 else None
        env = client.environments.get("wordle", variant=variant)
        outputs: list[Any] = []
        with env.session(split="train", index=100 + index) as session:
            assert "Wordle" in _text(session.get_prompt())
            messages = session.get_messages()
            assert [m.role for m in messages] == ["user"]
            assert {t.name for t in session.list_tools()} == {"guess", "history"}
            for word in WORDLE_GUESSES:
                output = session.call_tool("guess", {"word": word})
                outputs.append(output)
                if output.finished:
                    break
            return _check_finished_episode(serve_server, outputs)

    with ThreadPoolExecutor(ROLLOUTS) as pool:
        futures = [pool.submit(rollout, i) for i in range(ROLLOUTS)]
        episode_ids = [f.result(timeout=BATCH_TIMEOUT) for f in futures]
    assert started(serve_server, "wordle") - before == ROLLOUTS
    assert len(set(episode_ids)) == ROLLOUTS


def test_openreward_lists_tasks_by_deployment(openreward: Any) -> None:
    for name in ("wordle", "jupyter"):
        env = openreward.environments.get(name)
        tasks = env.list_tasks("train")
        assert tasks and all(t.environment_name == name for t in tasks)
        assert env.num_tasks("test") > 0
        tools = {t.name for t in env.list_tools()}
        assert ("guess" in tools) == (name == "wordle")


# ---- Jupyter and desktop through ors-sdk -----------------------------------------------------

# classic/0: the North region's total revenue in sales.csv, to 2 places.
SOLVE = (
    "import csv\n"
    "rows = list(csv.DictReader(open('sales.csv')))\n"
    "print(f\"{sum(int(r['units']) * float(r['unit_price']) "
    "for r in rows if r['region'] == 'North'):.2f}\")"
)


def test_ors_sdk_jupyter_rollout(serve_server: Server) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed: Jupyter episodes run in a bubblewrap jail")
    from ors.client import ORS

    before = started(serve_server, "jupyter")
    with ORS(base_url=serve_server.url) as client:
        env = client.environment("jupyter")
        # No environment in ors-sdk's /create: the first /jupyter/ request binds it.
        with env.session(split="train", index=0) as session:
            assert "sales.csv" in _text(session.get_prompt())
            assert "final_answer" in {t.name for t in session.list_tools()}
            cell = session.call_tool("add_and_execute_code_cell", {"code": SOLVE})
            match = re.search(r"\d+\.\d\d", _text(cell.blocks))
            assert match, _text(cell.blocks)
            answer = session.call_tool("final_answer", {"answer": match.group(0)})
            outputs = [cell, answer]
            _check_finished_episode(serve_server, outputs)
            assert answer.reward and answer.reward > 0
    assert started(serve_server, "jupyter") - before == 1


def test_ors_sdk_desktop_rollout_delivers_screenshots(serve_server: Server) -> None:
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed: desktop episodes run on a virtual X display")
    from ors.client import ORS, ImageBlock

    with ORS(base_url=serve_server.url) as client:
        env = client.environment("desktop")
        task = env.get_task("train", 0)
        with env.session(task=task) as session:
            assert _text(session.get_prompt())
            shot = session.call_tool("screenshot", {})
            images = [b for b in shot.blocks if isinstance(b, ImageBlock)]
            assert images, shot.blocks
            assert images[0].mimeType == "image/png"
            assert base64.b64decode(images[0].data).startswith(b"\x89PNG\r\n\x1a\n")
            end = session.call_tool("terminate", {"status": "failure"})
            _check_finished_episode(serve_server, [shot, end])
