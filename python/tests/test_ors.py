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
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
# Six allowed guesses (all in servers/wordle/data/allowed.txt); played in order, they end any
# game, with a loss at worst.
GUESSES = ("crane", "slate", "pious", "dough", "nymph", "blitz")
ROLLOUTS = 8
# Generous "finished at all" bounds, never timing limits.
BATCH_TIMEOUT = 600.0


def _binary() -> str:
    return os.environ.get("MCPGYM_BINARY") or str(REPO / "target" / "debug" / "mcpgym")


class Server:
    """`mcpgym <args> --http 127.0.0.1:0`, stopped with SIGTERM when closed."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [_binary(), *args, "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        self.url = ""
        for line in self.process.stderr:
            if line.startswith("mcpgym: listening on "):
                self.url = line.removeprefix("mcpgym: listening on ").strip()
                break
        if not self.url:
            raise RuntimeError(f"mcpgym exited before listening: {self.process.wait()}")
        self.log: list[str] = []
        # Drained so the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)

    def started(self, env: str) -> float:
        """`mcpgym_episodes_started_total{env=...}` from /metrics."""
        text = httpx.get(f"{self.url}/metrics", timeout=60).text
        pattern = rf'^mcpgym_episodes_started_total\{{env="{env}"\}} (\S+)$'
        match = re.search(pattern, text, re.MULTILINE)
        return float(match.group(1)) if match else 0.0

    def episode(self, episode_id: str) -> dict[str, Any]:
        """`GET /episodes/{id}`."""
        response = httpx.get(f"{self.url}/episodes/{episode_id}", timeout=60)
        assert response.status_code == 200, response.text
        status: dict[str, Any] = response.json()
        return status

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """One `mcpgym serve` (wordle, jupyter, desktop) for the module."""
    if not Path(_binary()).is_file():
        pytest.fail(f"no mcpgym binary at {_binary()}: run `cargo build` or set MCPGYM_BINARY")
    running = Server("serve")
    yield running
    running.close()


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
    status = server.episode(episode_id)
    assert status["done"] is True
    assert status["turn"] == len(outputs)
    seen = sum(o.reward or 0.0 for o in outputs)
    assert seen == pytest.approx(status["return"]), (seen, status)
    assert outputs[-1].metadata["return"] == pytest.approx(status["return"])
    return episode_id


# ---- ors-sdk ---------------------------------------------------------------------------------


def test_ors_sdk_eight_concurrent_wordle_rollouts(server: Server) -> None:
    from ors.client import AsyncORS

    before = server.started("wordle")

    async def batch() -> list[tuple[str, list[Any]]]:
        client = AsyncORS(base_url=server.url)
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
            for word in GUESSES:
                output = await session.call_tool("guess", {"word": word})
                outputs.append(output)
                if output.finished:
                    break
            episode_id = await asyncio.to_thread(_check_finished_episode, server, outputs)
        return episode_id, outputs

    results = asyncio.run(batch())
    assert server.started("wordle") - before == ROLLOUTS
    assert len({episode_id for episode_id, _ in results}) == ROLLOUTS
    # Each session's episode was closed with it.
    for episode_id, _ in results:
        assert httpx.get(f"{server.url}/episodes/{episode_id}").status_code == 404


def test_ors_sdk_lists_tasks_and_refuses_bad_calls(server: Server) -> None:
    from ors.client import ORS, ToolCallError

    with ORS(base_url=server.url) as client:
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
            for word in GUESSES:
                outputs.append(session.call_tool("guess", {"word": word}))
                if outputs[-1].finished:
                    break
            status = server.episode(outputs[-1].metadata["episode_id"])
            assert status["task"] == task.task_spec["id"]
            assert sum(o.reward or 0.0 for o in outputs) == pytest.approx(status["return"])
            with pytest.raises(ToolCallError, match="the episode has finished"):
                session.call_tool("history", {})


def test_ors_sdk_sends_its_key_to_a_server_with_a_token() -> None:
    from ors.client import ORS

    token = "s3cret-ors-key"
    server = Server("wordle", "--token", token)
    try:
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
    finally:
        server.close()


# ---- openreward ------------------------------------------------------------------------------


def test_openreward_eight_concurrent_wordle_rollouts(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENREWARD_SESSION_URL", server.url)
    monkeypatch.setenv("OPENREWARD_DISABLE_UPDATE_CHECK", "1")
    from openreward import OpenReward

    client = OpenReward(base_url=server.url)
    before = server.started("wordle")

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
            for word in GUESSES:
                output = session.call_tool("guess", {"word": word})
                outputs.append(output)
                if output.finished:
                    break
            return _check_finished_episode(server, outputs)

    try:
        with ThreadPoolExecutor(ROLLOUTS) as pool:
            futures = [pool.submit(rollout, i) for i in range(ROLLOUTS)]
            episode_ids = [f.result(timeout=BATCH_TIMEOUT) for f in futures]
    finally:
        client.close()
    assert server.started("wordle") - before == ROLLOUTS
    assert len(set(episode_ids)) == ROLLOUTS


def test_openreward_lists_tasks_by_deployment(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENREWARD_SESSION_URL", server.url)
    monkeypatch.setenv("OPENREWARD_DISABLE_UPDATE_CHECK", "1")
    from openreward import OpenReward

    client = OpenReward(base_url=server.url)
    try:
        for name in ("wordle", "jupyter"):
            env = client.environments.get(name)
            tasks = env.list_tasks("train")
            assert tasks and all(t.environment_name == name for t in tasks)
            assert env.num_tasks("test") > 0
            tools = {t.name for t in env.list_tools()}
            assert ("guess" in tools) == (name == "wordle")
    finally:
        client.close()


# ---- Jupyter and desktop through ors-sdk -----------------------------------------------------

# jupyter-train-000: the North region's total revenue in sales.csv, to 2 places.
SOLVE = (
    "import csv\n"
    "rows = list(csv.DictReader(open('sales.csv')))\n"
    "print(f\"{sum(int(r['units']) * float(r['unit_price']) "
    "for r in rows if r['region'] == 'North'):.2f}\")"
)


def test_ors_sdk_jupyter_rollout(server: Server) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed: Jupyter episodes run in a bubblewrap jail")
    from ors.client import ORS

    before = server.started("jupyter")
    with ORS(base_url=server.url) as client:
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
            _check_finished_episode(server, outputs)
            assert answer.reward and answer.reward > 0
    assert server.started("jupyter") - before == 1


def test_ors_sdk_desktop_rollout_delivers_screenshots(server: Server) -> None:
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed: desktop episodes run on a virtual X display")
    from ors.client import ORS, ImageBlock

    with ORS(base_url=server.url) as client:
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
            _check_finished_episode(server, [shot, end])
