"""mcpgym's OpenEnv door driven by OpenEnv's own client classes (`openenv` 0.10.0 from PyPI).

`GenericEnvClient` and `MCPToolClient`, async and sync, against the real binary: concurrent
Wordle rollouts, each its own episode, the rewards the client sees summing to the episode's
return; a Jupyter rollout; a desktop rollout whose screenshot arrives as an image; and the
WebSocket protocol's edges spoken raw.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
import struct
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from helpers import WORDLE_GUESSES, episode_status, started, wait_gone
from openenv import GenericEnvClient
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation
from openenv.core.mcp_client import MCPToolClient
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from mcpgym import Server

ROLLOUTS = 8
SHAPED = {"reward": "shaped"}
"""Wordle's shaped reward pays most steps, so the sums compared below are not all zeros."""

Rollout = tuple[str, list[float], dict[str, Any]]
"""One rollout's episode id, the rewards the client saw, and the episode's status after it."""


def guess(word: str) -> dict[str, Any]:
    return {"type": "call_tool", "tool_name": "guess", "arguments": {"word": word}}


def check_rollouts(server: Server, before: float, results: list[Rollout]) -> None:
    """Eight distinct episodes, eight started, each finished with rewards summing to its return;
    closing the client closed the episode."""
    assert started(server, "wordle") - before == ROLLOUTS
    episodes = {episode for episode, _, _ in results}
    assert len(episodes) == ROLLOUTS
    for episode, rewards, status in results:
        assert status["id"] == episode
        assert status["done"] is True, status
        assert sum(rewards) == pytest.approx(status["return"], abs=1e-9), (rewards, status)
        assert any(r != 0 for r in rewards), rewards
        wait_gone(server, episode)


# --- GenericEnvClient -------------------------------------------------------------------


async def generic_rollout(server: Server, seed: int) -> Rollout:
    async with GenericEnvClient(base_url=f"{server.url}/wordle") as env:
        result = await env.reset(seed=seed, options=SHAPED)
        episode = result.metadata["episode_id"]
        assert result.observation["episode_id"] == episode
        assert "Wordle" in result.observation["prompt"]
        assert result.reward is None and result.done is False
        rewards: list[float] = []
        # An illegal move is an observation the model sees, with its penalty.
        result = await env.step(guess("zzzzz"))
        assert result.observation["result"]["is_error"] is True
        assert result.observation["error"] is None
        rewards.append(result.reward)
        for word in WORDLE_GUESSES:
            result = await env.step(guess(word))
            assert result.observation["result"]["is_error"] is False, result.observation
            assert result.metadata["episode_id"] == episode
            rewards.append(result.reward)
            if result.done:
                break
        assert result.done
        state = await env.state()
        assert state["episode_id"] == episode
        assert state["step_count"] == len(rewards)
        status = await asyncio.to_thread(episode_status, server, episode)
        return episode, rewards, status


async def check_concurrent_rollouts(
    server: Server, rollout: Callable[[Server, int], Awaitable[Rollout]]
) -> None:
    """Runs `ROLLOUTS` of `rollout` at once, then checks them with `check_rollouts`."""
    before = started(server, "wordle")
    results = await asyncio.gather(*(rollout(server, seed) for seed in range(ROLLOUTS)))
    check_rollouts(server, before, list(results))


async def test_generic_client_async_rollouts_are_separate_episodes(wordle_server: Server) -> None:
    await check_concurrent_rollouts(wordle_server, generic_rollout)


# --- MCPToolClient ----------------------------------------------------------------------


async def mcp_rollout(server: Server, seed: int) -> Rollout:
    async with MCPToolClient(base_url=f"{server.url}/wordle") as env:
        result = await env.reset(seed=seed, options=SHAPED)
        episode = result.metadata["episode_id"]
        tools = await env.list_tools()
        assert "guess" in {tool.name for tool in tools}
        assert all(tool.input_schema.get("type") == "object" for tool in tools)
        rewards: list[float] = []
        # A step over the WebSocket: OpenEnv's typed CallToolObservation.
        step = await env.step(
            CallToolAction(tool_name="guess", arguments={"word": WORDLE_GUESSES[0]})
        )
        assert isinstance(step.observation, CallToolObservation)
        assert step.observation.error is None
        assert step.observation.result["content"][0]["type"] == "text"
        rewards.append(step.reward)
        done = step.done
        # Then call_tool over JSON-RPC on the same episode: the observation, reward and done.
        for word in WORDLE_GUESSES[1:]:
            if done:
                break
            out = await env.call_tool("guess", word=word)
            assert out["tool_name"] == "guess"
            assert out["metadata"]["episode_id"] == episode
            assert word.upper() in out["result"]["content"][0]["text"]
            rewards.append(out["reward"])
            done = out["done"]
        assert done
        # A tool the environment lacks raises, as call_tool does for every failed call.
        with pytest.raises(RuntimeError, match="shout"):
            await env.call_tool("shout")
        state = await env.state()
        assert state.episode_id == episode and state.step_count == len(rewards)
        status = await asyncio.to_thread(episode_status, server, episode)
        return episode, rewards, status


async def test_mcp_tool_client_async_rollouts_are_separate_episodes(
    wordle_server: Server,
) -> None:
    await check_concurrent_rollouts(wordle_server, mcp_rollout)


# --- sync wrappers ----------------------------------------------------------------------


def sync_rollout(server: Server, seed: int) -> Rollout:
    """Half the rollouts with GenericEnvClient().sync(), half with MCPToolClient().sync()."""
    base = f"{server.url}/wordle"
    rewards: list[float] = []
    if seed % 2 == 0:
        with GenericEnvClient(base_url=base).sync() as env:
            result = env.reset(seed=seed, options=SHAPED)
            episode = result.metadata["episode_id"]
            for word in WORDLE_GUESSES:
                result = env.step(guess(word))
                rewards.append(result.reward)
                if result.done:
                    break
            assert result.done
            status = episode_status(server, episode)
    else:
        with MCPToolClient(base_url=base).sync() as env:
            result = env.reset(seed=seed, options=SHAPED)
            episode = result.metadata["episode_id"]
            assert "guess" in {tool.name for tool in env.list_tools()}
            for word in WORDLE_GUESSES:
                out = env.call_tool("guess", word=word)
                rewards.append(out["reward"])
                if out["done"]:
                    break
            assert out["done"]
            status = episode_status(server, episode)
    return episode, rewards, status


def test_sync_clients_in_threads_are_separate_episodes(wordle_server: Server) -> None:
    before = started(wordle_server, "wordle")
    with ThreadPoolExecutor(ROLLOUTS) as pool:
        results = list(pool.map(lambda seed: sync_rollout(wordle_server, seed), range(ROLLOUTS)))
    check_rollouts(wordle_server, before, results)


# --- Jupyter and desktop ----------------------------------------------------------------

needs_jail = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="the Jupyter sandbox needs bwrap (bubblewrap)"
)
needs_display = pytest.mark.skipif(
    shutil.which("Xvfb") is None or shutil.which("bwrap") is None,
    reason="the desktop environment needs Xvfb and bwrap",
)

SOLVE = (
    "import csv\n"
    "rows = list(csv.DictReader(open('sales.csv')))\n"
    "print(f\"{sum(int(r['units']) * float(r['unit_price']) for r in rows"
    " if r['region'] == 'North'):.2f}\")"
)


@needs_jail
def test_jupyter_rollout_pays_the_right_answer(serve_server: Server) -> None:
    # Pings every half second while a cell sleeps for six: the socket must keep answering.
    client = GenericEnvClient(
        base_url=f"{serve_server.url}/jupyter",
        message_timeout_s=300,
        websocket_ping_interval_s=0.5,
        websocket_ping_timeout_s=3,
    )
    with client.sync() as env:
        result = env.reset(task="classic/0")
        episode = result.metadata["episode_id"]
        assert "sales.csv" in result.observation["prompt"]
        rewards: list[float] = []

        def call(tool: str, **arguments: Any) -> dict[str, Any]:
            result = env.step({"type": "call_tool", "tool_name": tool, "arguments": arguments})
            rewards.append(result.reward)
            assert result.observation["error"] is None, result.observation
            assert result.observation["result"]["is_error"] is False, result.observation
            observed: dict[str, Any] = result.observation["result"]
            return observed

        task = call("get_task")
        assert task["structured_content"]["id"] == "classic/0"
        slept = call("add_and_execute_code_cell", code="import time; time.sleep(6); print('awake')")
        assert slept["structured_content"]["stdout"] == "awake\n"
        cell = call("add_and_execute_code_cell", code=SOLVE)
        answer = cell["structured_content"]["stdout"].strip()
        assert re.fullmatch(r"\d+\.\d\d", answer), cell
        result = env.step(
            {"type": "call_tool", "tool_name": "final_answer", "arguments": {"answer": answer}}
        )
        rewards.append(result.reward)
        assert result.done is True
        assert result.reward > 0
        status = episode_status(serve_server, episode)
    assert status["done"] is True
    assert sum(rewards) == pytest.approx(status["return"], abs=1e-9)
    wait_gone(serve_server, episode)


@needs_jail
def test_disconnect_stops_a_running_step_and_closes_its_episode(serve_server: Server) -> None:
    url = ws_url(serve_server, "jupyter")
    with ws_connect(url) as ws:
        reply = ask(ws, {"type": "reset", "data": {"task": "classic/0"}})
        episode = reply["data"]["metadata"]["episode_id"]
        cell = {"code": "import time; time.sleep(600)"}
        ws.send(
            json.dumps(
                {
                    "type": "step",
                    "data": {
                        "type": "call_tool",
                        "tool_name": "add_and_execute_code_cell",
                        "arguments": cell,
                    },
                }
            )
        )
        time.sleep(2)  # let the cell start running
    # The connection is gone: the cell is stopped and the episode closed, far sooner than the
    # cell would end (or reach its timeout).
    wait_gone(serve_server, episode)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@needs_display
async def test_desktop_rollout_screenshot_arrives_as_an_image(serve_server: Server) -> None:
    async with MCPToolClient(base_url=f"{serve_server.url}/desktop", message_timeout_s=300) as env:
        result = await env.reset(task="desktop-train-000")
        episode = result.metadata["episode_id"]
        names = {tool.name for tool in await env.list_tools()}
        assert "screenshot" in names
        rewards: list[float] = []
        out = await env.call_tool("screenshot")
        rewards.append(out["reward"])
        images = [block for block in out["result"]["content"] if block["type"] == "image"]
        assert len(images) == 1, out["result"]["content"]
        assert images[0]["mimeType"] == "image/png"
        width, height = png_size(base64.b64decode(images[0]["data"], validate=True))
        assert width > 100 and height > 100
        # The same over the WebSocket step.
        step = await env.step(CallToolAction(tool_name="screenshot", arguments={}))
        rewards.append(step.reward)
        block = step.observation.result["content"][0]
        assert block["type"] == "image"
        assert png_size(base64.b64decode(block["data"])) == (width, height)
        out = await env.call_tool("terminate", status="failure")
        rewards.append(out["reward"])
        assert out["done"] is True
        status = episode_status(serve_server, episode)
    assert status["done"] is True
    assert sum(rewards) == pytest.approx(status["return"], abs=1e-9)
    wait_gone(serve_server, episode)


# --- the WebSocket protocol, raw -------------------------------------------------------


def ws_url(server: Server, env: str) -> str:
    """The OpenEnv WebSocket of `env` on `server`."""
    return server.url.replace("http://", "ws://") + f"/{env}/ws"


def ask(ws: Any, message: Any) -> dict[str, Any]:
    ws.send(message if isinstance(message, (str, bytes)) else json.dumps(message))
    reply: dict[str, Any] = json.loads(ws.recv(timeout=60))
    return reply


def test_websocket_answers_each_message_in_order(wordle_server: Server) -> None:
    url = ws_url(wordle_server, "wordle")
    with ws_connect(url) as ws:
        reply = ask(ws, "{not json")
        assert reply["type"] == "error" and reply["data"]["code"] == "INVALID_JSON"
        reply = ask(ws, b"\x00binary")
        assert reply["data"]["code"] == "INVALID_JSON"
        reply = ask(ws, {"type": "dance"})
        assert reply["data"]["code"] == "UNKNOWN_TYPE"
        assert "reset, step, state" in reply["data"]["message"]
        reply = ask(ws, {"type": "step", "data": guess("crane")})
        assert reply["data"]["code"] == "SESSION_ERROR"
        assert "reset first" in reply["data"]["message"]
        reply = ask(ws, {"type": "reset", "data": {"taks": "x"}})
        assert reply["data"]["code"] == "VALIDATION_ERROR"
        assert "taks" in reply["data"]["message"]
        reply = ask(ws, {"type": "reset", "verbose": True})
        assert reply["data"]["code"] == "VALIDATION_ERROR"
        reply = ask(ws, {"type": "step", "data": {"type": "call_tool"}})
        assert reply["data"]["code"] == "VALIDATION_ERROR"
        assert "tool_name" in reply["data"]["message"]
        reply = ask(ws, {"type": "state"})
        assert reply == {
            "type": "state",
            "data": {"episode_id": None, "step_count": 0, "env": "wordle"},
        }

        # Sent without waiting: answered one by one, in order.
        for message in (
            {"type": "reset", "data": {"seed": 11}},
            {"type": "step", "data": guess("crane")},
            {"type": "step", "data": {"type": "list_tools"}},
            {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}},
            {"type": "step", "data": guess("slate")},
            {"type": "state"},
        ):
            ws.send(json.dumps(message))
        replies = [json.loads(ws.recv(timeout=60)) for _ in range(6)]
        assert [r["type"] for r in replies] == [
            "observation",
            "observation",
            "observation",
            "mcp",
            "observation",
            "state",
        ], replies
        first = replies[0]["data"]["metadata"]["episode_id"]
        assert replies[1]["data"]["metadata"]["turn"] == 1
        assert "tools" in replies[2]["data"]["observation"]
        assert replies[3]["data"]["id"] == 7
        assert replies[4]["data"]["metadata"]["turn"] == 2
        assert replies[5]["data"]["episode_id"] == first
        assert replies[5]["data"]["step_count"] == 2

        # Another reset closes the first episode and starts a second.
        reply = ask(ws, {"type": "reset", "data": {"seed": 12}})
        second = reply["data"]["metadata"]["episode_id"]
        assert second != first
        wait_gone(wordle_server, first)
        assert episode_status(wordle_server, second)["id"] == second

        ws.send(json.dumps({"type": "close"}))
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=60)
    wait_gone(wordle_server, second)


def test_websocket_disconnect_and_oversized_messages_close_the_episode(
    wordle_server: Server,
) -> None:
    url = ws_url(wordle_server, "wordle")
    with ws_connect(url) as ws:
        episode = ask(ws, {"type": "reset"})["data"]["metadata"]["episode_id"]
    wait_gone(wordle_server, episode)

    with ws_connect(url, max_size=None) as ws:
        episode = ask(ws, {"type": "reset"})["data"]["metadata"]["episode_id"]
        # Over 4 MiB: refused with a sentence, and the connection goes on.
        reply = ask(ws, {"type": "step", "data": guess("a" * (5 * 1024 * 1024))})
        assert reply["data"]["code"] == "VALIDATION_ERROR"
        assert "at most 4194304" in reply["data"]["message"]
        assert ask(ws, {"type": "state"})["data"]["episode_id"] == episode
        # Far over: the connection ends (close code 1009), and so does the episode.
        with pytest.raises((ConnectionClosed, ConnectionResetError)):
            ws.send(json.dumps(guess("a" * (17 * 1024 * 1024))))
            ws.recv(timeout=60)
    wait_gone(wordle_server, episode)


def test_websocket_capacity_and_sessions() -> None:
    with Server("wordle", "--max-episodes", "1") as server:
        url = ws_url(server, "wordle")
        with ws_connect(url) as first, ws_connect(url) as second:
            held = ask(first, {"type": "reset"})["data"]["metadata"]["episode_id"]
            reply = ask(second, {"type": "reset"})
            assert reply["data"]["code"] == "CAPACITY_REACHED", reply
            assert reply["data"]["max_sessions"] == 1
            assert "maximum of 1 live episodes" in reply["data"]["message"]
        wait_gone(server, held)
        # A session made over JSON-RPC holds one WebSocket: a second takes it over (a client
        # reconnecting before the server saw its connection drop), and the first is closed.
        created = httpx.post(
            f"{server.url}/wordle/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}},
        ).json()
        session = created["result"]["session_id"]
        with ws_connect(f"{url}?session_id={session}") as attached:
            episode = ask(attached, {"type": "reset"})["data"]["metadata"]["episode_id"]
            with ws_connect(f"{url}?session_id={session}") as again:
                with pytest.raises(ConnectionClosed) as closed:
                    attached.recv(timeout=60)
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == 1008
                assert "another WebSocket attached" in closed.value.rcvd.reason
                state = ask(again, {"type": "state"})
                assert state["data"]["episode_id"] == episode, state
        with ws_connect(f"{url}?session_id=nope") as unknown:
            reply = json.loads(unknown.recv(timeout=60))
            assert reply["data"]["code"] == "SESSION_ERROR"
            assert "Unknown session_id" in reply["data"]["message"]


def test_an_idle_websocket_is_closed_with_its_episode() -> None:
    with Server("wordle", "--idle-ttl", "1") as server:
        url = ws_url(server, "wordle")
        with ws_connect(url) as ws:
            episode = ask(ws, {"type": "reset"})["data"]["metadata"]["episode_id"]
            # Nothing sent for longer than --idle-ttl: the server says why and closes.
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=60)
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1001
            assert "idle" in closed.value.rcvd.reason
        wait_gone(server, episode)
